//! [`RootLaunch::decide`]: whether a launch splits as the contract says, splits by its
//! footprints with fetched ranges, is merged, or runs on one device;
//! [`RootLaunch::decision`]: that answer kept for the next launches like it, or made.

use super::super::arg::Value;
use super::super::contract::{self, Cover, LaunchFacts};
use super::super::Placement;
use super::chunks::{shift, Span};
use super::pure::DecideKey;
use super::terms::{Decision, Feed, Shape3};
use super::RootLaunch;
use crate::error::{Error, Result};
use crate::plan::partition::{clipped, Partition};
use crate::plan::{Breach, Refusal};
use crate::range::Range;
use std::sync::Arc;

impl RootLaunch<'_> {
    /// The decision for launch `s` split by `plan`, `key` its shape, scalars and buffers: the
    /// one kept for them where it moves nothing (`pure.rs`) or, where it moves margins, for
    /// their state too (`window.rs`); else made ([`RootLaunch::decide`]) and kept.
    pub(super) fn decision(
        &self,
        s: &Shape3,
        plan: &Partition,
        key: DecideKey,
    ) -> Result<Decision> {
        if let Some(kept) = self.kept_decision(&key) {
            return Ok(kept);
        }
        let state = self.window_state(plan, self.depth(s));
        if let Some(kept) = (state.as_ref()).and_then(|st| self.kept_window(&key, st)) {
            return Ok(kept);
        }
        let (decision, unserved) = self.decide(s, plan)?;
        if let Some(state) = state {
            self.keep_window(&key, state, &decision);
        }
        self.keep_decision(key, &decision, &unserved);
        Ok(decision)
    }

    /// Whether the launch splits as the contract says, is merged, or runs on one device;
    /// strict mode refuses what does not split. With the arguments the contract did not
    /// serve.
    pub(super) fn decide(&self, s: &Shape3, plan: &Partition) -> Result<(Decision, Vec<bool>)> {
        let (user, global, local) = (s.user, s.global, s.local);
        let kernels = &self.kernel.kernels;
        let subs = plan.sub_ranges(global, local);
        let facts = LaunchFacts {
            placement: self.kernel.placement,
            rank: global.rank(),
            offset_is_zero: s.base == [0; 3],
            busy: subs.iter().flatten().count(),
            unified: kernels
                .iter()
                .all(|k| k.program().device().limits().host_unified_memory),
            gathered: false,
        };
        let strict = self.kernel.policy.strict;
        let refused = |why| self.kernel.refused(global, Some(local), why);
        if let (Some(why), true) = (&self.kernel.whole_obstacle, facts.busy > 1) {
            let reason = Refusal::WholeValues(why.clone());
            return match strict {
                true => Err(refused(reason)),
                false => Ok((Decision::OneDevice(reason), Vec::new())),
            };
        }
        let covers: Vec<std::result::Result<Cover, Breach>> = (self.args.iter().enumerate())
            .map(|(i, v)| contract::check(i, self.kernel.params.get(i), v, &facts))
            .collect();
        // The arguments each device's chunks cannot serve, and the first reason.
        let mut unserved = vec![false; self.args.len()];
        let mut first: Option<Error> = None;
        for (i, c) in covers.iter().enumerate() {
            if let Err(breach) = c {
                unserved[i] = true;
                let why = Refusal::Contract {
                    partitioned: facts.placement == Placement::Partitioned,
                    breach: breach.clone(),
                };
                first.get_or_insert_with(|| refused(why));
            }
        }
        for (d, sub) in subs.iter().enumerate() {
            let Some(size) = sub.and_then(|(off, size)| Some((off, clipped(off, size, user)?)))
            else {
                continue;
            };
            let span = Span::new(user, s.base, shift(size.0, s.base), size.1);
            for (i, c) in covers.iter().enumerate() {
                let Ok(cover) = c else { continue };
                if let Err(e) = self.check_chunk((i, d), &span, *cover, (global, local), plan) {
                    unserved[i] = true;
                    first.get_or_insert(e);
                }
            }
        }
        log::debug!(
            "kernel `{}` over {} devices ({} placement): {plan:?}, sub-launches {subs:?}, \
             argument covers {covers:?}",
            self.kernel.name(),
            kernels.len(),
            self.kernel.placement
        );
        let Some(refusal) = first else {
            return self.held_everywhere(Decision::Split, s, &subs, unserved);
        };
        let why = match &refusal {
            Error::InvalidLaunch { reason, .. } => (**reason).clone(),
            _ => return Err(refusal),
        };
        // What the own-id proof does not reach, the footprints may (atomics aside: updates
        // of program-scope variables cannot be split).
        let footprints = match (facts.busy, facts.placement, self.kernel.policy.atomics) {
            (2.., Placement::Partitioned, false) => Some(self.footprint_plan(s, plan, &unserved)),
            _ => None,
        };
        let why = match footprints {
            Some(Ok(fetch)) => {
                let deep = self.deep_args(&unserved, &fetch).is_some();
                let decision = Decision::Fetch(Arc::new(fetch), Arc::new(why), deep);
                return self.held_everywhere(decision, s, &subs, unserved);
            }
            Some(Err(not)) => Refusal::NoFootprintSplit {
                why: why.into(),
                not: Refusal::Footprint(not).into(),
            },
            None => why,
        };
        if strict {
            return Err(match refusal {
                Error::InvalidLaunch {
                    kernel,
                    device,
                    global,
                    local,
                    ..
                } => Error::InvalidLaunch {
                    kernel,
                    device,
                    global,
                    local,
                    reason: Box::new(why),
                },
                other => other,
            });
        }
        let decision = if facts.busy < 2 {
            Decision::OneDevice(Refusal::OneGroup {
                global,
                why: why.into(),
            })
        } else if facts.placement == Placement::Shared {
            Decision::OneDevice(why)
        } else if self.kernel.policy.atomics {
            Decision::OneDevice(Refusal::Atomics(why.into()))
        } else {
            let merge = Decision::Merge(self.feeds(&unserved), why);
            return self.held_everywhere(merge, s, &subs, unserved);
        };
        Ok((decision, unserved))
    }

    /// `decision` (a split, fetch or merge over the devices of `subs` that get work), or, where
    /// one of them holds none of a colored argument nor gets a copy of it, the launch on one
    /// device (refused in strict mode).
    fn held_everywhere(
        &self,
        decision: Decision,
        s: &Shape3,
        subs: &[Option<(Range, Range)>],
        unserved: Vec<bool>,
    ) -> Result<(Decision, Vec<bool>)> {
        // Where the device gets a copy of the argument instead of its part.
        let copied = |i: usize, d: usize| match &decision {
            Decision::Fetch(f, ..) => f.fetch[i][d].is_some() || f.keep[i][d].is_some(),
            Decision::Merge(feeds, _) => !matches!(feeds.get(i), Some(Feed::Direct) | None),
            _ => false,
        };
        let partless = (self.args.iter().enumerate()).find_map(|(i, v)| match v {
            Value::Colored(c) if self.kernel.placement == Placement::Partitioned => (0..subs.len())
                .find(|&d| subs[d].is_some() && c.part(d).is_none() && !copied(i, d))
                .map(|d| (i, d)),
            _ => None,
        });
        let Some((arg, device)) = partless else {
            return Ok((decision, unserved));
        };
        let why = Refusal::NoPart { device, arg };
        if self.kernel.policy.strict {
            return Err(self.kernel.refused(s.global, Some(s.local), why));
        }
        Ok((Decision::OneDevice(why), unserved))
    }
}
