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
pub mod bounds;
pub mod checked;
mod plain;
pub(crate) mod uniform;

use crate::event;
pub use crate::event::Event;
pub use args::{check as check_args, Arg, KernelArg, Local, Mem};
pub use plain::ROUNDING_SLACK;

use crate::buffer::Buffer;
use crate::device::ShuffleBackend;
use crate::error::{Error, Result};
use crate::ffi;
use crate::kernel::Kernel;
use crate::plan::rounding::Variant;
use crate::plan::{local_size, split};
use crate::queue::Queue;
use crate::range::Range;
use std::cell::OnceCell;
use std::marker::PhantomData;

/// The local size of an ND-range launch.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, "kernel void one(global int *x) { x[get_global_id(0)] = 1; }")?;
/// let k = p.kernel("one")?;
/// let x = Buffer::<i32>::new(&queue, 256)?;
/// for local in [LocalSize::Auto, LocalSize::Tuned, LocalSize::Exact(Range::d1(64))] {
///     // SAFETY: work-item i writes x[i] for i < 256 = x.len().
///     unsafe { k.launch().arg(&x).nd_range(Range::d1(256), local)? }.wait()?;
/// }
/// // A local size that does not divide the global range is an error before anything runs.
/// // SAFETY: as above (nothing is enqueued).
/// let err = unsafe { k.launch().arg(&x).nd_range(Range::d1(256), Range::d1(48).into()) };
/// assert!(err.is_err());
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalSize {
    /// The implementation chooses (OpenCL: a NULL local size; SYCL's `auto_range` from `sycl_ext_oneapi_auto_local_range`). The
    /// global range is never changed.
    Auto,
    /// Exactly this local range.
    Exact(Range),
    /// The largest work-group that divides the global range and suits the kernel's preferred
    /// multiple and maximum (the "kernel query" approach of `sycl_ext_oneapi_auto_local_range`, built in).
    Tuned,
}

impl From<Range> for LocalSize {
    fn from(local: Range) -> Self {
        LocalSize::Exact(local)
    }
}

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

    /// Appends an argument built by clgroups itself (multi-device launches), whose memory
    /// objects the caller keeps alive.
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn raw_arg(mut self, arg: Arg) -> Self {
        self.args.push(arg);
        self
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
        let local = self.plan_local(global, local)?;
        self.check_args(&self.args, global, local)?;
        let offset = self.offset.unwrap_or(global.zeros_like());
        // SAFETY: the caller upholds this function's contract for `global` at `offset`, which
        // is exactly what is enqueued.
        let ev = unsafe { self.enqueue(Variant::Original, &self.args, global, local, offset)? };
        self.verified(ev, &self.args)
    }

    /// The kernel's `work_group_size_hint` when it divides `global` and fits the kernel.
    fn hinted(&self, global: Range) -> Option<Range> {
        let hint = split::at_rank(self.kernel.work_group_size_hint()?, global.rank())?;
        let fits = split::fits_required(global, hint)
            && local_size::validate(global, hint, self.kernel.limits()).is_ok();
        log::debug!(
            "kernel `{}`: work_group_size_hint {hint:?} fits: {fits}",
            self.kernel.name()
        );
        fits.then_some(hint)
    }

    /// Whether a work-group of one work-item would abort the process: kernels that use
    /// sub-group collectives (the layer's or OpenCL's `sub_group_*`) on PoCL with native
    /// sub-groups (seen on PoCL 6.0: `undefined symbol: __pocl_work_group_alloca`; queries such
    /// as `get_sub_group_local_id` run).
    fn single_item_groups_abort(&self) -> bool {
        uniform::single_item_groups_abort(self.kernel)
    }

    fn event(&self, raw: Vec<crate::ffi::Owned<opencl3::event::Event>>) -> Event {
        Event {
            raw,
            device: self.queue.device().clone(),
            kernel: Some(self.kernel.shared_name()),
        }
    }

    /// The local range an ND-range launch uses (`None`: NULL), validated.
    fn plan_local(&self, global: Range, local: LocalSize) -> Result<Option<Range>> {
        self.check_common(global, None)?;
        let k = self.kernel;
        let lim = k.limits();
        let warp_bound = k.program().device().sub_groups().effective.shuffle_backend
            == ShuffleBackend::NvidiaPtx
            && k.uses_sub_groups();
        let whole_warps = |what: &str| {
            local_size::tuned_whole(global, lim, 32).ok_or_else(|| {
                self.invalid(
                    global,
                    None,
                    format!(
                        "{what}: no work-group of whole warps (a multiple of 32 work-items) \
                         divides the global range, and sub-group kernels on NVIDIA need one; \
                         pad the range, or launch a plain range (rounded)"
                    ),
                )
            })
        };
        if let Some(req) = k.required_work_group_size() {
            let exact_other = matches!(local, LocalSize::Exact(l) if l.padded() != req.padded());
            let at_rank = split::at_rank(req, global.rank());
            if exact_other || at_rank.is_none() || !split::fits_required(global, req) {
                return Err(self.invalid(
                    global,
                    Some(req),
                    format!(
                        "the kernel requires work-groups of {:?} (reqd_work_group_size): the \
                         local size must be that and divide the global range",
                        req.as_slice()
                    ),
                ));
            }
            log::debug!("kernel `{}`: {local:?} -> required {req:?}", k.name());
            return Ok(at_rank);
        }
        let chosen = match local {
            // Launch-time conditions: `uniform_local` picks a size that keeps them uniform.
            LocalSize::Auto if self.single_item_groups_abort() && k.id_conditions().is_empty() => {
                Some(local_size::tuned(global, lim))
            }
            LocalSize::Auto if warp_bound => {
                let l = whole_warps("auto local size")?;
                log::debug!(
                    "kernel `{}`: auto local size on nvidia-ptx would let the driver pick a \
                     size that is not a whole number of warps; using {l:?}",
                    k.name()
                );
                Some(l)
            }
            LocalSize::Tuned if warp_bound => Some(whole_warps("tuned local size")?),
            LocalSize::Auto => None,
            LocalSize::Exact(l) => Some(l),
            LocalSize::Tuned => Some(
                self.hinted(global)
                    .unwrap_or_else(|| local_size::tuned(global, lim)),
            ),
        };
        bounds::check_groups(global, chosen).map_err(|r| self.invalid(global, chosen, r))?;
        let tiny = |n: usize| n < uniform::MIN_POCL_COLLECTIVE_GROUP;
        let single = chosen.map_or(tiny(global.len()), |l| tiny(l.len()));
        if single && self.single_item_groups_abort() {
            return Err(self.invalid(
                global,
                chosen,
                "a kernel with sub-group collectives in work-groups of one or two work-items aborts PoCL's process \
                 (undefined symbol __pocl_work_group_alloca); use a larger work-group or a \
                 plain range"
                    .into(),
            ));
        }
        if let Some(l) = chosen {
            local_size::validate(global, l, lim).map_err(|r| self.invalid(global, Some(l), r))?;
            if warp_bound && l.len() % 32 != 0 {
                return Err(self.invalid(
                    global,
                    Some(l),
                    "work-groups of sub-group kernels on NVIDIA must be a multiple of the warp \
                     (32) work-items"
                        .into(),
                ));
            }
        }
        log::debug!(
            "kernel `{}`: ND-range global {global:?}, local {local:?} -> {chosen:?}",
            k.name()
        );
        self.uniform_local(global, chosen, self.offset.unwrap_or(global.zeros_like()))
    }

    fn check_common(&self, global: Range, local: Option<Range>) -> Result<()> {
        self.kernel.check_sub_group_size()?;
        if global.is_empty() {
            return Err(self.invalid(global, local, "a global range has no zero sizes".into()));
        }
        if let Some(o) = self.offset {
            if o.rank() != global.rank() {
                return Err(self.invalid(global, local, format!("offset {o:?} has another rank")));
            }
        }
        let bits = self.queue.device().limits().address_bits;
        let offset = self.offset.unwrap_or(global.zeros_like());
        bounds::check_global(global, offset, bits).map_err(|r| self.invalid(global, local, r))
    }

    /// Arguments against the signature, buffers against the queue's context, and local
    /// memory (arguments and the emulated sub-group scratch) against the device's.
    fn check_args(&self, args: &[Arg], global: Range, local: Option<Range>) -> Result<()> {
        let name = self.kernel.name();
        check_args(name, self.kernel.args(), args)?;
        let context = self.queue.context().key();
        if let Some(reason) = event::foreign_wait(&self.waits, context) {
            return Err(self.invalid(global, local, reason));
        }
        let mut local_bytes = Vec::new();
        for (index, a) in args.iter().enumerate() {
            match a {
                Arg::Buffer { mem, .. } if mem.context() != context => {
                    return Err(Error::InvalidArgument {
                        kernel: name.to_string(),
                        index,
                        reason: format!(
                            "the buffer belongs to another context than the queue on {}",
                            self.queue.device()
                        ),
                    });
                }
                Arg::Local(n) => local_bytes.push(*n),
                _ => {}
            }
        }
        if self.kernel.hidden_scratch() {
            local_bytes.push(self.scratch_bytes(local));
        }
        let device = self.queue.device().limits().local_mem_size;
        bounds::check_local_mem(&local_bytes, device).map_err(|r| self.invalid(global, local, r))
    }

    fn invalid(&self, global: Range, local: Option<Range>, reason: String) -> Error {
        Error::InvalidLaunch {
            kernel: self.kernel.name().to_string(),
            device: self.queue.device().to_string(),
            global: global.as_slice().to_vec(),
            local: local.map(|l| l.as_slice().to_vec()).unwrap_or_default(),
            reason,
        }
    }

    /// Bytes of the emulated sub-group scratch: one `ulong` per work-item of the work-group (of
    /// the largest one the kernel allows when the driver picks the local size).
    fn scratch_bytes(&self, local: Option<Range>) -> usize {
        let items = local.map_or(self.kernel.limits().max_work_group_size, |l| l.len());
        items.saturating_mul(std::mem::size_of::<u64>())
    }

    /// Sets `args` on the variant's kernel and enqueues it.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::nd_range`] for `global` at `offset`, and `args` checked
    /// against the variant's signature.
    unsafe fn enqueue(
        &self,
        variant: Variant,
        args: &[Arg],
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> Result<Event> {
        let name = self.kernel.name();
        let dev = self.queue.device();
        let local = self.uniform_local(global, local, offset)?;
        let mut args = args.to_vec();
        match self.kernel.checked_pointers() {
            Ok(pointers) => args.extend(self.hidden_args(pointers)?),
            Err(why) if checked::enabled() => {
                log::debug!("kernel `{name}`: not instrumented ({why}): guard regions only");
            }
            Err(_) => {}
        }
        let guard = self
            .kernel
            .raw_variant(variant)
            .ok_or_else(|| self.invalid(global, local, format!("no {variant:?} variant")))?;
        for (i, a) in args.iter().enumerate() {
            ffi::set_arg(&guard, i as u32, &a.raw()).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("argument {i} of `{name}` on {dev}"),
                )
            })?;
        }
        if self.kernel.hidden_scratch() {
            let bytes = self.scratch_bytes(local);
            ffi::set_arg(&guard, args.len() as u32, &ffi::RawArg::Local(bytes)).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("the {bytes}-byte sub-group scratch of `{name}` on {dev}"),
                )
            })?;
        }
        let local_v = local.map(|l| l.as_slice().to_vec());
        let detached = self.detached && self.waits.is_empty() && !checked::enabled();
        let waits = event::wait_list(&self.waits)?;
        let (q, at) = (self.queue.raw(), Some(offset.as_slice()));
        let (g, l) = (global.as_slice(), local_v.as_deref());
        // SAFETY: every argument was just set; the caller vouches for the kernel's accesses;
        // the events waited for are live (the launch borrows them).
        let ev = unsafe {
            match detached {
                true => ffi::enqueue_kernel_detached(q, &guard, at, g, l).map(|()| None),
                false => ffi::enqueue_kernel(q, &guard, at, g, l, &waits).map(Some),
            }
        }
        .map_err(|e| self.enqueue_error(e.0, global, local, offset))?;
        let name = Some(self.kernel.shared_name());
        Ok(match ev {
            Some(ev) => Event::new(ev, dev.clone(), name),
            None => Event::detached(dev.clone(), name),
        })
    }

    fn enqueue_error(
        &self,
        code: i32,
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> Error {
        let (name, dev) = (self.kernel.name(), self.queue.device());
        Error::cl(
            "clEnqueueNDRangeKernel",
            code,
            format!("`{name}` on {dev}, global {global:?}, local {local:?}, offset {offset:?}"),
        )
    }
}
