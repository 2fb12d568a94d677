//! Pure planning functions: every decision a launch makes, testable without a device.
//!
//! The launch code only executes a plan; `RUST_LOG=debug` shows each plan as it is made.

pub mod coloring;
pub mod local_size;
pub mod partition;
pub mod rounding;
pub mod split;
