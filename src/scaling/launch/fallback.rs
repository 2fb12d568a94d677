//! Launches of kernels without a partitioned variant ([`RootKernel::rewrite_obstacle`]): the
//! kernel as written, per device or on device 0, as [`crate::plan::root_fallback`] decides.

use super::super::arg::{ColoredArg, Value};
use super::super::contract::{self, LaunchFacts, ParamFacts};
use super::super::{MultiEvent, Placement, Spread};
use super::{sub_launch, RootLaunch};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ffi;
use crate::launch::{Arg, Event, LocalSize};
use crate::obstacle::Obstacle;
use crate::plan::launch::Shape as PlanShape;
use crate::plan::partition::{partition, Partition};
use crate::plan::root_fallback::{per_device_parts, root_fallback, RootFallback};
use crate::plan::split;
use crate::plan::Refusal;
use crate::queue::Queue;
use crate::range::Range;
use std::sync::Arc;

/// What a fallback launch runs: an ND-range in work-groups of a [`LocalSize`], or a plain
/// range.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    NdRange(LocalSize),
    Plain,
}

impl RootLaunch<'_> {
    /// Runs the kernel as written over `global` (see [`crate::plan::root_fallback`]).
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for `global`.
    pub(super) unsafe fn fallback(self, global: Range, shape: Shape) -> Result<MultiEvent> {
        let k = self.kernel;
        if let Some(o) = self.offset.filter(|o| o.rank() != global.rank()) {
            return Err(k.refused(global, None, Refusal::OffsetRank { offset: o }));
        }
        let kernels = &k.kernels;
        let shared = k.placement == Placement::Shared;
        let facts = LaunchFacts {
            placement: k.placement,
            rank: global.rank(),
            offset_is_zero: self
                .offset
                .is_none_or(|o| o.as_slice().iter().all(|&v| v == 0)),
            busy: kernels.len(),
            unified: kernels
                .iter()
                .all(|k| k.program().device().limits().host_unified_memory),
            gathered: false,
        };
        let lossy = shared
            && self
                .args
                .iter()
                .enumerate()
                .any(|(i, v)| contract::check(i, k.params.get(i), v, &facts).is_err());
        // Code the scanner did not read (a header) may ask for launch values.
        let program = kernels[0].program();
        let splittable = program.splittable() && program.unseen_code().is_none();
        let (how, why) = root_fallback(shared, splittable, lossy);
        // Buffers a launch left whole on one device move back to their parts first.
        self.settle_all()?;
        self.mark_written();
        log::debug!(
            "root kernel `{}` without its partitioned variant ({}): {how:?}: {why}",
            k.name(),
            k.rewrite_obstacle().unwrap_or(&Obstacle::NotDeclared)
        );
        let args = self.args.clone();
        // SAFETY: the caller's contract, for the same range.
        let ran = unsafe {
            match (how, shape) {
                (RootFallback::PerDevice, Shape::NdRange(local)) => {
                    let request = super::Request {
                        global,
                        shape: PlanShape::NdRange(local),
                        offset: self.offset,
                    };
                    let plan = self.kernel.plan(global, request.shape, self.offset)?;
                    self.run(plan, request)
                }
                (RootFallback::PerDevice, Shape::Plain) => self.per_device_range(global),
                (RootFallback::OneDevice { gather }, shape) => {
                    self.on_device_0(global, shape, gather)
                }
            }
        };
        // The kernel as written may have touched any part from any queue: later launches
        // wait for every queue.
        super::order::cross_all(&args);
        ran
    }

    /// A plain range split over the devices in parts of at least two work-items (whole
    /// required work-groups), each a single-device plain range at its offset; device 0 runs
    /// it all where it does not split so.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::range`] for `user`.
    unsafe fn per_device_range(self, user: Range) -> Result<MultiEvent> {
        let kernels = &self.kernel.kernels;
        let unit = match kernels[0].required_work_group_size() {
            Some(req) => split::at_rank(req, user.rank()),
            None => Range::new(&[1, 1, 1][..user.rank()]).ok(),
        };
        let parts = unit.and_then(|u| Some((u, per_device_parts(user, u, kernels.len())?)));
        let Some((unit, parts)) = parts else {
            log::debug!("range {user:?} does not split in parts of two work-items: device 0");
            // SAFETY: the caller's contract.
            return unsafe { self.on_device_0(user, Shape::Plain, false) };
        };
        let args = self.plain_args()?;
        let base = self.offset.unwrap_or(user.zeros_like());
        // Every device's part is prepared before the first is enqueued.
        let mut prepared = Vec::with_capacity(parts.len());
        let order = self.order()?;
        for (d, (k, part)) in kernels.iter().zip(&parts).enumerate() {
            let Some((off, size)) = *part else {
                prepared.push(None);
                continue;
            };
            let offset = (0..user.rank()).fold(off, |o, d| o.with(d, o.get(d) + base.get(d)));
            let waits = order.waits(&self.waits, d);
            let launch = sub_launch(k, args.clone(), &waits).offset(offset);
            // Work-groups too small for PoCL's native collectives: the emulated build.
            prepared.push(Some(launch.or_emulated(|l| l.prepare_range(size))?));
        }
        let mut events = Vec::with_capacity(parts.len());
        for part in prepared {
            let event = match part {
                // SAFETY: the parts tile `user` (plan::root_fallback), each at its offset: the
                // caller's contract covers every work-item; shared placement passes whole
                // buffers.
                Some((launch, p)) => Some(unsafe { launch.execute(p)? }),
                None => None,
            };
            events.push(event);
        }
        flush(kernels.iter().map(|k| k.program().queue()))?;
        Ok(MultiEvent {
            partition: Arc::new(partition(user, unit, kernels.len())?),
            events,
            spread: Spread::Split,
            priced: None,
        })
    }

    /// The whole launch on device 0, after the other devices' queues finish; with `gather`,
    /// colored buffers are gathered there first and copied back to every device's part after.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for `global`.
    unsafe fn on_device_0(self, global: Range, shape: Shape, gather: bool) -> Result<MultiEvent> {
        let k = self.kernel;
        let facts = LaunchFacts {
            placement: k.placement,
            rank: global.rank(),
            offset_is_zero: true,
            busy: 1,
            unified: true,
            gathered: gather,
        };
        // Declared read-only kinds bind where the driver or the source says the kernel writes.
        let declared: Vec<ParamFacts> = k
            .params
            .iter()
            .zip(k.kernels[0].args())
            .map(|(p, a)| ParamFacts {
                read_only: p.read_only || a.is_const.is_none(),
                ..p.clone()
            })
            .collect();
        // Outside strict mode, a declaration the kernel breaks here only costs the copy back.
        for (i, v) in self.args.iter().enumerate().filter(|_| k.policy.strict) {
            contract::check(i, declared.get(i), v, &facts).map_err(|breach| {
                let partitioned = k.placement == Placement::Partitioned;
                k.refused(
                    global,
                    None,
                    Refusal::Contract {
                        partitioned,
                        breach,
                    },
                )
            })?;
        }
        let queues: Vec<&Queue> = k.kernels.iter().map(|k| k.program().queue()).collect();
        queues.iter().try_for_each(|q| q.finish())?;
        let staged = match gather {
            true => self.gather(&queues)?,
            false => Vec::new(),
        };
        let mut args = Vec::with_capacity(self.args.len());
        for (i, v) in self.args.iter().enumerate() {
            args.push(match v {
                Value::Plain(a) => a.clone(),
                Value::Colored(c) => match staged.iter().find(|s| s.0 == i) {
                    Some((_, whole)) => Arg::bytes_as(whole, c.elem),
                    None => self.colored_arg(c, i, 0)?,
                },
            });
        }
        let mut launch = sub_launch(&k.kernels[0], args, &self.waits);
        if let Some(o) = self.offset {
            launch = launch.offset(o);
        }
        let (launch, prepared) = launch.or_emulated(|l| match shape {
            Shape::NdRange(local) => l.prepare_nd(global, local),
            Shape::Plain => l.prepare_range(global),
        })?;
        // SAFETY: the whole launch on one device, every colored buffer whole there (its
        // parent in shared placement, gathered in partitioned placement): the caller's
        // contract.
        let event: Event = unsafe { launch.execute(prepared)? };
        if gather {
            event.wait()?;
            self.scatter(&queues, &staged)?;
        }
        let mut events: Vec<Option<Event>> = (1..k.kernels.len()).map(|_| None).collect();
        events.insert(0, Some(event));
        let mut chunks = vec![0; k.kernels.len()];
        chunks[0] = 1;
        Ok(MultiEvent {
            partition: Arc::new(Partition { dim: 0, chunks }),
            events,
            spread: Spread::OneDevice(Refusal::NoPartitionedVariant(
                (k.rewrite_obstacle.clone()).unwrap_or_else(|| Arc::new(Obstacle::NotDeclared)),
            )),
            priced: None,
        })
    }

    /// Every colored argument as one whole buffer on device 0, read from the devices' parts
    /// (each device's own elements), with its argument index.
    fn gather(&self, queues: &[&Queue]) -> Result<Vec<(usize, Buffer<u8>)>> {
        let mut staged = Vec::new();
        for (i, v) in self.args.iter().enumerate() {
            let Value::Colored(c) = v else { continue };
            let es = c.elem_size;
            let mut host = vec![0u8; c.len * es];
            for (d, runs) in c.owned.iter().enumerate() {
                let Some(mem) = part_mem(c, d) else { continue };
                for &(a, b) in runs {
                    let at = (a - c.stored[d].0) * es;
                    // SAFETY: device d's part holds elements `stored[d]`, which contain its
                    // own run [a, b).
                    unsafe { ffi::read_bytes(queues[d].raw(), mem, at, &mut host[a * es..b * es]) }
                        .map_err(|e| transfer("clEnqueueReadBuffer", e.0, queues[d], c))?;
                }
            }
            staged.push((i, Buffer::from_slice(queues[0], &host)?));
        }
        log::debug!("gathered {} colored buffers on device 0", staged.len());
        Ok(staged)
    }

    /// Copies the gathered buffers the kernel may write back to every device's part (all the
    /// elements the part holds, so halos and copies stay consistent).
    fn scatter(&self, queues: &[&Queue], staged: &[(usize, Buffer<u8>)]) -> Result<()> {
        for (i, whole) in staged {
            let Some(Value::Colored(c)) = self.args.get(*i) else {
                continue;
            };
            if self.kernel.params.get(*i).is_some_and(|p| p.read_only) {
                continue;
            }
            let host = whole.read(queues[0])?;
            let es = c.elem_size;
            for (d, &(lo, hi)) in c.stored.iter().enumerate() {
                let Some(mem) = part_mem(c, d) else { continue };
                // SAFETY: device d's part holds exactly elements [lo, hi).
                unsafe { ffi::write_bytes(queues[d].raw(), mem, 0, &host[lo * es..hi * es]) }
                    .map_err(|e| transfer("clEnqueueWriteBuffer", e.0, queues[d], c))?;
            }
        }
        Ok(())
    }

    /// The arguments of a launch of the kernel as written in shared placement (colored
    /// buffers whole).
    fn plain_args(&self) -> Result<Vec<Arg>> {
        let args = self.args.iter().enumerate();
        args.map(|(i, v)| match v {
            Value::Plain(a) => Ok(a.clone()),
            Value::Colored(c) => self.colored_arg(c, i, 0),
        })
        .collect()
    }
}

/// The memory object of device `d`'s part of `c`.
pub(super) fn part_mem(c: &ColoredArg, d: usize) -> Option<opencl3::types::cl_mem> {
    match c.part(d)? {
        Arg::Buffer { mem, .. } => Some(mem.raw()),
        _ => None,
    }
}

fn transfer(call: &'static str, code: i32, q: &Queue, c: &ColoredArg) -> Error {
    let what = format!("gathering a ColoredBuffer<{}> on {}", c.elem, q.device());
    Error::cl(call, code, what)
}

/// Flushes every queue, so that the sub-launches start.
pub(super) fn flush<'q>(mut queues: impl Iterator<Item = &'q Queue>) -> Result<()> {
    queues.try_for_each(Queue::flush)
}
