//! Launches split by the kernel's access footprints ([`crate::transform::footprint`]) where
//! the contract's own-id proof does not reach (partitioned placement, [`Access::Auto`]):
//! each device must write only inside its own chunk, and reads beyond what it holds are
//! fetched (halos, or whole copies of read-only buffers read at unknown indices) into a
//! staging copy on that device, from the devices that own those elements, device to device;
//! plain buffers the launch writes get a copy of their own per device (`plain.rs`). This file
//! plans it ([`RootLaunch::footprint_plan`]); `fetch.rs` executes the plan.

use super::super::arg::{ColoredArg, Value};
use super::super::margins::{self, Keep};
use super::super::{Access, Placement};
use super::terms::{kept_or_made, mem_key, Fetch, Run, Runs, Shape3};
use super::RootLaunch;
use crate::launch::Arg;
use crate::plan::partition::{clipped, Partition};
use crate::plan::Unsplit;
use crate::range::Range;
use crate::transform::footprint::{in_elements, scalar_value, Dir, Part};
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
        let mut plan = Fetch::none(self.args.len(), parts.len());
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
            let reach = kept_or_made(&self.kernel.memo.runs, key, KEPT_RUNS, computed)?;
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
