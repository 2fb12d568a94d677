//! Pure planning functions: every decision a launch makes, testable without a device.
//!
//! The launch code only executes a plan; `RUST_LOG=debug` shows each plan as it is made.
//!
//! This module is public so that a decision can be reproduced and inspected without a device
//! (what local size, rounding or partition a launch of a given shape gets, e.g. to choose a
//! [`ColoredBuffer`](crate::ColoredBuffer) page size or to explain a timing). It is a stable
//! part of the API: its types and functions follow semantic versioning like the rest of the
//! crate, while the exact numbers a heuristic picks may improve in minor releases.

// The decisions of launches over several devices exist with `scaling` (and with the internals,
// for their tests).
pub mod bounds;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod coloring;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod cost;
pub mod launch;
pub mod local_size;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod partition;
mod refusal;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod root_fallback;
pub mod rounding;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod shares;
pub mod split;
pub mod uniform_branch;
#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub mod weighted;
pub mod work_group;

pub use refusal::{Breach, GroupSplit, Refusal, Unsplit};

/// The greatest common divisor (`gcd(a, 0) = a`).
pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
