//! # clgroups
//!
//! OpenCL work-groups and sub-groups, easy and fast, on every OpenCL device.
//!
//! * [`device`]: every platform and device, cached; `CLGROUPS_DEVICE` selects one; each device's
//!   sub-group capabilities, as the driver reports them and as clgroups provides them.
//! * [`program`]: OpenCL C built with the `cl/` sub-group layer on the include path and the
//!   device's shuffle backend selected; required and named sub-group sizes.
//! * [`kernel`]: kernels and their sub-group queries.
//! * [`launch`]: typed launches over ND-ranges (exact, automatic or tuned local sizes) and plain
//!   ranges (with range rounding).
//! * [`plan`]: the pure decisions behind launches: local sizes, rounding, partitioning over
//!   several devices, memory coloring.
//! * [`scaling`]: one ND-range over several devices (partitioned launches, colored buffers).
//! * [`algorithms`]: device-wide reduce and scan built on the sub-group layer.
//! * [`wait`]: every wait on a device is bounded (`CLGROUPS_TIMEOUT`): a stuck device or a lost
//!   connection to a remote one is an [`Error::Timeout`], not a hang.
//!
//! Dimension order is OpenCL's everywhere (dimension 0 = x, fastest-varying); see [`Range`].

pub mod algorithms;
pub mod buffer;
pub mod device;
pub mod error;
mod ffi;
pub mod kernel;
pub mod launch;
pub mod plan;
pub mod program;
pub mod queue;
pub mod range;
pub mod scaling;
pub mod wait;

pub use buffer::Buffer;
pub use device::{default_device, devices, Device};
pub use error::{Error, Result};
pub use kernel::Kernel;
pub use program::Program;
pub use queue::Queue;
pub use range::Range;

/// The README's Rust examples, compiled as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
