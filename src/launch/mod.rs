//! Typed launches: ND-ranges with an automatic, exact or tuned local size, and plain ranges
//! with range rounding. Every check happens before anything is enqueued; every launch returns
//! a profiled [`Event`].
//!
//! Dimension order is OpenCL's: dimension 0 is x, the fastest-varying. SYCL's
//! `nd_range<3>{{nz, ny, nx}, {lz, ly, lx}}` is `nd_range(Range::d3(nx, ny, nz),
//! LocalSize::Exact(Range::d3(lx, ly, lz)))` here.
//!
//! # Safety: launching a kernel is `unsafe`
//!
//! A kernel is code clgroups cannot verify: nothing stops `o[get_global_id(0)] = 0` from
//! writing past the end of `o`, and on devices whose buffers live in host memory (PoCL, CPUs,
//! integrated GPUs) that corrupts the process's heap. So, like `ocl`, `opencl3` and `cudarc`,
//! the raw launches [`Launch::nd_range`] and [`Launch::range`] are `unsafe fn`; their
//! `# Safety` sections say what the caller promises. Everything clgroups *can* check (ranges
//! against the device's limits, argument count and types, buffer contexts) is still checked,
//! with an [`Error`] before anything is enqueued. Launches that clgroups can prove in bounds
//! (the [`algorithms`](crate::algorithms)) are safe functions.
//!
//! What the types already guarantee: a launch borrows its buffers, so none can be dropped
//! while the launch is being built, and OpenCL keeps a released buffer's memory until the
//! commands using it have finished; kernel arguments come only from [`KernelArg`] values.
//!
//! ```
//! use clgroups::{launch::LocalSize, Buffer, Program, Queue, Range};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
//! let x = Buffer::from_slice(&q, &[1, 2, 3])?;
//! let k = p.kernel("inc")?;
//! // SAFETY: `inc` touches x[get_global_id(0)] only, and both launches cover ids 0..3 of the
//! // 3-element `x`; nothing else uses `x` meanwhile.
//! unsafe {
//!     // ND-range, local size chosen by the implementation (SYCL's auto_range):
//!     k.launch().arg(&x).nd_range(Range::d1(3), LocalSize::Auto)?.wait()?;
//!     // Plain range: rounded up to a good size when that helps, guarded in the kernel:
//!     k.launch().arg(&x).range(3)?.wait()?;
//! }
//! assert_eq!(x.read(&q)?, vec![3, 4, 5]);
//! # Ok::<(), clgroups::Error>(())
//! ```
//!
//! Dropping a buffer while a launch still holds it does not compile:
//!
//! ```compile_fail,E0505
//! use clgroups::{launch::LocalSize, Buffer, Program, Queue, Range};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
//! let x = Buffer::from_slice(&q, &[1, 2, 3])?;
//! let k = p.kernel("inc")?;
//! let launch = k.launch().arg(&x);
//! drop(x);
//! // SAFETY: in bounds, but `x` is gone: rejected by the borrow checker.
//! unsafe { launch.nd_range(Range::d1(3), LocalSize::Auto)? };
//! # Ok::<(), clgroups::Error>(())
//! ```

mod args;
#[cfg(feature = "unstable-internals")]
#[doc(hidden)]
pub use crate::plan::bounds;
#[cfg(not(feature = "unstable-internals"))]
pub(crate) use crate::plan::bounds;
pub mod checked;
pub(crate) mod emulated;
mod enqueue;
mod plain;
mod prepare;
pub(crate) mod uniform;
pub(crate) mod wrong_argument;

pub use crate::event::Event;
pub use crate::plan::rounding::ROUNDING_SLACK;
pub use crate::plan::work_group::LocalSize;
pub use crate::plan::{Breach, GroupSplit, Refusal, Unsplit};
pub use args::{check as check_args, Arg, KernelArg, Local, Mem, ScalarBytes};
pub(crate) use prepare::Prepared;
pub use wrong_argument::{Expected, WrongArgument};

use crate::buffer::Buffer;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::queue::Queue;
use crate::range::Range;
use std::cell::OnceCell;
use std::marker::PhantomData;

impl Kernel {
    /// Starts a launch on the program's queue.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void set(global int *x, int v) { x[get_global_id(0)] = v; }")?;
    /// let x = Buffer::<i32>::new(&queue, 100)?;
    /// // SAFETY: work-item i writes x[i] for i < 100 = x.len().
    /// unsafe { p.kernel("set")?.launch().arg(&x).arg(7i32).range(Range::d1(100))? }.wait()?;
    /// assert_eq!(x.read(&queue)?, [7; 100]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn launch(&self) -> Launch<'_> {
        Launch {
            kernel: self,
            queue: self.program().queue().clone(),
            args: Vec::new(),
            offset: None,
            waits: Vec::new(),
            check: OnceCell::new(),
            detached: false,
            _borrows: PhantomData,
        }
    }
}

/// A launch being prepared: arguments, then a shape ([`Launch::nd_range`] or
/// [`Launch::range`]) enqueues it. It borrows the kernel and every buffer argument for `'a`.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, r#"
///     kernel void scale(global float *x, float a, local float *tmp) {
///         tmp[get_local_id(0)] = x[get_global_id(0)];
///         x[get_global_id(0)] = a * tmp[get_local_id(0)];
///     }
/// "#)?;
/// let x = Buffer::from_slice(&queue, &[1.0f32; 128])?;
/// let scale = p.kernel("scale")?;
/// let launch = scale.launch().arg(&x).arg(2.0f32).arg(Local::<f32>::new(32));
/// // SAFETY: work-item i touches x[i] (i < 128 = x.len()) and tmp[lid] (lid < 32).
/// unsafe { launch.nd_range(Range::d1(128), LocalSize::Exact(Range::d1(32)))? }.wait()?;
/// assert_eq!(x.read(&queue)?, [2.0; 128]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a launch does nothing until nd_range() or range() is called"]
pub struct Launch<'a> {
    kernel: &'a Kernel,
    queue: Queue,
    args: Vec<Arg>,
    offset: Option<Range>,
    /// Events the launch waits for (see [`Launch::wait_for`]).
    waits: Vec<&'a Event>,
    /// Where checked variants record the first out-of-bounds access ([`checked`] mode).
    check: OnceCell<Buffer<u32>>,
    /// Enqueue without an OpenCL event ([`Launch::detached`]).
    detached: bool,
    /// The buffers behind `args` (their memory objects are raw handles in `args`).
    _borrows: PhantomData<&'a ()>,
}

impl<'a> Launch<'a> {
    /// Appends an argument: `&Buffer<T>`, a value of any [`Pod`](crate::Pod) type (a number,
    /// `[f32; 4]` for a `float4`, a `#[repr(C)]` struct, `half::f16`), or [`Local`]. A buffer
    /// stays borrowed until the launch is enqueued or dropped.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global uint *x, uint v) { x[0] = v; }")?;
    /// let x = Buffer::<u32>::new(&queue, 1)?;
    /// // SAFETY: the single work-item writes x[0].
    /// unsafe { p.kernel("k")?.launch().arg(&x).arg(5u32).nd_range(Range::d1(1), LocalSize::Auto)? };
    /// assert_eq!(x.read(&queue)?, [5]);
    /// // A scalar of the wrong type is refused before enqueueing (where the driver describes args).
    /// // SAFETY: as above.
    /// let wrong = unsafe { p.kernel("k")?.launch().arg(&x).arg(5.0f64).range(Range::d1(1)) };
    /// if p.kernel("k")?.args()[1].type_name.is_some() {
    ///     assert!(wrong.is_err());
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn arg<A: KernelArg + 'a>(mut self, arg: A) -> Self {
        self.args.push(arg.to_arg());
        self
    }

    /// Appends an argument built by clgroups itself, whose memory objects the caller keeps
    /// alive.
    #[cfg(feature = "algorithms")]
    pub(crate) fn raw_arg(mut self, arg: Arg) -> Self {
        self.args.push(arg);
        self
    }

    /// Appends arguments built by clgroups itself, as [`Launch::raw_arg`] does one by one (the
    /// vector is taken as it is where the launch has none yet).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn raw_args(mut self, args: Vec<Arg>) -> Self {
        match self.args.is_empty() {
            true => self.args = args,
            false => self.args.extend(args),
        }
        self
    }

    /// The kernel this launch enqueues (its emulated build, where `or_emulated` chose it).
    #[cfg(feature = "scaling")]
    pub(crate) fn kernel(&self) -> &'a Kernel {
        self.kernel
    }

    /// A global offset (OpenCL order) for ND-range launches.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[get_global_id(0)] = 1; }")?;
    /// let x = Buffer::from_slice(&queue, &[0i32; 8])?;
    /// let k = p.kernel("k")?;
    /// let launch = k.launch().arg(&x).offset(Range::d1(4));
    /// // SAFETY: work-items 4..8 write x[4..8], inside x (8 elements).
    /// unsafe { launch.nd_range(Range::d1(4), LocalSize::Auto)? }.wait()?;
    /// assert_eq!(x.read(&queue)?, [0, 0, 0, 0, 1, 1, 1, 1]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn offset(mut self, offset: Range) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Makes the launch wait for `events` (each an [`Event`] of this queue's context, from any
    /// of its queues) before it starts: how a chain of non-blocking commands runs without the
    /// host waiting in between. Commands of the same queue already run in order; events of
    /// other queues are what this is for. An event of another context is an [`Error`] before
    /// anything is enqueued.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
    /// let inc = p.kernel("inc")?;
    /// let other = Queue::on(queue.context(), queue.device())?; // a second queue
    /// let mut x = Buffer::<i32>::new(&queue, 1024)?;
    /// let written = x.enqueue_write(&other, vec![41; 1024])?; // on the other queue
    /// // SAFETY: work-item i touches x[i], i < 1024 = x.len(); the write it waits for is the
    /// // only other command using x.
    /// let done = unsafe { inc.launch().arg(&x).wait_for([&written]).range(1024)? };
    /// assert_eq!(x.enqueue_read(&queue)?.wait()?, [42; 1024]); // queue: in order after `done`
    /// # drop(done);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn wait_for(mut self, events: impl IntoIterator<Item = &'a Event>) -> Self {
        self.waits.extend(events);
        self
    }

    /// Enqueues without an OpenCL event (cheaper on NVIDIA: see
    /// [`ffi::enqueue_kernel_detached`]); the returned [`Event`] holds none and is only for
    /// clgroups' own callers, which observe completion otherwise. Launches that wait for events,
    /// and launches in checked mode, keep their event.
    #[cfg_attr(not(feature = "algorithms"), allow(dead_code))]
    pub(crate) fn detached(mut self) -> Self {
        self.detached = true;
        self
    }

    /// Enqueues over an ND-range: `global` work-items in work-groups of `local`.
    ///
    /// Ranges, offset, local size and arguments are checked first; an invalid launch is an
    /// [`Error`] and enqueues nothing.
    ///
    /// # Safety
    ///
    /// clgroups cannot see what the kernel does; the caller guarantees that, for every
    /// work-item of `global` (global ids shifted by the [`offset`](Launch::offset)):
    ///
    /// 1. every global or constant memory access of the kernel lies inside the buffer
    ///    argument it goes through (`0 <= index < len`), and every local memory access inside
    ///    the [`Local`] size passed for it;
    /// 2. no buffer the kernel writes is read or written, and no buffer it reads is written,
    ///    by a command that may run at the same time (on another queue or device) or by the
    ///    host through a mapping, until the returned [`Event`] has completed (commands of this
    ///    queue run in order and need nothing, and so do commands it waits for with
    ///    [`wait_for`](Launch::wait_for));
    /// 3. where the driver reports no argument information, every argument has the kind the
    ///    kernel declares (a `&Buffer` for each pointer, a scalar of the declared type
    ///    otherwise): clgroups then checks only the count;
    /// 4. the kernel respects OpenCL's rules for barriers and the sub-group layer's contract
    ///    (`sg_*` calls reached by every work-item of the sub-group, see
    ///    `cl/clgroups/subgroup.h`).
    ///
    /// Lifetimes are not the caller's concern: OpenCL keeps a buffer's memory until every
    /// command using it has finished, even if the [`Buffer`] is dropped
    /// first, and the launch copies scalar arguments when it enqueues.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     kernel void index(global uint *x) {
    ///         size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    ///         x[i] = (uint)i;
    ///     }
    /// "#)?;
    /// let x = Buffer::<u32>::new(&queue, 64 * 16)?;
    /// // SAFETY: the index is below 64 * 16 = x.len() for every work-item of the range.
    /// let ev = unsafe {
    ///     p.kernel("index")?.launch().arg(&x).nd_range(Range::d2(64, 16), LocalSize::Tuned)?
    /// };
    /// ev.wait()?;
    /// assert_eq!(x.read(&queue)?[100], 100);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub unsafe fn nd_range(self, global: impl Into<Range>, local: LocalSize) -> Result<Event> {
        let global = global.into();
        let (launch, prepared) = self.or_emulated(|l| l.prepare_nd(global, local))?;
        // SAFETY: the caller upholds this function's contract for `global` at the offset,
        // which is exactly what was prepared (on the kernel or its emulated build, which does
        // the same).
        unsafe { launch.execute(prepared) }
    }
}
