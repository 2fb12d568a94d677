//! A launch the cost model keeps on one device ([`RootLaunch::stay`]): where every colored
//! argument is held whole there already, it runs without analysis or pricing, as a
//! single-device launch of the kernel as written where that is the same launch (the same
//! work-items and offset: a plain range as one device runs it, an ND-range in its
//! work-groups, with the whole buffers there in place of the colored ones), else as the
//! partitioned variant over the whole range. The partitioned variant takes twice as many
//! arguments (the origins and the whole launch's size), which the driver sets and copies at
//! every launch. Each colored argument's residence is looked at once (a lock), and the
//! launch's partition and figures are the choice's own (no copy, no lookup).
//!
//! A launch run as written is remembered ([`WrittenRun`], by [`Request`]): the next one like
//! it (the same request, the same scalars, colored buffers of the same types) reruns it
//! ([`RootLaunch::rerun`]) with the same choice, plan and prepared inner launch, looking only
//! at the residences and the figures: no planning, no lookup of the shape's choice, no check
//! of the arguments again (a launch's host time bounds a chain of short launches).

use super::super::arg::{ColoredArg, Value};
use super::super::kernel::{Chosen, ShapeKey};
use super::super::{MultiEvent, Spread};
use super::place::lock;
use super::terms::{Request, Shape3};
use super::{sub_launch, RootLaunch};
use crate::error::Result;
use crate::event::Event;
use crate::kernel::ArgKey;
use crate::kernel::Kernel;
use crate::launch::{Arg, Launch, LocalSize, Prepared, ScalarBytes};
use crate::plan::cost::watch::Timing;
use crate::plan::cost::SpreadPolicy;
use crate::plan::launch::Plan;
use crate::plan::partition::Partition;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What [`RootLaunch::stays`] found: the shape's choice, how the launch is timed and the
/// arguments of the kernel as written on the chosen device, where it may run so.
struct Stay {
    chosen: Arc<Chosen>,
    timing: Option<Timing>,
    written: Option<Vec<Arg>>,
    /// The generation of the choices when `chosen` was looked up.
    generation: u64,
}

/// A launch the stay path ran as the kernel is written on the chosen device, remembered for
/// the next one like it ([`RootLaunch::rerun`]).
pub(in crate::scaling) struct WrittenRun {
    /// The generation of the shape's choices it was run under: any later choice (or a
    /// choice forgotten) makes it stale.
    generation: u64,
    shape: Shape3,
    chosen: Arc<Chosen>,
    /// Per argument of the user's launch, what a launch like it passes there.
    args: Vec<Slot>,
    /// The inner launch's plan (the kernel as written on the chosen device) and the user's
    /// range and offset where that plan passes them.
    plan: Arc<Plan>,
    user_range: Option<[u64; 6]>,
}

/// An argument of a [`WrittenRun`]: a colored buffer (whole on the device) of this element
/// type, a scalar of this type and value (the inner plan may depend on a scalar: launch-time
/// id conditions), or local memory of this size.
enum Slot {
    Colored(ArgKey),
    /// A plain buffer: the same memory object again.
    Plain(ArgKey),
    Scalar(ArgKey, ScalarBytes),
    Local(usize),
}

impl Slot {
    /// The slot of `v`, passed to the kernel as written as `a`.
    fn of(v: &Value, a: &Arg) -> Slot {
        match (v, a) {
            (Value::Plain(Arg::Scalar { bytes, .. }), _) => Slot::Scalar(a.key(), bytes.clone()),
            (Value::Plain(Arg::Local(n)), _) => Slot::Local(*n),
            (Value::Plain(Arg::Buffer { .. }), _) => Slot::Plain(a.key()),
            _ => Slot::Colored(a.key()),
        }
    }

    /// Whether the plain argument `a` fills this slot (a scalar of the same type and bytes,
    /// local memory of the same size, the same plain buffer).
    fn holds(&self, a: &Arg) -> bool {
        match (self, a) {
            (Slot::Scalar(key, was), Arg::Scalar { bytes, .. }) => {
                a.key() == *key && bytes[..] == was[..]
            }
            (Slot::Local(m), Arg::Local(n)) => n == m,
            (Slot::Plain(key), Arg::Buffer { .. }) => a.key() == *key,
            _ => false,
        }
    }
}

impl RootLaunch<'_> {
    /// The launch `s` (of `key`) run on the device the model chose for its shape, where it
    /// may run there without analysis or pricing ([`RootLaunch::stays`]), else `None`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn stay(
        &self,
        s: &Shape3,
        key: &ShapeKey,
        request: &Request,
    ) -> Option<Result<MultiEvent>> {
        let Stay {
            chosen,
            timing,
            written,
            generation,
        } = self.stays(s, key)?;
        let d = chosen.device;
        let kernel = self.kernel.as_written.get(d);
        let priced = Arc::clone(&chosen.priced);
        // SAFETY: the caller's contract, on one device holding every colored buffer whole:
        // the kernel as written where that is the same launch, else its partitioned variant
        // over the whole range.
        let ran = || unsafe {
            match (kernel, written) {
                (Some(kernel), Some(args)) => {
                    let run = (request, generation, chosen);
                    self.as_written(s, kernel, args, run)
                }
                _ => self.resident(s, d, Partition::clone(&chosen.partition)),
            }
        };
        Some(self.timed_as(s, Some(priced), timing, ran))
    }

    /// The launch of `request` rerun as a remembered one like it ([`WrittenRun`]) ran, where
    /// there is one, its choice is current, every colored argument is held whole on its
    /// device and no re-sample of the split is due; else `None` (the launch is planned).
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch of `request`.
    pub(super) unsafe fn rerun(&self, request: &Request) -> Option<Result<MultiEvent>> {
        let k = self.kernel;
        if !self.model_keeps() || crate::checked::enabled() {
            return None;
        }
        let run = k.memo.written.get(request)?;
        if run.generation != k.generation() || run.args.len() != self.args.len() {
            return None;
        }
        let d = run.chosen.device;
        let mut args = Vec::with_capacity(self.args.len());
        for (v, slot) in self.args.iter().zip(&run.args) {
            let arg = match (v, slot) {
                (Value::Colored(c), Slot::Colored(key)) => {
                    let arg = whole_on(c, d)??;
                    (arg.key() == *key).then_some(arg)?
                }
                (Value::Plain(a), slot) if slot.holds(a) => a.clone(),
                _ => return None,
            };
            args.push(arg);
        }
        if !self.plain_ordered(d) {
            return None;
        }
        // Events of another context: refused by the launch planned.
        if !self.waits.is_empty() {
            let context = k.as_written[d].program().queue().context().key();
            crate::event::foreign_wait(&self.waits, context)
                .is_none()
                .then_some(())?;
        }
        let timing = kept_timing(&run.chosen)?;
        // SAFETY: the caller's contract, on one device holding every colored buffer whole, as
        // the remembered launch ran (the same request, plan, scalars and argument types).
        let ran = || unsafe { self.rerun_on(&run, args) };
        let priced = Arc::clone(&run.chosen.priced);
        Some(self.timed_as(&run.shape, Some(priced), timing, ran))
    }

    /// `run` rerun with `args` (the whole buffers on its device).
    ///
    /// # Safety
    ///
    /// As [`RootLaunch::rerun`].
    unsafe fn rerun_on(&self, run: &WrittenRun, args: Vec<Arg>) -> Result<MultiEvent> {
        let d = run.chosen.device;
        let launch = self.whole_launch(&self.kernel.as_written[d], args);
        let prepared = Prepared {
            plan: Arc::clone(&run.plan),
            user_range: run.user_range,
            hidden: Vec::new(),
        };
        self.mark_written_whole();
        self.kernel.again_on(d);
        // SAFETY: the caller's contract: the whole launch on d, every colored buffer whole
        // there, prepared as the remembered launch like it was.
        let event = unsafe { launch.execute(prepared)? };
        Ok(self.on_one(d, event, run.chosen.partition.clone()))
    }

    /// The [`MultiEvent`] of a launch run whole on device `d` as `event`.
    fn on_one(&self, d: usize, event: Event, partition: Arc<Partition>) -> MultiEvent {
        let mut events: Vec<_> = (0..self.kernel.kernels.len()).map(|_| None).collect();
        events[d] = Some(event);
        MultiEvent {
            partition,
            events,
            spread: Spread::Resident {
                device: d,
                moved: 0,
            },
            priced: None,
        }
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
        if !self.model_keeps() {
            return None;
        }
        let generation = k.generation();
        let chosen = k.stays(key)?;
        let d = chosen.device;
        // One pass over the arguments, one look at each colored one's residence.
        let mut written = self
            .may_run_as_written(s)
            .then(|| Vec::with_capacity(self.args.len()));
        let plain_ordered = self.plain_ordered(d);
        for v in &self.args {
            let arg = match v {
                Value::Colored(c) => whole_on(c, d)?,
                // A plain buffer: a command on another queue may still use it, unless device
                // d's queue follows every other (else the partitioned variant's launch orders
                // itself for it).
                Value::Plain(a @ Arg::Buffer { .. }) => plain_ordered.then(|| a.clone()),
                Value::Plain(a) => Some(a.clone()),
            };
            match (arg, &mut written) {
                (Some(a), Some(args)) => args.push(a),
                (None, _) => written = None,
                (Some(_), None) => {}
            }
        }
        let timing = kept_timing(&chosen)?;
        Some(Stay {
            chosen,
            timing,
            written,
            generation,
        })
    }

    /// Whether a launch on device `d` alone may use the plain buffers among its arguments
    /// without waiting for the other queues: there are none, or `d`'s queue follows every
    /// other queue ([`Queue::follows`](crate::queue::Queue::follows)).
    fn plain_ordered(&self, d: usize) -> bool {
        let plain = (self.args.iter()).any(|v| matches!(v, Value::Plain(Arg::Buffer { .. })));
        let follows = |q: usize| q == d || self.queue(d).follows(self.queue(q));
        !plain || (0..self.kernel.kernels.len()).all(follows)
    }

    /// Whether the cost model's choices are kept at all: it chooses (not forced) and strict
    /// mode is off (strict mode still refuses what the contract does not split).
    fn model_keeps(&self) -> bool {
        let policy = &self.kernel.policy;
        !policy.strict && policy.spread == SpreadPolicy::Model
    }

    /// `kernel` (the kernel as written on one device) launched with `args` (the whole buffers
    /// there) at the launch's offset, after its events.
    fn whole_launch<'k>(&'k self, kernel: &'k Kernel, args: Vec<Arg>) -> Launch<'k> {
        let launch = sub_launch(kernel, args, &self.waits);
        match self.offset {
            Some(o) => launch.offset(o),
            None => launch,
        }
    }

    /// Whether the launch `s` may run whole on one device as the kernel is written: the
    /// same work-items (a plain range, or an ND-range not rounded), no checked build, no
    /// obstacle to the rewrite.
    fn may_run_as_written(&self, s: &Shape3) -> bool {
        let k = self.kernel;
        (s.user == s.global || s.plain) && !k.checked && k.rewrite_obstacle.is_none()
    }

    /// The launch `s` run whole on the device `run` chose as `kernel` (the kernel as written
    /// there) with `args` (the whole buffers there), then remembered for `run`'s request
    /// ([`WrittenRun`]). On devices that compile alone, the kernel's first run on the device
    /// runs by itself (every queue finished first, then waited for; the compilation alone
    /// would need only `kernel::first_run`, the queues finished are kept with `execute.rs`'s
    /// order of a split launch's parts).
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`; every colored buffer
    /// whole on the chosen device.
    unsafe fn as_written(
        &self,
        s: &Shape3,
        kernel: &Kernel,
        args: Vec<Arg>,
        (request, generation, chosen): (&Request, u64, Arc<Chosen>),
    ) -> Result<MultiEvent> {
        let d = chosen.device;
        let bit = 1u64.checked_shl(d as u32).unwrap_or(0);
        let ran = (self.kernel.memo.written_ran).fetch_or(bit, Ordering::Relaxed);
        let alone = ran & bit == 0 && self.compile_alone();
        if alone {
            self.queues().iter().try_for_each(|q| q.finish())?;
        }
        let slots = (self.args.iter().zip(&args))
            .map(|(v, a)| Slot::of(v, a))
            .collect();
        let launch = self.whole_launch(kernel, args);
        // A plain range as one device runs it (its local size the driver's or the tuned one,
        // its rounding its own), an ND-range in the work-groups asked for.
        let (launch, prepared) = launch.or_emulated(|l| match s.plain {
            true => l.prepare_range(s.user),
            false => l.prepare_nd(s.global, LocalSize::Exact(s.local)),
        })?;
        // Remembered where a launch like it may skip the preparation: the kernel as written
        // (not its emulated build), nothing hidden (checked mode).
        let remembered = (std::ptr::eq(launch.kernel(), kernel) && prepared.hidden.is_empty())
            .then(|| WrittenRun {
                generation,
                shape: *s,
                chosen: Arc::clone(&chosen),
                args: slots,
                plan: Arc::clone(&prepared.plan),
                user_range: prepared.user_range,
            });
        // Written buffers: their parts (and margins) are stale from now on.
        self.mark_written_whole();
        self.kernel.again_on(d);
        // SAFETY: the caller's contract: the whole launch on d, every colored buffer whole
        // there.
        let event = unsafe { launch.execute(prepared)? };
        if alone {
            event.wait()?;
        }
        if let Some(run) = remembered {
            self.kernel.memo.written.put(*request, Arc::new(run));
        }
        Ok(self.on_one(d, event, chosen.partition.clone()))
    }
}

/// Colored argument `c`'s launch argument whole on device `d` (`Some(None)`: whole there with
/// none to pass), `None` where it is not held whole there (one look at its residence; in
/// shared placement the parent is the whole).
fn whole_on(c: &ColoredArg, d: usize) -> Option<Option<Arg>> {
    let held = c.residence.as_deref()?;
    let arg = held.held_on(d, |whole| whole.map(|w| Arg::bytes_as(w, c.elem)))?;
    Some(arg.or_else(|| c.whole.clone()))
}

/// How a launch kept by `chosen` is timed ([`Figures::timing`](crate::plan::cost::Figures::timing),
/// one look at the shape's figures, which count it), `None` where a re-sample of the other
/// option is due (the launch is priced again, which runs it).
fn kept_timing(chosen: &Chosen) -> Option<Option<Timing>> {
    let priced = &chosen.priced;
    let mut f = lock(&chosen.figures);
    (!f.resample.due(priced)).then(|| f.timing(priced))
}
