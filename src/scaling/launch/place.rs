//! The cost model's inputs once the analysis has decided what is right
//! ([`RootLaunch::decide`]): this kernel's measured launches of this shape, the bytes each
//! option moves, the root device's measured link and the halo depths the split may run at;
//! the planner ([`crate::plan::launch::spread`]) chooses from them. A launch on one device
//! moves its colored buffers there whole and leaves them there ([`super::super::resident`]).

use super::super::arg::Value;
use super::super::kernel::Chosen;
use super::super::resident;
use super::super::{MultiEvent, Placement, Spread};
use super::terms::{mem_key, Copies, Decision, Feed, Held, Shape3};
use super::RootLaunch;
use crate::error::Result;
use crate::launch::Arg;
use crate::plan::cost::watch::Timing;
use crate::plan::cost::{
    Choice, Depth, Figures, Inputs, Kept, Observed, Priced, Right, SpreadPolicy, Why,
};
use crate::plan::partition::Partition;
use crate::queue::Queue;
use opencl3::types::cl_event;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

impl RootLaunch<'_> {
    /// Device `d`'s queue.
    pub(super) fn queue(&self, d: usize) -> &Queue {
        self.kernel.kernels[d].program().queue()
    }

    pub(super) fn queues(&self) -> Vec<&Queue> {
        (self.kernel.kernels.iter())
            .map(|k| k.program().queue())
            .collect()
    }

    /// The cost model's inputs for the launch `s` split by `partition` that `decision` says
    /// is right, or `None` where it does not price (forced split, one device, the link not
    /// measured).
    pub(super) fn cost_inputs(
        &self,
        s: &Shape3,
        decision: &Decision,
        partition: &Partition,
    ) -> Result<Option<Inputs>> {
        let k = self.kernel;
        let policy = k.policy.spread;
        let n = k.kernels.len();
        if policy == SpreadPolicy::Split || n < 2 {
            return Ok(None);
        }
        let right = match decision {
            Decision::Split | Decision::Fetch(..) => Right::Split,
            Decision::Merge(..) => Right::Merge,
            Decision::OneDevice(_) => Right::OneOnly,
        };
        // Each buffer once (an argument passed twice moves once).
        let mut buffers = HashSet::new();
        let colored: Vec<_> = (self.args.iter())
            .filter(|v| buffers.insert(mem_key(v)))
            .filter_map(|v| match v {
                Value::Colored(c) => Some(c),
                Value::Plain(_) => None,
            })
            .collect();
        let gather = (0..n)
            .map(|d| colored.iter().map(|c| resident::gather_bytes(c, d)).sum())
            .collect();
        let scatter = colored.iter().map(|c| resident::scatter_bytes(c)).sum();
        let figures = self.figures(s);
        // Shared placement moves nothing between devices. Not priced where the link cannot
        // be measured: the analysis's answer, as before the model.
        let moves = policy == SpreadPolicy::Model
            && right != Right::OneOnly
            && k.placement != Placement::Shared;
        let Some(link) = resident::priced_link(&k.policy.link, || self.queues(), moves) else {
            return Ok(None);
        };
        let inputs = Inputs {
            devices: n,
            seen: figures.seen,
            right,
            split: figures.split,
            one: figures.one,
            between: self.between(decision),
            gather,
            scatter,
            link,
            depth: self.depths(s, decision, partition, &figures),
            last: figures.last,
            resample: figures.resample,
        };
        if let Decision::OneDevice(why) = decision {
            let level = match figures.last {
                None => log::Level::Info,
                Some(_) => log::Level::Debug,
            };
            log::log!(level, "kernel `{}`: one device only: {why}", k.name());
        }
        log::debug!("kernel `{}`: cost model inputs {inputs:?}", k.name());
        Ok(Some(inputs))
    }

    /// The halo depths the split of `s` may run at: forced, chosen by the model (where its
    /// parts may be widened: up to half the rows of the smallest part, at most 16; a kept
    /// depth with the shape's times measured at it, `figures`), else 1.
    fn depths(
        &self,
        s: &Shape3,
        decision: &Decision,
        partition: &Partition,
        figures: &Figures,
    ) -> Depth {
        let deep = matches!(decision, Decision::Fetch(_, _, true));
        match (self.kernel.policy.halo_depth, deep) {
            (_, false) => Depth::Fixed(1),
            (Some(k), true) => Depth::Fixed(k),
            (None, true) => {
                let (rows, max) = depth_bounds(partition);
                let depths = (self.kernel.depths.lock()).unwrap_or_else(|p| p.into_inner());
                Depth::Chosen {
                    rows,
                    max,
                    kept: (depths.get(&(s.global, s.local))).map(|&k| Kept::new(k, figures.deep)),
                }
            }
        }
    }

    /// Keeps the halo depth `priced` chose for the shape of `s`, where it keeps one
    /// (`Priced::depth_to_keep`).
    pub(super) fn keep_depth(&self, s: &Shape3, inputs: &Inputs, priced: &Priced) {
        if let Some(depth) = priced.depth_to_keep(inputs) {
            let mut depths = (self.kernel.depths.lock()).unwrap_or_else(|p| p.into_inner());
            depths.insert((s.global, s.local), depth);
            log::debug!(
                "kernel `{}` global {:?}: halo depth {depth} kept for this shape",
                self.kernel.name(),
                s.global.as_slice(),
            );
        }
    }

    /// The cost model's figures of this shape so far (this launch counted in `seen` from now
    /// on).
    fn figures(&self, s: &Shape3) -> Figures {
        self.with_figures(s, |f| {
            let now = *f;
            f.seen = f.seen.saturating_add(1);
            now
        })
    }

    /// The figures of the shape of `s`.
    fn shape_figures(&self, s: &Shape3) -> Arc<Mutex<Figures>> {
        let mut figures = (self.kernel.figures.lock()).unwrap_or_else(|p| p.into_inner());
        Arc::clone(figures.entry((s.global, s.local)).or_default())
    }

    /// Runs `f` on the figures of the shape of `s`.
    fn with_figures<R>(&self, s: &Shape3, f: impl FnOnce(&mut Figures) -> R) -> R {
        f(&mut lock(&self.shape_figures(s)))
    }

    /// Bytes the analysed execution moves between devices per launch (an estimate made before
    /// it runs): the elements fetched beyond a device's own and written back (of a plain
    /// buffer: those of devices other than 0), a stencil's halos, or a merge's whole copies
    /// to and from every device.
    fn between(&self, decision: &Decision) -> u64 {
        let es = |i: usize| match self.args.get(i) {
            Some(Value::Colored(c)) => c.elem_size as u64,
            _ => 0,
        };
        let n = self.kernel.kernels.len() as u64;
        match decision {
            Decision::Fetch(f, ..) => {
                let mut bytes = 0;
                for (i, per) in f.fetch.iter().enumerate() {
                    let Some(Value::Colored(c)) = self.args.get(i) else {
                        continue;
                    };
                    for (d, owned) in c.owned.iter().enumerate() {
                        // The runs copied in (`fill`, where the span is not fetched whole).
                        let span = per.get(d).copied().flatten();
                        let runs = f.fill.get(i).and_then(|r| r.get(d)?.as_deref());
                        let (whole, clipped) = match (span, runs) {
                            (Some(span), Some(runs)) => (None, Some((span, runs))),
                            (span, _) => (span, None),
                        };
                        let clipped = (clipped.into_iter())
                            .flat_map(|((a, b), runs)| {
                                runs.iter().map(move |&(lo, hi)| (lo.max(a), hi.min(b)))
                            })
                            .filter(|(x, y)| x < y);
                        let back = f.back[i].get(d).into_iter().flatten().flatten();
                        for (a, b) in whole.into_iter().chain(clipped).chain(back.copied()) {
                            let own: usize = owned.iter().map(|&r| overlap(r, (a, b))).sum();
                            bytes += ((b - a) - own.min(b - a)) as u64 * es(i);
                        }
                    }
                    for k in f.keep[i].iter().flatten() {
                        bytes += k.fetch.iter().map(|&(a, b)| (b - a) as u64).sum::<u64>() * es(i);
                    }
                }
                bytes + self.plain_between(f)
            }
            Decision::Merge(feeds, _) => (feeds.iter().enumerate())
                .filter(|(_, f)| **f != Feed::Direct)
                .map(|(i, _)| match self.args.get(i) {
                    Some(Value::Colored(c)) => (c.len * c.elem_size) as u64 * (2 * n + 1),
                    // A plain buffer merged: copied whole to every device and back the same.
                    Some(Value::Plain(Arg::Buffer { mem, .. })) => mem.bytes() as u64 * (2 * n + 1),
                    _ => 0,
                })
                .sum(),
            Decision::Split => (self.args.iter())
                .filter_map(|v| match v {
                    Value::Colored(c) if matches!(c.access, super::super::Access::Stencil(_)) => {
                        let own: usize = c.chunks.iter().sum();
                        let held: usize = c.stored.iter().map(|(a, b)| b - a).sum();
                        Some((held.saturating_sub(own) * c.elem_size) as u64)
                    }
                    _ => None,
                })
                .sum(),
            Decision::OneDevice(_) => 0,
        }
    }

    /// Moves every colored argument held whole on one device back to its parts.
    pub(super) fn settle_all(&self) -> Result<()> {
        let queues = self.queues();
        for v in &self.args {
            if let Value::Colored(c) = v {
                resident::settle(c, &queues)?;
            }
        }
        Ok(())
    }

    /// The whole launch `s` on device `d` (`whole`: all its work-groups there, from the
    /// plan): every colored argument moved there whole (once: it stays), the kernel's
    /// partitioned variant run over the whole range with the whole buffers. It waits for the
    /// other queues only where it has plain buffer arguments.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn resident(
        &self,
        s: &Shape3,
        d: usize,
        whole: Partition,
    ) -> Result<MultiEvent> {
        let n = self.kernel.kernels.len();
        let queues = self.queues();
        let waits: Vec<cl_event> = (self.waits.iter())
            .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
            .collect();
        let mut copies: Copies = vec![Vec::new(); self.args.len()];
        let mut moved = 0;
        // Every colored argument whole on d already: nothing is gathered (no marker on another
        // queue).
        let stayed = (self.args.iter()).all(|v| match v {
            Value::Colored(c) => {
                c.residence.as_ref().and_then(|r| r.holder()).map(|h| h.0) == Some(d)
            }
            Value::Plain(_) => true,
        });
        for (i, v) in self.args.iter().enumerate() {
            let Value::Colored(c) = v else { continue };
            let (buf, bytes) = resident::gather(c, d, &queues, &waits)?;
            moved += bytes;
            // In shared placement the device gets the parent, as in a split.
            if let Some(buf) = buf {
                copies[i] = vec![None; n];
                copies[i][d] = Some(Held { buf, lo: 0 });
            }
        }
        // Written buffers: their parts (and margins) are stale from now on.
        self.mark_written_whole();
        // The colored buffers need no wait for the other queues: moving them whole waited for
        // every queue, and while they stay whole nothing but launches on device d touches them
        // (anything else moves them back first). Plain buffers may have commands pending on
        // other queues (a part of an earlier split launch reading one this launch writes).
        // On devices that compile alone this launch is not waited for (`execute_in`): where
        // the kernel's last launch ran elsewhere it waits for the other queues, so that the
        // kernel never runs on two of them at once (its split launches wait for each part).
        let plain = (self.args.iter())
            .any(|v| matches!(v, Value::Plain(crate::launch::Arg::Buffer { .. })));
        // A launch that gathered waits for every queue (the gathers' copies do).
        let again = self.kernel.again_on(d);
        let ordered = plain || !stayed || (self.compile_alone() && !again);
        // SAFETY: the caller's contract; device d holds every colored buffer whole.
        let mut ev = unsafe { self.execute_in(s, whole, &copies, ordered, &[]) }?;
        // A buffer with a part lent out (`part()`) moves back to its parts at once: the part
        // must not go stale while it is whole here.
        for v in &self.args {
            if let Value::Colored(c) = v {
                if c.margins.as_ref().is_some_and(|m| m.lent()) {
                    resident::settle(c, &queues)?;
                }
            }
        }
        ev.spread = Spread::Resident { device: d, moved };
        Ok(ev)
    }

    /// What the shape keeps of the cost model's choice `priced` for the launch `partition`
    /// ([`RootLaunch::stay`]): one device chosen from warm figures, else nothing.
    pub(super) fn keeps(
        &self,
        s: &Shape3,
        partition: &Partition,
        priced: Option<&Arc<Priced>>,
    ) -> Option<Chosen> {
        // A deeper halo still to measure: the next launches are priced (and measure it).
        let p = priced.filter(|p| p.why == Why::Cheaper && !p.measure && !p.explores_deep())?;
        let Choice::OneDevice(device) = p.choice else {
            return None;
        };
        Some(Chosen {
            device,
            partition: Arc::new(partition.clone()),
            priced: Arc::clone(p),
            figures: self.shape_figures(s),
        })
    }

    /// Runs `launch` (the decided execution of `s`), timed where the shape's figures ask
    /// for it ([`Figures::timing`]: a sample of the option `priced` measures, or an
    /// observation of the option chosen; every queue finished first, the launch waited for),
    /// the time taken. An observation that has the model measure both options again forgets
    /// the shape's choice of one device.
    pub(super) fn timed(
        &self,
        s: &Shape3,
        priced: Option<Arc<Priced>>,
        launch: impl FnOnce() -> Result<MultiEvent>,
    ) -> Result<MultiEvent> {
        let timing = (priced.as_ref()).and_then(|p| self.with_figures(s, |f| f.timing(p)));
        self.timed_as(s, priced, timing, launch)
    }

    /// [`timed`](Self::timed), timed as `timing` says (the figures already counted it).
    pub(super) fn timed_as(
        &self,
        s: &Shape3,
        priced: Option<Arc<Priced>>,
        timing: Option<Timing>,
        launch: impl FnOnce() -> Result<MultiEvent>,
    ) -> Result<MultiEvent> {
        // The clock is read only for a timed launch (most are not), every queue finished
        // first where the timing starts with this launch.
        if matches!(
            timing,
            Some(Timing::Sample(_) | Timing::Observe(_) | Timing::Open(_))
        ) {
            self.queues().iter().try_for_each(|q| q.finish())?;
        }
        let timed = match timing {
            Some(Timing::Open(_)) => {
                self.with_figures(s, |f| f.opened(clock()));
                None
            }
            Some(t @ (Timing::Sample(_) | Timing::Observe(_))) => Some((t, Instant::now())),
            Some(Timing::Close(_)) | None => None,
        };
        let mut ev = launch()?;
        if let Some(Timing::Close(k)) = timing {
            ev.wait()?;
            let per = self.with_figures(s, |f| f.closed(clock()));
            log::debug!(
                "kernel `{}` global {:?}: a window of {k} launches at halo depth {k}: {:.1} us \
                 a launch",
                self.kernel.name(),
                s.global.as_slice(),
                per.unwrap_or(0.0) * 1e6
            );
        }
        if let Some((timing, start)) = timed {
            ev.wait()?;
            let secs = start.elapsed().as_secs_f64();
            let (observed, figures) = self.with_figures(s, |f| (f.timed(timing, secs), *f));
            if let Some(Observed::Remeasure { .. }) = observed {
                self.kernel
                    .choose((s.user, s.global, s.local, s.base), None);
            }
            log::debug!(
                "kernel `{}` global {:?}: {timing:?} {:.1} us{} (figures {figures:?})",
                self.kernel.name(),
                s.global.as_slice(),
                secs * 1e6,
                observed.map_or(String::new(), |o| format!(": {o}"))
            );
        }
        ev.priced = priced;
        Ok(ev)
    }
}

/// The work-group rows of the smallest part of `partition`, and the deepest halo depth the
/// cost model may choose over them (half those rows, at most 16).
pub(super) fn depth_bounds(partition: &Partition) -> (usize, usize) {
    let rows = (partition.chunks.iter().copied()).filter(|&c| c > 0).min();
    let rows = rows.unwrap_or(0);
    (rows, (rows / 2).clamp(1, 16))
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> usize {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Seconds since the first reading (the clock of [`Figures::opened`] and [`Figures::closed`]).
fn clock() -> f64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// The figures behind `m` (a panic elsewhere leaves them usable).
pub(super) fn lock(m: &Mutex<Figures>) -> MutexGuard<'_, Figures> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
