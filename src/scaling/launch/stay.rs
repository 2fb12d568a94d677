//! A launch the cost model keeps on one device ([`RootLaunch::stay`]): where every colored
//! argument is held whole there already, it runs without analysis or pricing, as a
//! single-device launch of the kernel as written where that is the same launch (the same
//! work-items and offset: a plain range as one device runs it, an ND-range in its
//! work-groups, with the whole buffers there in place of the colored ones), else as the
//! partitioned variant over the whole range. The partitioned variant takes twice as many
//! arguments (the origins and the whole launch's size), which the driver sets and copies at
//! every launch. Each colored argument's residence is looked at once (a lock), and the
//! launch's partition and figures are the choice's own (no copy, no lookup).

use super::super::arg::Value;
use super::super::kernel::{Chosen, ShapeKey};
use super::super::{MultiEvent, Spread};
use super::place::lock;
use super::terms::Shape3;
use super::{sub_launch, RootLaunch};
use crate::error::Result;
use crate::launch::{Arg, LocalSize};
use crate::plan::cost::watch::Timing;
use crate::plan::cost::SpreadPolicy;
use crate::plan::partition::Partition;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What [`RootLaunch::stays`] found: the shape's choice, how the launch is timed and the
/// arguments of the kernel as written on the chosen device, where it may run so.
struct Stay {
    chosen: Arc<Chosen>,
    timing: Option<Timing>,
    written: Option<Vec<Arg>>,
}

impl RootLaunch<'_> {
    /// The launch `s` (of `key`) run on the device the model chose for its shape, where it
    /// may run there without analysis or pricing ([`RootLaunch::stays`]), else `None`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn stay(&self, s: &Shape3, key: &ShapeKey) -> Option<Result<MultiEvent>> {
        let Stay {
            chosen,
            timing,
            written,
        } = self.stays(s, key)?;
        let d = chosen.device;
        let kernel = self.kernel.as_written.get(d);
        // SAFETY: the caller's contract, on one device holding every colored buffer whole:
        // the kernel as written where that is the same launch, else its partitioned variant
        // over the whole range.
        let ran = || unsafe {
            match (kernel, written) {
                (Some(kernel), Some(args)) => {
                    self.as_written(s, d, kernel, args, chosen.partition.clone())
                }
                _ => self.resident(s, d, Partition::clone(&chosen.partition)),
            }
        };
        Some(self.timed_as(s, Some(chosen.priced.clone()), timing, ran))
    }

    /// The shape's choice of one device where the launch may run there without analysis or
    /// pricing, how the launch is timed ([`Figures::timing`](crate::plan::cost::Figures::timing))
    /// and its arguments as written there: the cost model chose it from warm figures (not
    /// forced, not strict: strict mode still refuses what the contract does not split) and
    /// every colored argument is held whole there already (moved by a launch of the shape;
    /// nothing to move, and one device is always right), and no re-sample of the split is
    /// due ([`Resample::due`](crate::plan::cost::Resample::due)). Pricing again would choose
    /// it again: its figures do not change once warm (but by a re-sample), and moving nothing
    /// is the least the one-device option can cost.
    fn stays(&self, s: &Shape3, key: &ShapeKey) -> Option<Stay> {
        let k = self.kernel;
        if k.policy.strict || k.policy.spread != SpreadPolicy::Model {
            return None;
        }
        let chosen = k.stays(key)?;
        let d = chosen.device;
        // One pass over the arguments, one look at each colored one's residence.
        let mut written = self
            .may_run_as_written(s)
            .then(|| Vec::with_capacity(self.args.len()));
        for v in &self.args {
            let arg = match v {
                Value::Colored(c) => {
                    let held = c.residence.as_deref()?;
                    // Shared placement: the parent is the whole.
                    let arg = held.held_on(d, |whole| whole.map(|w| Arg::bytes_as(w, c.elem)))?;
                    arg.or_else(|| c.whole.clone())
                }
                // A plain buffer: a part of an earlier launch on another queue may still use
                // it (the partitioned variant's launch orders itself for it).
                Value::Plain(Arg::Buffer { .. }) => None,
                Value::Plain(a) => Some(a.clone()),
            };
            match (arg, &mut written) {
                (Some(a), Some(args)) => args.push(a),
                (None, _) => written = None,
                (Some(_), None) => {}
            }
        }
        // One look at the figures: a re-sample of the other option is due (the launch is
        // priced again, which runs it), else the launch is counted.
        let priced = &chosen.priced;
        let timing = {
            let mut f = lock(&chosen.figures);
            (!f.resample.due(priced)).then(|| f.timing(priced))?
        };
        Some(Stay {
            chosen,
            timing,
            written,
        })
    }

    /// Whether the launch `s` may run whole on one device as the kernel is written: the
    /// same work-items (a plain range, or an ND-range not rounded), no checked build, no
    /// obstacle to the rewrite.
    fn may_run_as_written(&self, s: &Shape3) -> bool {
        let k = self.kernel;
        (s.user == s.global || s.plain) && !k.checked && k.rewrite_obstacle.is_none()
    }

    /// The launch `s` run whole on device `d` as `kernel` (the kernel as written there) with
    /// `args` (the whole buffers there). On devices that compile alone, the kernel's first
    /// run on `d` runs by itself (every queue finished first, then waited for).
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`; every colored buffer
    /// whole on `d`.
    unsafe fn as_written(
        &self,
        s: &Shape3,
        d: usize,
        kernel: &crate::kernel::Kernel,
        args: Vec<Arg>,
        partition: Arc<Partition>,
    ) -> Result<MultiEvent> {
        let bit = 1u64.checked_shl(d as u32).unwrap_or(0);
        let ran = (self.kernel.memo.written_ran).fetch_or(bit, Ordering::Relaxed);
        let alone = ran & bit == 0 && self.compile_alone();
        if alone {
            self.queues().iter().try_for_each(|q| q.finish())?;
        }
        let mut launch = sub_launch(kernel, args, &self.waits);
        if let Some(o) = self.offset {
            launch = launch.offset(o);
        }
        // A plain range as one device runs it (its local size the driver's or the tuned one,
        // its rounding its own), an ND-range in the work-groups asked for.
        let (launch, prepared) = launch.or_emulated(|l| match s.plain {
            true => l.prepare_range(s.user),
            false => l.prepare_nd(s.global, LocalSize::Exact(s.local)),
        })?;
        // Written buffers: their parts (and margins) are stale from now on.
        self.mark_written();
        self.kernel.again_on(d);
        // SAFETY: the caller's contract: the whole launch on d, every colored buffer whole
        // there.
        let event = unsafe { launch.execute(prepared)? };
        if alone {
            event.wait()?;
        }
        let mut events: Vec<_> = (0..self.kernel.kernels.len()).map(|_| None).collect();
        events[d] = Some(event);
        Ok(MultiEvent {
            partition,
            events,
            spread: Spread::Resident {
                device: d,
                moved: 0,
            },
            priced: None,
        })
    }
}
