//! Executing a launch split by footprints ([`RootLaunch::footprint_plan`]'s [`Fetch`]): the
//! ranges each device reads beyond what it holds fetched into its copies or kept margins, from
//! the devices that own them, device to device (through pinned host memory: `between.rs`), the
//! launch enqueued, and what devices wrote beyond their parts given back to the owners.

use super::super::arg::Value;
use super::super::kernel::{HaloRun, Purpose};
use super::super::margins::Keep;
use super::super::{MultiEvent, Spread};
use super::terms::{bounded_copy, clip, copy, owned_in, part_sized, Copies, Fetch, Held, Run};
use super::terms::{Runs, Shape3, Side};
use super::RootLaunch;
use crate::error::{Error, InputFault, Internal, Result};
use crate::event::Event;
use crate::plan::partition::Partition;
use crate::plan::Refusal;
use opencl3::types::cl_event;
use std::sync::Arc;

/// What [`RootLaunch::fetch`] enqueued: the copies, and the bytes copied from other devices
/// and within each device.
pub(super) struct Fetched {
    pub(super) copies: Copies,
    pub(super) between: u64,
    pub(super) within: u64,
}

impl RootLaunch<'_> {
    /// The launch `s` split by `plan` after the copies `fetch` asks for; `why` the
    /// contract alone did not split it.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`, and `fetch` from
    /// [`RootLaunch::footprint_plan`] for it.
    pub(super) unsafe fn fetch_and_split(
        &self,
        s: &Shape3,
        plan: Partition,
        fetch: &Fetch,
        why: &Refusal,
    ) -> Result<MultiEvent> {
        let mut fetched = self.fetch(&fetch.fetch, &fetch.fill)?;
        self.keep_margins(&fetch.keep, &mut fetched)?;
        self.fetch_plain(fetch, &mut fetched)?;
        // SAFETY: the caller's contract; every device holds what its part (widened where
        // `fetch.widen` says: its copies hold what the widened part reaches) reads.
        let mut ev = unsafe { self.execute_in(s, plan, &fetched.copies, true, &fetch.widen) }?;
        self.widened_wrote(&fetch.after);
        self.give_back(&fetch.back, &mut fetched, &mut ev)?;
        self.give_back_plain(&fetch.back, &mut fetched, &mut ev)?;
        self.exchange(&mut ev)?;
        let arguments: Vec<usize> = (0..fetch.fetch.len())
            .filter(|&i| {
                fetch.fetch[i].iter().any(Option::is_some)
                    || fetch.back[i].iter().any(Option::is_some)
            })
            .chain((0..fetch.keep.len()).filter(|&i| fetch.keep[i].iter().any(Option::is_some)))
            .collect();
        if log::log_enabled!(log::Level::Debug) {
            let kept: Vec<(usize, usize, &Keep)> = (fetch.keep.iter().enumerate())
                .flat_map(|(i, per)| {
                    (per.iter().enumerate()).filter_map(move |(d, k)| Some((i, d, k.as_ref()?)))
                })
                .collect();
            log::debug!(
                "kernel `{}`: parts that keep their halos (argument, device, plan): {kept:?}",
                self.kernel.name()
            );
        }
        log::debug!(
            "kernel `{}` over {} devices: split by its footprints, arguments {arguments:?} \
             fetched and written back ({} bytes between devices, {} within each): the own-id \
             proof did not reach: {why}",
            self.kernel.name(),
            self.kernel.kernels.len(),
            fetched.between,
            fetched.within
        );
        if !arguments.is_empty() {
            ev.spread = Spread::Fetched {
                arguments,
                between: fetched.between,
                within: fetched.within,
            };
        }
        Ok(ev)
    }

    /// Executes the margin plans `keep`: a device's allocation with margins made on its first
    /// use (its own elements copied in once, counted within the device), then the stale
    /// margin elements copied from their owners (between devices) and marked current; the
    /// allocations join `fetched.copies` as what those devices receive.
    fn keep_margins(&self, keep: &[Vec<Option<Keep>>], fetched: &mut Fetched) -> Result<()> {
        let kernels = &self.kernel.kernels;
        for (i, per) in keep.iter().enumerate() {
            let Some(Value::Colored(c)) = self.args.get(i) else {
                continue;
            };
            let Some(m) = c.margins.as_ref() else {
                continue;
            };
            if per.iter().all(Option::is_none) {
                continue;
            }
            let es = c.elem_size;
            if fetched.copies[i].is_empty() {
                fetched.copies[i] = vec![None; kernels.len()];
            }
            for (d, k) in per.iter().enumerate() {
                let Some(k) = k else { continue };
                let q = kernels[d].program().queue();
                if k.alloc {
                    let (old, _) = part_sized(c, d).ok_or_else(|| {
                        Error::input(InputFault::Internal(Internal::NoPartToKeep))
                    })?;
                    let waits: Vec<cl_event> = (self.waits.iter())
                        .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                        .collect();
                    fetched.within += m.install(d, k.held, q, old, &waits)?;
                }
                let (buf, held) = m
                    .kept(d)
                    .ok_or_else(|| Error::input(InputFault::Internal(Internal::NoMarginsKept)))?;
                for &(a, b) in &k.fetch {
                    for (e, (src, size), (x, y)) in owned_in(c, (a, b)).filter(|r| r.0 != d) {
                        let (from, to) = ((x - c.stored[e].0) * es, (x - held.0) * es);
                        let bytes = (y - x) * es;
                        let dst = (buf.as_raw(), to, buf.len());
                        let run = HaloRun::new(Purpose::Fetch, i, (d, e), (x, y));
                        self.staged(run, (src, from, size), dst, bytes)?;
                        fetched.between += bytes as u64;
                    }
                    m.fetched(d, (a, b));
                }
                fetched.copies[i][d] = Some(Held { buf, lo: held.0 });
            }
        }
        Ok(())
    }

    /// Enqueues the copies `fetch` asks for, of the runs `fill` names where it names them:
    /// each device's own elements copied within it, the others' from their owners through a
    /// staging buffer of the run's size (as the halo exchange does).
    pub(super) fn fetch(&self, fetch: &[Vec<Run>], fill: &[Vec<Option<Runs>>]) -> Result<Fetched> {
        let kernels = &self.kernel.kernels;
        let mut out = Fetched {
            copies: vec![Vec::new(); self.args.len()],
            between: 0,
            within: 0,
        };
        for (i, per) in fetch.iter().enumerate() {
            let Some(Value::Colored(c)) = self.args.get(i) else {
                continue;
            };
            if per.iter().all(Option::is_none) {
                continue;
            }
            let es = c.elem_size;
            out.copies[i] = vec![None; kernels.len()];
            for (d, range) in per.iter().enumerate() {
                let Some((a, b)) = *range else { continue };
                let q = kernels[d].program().queue();
                let copy = self.copy_of((i, d), q, (b - a) * es)?;
                let dst = copy.as_raw();
                let whole = [(a, b)];
                let wanted = (fill.get(i).and_then(|f| f.get(d)?.as_deref())).unwrap_or(&whole);
                for (e, (src, size), owned) in owned_in(c, (a, b)) {
                    for (x, y) in wanted.iter().filter_map(|&w| clip(owned, w)) {
                        let bytes = (y - x) * es;
                        let from = (x - c.stored[e].0) * es;
                        let to = (x - a) * es;
                        if e == d {
                            // The launch's events order it too (they may write the part).
                            let waits: Vec<cl_event> = (self.waits.iter())
                                .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                                .collect();
                            let (src, dst) = ((src, from, size), (dst, to, copy.len()));
                            // SAFETY: device d's part holds its own run [x, y) from stored[d].0
                            // on; the copy holds [a, b) ⊇ [x, y).
                            let ev = unsafe { bounded_copy(q, src, dst, bytes, &waits) }?;
                            drop(ev);
                            out.within += bytes as u64;
                            continue;
                        }
                        let (src, dst) = ((src, from, size), (dst, to, copy.len()));
                        let run = HaloRun::new(Purpose::Fetch, i, (d, e), (x, y));
                        self.staged(run, src, dst, bytes)?;
                        out.between += bytes as u64;
                    }
                }
                out.copies[i][d] = Some(Held { buf: copy, lo: a });
            }
        }
        Ok(out)
    }

    /// After the launch: what each device wrote into its copy (`back`), copied to the parts
    /// of the devices that own those elements (its own within it, the others' staged, as
    /// the halo exchange does), the copies joining the launch's events. Nothing else touches
    /// those elements in the launch ([`RootLaunch::footprint_plan`]); later launches order
    /// after them (each queue's order, and every part waits for the other queues).
    fn give_back(
        &self,
        back: &[Vec<Option<Runs>>],
        fetched: &mut Fetched,
        launched: &mut MultiEvent,
    ) -> Result<()> {
        for (i, per) in back.iter().enumerate() {
            let Some(Value::Colored(c)) = self.args.get(i) else {
                continue;
            };
            let es = c.elem_size;
            for (d, written) in per.iter().enumerate() {
                let (Some(written), Some(held)) = (written, copy(&fetched.copies, i, d)) else {
                    continue;
                };
                let (src, src_size) = (held.buf.as_raw(), held.buf.len());
                let owned = (written.iter()).flat_map(|&w| owned_in(c, w));
                for (e, (dst, dst_size), (x, y)) in owned {
                    let (bytes, from, to) =
                        ((y - x) * es, (x - held.lo) * es, (x - c.stored[e].0) * es);
                    let run = HaloRun::new(Purpose::GiveBack, i, (e, d), (x, y));
                    let (src, dst) = ((src, from, src_size), (dst, to, dst_size));
                    let moved = (&mut fetched.within, &mut fetched.between);
                    // SAFETY: the copy holds [x, y) from `held.lo` on; device e's part holds
                    // its own run [x, y) from stored[e].0 on.
                    unsafe { self.give_run(run, src, dst, bytes, &[], (moved, launched)) }?;
                }
            }
        }
        Ok(())
    }

    /// Copies `bytes` of `run` (to device `run.to`, from device `run.from`) from `src`, a
    /// copy on its device, into `dst`, after `waits`: within the device on its queue, else
    /// between the devices ([`RootLaunch::move_run`]). The copies' events join `launched`'s
    /// and their bytes are counted in `moved` (within, between: a [`Fetched`]'s).
    ///
    /// # Safety
    ///
    /// `src` and `dst` hold `bytes` from their offsets (their sizes as given).
    pub(super) unsafe fn give_run(
        &self,
        run: HaloRun,
        src: Side,
        dst: Side,
        bytes: usize,
        waits: &[cl_event],
        (moved, launched): ((&mut u64, &mut u64), &mut MultiEvent),
    ) -> Result<()> {
        let (to, from) = (run.to, run.from);
        let mut push = |d: usize, raw| {
            let ev = Event::new(raw, self.queue(d).device().clone(), None);
            Event::push(&mut launched.events[d], ev);
        };
        if to == from {
            // SAFETY: the caller's.
            let ev = unsafe { bounded_copy(self.queue(from), src, dst, bytes, waits) }?;
            push(from, ev);
            *moved.0 += bytes as u64;
            return Ok(());
        }
        // SAFETY: the caller's.
        let [out, into] = unsafe { self.move_run(run, (from, src), (to, dst), bytes, waits) }?;
        push(from, out);
        push(to, into);
        *moved.1 += bytes as u64;
        Ok(())
    }

    /// Moves `bytes` from `src` on device `e` (argument `i`'s part) to `dst` on device `d`
    /// ([`RootLaunch::move_run`]). Each queue keeps its own order (device e's part was last
    /// written on its queue, d's copy last read on its queue); the sender's command also waits
    /// for the launch's events and for the previous receiver's command out of the same staging
    /// area (and nothing else: waiting for every queue made an undeclared heat step 2x
    /// slower on two PoCL 3.1 devices), the receiver's for the sender's.
    fn staged(&self, key: HaloRun, src: Side, dst: Side, bytes: usize) -> Result<()> {
        let (d, e) = (key.to, key.from);
        let mut last = (self.kernel.staged_reads.lock()).unwrap_or_else(|p| p.into_inner());
        let previous = last.remove(&key);
        let waits: Vec<cl_event> = (self.waits.iter().copied().chain(previous.as_ref()))
            .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
            .collect();
        // SAFETY: device e's part holds the run from `from`; the receiver's copy holds the
        // run at `to`.
        let [_, into] = unsafe { self.move_run(key, (e, src), (d, dst), bytes, &waits) }?;
        let device = self.queue(d).device().clone();
        last.insert(key, Event::new(into, device, None));
        Ok(())
    }

    /// Device `d`'s copy for argument `i` of `bytes` (made on its first use, kept by the
    /// kernel: launches keep one queue's order, so a launch's copies into it follow the
    /// previous launch's reads of it on the same queue).
    pub(super) fn copy_of(
        &self,
        key: (usize, usize),
        q: &crate::queue::Queue,
        bytes: usize,
    ) -> Result<Arc<crate::Buffer<u8>>> {
        let mut copies = (self.kernel.fetched.lock()).unwrap_or_else(|p| p.into_inner());
        if let Some(b) = copies.get(&key).filter(|b| b.len() == bytes) {
            return Ok(b.clone());
        }
        let b = Arc::new(crate::Buffer::<u8>::new(q, bytes)?);
        copies.insert(key, b.clone());
        Ok(b)
    }
}
