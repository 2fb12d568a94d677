//! OpenCL work-groups and sub-groups, easy and fast, on every OpenCL device: from PoCL on a
//! laptop CPU to NVIDIA data-centre GPUs.
//!
//! clgroups is a layer over [`opencl3`] that adds what plain OpenCL lacks:
//!
//! * **Sub-groups everywhere.** Device and kernel sub-group queries, and an OpenCL C sub-group
//!   layer (`sg_shuffle`, `sg_reduce_add`, `sg_inclusive_scan_add`, ...) with one meaning on
//!   every device: native `cl_khr_subgroups` or `cl_intel_subgroups` where the driver has them,
//!   inline PTX on NVIDIA's OpenCL, and local-memory emulation anywhere else. It follows the
//!   SYCL sub-group specification (`SYCL_INTEL_sub_group`), required and named sub-group sizes
//!   included. See [`opencl_c`] for the OpenCL C side.
//! * **Launches with a good local size.** [`LocalSize::Auto`] (the driver's choice),
//!   [`LocalSize::Exact`] or [`LocalSize::Tuned`] (the largest work-group that divides the
//!   range and suits the kernel), following `sycl_ext_oneapi_auto_local_range`.
//! * **Range rounding.** A plain range of an awkward (e.g. prime) size runs over a rounded range
//!   with the extra work-items masked off, as DPC++ does for `parallel_for`.
//! * **Several devices as one.** [`RootDevice`] splits one ND-range over several devices
//!   (Intel's implicit scaling), with [`ColoredBuffer`]s spread over them.
//! * **Algorithms.** Device-wide reduce and scan ([`algorithms`]), close to the memory's
//!   bandwidth.
//!
//! Bad input is a typed [`Error`] before anything is enqueued; every decision (device, backend,
//! sub-group size, local size, rounding, partition) is logged with `RUST_LOG=debug`.
//!
//! # Quick start
//!
//! clgroups needs an OpenCL driver at run time (`libOpenCL.so.1` and an ICD: on Debian or
//! Ubuntu, `apt install ocl-icd-libopencl1 pocl-opencl-icd` gives PoCL on the CPU); without
//! one, calls return [`Error::NoRuntime`]. Nothing is needed at build time.
//!
//! Sum 1..=1024 on the default device with a kernel that reduces within each sub-group, then
//! once more with the built-in algorithm:
//!
//! ```
//! use clgroups::prelude::*;
//!
//! // The device `CLGROUPS_DEVICE` names, else the first GPU, accelerator or CPU.
//! let queue = Queue::with_profiling(&default_device()?)?;
//!
//! // OpenCL C with the sub-group layer: each sub-group adds its values, and one work-item per
//! // sub-group adds that to the total.
//! let program = Program::from_source(&queue, r#"
//!     #include <clgroups/subgroup.h>
//!     kernel void sum(global const int *x, global int *total) {
//!         int s = sg_reduce_add(x[get_global_id(0)]);
//!         if (sg_get_local_id() == 0) atomic_add(total, s);
//!     }
//! "#)?;
//! let sum = program.kernel("sum")?;
//!
//! let n = 1024;
//! let x: Vec<i32> = (1..=n).collect();
//! let xs = Buffer::from_slice(&queue, &x)?;
//! let total = Buffer::from_slice(&queue, &[0i32])?;
//! // SAFETY: work-item i reads xs[i] for i < 1024 = xs.len(), and only adds to total[0];
//! // nothing else uses the buffers meanwhile.
//! let event = unsafe {
//!     sum.launch().arg(&xs).arg(&total).nd_range(Range::d1(n as usize), LocalSize::Tuned)?
//! };
//! event.wait()?;
//! let got = total.read(&queue)?[0];
//! println!("{}: sum of 1..={n} = {got} in {:?}", queue.device(), event.duration()?);
//! assert_eq!(got, n * (n + 1) / 2);
//!
//! // The same without writing a kernel (safe: clgroups' own kernels stay in bounds).
//! # #[cfg(feature = "algorithms")]
//! assert_eq!(reduce_sum(&queue, &xs)?, n * (n + 1) / 2);
//! # Ok::<(), clgroups::Error>(())
//! ```
//!
//! # How it fits together
//!
//! ```text
//! Device ──▶ Queue (Context) ──▶ Program ──▶ Kernel ──▶ Launch ──▶ Event
//!   │         Buffer<T>            │ builds your OpenCL C with the sub-group layer
//!   └ sub-group capabilities       │ for the device's backend and sub-group sizes
//! RootDevice: the same chain over several devices; algorithms: ready-made kernels
//! ```
//!
//! [`devices()`] finds every device once per process; a [`Device`] knows its limits and
//! sub-group capabilities. A [`Queue`] is an in-order profiling queue in a [`Context`];
//! [`Buffer`]s belong to the context and hold any [`Pod`] element type (numbers, `[f32; 4]` for
//! `float4`, `half::f16`, `#[repr(C)]` structs). They are made, written and read through the
//! queue: blocking (`read`, `write`) or at once, with the command owning its host memory
//! ([`Buffer::enqueue_write`], [`Buffer::enqueue_read`] and its [`PendingRead`]); a launch
//! waits for other queues' commands with [`Launch::wait_for`](launch::Launch::wait_for). A
//! [`Program`] builds OpenCL C for the queue's device with `#include <clgroups/subgroup.h>`
//! available; [`Kernel::launch`] checks the arguments and the
//! range and enqueues. The decisions behind a launch (local size, rounding, partition,
//! coloring) are pure functions inside the crate, each logged with `RUST_LOG=debug`.
//!
//! # Safety
//!
//! Launching your own kernel is `unsafe`: [`Launch::nd_range`](launch::Launch::nd_range),
//! [`Launch::range`](launch::Launch::range) and
//! [`RootLaunch::nd_range`](scaling::RootLaunch::nd_range) are `unsafe fn`, because clgroups
//! cannot prove that a kernel stays inside its buffers, and on devices whose buffers live in
//! host memory (PoCL, CPUs, integrated GPUs) an out-of-bounds write corrupts the process. The
//! caller promises what their `# Safety` sections list (accesses in bounds for the launched
//! range, no conflicting use of the buffers from other queues, the sub-group layer's rules);
//! what clgroups can check (ranges, argument count and types, contexts) it still checks before
//! enqueueing. The rest of the crate is safe, the [`algorithms`] included: their kernels are
//! proven in bounds.
//!
//! # Modules
//!
//! * [`device`]: discovery, selection (`CLGROUPS_DEVICE`) and sub-group capabilities;
//! * [`queue`]: [`Context`] and [`Queue`]; [`buffer`]: typed device buffers;
//! * [`program`] and [`kernel`]: building OpenCL C, kernels and their sub-group queries;
//! * [`launch`]: ND-range and plain-range launches, [`Event`]s; [`range`]: [`Range`];
//! * [`scaling`]: one launch over several devices; [`algorithms`]: reduce and scan;
//! * [`opencl_c`]: the OpenCL C sub-group layer, function by function, per backend;
//! * [`config`]: every `CLGROUPS_*` environment variable, read in one place; every wait on a
//!   device is bounded ([`config::timeout`]): a stuck device or a lost connection to a remote
//!   one is an [`Error::Timeout`], not a hang;
//! * [`prelude`]: the names a typical program uses, in one import.
//!
//! # Cargo features
//!
//! * `dynamic` (default): load `libOpenCL.so.1` at run time, so building needs no OpenCL and
//!   a machine without one gets [`Error::NoRuntime`]; `static` links the loader statically
//!   instead (with `default-features = false`); with neither, `libOpenCL.so` is linked at
//!   build time.
//! * `scaling` (default): the [`scaling`] module, one launch over several devices.
//! * `algorithms` (default): the [`algorithms`] module, device-wide reduce and scan.
//! * `unstable-internals`: UNSTABLE, outside semver. The pure planning internals, public but
//!   hidden from these docs, for clgroups' own tests, examples and benches; do not depend on it.
//!
//! Dimension order is OpenCL's everywhere (dimension 0 = x, fastest-varying); see [`Range`].

// The internals (`plan`, `algorithms::plan`, `launch::bounds`) are private without the
// `unstable-internals` feature, and their doctests run where it is on (the crate's own tests
// enable it).
#![cfg_attr(not(feature = "unstable-internals"), allow(rustdoc::private_doc_tests))]
// The docs link to the optional modules; without them those links have no target.
#![cfg_attr(
    not(all(feature = "scaling", feature = "algorithms")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "algorithms")]
pub mod algorithms;
pub mod buffer;
mod builtins;
mod checked;
pub mod config;
pub mod device;
pub mod error;
mod event;
mod ffi;
pub mod kernel;
pub mod launch;
mod obstacle;
#[doc = include_str!("opencl_c.md")]
pub mod opencl_c {}
#[cfg(feature = "unstable-internals")]
#[doc(hidden)]
pub mod plan;
#[cfg(not(feature = "unstable-internals"))]
mod plan;
pub mod program;
pub mod queue;
pub mod range;
#[cfg(feature = "scaling")]
pub mod scaling;
mod transform;
mod wait;

pub use buffer::{Buffer, PendingRead, Pod};
pub use device::{default_device, devices, Device};
pub use error::{Error, Result};
pub use kernel::Kernel;
pub use launch::{Event, Local, LocalSize};
pub use program::{Program, ProgramBuilder};
pub use queue::{Context, InContext, Queue};
pub use range::Range;
#[cfg(feature = "scaling")]
pub use scaling::{ColoredBuffer, MultiEvent, Placement, RootDevice};

/// Everything a typical program names, in one import: `use clgroups::prelude::*;`.
///
/// ```
/// use clgroups::prelude::*;
/// let global = Range::d2(1024, 768);
/// assert_eq!(global.len(), 1024 * 768);
/// let _auto = LocalSize::Auto;
/// ```
pub mod prelude {
    #[cfg(feature = "algorithms")]
    pub use crate::algorithms::{
        exclusive_scan_sum, inclusive_scan_sum, reduce_max, reduce_min, reduce_sum,
    };
    pub use crate::{
        default_device, devices, Buffer, Context, Device, Error, Event, Kernel, Local, LocalSize,
        Pod, Program, Queue, Range, Result,
    };
    #[cfg(feature = "scaling")]
    pub use crate::{ColoredBuffer, Placement, RootDevice};
}

/// The Rust examples of the README and of `docs/`, compiled as doctests (they use the default
/// features).
#[doc = include_str!("../README.md")]
#[doc = include_str!("../docs/launches.md")]
#[doc = include_str!("../docs/scaling.md")]
#[cfg(all(doctest, feature = "scaling", feature = "algorithms"))]
pub struct ReadmeDoctests;
