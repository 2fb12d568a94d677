//! A launch kept whole on one device by the cost model, run as a single-device launch of the
//! kernel as written: the same work-items and offset (a plain range as one device runs it, an
//! ND-range in its work-groups), with the whole buffers there in place of the colored ones.
//! The partitioned variant takes twice as many arguments (the origins and the whole launch's
//! size), which the driver sets and copies at every launch.

use super::super::arg::Value;
use super::super::{MultiEvent, Spread};
use super::terms::Shape3;
use super::{sub_launch, RootLaunch};
use crate::error::Result;
use crate::launch::{Arg, LocalSize};
use crate::plan::partition::Partition;
use std::sync::atomic::Ordering;

impl RootLaunch<'_> {
    /// The launch `s` run whole on device `d` as the kernel is written, where that is the
    /// same launch as the partitioned variant over the whole range: every colored argument
    /// held whole on `d` already, no plain buffer (a part of an earlier launch on another
    /// queue may still use it) and no checked build; a plain range runs as one device runs it
    /// (`Launch::range`), an ND-range in its work-groups; else `partition` back. On devices
    /// that compile alone, the kernel's first run on `d` runs by itself (every queue finished
    /// first, then waited for).
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn as_written(
        &self,
        s: &Shape3,
        d: usize,
        partition: Partition,
    ) -> std::result::Result<Result<MultiEvent>, Partition> {
        let k = self.kernel;
        let (Some(kernel), Some(args)) = (k.as_written.get(d), self.written_args(s, d)) else {
            return Err(partition);
        };
        let bit = 1u64.checked_shl(d as u32).unwrap_or(0);
        let ran = k.memo.written_ran.fetch_or(bit, Ordering::Relaxed);
        let first = ran & bit == 0 && self.compile_alone();
        // SAFETY: the caller's contract, on one device holding every colored buffer whole.
        Ok(unsafe { self.run_as_written(s, d, kernel, args, first, partition) })
    }

    /// The arguments of the kernel as written for the launch `s` whole on `d`, where it is the
    /// same launch ([`RootLaunch::as_written`]).
    fn written_args(&self, s: &Shape3, d: usize) -> Option<Vec<Arg>> {
        let k = self.kernel;
        if (s.user != s.global && !s.plain) || k.checked || k.rewrite_obstacle.is_some() {
            return None;
        }
        let mut args = Vec::with_capacity(self.args.len());
        for v in &self.args {
            args.push(match v {
                Value::Colored(c) => match c.residence.as_deref()?.held_on(d)? {
                    Some(whole) => Arg::bytes_as(&whole, c.elem),
                    // Shared placement: the parent is the whole.
                    None => c.whole.clone()?,
                },
                Value::Plain(Arg::Buffer { .. }) => return None,
                Value::Plain(a) => a.clone(),
            });
        }
        Some(args)
    }

    /// Enqueues the kernel as written on `d` with `args` (`alone`: after every queue
    /// finished, and waited for).
    ///
    /// # Safety
    ///
    /// As [`RootLaunch::as_written`].
    unsafe fn run_as_written(
        &self,
        s: &Shape3,
        d: usize,
        kernel: &crate::kernel::Kernel,
        args: Vec<Arg>,
        alone: bool,
        partition: Partition,
    ) -> Result<MultiEvent> {
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
