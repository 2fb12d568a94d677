//! Decisions that move margins, kept per margins' state: a launch split by footprints whose
//! parts keep margins or are widened (heat, a blur at a halo depth `k`) fetches stale margin
//! elements and widens parts as the margins' state says, so its decision depends on that
//! state besides what a decision that moves nothing depends on (`pure.rs`). In a ping-pong
//! chain those states repeat every `2 k` launches: [`RootLaunch::decide`] runs once per
//! state and its fetch plan is reused (on a slow host it took 29.5 us of a deep split
//! launch's 75.6 us on the H200 machine, more than a GPU's share of a heat step of 4096²).

use super::super::arg::Value;
use super::pure::DecideKey;
use super::terms::{Decision, Fetch};
use super::RootLaunch;
use crate::plan::partition::Partition;
use crate::plan::Refusal;
use crate::scaling::margins::MarginState;
use crate::scaling::Placement;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// At most this many keys (shapes, scalars and buffers) per kernel; dropped whole past it.
const KEPT_KEYS: usize = 64;

/// At most this many margins' states per key, the most recent first (a chain at halo depth
/// 16 passes through 32 per buffer pair).
const KEPT_STATES: usize = 64;

/// What a decision that moves margins depends on besides its [`DecideKey`]: the partition,
/// the halo depth and, per argument, its margins' state (`None`: not a colored buffer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct WindowState {
    partition: Partition,
    depth: usize,
    margins: Vec<Option<MarginState>>,
}

/// A kept decision split by footprints: its plan, why the contract alone did not split it,
/// whether its parts may be widened.
type Kept = (Arc<Fetch>, Arc<Refusal>, bool);

/// The decisions that move margins a kernel keeps, per key and state.
#[derive(Debug, Default)]
pub(in crate::scaling) struct Windows(Mutex<HashMap<DecideKey, Vec<(WindowState, Kept)>>>);

impl RootLaunch<'_> {
    /// The state a decision of the launch split by `partition` at halo `depth` reads, where
    /// the launch may be split by footprints (`None`: it cannot).
    pub(super) fn window_state(&self, partition: &Partition, depth: usize) -> Option<WindowState> {
        let k = self.kernel;
        if k.footprint.is_none() || k.placement != Placement::Partitioned {
            return None;
        }
        let margins = (self.args.iter())
            .map(|v| match v {
                Value::Colored(c) => c.margins.as_ref().map(|m| m.state()),
                Value::Plain(_) => None,
            })
            .collect();
        Some(WindowState {
            partition: partition.clone(),
            depth,
            margins,
        })
    }

    /// The decision kept for `key` in `state`.
    pub(super) fn kept_window(&self, key: &DecideKey, state: &WindowState) -> Option<Decision> {
        let windows = self.kernel.memo.windows.0.lock();
        let windows = windows.unwrap_or_else(|p| p.into_inner());
        let (fetch, why, deep) = (windows.get(key)?.iter())
            .find(|(s, _)| s == state)?
            .1
            .clone();
        drop(windows);
        log::debug!(
            "kernel `{}`: split by its footprints as decided before for this shape, these \
             scalars and buffers and these margins: widened by {:?} work-group(s)",
            self.kernel.name(),
            fetch.widen
        );
        Some(Decision::Fetch(fetch, why, deep))
    }

    /// Keeps `decision`, made for `key` in `state`, where it is split by footprints and the
    /// margins' state did not change while it was made (another thread's launch on the same
    /// buffers).
    pub(super) fn keep_window(&self, key: &DecideKey, state: WindowState, decision: &Decision) {
        let Decision::Fetch(fetch, why, deep) = decision else {
            return;
        };
        if self.window_state(&state.partition, state.depth).as_ref() != Some(&state) {
            return;
        }
        let mut windows = (self.kernel.memo.windows.0.lock()).unwrap_or_else(|p| p.into_inner());
        if windows.len() >= KEPT_KEYS && !windows.contains_key(key) {
            windows.clear();
        }
        let states = windows.entry(key.clone()).or_default();
        states.retain(|(s, _)| *s != state);
        states.insert(0, (state, (fetch.clone(), why.clone(), *deep)));
        states.truncate(KEPT_STATES);
    }
}
