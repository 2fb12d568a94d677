//! Typed launches: ND-ranges with an automatic, exact or tuned local size, and plain ranges
//! with range rounding. Every check happens before anything is enqueued; every launch returns
//! a profiled [`Event`].
//!
//! Dimension order is OpenCL's: dimension 0 is x, the fastest-varying. SYCL's
//! `nd_range<3>{{nz, ny, nx}, {lz, ly, lx}}` is `nd_range(Range::d3(nx, ny, nz),
//! LocalSize::Exact(Range::d3(lx, ly, lz)))` here.
//!
//! ```no_run
//! use clgroups::{launch::LocalSize, Buffer, Program, Queue, Range};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
//! let mut x = Buffer::from_slice(&q, &[1, 2, 3])?;
//! // ND-range, local size chosen by the implementation (the seed's auto_range):
//! p.kernel("inc")?.launch().arg(&x).nd_range(Range::d1(3), LocalSize::Auto)?.wait()?;
//! // Plain range: rounded up to a good size when that helps, guarded in the kernel:
//! p.kernel("inc")?.launch().arg(&x).range(3)?.wait()?;
//! assert_eq!(x.read(&q)?, vec![3, 4, 5]);
//! # Ok::<(), clgroups::Error>(())
//! ```

mod args;

pub use args::{check as check_args, Arg, KernelArg, Local};

use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::ffi;
use crate::kernel::Kernel;
use crate::plan::rounding::Variant;
use crate::plan::{local_size, rounding};
use crate::queue::Queue;
use crate::range::Range;
use std::time::Duration;

/// The local size of an ND-range launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalSize {
    /// The implementation chooses (OpenCL: a NULL local size; the seed's `auto_range`). The
    /// global range is never changed.
    Auto,
    /// Exactly this local range.
    Exact(Range),
    /// The largest work-group that divides the global range and suits the kernel's preferred
    /// multiple and maximum (the seed's "kernel query" approach, built in).
    Tuned,
}

/// A finished-or-running command (or several in one in-order queue, for a plain range that
/// runs as pieces), with profiling times.
#[derive(Debug)]
pub struct Event {
    raw: Vec<opencl3::event::Event>,
    device: Device,
    kernel: Option<Kernel>,
}

impl Event {
    pub(crate) fn new(raw: opencl3::event::Event, device: Device, kernel: Option<Kernel>) -> Self {
        Event {
            raw: vec![raw],
            device,
            kernel,
        }
    }

    /// What the event is for, in error messages (built only when needed: launches stay cheap).
    fn context(&self) -> String {
        match &self.kernel {
            Some(k) => format!("`{}` on {}", k.name(), self.device),
            None => self.device.to_string(),
        }
    }

    /// Waits for the command(s) to finish, each at most [`crate::wait::limit`]
    /// ([`Error::Timeout`] otherwise).
    pub fn wait(&self) -> Result<()> {
        self.raw
            .iter()
            .try_for_each(|e| crate::wait::event(e, || self.context()))
    }

    /// Device time from the start of the first command to the end of the last (waits first).
    pub fn duration(&self) -> Result<Duration> {
        let (start, end) = self.span()?;
        Ok(Duration::from_nanos(end.saturating_sub(start)))
    }

    /// Profiling start of the first command and end of the last, in device nanoseconds.
    pub fn span(&self) -> Result<(u64, u64)> {
        self.wait()?;
        let err = |e: opencl3::error_codes::ClError| {
            Error::cl("clGetEventProfilingInfo", e.0, self.context())
        };
        let (first, last) = (&self.raw[0], &self.raw[self.raw.len() - 1]);
        let start = first.profiling_command_start().map_err(err)?;
        let end = last.profiling_command_end().map_err(err)?;
        Ok((start, end))
    }
}

impl Kernel {
    /// Starts a launch on the program's queue.
    pub fn launch(&self) -> Launch<'_> {
        Launch {
            kernel: self,
            queue: self.program().queue().clone(),
            args: Vec::new(),
            offset: None,
        }
    }
}

/// A launch being prepared: arguments, then a shape ([`Launch::nd_range`] or
/// [`Launch::range`]) enqueues it.
#[must_use = "a launch does nothing until nd_range() or range() is called"]
pub struct Launch<'k> {
    kernel: &'k Kernel,
    queue: Queue,
    args: Vec<Arg>,
    offset: Option<Range>,
}

impl Launch<'_> {
    /// Appends an argument: `&Buffer<T>`, a scalar, or [`Local`].
    pub fn arg(mut self, arg: impl KernelArg) -> Self {
        self.args.push(arg.to_arg());
        self
    }

    /// Appends an already-built argument.
    pub fn raw_arg(mut self, arg: Arg) -> Self {
        self.args.push(arg);
        self
    }

    /// A global offset (OpenCL order) for ND-range launches.
    pub fn offset(mut self, offset: Range) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Enqueues over an ND-range: `global` work-items in work-groups of `local`.
    pub fn nd_range(self, global: impl Into<Range>, local: LocalSize) -> Result<Event> {
        let global = global.into();
        let local = self.plan_local(global, local)?;
        check_args(self.kernel.name(), self.kernel.args(), &self.args)?;
        let offset = self.offset.unwrap_or(Range::new(&vec![0; global.rank()])?);
        self.enqueue(Variant::Original, &self.args, global, local, offset)
    }

    /// Enqueues over a plain range (no work-groups promised to the kernel): rounded up and
    /// guarded when the range is awkward, per [`crate::plan::rounding`] (its
    /// [`pieces`](rounding::RoundingPlan::pieces) are enqueued in order).
    pub fn range(self, global: impl Into<Range>) -> Result<Event> {
        let user = global.into();
        self.check_common(user, None)?;
        let can_round = self.kernel.rounding_support().is_ok();
        let cfg = self.kernel.program().rounding();
        let plan = rounding::plan(user, cfg, self.kernel.limits(), can_round);
        log::debug!("kernel `{}`: rounding plan {plan:?}", self.kernel.name());
        if cfg.trace {
            for line in plan.trace_lines() {
                println!("{line}");
            }
        }
        let name = self.kernel.name();
        check_args(name, self.kernel.args(), &self.args)?;
        let pieces = plan.pieces();
        let base = self.offset.unwrap_or(pieces[0].offset);
        let mut args = self.args.clone();
        if plan.rounded_variant {
            let sizes = user.padded().into_iter();
            let offsets = base.padded().into_iter().take(user.rank());
            let offsets = offsets.chain(std::iter::repeat(0)).take(3);
            args.extend(sizes.chain(offsets).map(|n| KernelArg::to_arg(&(n as u64))));
        }
        let mut events = Vec::new();
        for piece in pieces {
            let offset = Range::new(
                &(0..user.rank())
                    .map(|d| base.get(d) + piece.offset.get(d))
                    .collect::<Vec<_>>(),
            )?;
            log::debug!("kernel `{name}`: {piece:?} at offset {offset:?}");
            let ev = self.enqueue(piece.variant, &args, piece.global, plan.local, offset)?;
            events.extend(ev.raw);
        }
        Ok(Event {
            raw: events,
            device: self.queue.device().clone(),
            kernel: Some(self.kernel.clone()),
        })
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
        let chosen = match local {
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
            LocalSize::Tuned => Some(local_size::tuned(global, lim)),
        };
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
        Ok(chosen)
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
        Ok(())
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
        items * std::mem::size_of::<u64>()
    }

    /// Sets `args` on the variant's kernel and enqueues it.
    fn enqueue(
        &self,
        variant: Variant,
        args: &[Arg],
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> Result<Event> {
        let name = self.kernel.name();
        let dev = self.queue.device();
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
        let ev = ffi::enqueue_kernel(
            self.queue.raw(),
            &guard,
            Some(offset.as_slice()),
            global.as_slice(),
            local_v.as_deref(),
            &[],
        )
        .map_err(|e| {
            Error::cl(
                "clEnqueueNDRangeKernel",
                e.0,
                format!("`{name}` on {dev}, global {global:?}, local {local:?}, offset {offset:?}"),
            )
        })?;
        Ok(Event::new(ev, dev.clone(), Some(self.kernel.clone())))
    }
}
