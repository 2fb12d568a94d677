//! Launches split by the kernel's access footprints ([`crate::transform::footprint`]) where
//! the contract's own-id proof does not reach (partitioned placement, [`Access::Auto`]):
//! each device must write only inside its own chunk, and reads beyond what it holds are
//! fetched (halos, or whole copies of read-only buffers read at unknown indices) into a
//! staging copy on that device, from the devices that own those elements, device to device;
//! plain buffers the launch writes get a copy of their own per device (`plain.rs`).

use super::super::arg::{ColoredArg, Value};
use super::super::kernel::{HaloRun, Purpose};
use super::super::margins::{self, Keep};
use super::super::{Access, MultiEvent, Placement, Spread};
use super::terms::{
    bounded_copy, copy, mem_key, part_sized, Copies, Fetch, Held, Run, Runs, Shape3, Side,
};
use super::RootLaunch;
use crate::error::{Error, InputFault, Internal, Result};
use crate::event::Event;
use crate::launch::Arg;
use crate::plan::partition::{clipped, Partition};
use crate::plan::{Refusal, Unsplit};
use crate::range::Range;
use crate::transform::footprint::{in_elements, scalar_value, Dir, Part};
use opencl3::types::cl_event;
use std::collections::HashMap;
use std::sync::Arc;

/// What a launch's devices reach of one argument ([`RootLaunch::footprint_plan`]), by
/// everything it is computed from: the launch's shape, its partition and scalar arguments, the
/// argument (index, element size and count, written or not).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(in crate::scaling) struct RunsKey {
    shape: (Range, Range, Range, [usize; 3]),
    partition: (usize, Vec<usize>),
    scalars: Vec<Option<i128>>,
    arg: usize,
    elements: (usize, usize),
    written: bool,
}

/// Per device, the runs of elements it reads and writes of one argument, or why the
/// footprints do not split it; kept per kernel and [`RunsKey`] (dropped whole past
/// [`KEPT_RUNS`] keys): evaluating the footprints' formulas took a split launch's host 16,000
/// of its 141,000 instructions at depth 16 (callgrind, PoCL 3.1, heat 1024²).
pub(in crate::scaling) type ArgRuns =
    HashMap<RunsKey, std::result::Result<Arc<Vec<[Runs; 2]>>, Unsplit>>;

/// At most this many kept keys per kernel.
const KEPT_RUNS: usize = 4096;

/// What [`RootLaunch::fetch`] enqueued: the copies, and the bytes copied from other devices
/// and within each device.
pub(super) struct Fetched {
    pub(super) copies: Copies,
    pub(super) between: u64,
    pub(super) within: u64,
}

impl RootLaunch<'_> {
    /// Each device's part of launch `s` as the footprint formulas see it (`None`: no work).
    fn parts(&self, s: &Shape3, plan: &Partition) -> Vec<Option<Part>> {
        let subs = plan.sub_ranges(s.global, s.local);
        (subs.iter()).map(|sub| Self::part_of(s, (*sub)?)).collect()
    }

    /// The sub-range `(offset, size)` of launch `s` as the footprint formulas see it
    /// (`None`: no work-item of the user's range).
    pub(super) fn part_of(s: &Shape3, (off, size): (Range, Range)) -> Option<Part> {
        let rank = s.global.rank();
        let pad =
            |v: [usize; 3], fill: u64| [0, 1, 2].map(|d| if d < rank { v[d] as u64 } else { fill });
        let size = clipped(off, size, s.user)?;
        let first = [0, 1, 2].map(|d| off.padded()[d] + s.base[d]);
        Some(Part {
            global: pad(s.user.padded(), 1),
            local: pad(s.local.padded(), 1),
            base: pad(s.base, 0),
            first: pad(first, 0),
            size: pad(size.padded(), 1),
        })
    }

    /// The bytes of parameter `i`'s pointee: the size the driver names (a built-in type) or
    /// the source defines (a struct); `None`: unknown.
    pub(super) fn pointee(&self, i: usize) -> Option<usize> {
        (self.kernel.kernels.first())
            .and_then(|k| k.args().get(i)?.type_name.clone())
            .and_then(|t| Some(crate::buffer::builtin(t.strip_suffix('*')?.trim())?.1))
            .or_else(|| {
                let fp = self.kernel.footprint.as_ref()?;
                fp.pointees.get(i).copied().flatten()
            })
    }

    /// The ranges each device fetches for the arguments `unserved` marks (those the
    /// contract cannot serve) so that the launch splits, or why it cannot.
    pub(super) fn footprint_plan(
        &self,
        s: &Shape3,
        plan: &Partition,
        unserved: &[bool],
    ) -> std::result::Result<Fetch, Unsplit> {
        let fp = (self.kernel.footprint.as_ref()).ok_or(Unsplit::NoFootprint)?;
        if self.kernel.placement != Placement::Partitioned {
            return Err(Unsplit::Shared);
        }
        let scalars: Vec<Option<i128>> = (self.args.iter().enumerate())
            .map(|(i, v)| match (v, fp.scalars.get(i).copied().flatten()) {
                (Value::Plain(Arg::Scalar { bytes, .. }), Some(signed)) => {
                    scalar_value(bytes, signed)
                }
                _ => None,
            })
            .collect();
        let parts = self.parts(s, plan);
        let partition = plan;
        let none = vec![vec![None; parts.len()]; self.args.len()];
        let mut plan = Fetch {
            fetch: none.clone(),
            fill: vec![vec![None; parts.len()]; self.args.len()],
            back: vec![vec![None; parts.len()]; self.args.len()],
            keep: vec![vec![None; parts.len()]; self.args.len()],
            widen: vec![0; parts.len()],
            after: vec![vec![None; parts.len()]; self.args.len()],
        };
        for (i, v) in self.args.iter().enumerate() {
            if !unserved[i] {
                continue;
            }
            let param = self.kernel.params.get(i);
            let global = param.is_some_and(|p| p.global);
            let written = param.is_none_or(|p| !p.read_only);
            // A colored buffer's elements, or a plain buffer's that the launch writes (each
            // device then writes a copy of its own: `plain.rs`).
            let (es, n) = match v {
                Value::Colored(c) if c.access == Access::Auto && global => (c.elem_size, c.len),
                Value::Plain(Arg::Buffer { mem, elem }) if global && written => {
                    (elem.size.max(1), mem.bytes() / elem.size.max(1))
                }
                _ => return Err(Unsplit::Declared(i)),
            };
            // Footprints count the parameter's pointees, converted to the buffer's elements;
            // an unknown size does not split.
            let pointee = self.pointee(i).ok_or(Unsplit::Pointee(i))?;
            // Where the device's view of the buffer starts (its part, its margins, its copy)
            // must keep the pointee's alignment (`float4 *` over floats: 16 bytes): a part
            // or margins starting elsewhere are not used, copies start at a multiple of it.
            let step = align_step(pointee, es);
            let len = n as i128;
            let clamp = |r: (i128, i128)| {
                let (a, b) = in_elements(r, pointee, es);
                let (a, b) = (a.clamp(0, len), b.clamp(0, len));
                (a < b).then_some((a as usize, b as usize))
            };
            let clamp_all = |v: Vec<(i128, i128)>| joined(v.into_iter().filter_map(clamp));
            // Per device: the elements it reads, and those it writes (sorted disjoint runs):
            // one range each, or where two devices' meet, the tighter runs of
            // `Footprint::pieces` (launches that split by ranges keep their plans). Pure:
            // kept per kernel (`ArgRuns`).
            let key = RunsKey {
                shape: (s.global, s.local, s.user, s.base),
                partition: (partition.dim, partition.chunks.clone()),
                scalars: scalars.clone(),
                arg: i,
                elements: (es, n),
                written,
            };
            let runs = |part: &Part, tight: bool| {
                let at = |dir| match tight {
                    true => fp.pieces(i, dir, part, &scalars),
                    false => fp
                        .reach(i, dir, part, &scalars)
                        .map(|r| r.into_iter().collect()),
                };
                let w = match at(Dir::Write) {
                    Some(w) => clamp_all(w),
                    None if written => return Err(Unsplit::Writes(i)),
                    None => Vec::new(),
                };
                let r = match at(Dir::Read) {
                    Some(r) => clamp_all(r),
                    None if written => return Err(Unsplit::Reads(i)),
                    None => vec![(0, n)],
                };
                Ok([r, w])
            };
            let computed = || {
                let mut reach: Vec<[Runs; 2]> = vec![[Vec::new(), Vec::new()]; parts.len()];
                for tight in [false, true] {
                    for (d, part) in parts.iter().enumerate() {
                        if let Some(part) = part {
                            reach[d] = runs(part, tight)?;
                        }
                    }
                    match meeting(&reach) {
                        None => break,
                        Some(devices) if tight => return Err(Unsplit::Meet { arg: i, devices }),
                        Some(_) => {}
                    }
                }
                Ok(Arc::new(reach))
            };
            let reach = {
                let mut kept = (self.kernel.memo.runs.lock()).unwrap_or_else(|p| p.into_inner());
                match kept.get(&key) {
                    Some(r) => r.clone(),
                    None => {
                        if kept.len() >= KEPT_RUNS {
                            kept.clear();
                        }
                        kept.entry(key).or_insert_with(computed).clone()
                    }
                }
            }?;
            let Value::Colored(c) = v else {
                self.plain_plan(&mut plan, i, &reach, (step, &parts));
                continue;
            };
            for (d, [r, w]) in reach.iter().enumerate() {
                if parts[d].is_none() {
                    continue;
                }
                let stored = c.stored[d];
                let hull = |v: &Runs| Some((v.first()?.0, v.last()?.1));
                let (rh, wh) = (hull(r), hull(w));
                let owns =
                    (w.iter()).all(|&(a, b)| c.owned[d].iter().any(|&(x, y)| x <= a && b <= y));
                let holds = rh.is_none_or(|(a, b)| stored.0 <= a && b <= stored.1);
                if owns && holds && stored.0 % step == 0 {
                    continue;
                }
                if let Some(keep) = keep_plan(c, d, rh, wh).filter(|k| k.held.0 % step == 0) {
                    plan.keep[i][d] = Some(keep);
                    continue;
                }
                // A copy of what it reads and writes; what it writes goes back to the owners.
                let (lo, hi) = [rh, wh]
                    .into_iter()
                    .flatten()
                    .fold((c.len, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
                plan.fetch[i][d] = Some((lo - lo % step, hi));
                // Only what it reads or writes is copied in (column bands of a row-major
                // image: one run per row, not the rows between).
                plan.fill[i][d] = Some(joined(r.iter().chain(w).copied()));
                plan.back[i][d] = Some(w.clone()).filter(|w| !w.is_empty());
            }
        }
        // Deeper margins move where views start: only where any start keeps the alignment.
        let deep: Vec<bool> = (unserved.iter().enumerate())
            .map(|(i, &u)| {
                let es = self.elem_size(i) as usize;
                u && self.pointee(i).is_some_and(|p| align_step(p, es) == 1)
            })
            .collect();
        self.deepen(s, partition, &scalars, &deep, &mut plan);
        // A copy must not be of another argument's buffer that the launch writes (nor, if
        // written through the copy, of another argument's buffer at all).
        let key: Vec<Option<usize>> = self.args.iter().map(mem_key).collect();
        let writes = |j: usize| self.kernel.params.get(j).is_none_or(|p| !p.read_only);
        for (i, per) in plan.fetch.iter().enumerate() {
            if per.iter().all(Option::is_none) && plan.keep[i].iter().all(Option::is_none) {
                continue;
            }
            let clash = |j: usize| j != i && key[j] == key[i] && (writes(i) || writes(j));
            if let Some(j) = (0..self.args.len()).find(|&j| clash(j)) {
                return Err(Unsplit::SameBuffer(i, j));
            }
        }
        Ok(plan)
    }

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
        let kept: Vec<(usize, usize, &Keep)> = (fetch.keep.iter().enumerate())
            .flat_map(|(i, per)| {
                (per.iter().enumerate()).filter_map(move |(d, k)| Some((i, d, k.as_ref()?)))
            })
            .collect();
        log::debug!(
            "kernel `{}`: parts that keep their halos (argument, device, plan): {kept:?}",
            self.kernel.name()
        );
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
                    for (e, runs) in c.owned.iter().enumerate().filter(|&(e, _)| e != d) {
                        let Some((src, size)) = part_sized(c, e) else {
                            continue;
                        };
                        for &(x, y) in runs {
                            let (x, y) = (x.max(a), y.min(b));
                            if x >= y {
                                continue;
                            }
                            let (from, to) = ((x - c.stored[e].0) * es, (x - held.0) * es);
                            let bytes = (y - x) * es;
                            let dst = (buf.as_raw(), to, buf.len());
                            let run = HaloRun::new(Purpose::Fetch, i, (d, e), (x, y));
                            self.staged(run, (src, from, size), dst, bytes)?;
                            fetched.between += bytes as u64;
                        }
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
                for (e, runs) in c.owned.iter().enumerate() {
                    let Some((src, size)) = part_sized(c, e) else {
                        continue;
                    };
                    let pieces = (runs.iter()).flat_map(|&o| wanted.iter().map(move |&w| (o, w)));
                    for ((x, y), (lo, hi)) in pieces {
                        let (x, y) = (x.max(a).max(lo), y.min(b).min(hi));
                        if x >= y {
                            continue;
                        }
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
                let owners = c.owned.iter().enumerate();
                for ((a, b), (e, runs)) in
                    (written.iter()).flat_map(|&w| owners.clone().map(move |o| (w, o)))
                {
                    let Some((dst, dst_size)) = part_sized(c, e) else {
                        continue;
                    };
                    for &(x, y) in runs {
                        let (x, y) = (x.max(a), y.min(b));
                        if x >= y {
                            continue;
                        }
                        let (bytes, from, to) =
                            ((y - x) * es, (x - held.lo) * es, (x - c.stored[e].0) * es);
                        let run = HaloRun::new(Purpose::GiveBack, i, (e, d), (x, y));
                        let (src, dst) = ((src, from, src_size), (dst, to, dst_size));
                        let moved = (&mut fetched.within, &mut fetched.between);
                        // SAFETY: the copy holds [x, y) from `held.lo` on; device e's part
                        // holds its own run [x, y) from stored[e].0 on.
                        unsafe { self.give_run(run, src, dst, bytes, &[], (moved, launched)) }?;
                    }
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
        let queue = |d: usize| self.kernel.kernels[d].program().queue();
        let mut push = |d: usize, raw| {
            let ev = Event::new(raw, queue(d).device().clone(), None);
            Event::push(&mut launched.events[d], ev);
        };
        if to == from {
            // SAFETY: the caller's.
            let ev = unsafe { bounded_copy(queue(from), src, dst, bytes, waits) }?;
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
        let device = self.kernel.kernels[d].program().queue().device().clone();
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

/// Two devices of which one writes what the other reads or writes, per device `[reads,
/// writes]` (on one device that would be a race between work-groups; here, not assumed).
fn meeting(reach: &[[Runs; 2]]) -> Option<(usize, usize)> {
    let meet =
        |a: &Runs, b: &Runs| (a.iter()).any(|&(p, q)| b.iter().any(|&(x, y)| p < y && x < q));
    let n = reach.len();
    (0..n)
        .flat_map(|d| (0..n).filter(move |&e| e != d).map(move |e| (d, e)))
        .find(|&(d, e)| meet(&reach[d][1], &reach[e][1]) || meet(&reach[d][0], &reach[e][1]))
}

/// `runs` sorted, overlapping and touching runs joined.
pub(super) fn joined(runs: impl Iterator<Item = (usize, usize)>) -> Runs {
    let mut v: Runs = runs.collect();
    v.sort_unstable();
    let mut out: Runs = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Device `d`'s margin plan for the colored argument `c` it reads at `r` and writes at `w`,
/// where its part may keep margins (else `None`: the launch copies as before).
fn keep_plan(c: &ColoredArg, d: usize, r: Run, w: Run) -> Option<Keep> {
    let m = c.margins.as_ref()?;
    if m.lent() {
        log::debug!("device {d} keeps no margins: a part of the buffer was lent out (part())");
        return None;
    }
    let own = m.own(d)?;
    let have = m.kept(d).map(|k| k.1);
    match margins::plan(own, r, w, c.len, m.step(), have, &m.valid(d)) {
        Ok(k) => Some(k),
        Err(why) => {
            log::debug!("device {d} keeps no margins (reads {r:?}, writes {w:?}): {why}");
            None
        }
    }
}

/// The elements a view of a buffer of `elem`-byte elements must start at a multiple of for
/// its pointees of `pointee` bytes to be aligned: their alignment divides the largest power
/// of two dividing their size (at most 128 bytes, `double16`).
fn align_step(pointee: usize, elem: usize) -> usize {
    let align = 1usize << pointee.max(1).trailing_zeros().min(7);
    align / gcd(align, elem.max(1))
}

fn gcd(a: usize, b: usize) -> usize {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}
