//! Plain buffers of the root device's context that a launch writes, split by the kernel's
//! footprints: where they prove that no two devices reach an element one of them writes,
//! each device runs on a copy of its own of what it reads and writes (copied in from the
//! plain buffer), and afterwards only the ranges it wrote are copied back, instead of whole
//! copies merged element by element ([`RootLaunch::merged`]). Every read and write of the
//! plain buffer runs on device 0's queue: its order keeps them from running at once (two
//! devices writing ranges of one buffer lose writes where drivers migrate whole buffers,
//! PoCL >= 5 and NVIDIA), and the buffer stays where it is; another device's copy is filled
//! and emptied through a staging area ([`RootLaunch::move_run`]), its side on its own queue.

use super::super::arg::Value;
use super::super::kernel::{HaloRun, Purpose};
use super::super::MultiEvent;
use super::fetch::Fetched;
use super::footprint::joined;
use super::terms::{bounded_copy, clip, copy, Fetch, Held, Runs};
use super::RootLaunch;
use crate::error::Result;
use crate::launch::Arg;
use crate::transform::footprint::Part;
use opencl3::types::cl_event;

impl RootLaunch<'_> {
    /// Device by device, the copy of plain argument `i` (`reach`: per device the runs it
    /// reads and writes, no two devices meeting): the elements it reaches, its view starting
    /// at a multiple of `step` elements; all of them copied in, what it writes copied back.
    /// A busy device that reaches nothing gets a copy too (of `step` elements, nothing
    /// copied), so no part is passed the plain buffer the copies write.
    pub(super) fn plain_plan(
        &self,
        plan: &mut Fetch,
        i: usize,
        reach: &[[Runs; 2]],
        (step, parts): (usize, &[Option<Part>]),
    ) {
        for (d, [r, w]) in reach.iter().enumerate() {
            if parts[d].is_none() {
                continue;
            }
            let runs = joined(r.iter().chain(w).copied());
            let span = match (runs.first(), runs.last()) {
                (Some(&(lo, _)), Some(&(_, hi))) => (lo - lo % step, hi),
                _ => (0, step.max(1)),
            };
            log::debug!(
                "kernel `{}`: plain argument {i} on device {d}: a copy of elements {span:?}, \
                 filled with {runs:?}, {w:?} copied back (the footprints prove no other device \
                 reaches them)",
                self.kernel.name()
            );
            plan.fetch[i][d] = Some(span);
            plan.fill[i][d] = Some(runs);
            plan.back[i][d] = Some(w.clone()).filter(|w| !w.is_empty());
        }
    }

    /// Enqueues the copies of the plain arguments' runs `fetch` names into each device's copy,
    /// read on device 0's queue after everything enqueued before on every queue (a write of
    /// the buffer through another queue) and written on the device's own (after its previous
    /// part there, before its part).
    pub(super) fn fetch_plain(&self, fetch: &Fetch, out: &mut Fetched) -> Result<()> {
        let kernels = &self.kernel.kernels;
        let q0 = kernels[0].program().queue();
        let mut waits: Option<Vec<cl_event>> = None;
        let mut markers = None;
        for (i, per) in fetch.fetch.iter().enumerate() {
            let Some(Value::Plain(Arg::Buffer { mem, elem })) = self.args.get(i) else {
                continue;
            };
            if per.iter().all(Option::is_none) {
                continue;
            }
            if waits.is_none() {
                let order = markers.insert(self.order()?);
                let raw = (order.waits(&self.waits, 0).into_iter())
                    .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                    .collect();
                waits = Some(raw);
            }
            let waits = waits.as_deref().unwrap_or_default();
            let es = elem.size.max(1);
            out.copies[i] = vec![None; kernels.len()];
            for (d, range) in per.iter().enumerate() {
                let Some((a, b)) = *range else { continue };
                let held = self.copy_of((i, d), kernels[d].program().queue(), (b - a) * es)?;
                let runs = fetch.fill[i][d].as_deref().unwrap_or_default();
                for (x, y) in runs.iter().filter_map(|&r| clip(r, (a, b))) {
                    let bytes = (y - x) * es;
                    let src = (mem.raw(), x * es, mem.bytes());
                    let dst = (held.as_raw(), (x - a) * es, held.len());
                    if d == 0 {
                        // SAFETY: the plain buffer holds `mem.bytes()` bytes, the copy
                        // `held.len()` (both ranges checked); the waits are events of the
                        // root's context.
                        drop(unsafe { bounded_copy(q0, src, dst, bytes, waits) }?);
                        out.within += bytes as u64;
                        continue;
                    }
                    // Read on device 0's queue, written into the copy on device d's (before
                    // its part there).
                    let run = HaloRun::new(Purpose::PlainFetch, i, (d, 0), (x, y));
                    // SAFETY: as above.
                    drop(unsafe { self.move_run(run, (0, src), (d, dst), bytes, waits) }?);
                    out.between += bytes as u64;
                }
                out.copies[i][d] = Some(Held { buf: held, lo: a });
            }
        }
        Ok(())
    }

    /// After the launch: the runs each device wrote into its copy of a plain argument
    /// (`back`), read on that device's queue after its part and written into the plain buffer
    /// on device 0's; the commands join their devices' events (later launches wait for every
    /// queue).
    pub(super) fn give_back_plain(
        &self,
        back: &[Vec<Option<Runs>>],
        fetched: &mut Fetched,
        launched: &mut MultiEvent,
    ) -> Result<()> {
        for (i, per) in back.iter().enumerate() {
            let Some(Value::Plain(Arg::Buffer { mem, elem })) = self.args.get(i) else {
                continue;
            };
            let es = elem.size.max(1);
            for (d, written) in per.iter().enumerate() {
                let (Some(written), Some(held)) = (written, copy(&fetched.copies, i, d)) else {
                    continue;
                };
                let waits: Vec<cl_event> = (launched.events[d].iter())
                    .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                    .collect();
                for &(x, y) in written {
                    let bytes = (y - x) * es;
                    let src = (held.buf.as_raw(), (x - held.lo) * es, held.buf.len());
                    let dst = (mem.raw(), x * es, mem.bytes());
                    // Read on device d's queue, written into the plain buffer on device 0's.
                    let run = HaloRun::new(Purpose::PlainBack, i, (0, d), (x, y));
                    let moved = (&mut fetched.within, &mut fetched.between);
                    // SAFETY: the copy holds elements from `held.lo` on, the plain buffer
                    // `mem.bytes()` bytes (both ranges checked); the waits are device d's part.
                    unsafe { self.give_run(run, src, dst, bytes, &waits, (moved, launched)) }?;
                }
            }
        }
        Ok(())
    }

    /// Bytes the copies of plain arguments that `f` plans move between devices (into and out
    /// of the copies of devices other than device 0, whose queue runs them), for the cost
    /// model.
    pub(super) fn plain_between(&self, f: &Fetch) -> u64 {
        let mut bytes = 0;
        for (i, v) in self.args.iter().enumerate() {
            let Value::Plain(Arg::Buffer { elem, .. }) = v else {
                continue;
            };
            let runs = (f.fill[i].iter().skip(1).flatten())
                .chain(f.back[i].iter().skip(1).flatten())
                .flatten();
            bytes += runs.map(|&(a, b)| (b - a) as u64).sum::<u64>() * elem.size as u64;
        }
        bytes
    }
}
