//! Deeper margins at launch ([`super::super::deep`]): where every buffer argument of a launch
//! split by footprints is an undeclared colored buffer served by them, and a device keeps
//! margins of one of them, the device's part may be widened by whole work-groups so that
//! halos are fetched once every `k` launches (`RootDevice::with_halo_depth`).

use super::super::arg::{ColoredArg, Value};
use super::super::deep::{self, Reach, View};
use super::super::margins::Coherence;
use super::terms::{kept_or_made, Fetch, Shape3};
use super::RootLaunch;
use crate::launch::Arg;
use crate::plan::cost::SpreadPolicy;
use crate::plan::launch::widened;
use crate::plan::partition::Partition;
use crate::range::Range;
use crate::transform::footprint::Dir;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A colored argument whose parts may be widened: its index, the argument, its margins.
type DeepArg<'a> = (usize, &'a ColoredArg, &'a Arc<dyn Coherence>);

/// What a device's part reaches once widened ([`Reach`] per deep argument, `None`: unknown),
/// by everything it is computed from but the widening: the launch's shape, its partition, its
/// scalar arguments, the deep arguments (index, length) and the device. Pure, so a kernel
/// keeps them across launches: a chain at halo depth `k` asks for up to `k` widenings per
/// device at every launch (68 us of host time a launch at depth 16 on the H200 machine, more
/// than a heat step of 4096² takes on a GPU). Built once per device and launch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(in crate::scaling) struct ReachKey {
    shape: (Range, Range, Range, [usize; 3]),
    partition: (usize, Vec<usize>),
    scalars: Vec<Option<i128>>,
    args: Vec<(usize, usize)>,
    device: usize,
}

/// The reaches a kernel keeps, per [`ReachKey`] and widening (in work-groups); dropped whole
/// past [`KEPT_REACHES`] keys. A launch looks its key up once per device (hashing the key
/// at every widening asked for cost more than the rest of the plan).
pub(in crate::scaling) type Reaches = HashMap<ReachKey, Arc<Mutex<Widenings>>>;

/// What one device's part reaches per widening (in work-groups), as far as asked.
pub(in crate::scaling) type Widenings = HashMap<usize, Option<Arc<[Reach]>>>;

/// At most this many kept keys per kernel (a chain needs one per device and shape).
const KEPT_REACHES: usize = 4096;

impl RootLaunch<'_> {
    /// Widens each device's part in `plan` where its deeper-margins plan allows (the kernel's
    /// halo depth above 1): its margins, fetches and the margin elements current after.
    pub(super) fn deepen(
        &self,
        s: &Shape3,
        partition: &Partition,
        scalars: &[Option<i128>],
        unserved: &[bool],
        plan: &mut Fetch,
    ) {
        let (k, name) = (self.depth(s), self.kernel.name());
        // At depth 1 while the cost model may still choose a deeper one, first allocations are
        // sized for its deepest choice: margins are allocated once and cannot grow, so a
        // depth chosen later would not fit them (heat 8192^2 on two H200s kept depth 16 and
        // ran at depth 1, 1.43x against 1.79x).
        let sized = match k {
            1 => self.deepest(partition),
            _ => k,
        };
        let Some(fp) = self.kernel.footprint.as_ref().filter(|_| sized > 1) else {
            return;
        };
        let Some(cols) = self.deep_args(unserved, plan) else {
            return;
        };
        let written = |i: usize| self.kernel.params.get(i).is_none_or(|p| !p.read_only);
        let (devices, dim) = (plan.widen.len(), partition.dim);
        for d in 0..devices {
            if cols.iter().all(|&(i, ..)| plan.keep[i][d].is_none()) {
                continue;
            }
            // At depth 1 only a first allocation is sized (nothing to do at later launches).
            let allocates = |i: usize| plan.keep[i][d].as_ref().is_some_and(|n| n.alloc);
            if k == 1 && !cols.iter().any(|&(i, ..)| allocates(i)) {
                continue;
            }
            let views: Option<Vec<View>> = (cols.iter())
                .map(|(_, c, m)| {
                    Some(View {
                        own: m.own(d)?,
                        len: c.len,
                        step: m.step(),
                        held: m.kept(d).map(|k| k.1),
                        valid: m.valid(d),
                    })
                })
                .collect();
            let Some(views) = views else { continue };
            let key = ReachKey {
                shape: (s.global, s.local, s.user, s.base),
                partition: (partition.dim, partition.chunks.clone()),
                scalars: scalars.to_vec(),
                args: cols.iter().map(|&(i, c, _)| (i, c.len)).collect(),
                device: d,
            };
            let computed = |w: usize| -> Option<Vec<Reach>> {
                let mut groups = vec![0; devices];
                groups[d] = w;
                let (off, size) = widened(partition, s.global, s.local, &groups)[d]?;
                let part = Self::part_of(s, (off, size))?;
                let end = off.get(dim) + size.get(dim);
                let bands = [
                    (off.with(dim, 0), size.with(dim, off.get(dim))),
                    (off.with(dim, end), size.with(dim, s.global.get(dim) - end)),
                ];
                let bands: Vec<_> = (bands.into_iter())
                    .filter(|(_, z)| z.get(dim) > 0)
                    .filter_map(|b| Self::part_of(s, b))
                    .collect();
                (cols.iter())
                    .map(|&(i, c, _)| {
                        let len = c.len as i128;
                        let clamp = |(a, b): (i128, i128)| {
                            let (a, b) = (a.clamp(0, len), b.clamp(0, len));
                            (a < b).then_some((a as usize, b as usize))
                        };
                        let at = |dir, p| Some(fp.reach(i, dir, p, scalars)?.and_then(clamp));
                        let (read, mut write, mut outside) = (at(Dir::Read, &part)?, None, vec![]);
                        if written(i) {
                            write = at(Dir::Write, &part)?;
                            for b in &bands {
                                outside.extend(at(Dir::Write, b)?);
                            }
                        }
                        Some(Reach {
                            read,
                            write,
                            outside,
                        })
                    })
                    .collect()
            };
            let widenings = kept_or_made(&self.kernel.reaches, key, KEPT_REACHES, Arc::default);
            let reach = |w: usize| {
                let mut kept = widenings.lock().unwrap_or_else(|p| p.into_inner());
                let r = kept.entry(w).or_insert_with(|| computed(w).map(Arc::from));
                r.clone()
            };
            if k == 1 {
                // Only first allocations, at the depth-1 plan's widening and fetches.
                if let Ok(p) = deep::plan(sized, &views, reach) {
                    for (&(i, ..), keep) in cols.iter().zip(p.keep) {
                        let Some(now) = plan.keep[i][d].as_mut().filter(|n| n.alloc) else {
                            continue;
                        };
                        if keep.alloc && keep.held.0 <= now.held.0 && now.held.1 <= keep.held.1 {
                            now.held = keep.held;
                        }
                    }
                }
                continue;
            }
            match deep::plan(k, &views, reach) {
                Ok(p) => {
                    log::debug!(
                        "kernel `{name}`: device {d}, halo depth {k}: part widened by {} \
                         work-group(s) each side; margins (argument, plan): {:?}",
                        p.widen,
                        (cols.iter().map(|c| c.0)).zip(&p.keep).collect::<Vec<_>>()
                    );
                    for ((&(i, ..), keep), after) in cols.iter().zip(p.keep).zip(p.after) {
                        plan.keep[i][d] = Some(keep);
                        plan.fetch[i][d] = None;
                        plan.fill[i][d] = None;
                        plan.back[i][d] = None;
                        plan.after[i][d] = after;
                    }
                    plan.widen[d] = p.widen;
                }
                Err(why) => log::debug!("kernel `{name}`: device {d}, halo depth 1: {why}"),
            }
        }
    }

    /// The colored arguments whose parts may be widened for the launch split by footprints
    /// as `plan` says (`unserved`: the arguments the contract does not serve), or `None`:
    /// every buffer argument an undeclared colored buffer served by footprints with margins,
    /// and none of them copied (no copy written back into a part that a widened part also
    /// writes).
    pub(super) fn deep_args(&self, unserved: &[bool], plan: &Fetch) -> Option<Vec<DeepArg<'_>>> {
        let name = self.kernel.name();
        let mut cols: Vec<DeepArg> = Vec::new();
        for (i, v) in self.args.iter().enumerate() {
            match v {
                Value::Plain(Arg::Buffer { .. }) => {
                    log::debug!("kernel `{name}`: halo depth 1: argument {i} is a plain buffer");
                    return None;
                }
                Value::Plain(_) => {}
                Value::Colored(c) => match (&c.margins, unserved.get(i)) {
                    (Some(m), Some(true)) if !m.lent() => cols.push((i, c, m)),
                    _ => {
                        log::debug!(
                            "kernel `{name}`: halo depth 1: argument {i} is not served by \
                             footprints with margins"
                        );
                        return None;
                    }
                },
            }
        }
        if let Some(&(i, ..)) = (cols.iter()).find(|&&(i, ..)| {
            plan.fetch[i].iter().any(Option::is_some) || plan.back[i].iter().any(Option::is_some)
        }) {
            log::debug!("kernel `{name}`: halo depth 1: argument {i} is copied, not kept");
            return None;
        }
        Some(cols)
    }

    /// The deepest halo depth the cost model may choose for a launch split by `partition`
    /// (`plan::cost::Depth::Chosen`'s `max`), 1 where it chooses none (forced depth or
    /// policy).
    fn deepest(&self, partition: &Partition) -> usize {
        let policy = &self.kernel.policy;
        if policy.halo_depth.is_some() || policy.spread != SpreadPolicy::Model {
            return 1;
        }
        super::place::depth_bounds(partition).1
    }

    /// The halo depth of launch `s`: forced, else the one the cost model chose for its shape
    /// (`plan::cost::Depth`, kept by [`RootLaunch::keep_depth`]), else 1.
    pub(super) fn depth(&self, s: &Shape3) -> usize {
        let policy = &self.kernel.policy;
        match (policy.halo_depth, policy.spread) {
            (Some(k), _) => k,
            (None, SpreadPolicy::Model) => {
                let depths = (self.kernel.depths.lock()).unwrap_or_else(|p| p.into_inner());
                depths.get(&(s.global, s.local)).copied().unwrap_or(1)
            }
            (None, _) => 1,
        }
    }

    /// Records the margin elements that widened parts left current (`after`, per argument,
    /// per device), once the launch is enqueued.
    pub(super) fn widened_wrote(&self, after: &[Vec<Option<Vec<deep::Span>>>]) {
        for (i, per) in after.iter().enumerate() {
            let Some(Value::Colored(c)) = self.args.get(i) else {
                continue;
            };
            let Some(m) = c.margins.as_ref() else {
                continue;
            };
            for (d, spans) in per.iter().enumerate() {
                if let Some(spans) = spans {
                    m.set_valid(d, spans.clone());
                }
            }
        }
    }
}
