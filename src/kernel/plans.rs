//! The plans of a kernel's recent launches ([`Recent`]: the few most recently used keys).
//! [`crate::plan::launch::plan`] is a pure function of the kernel's facts and its device's
//! limits (both fixed when the [`Kernel`](super::Kernel) is made: nothing invalidates them)
//! and of the launch's [`PlanKey`]; a launch with the key of a recent one asks the planner
//! nothing again (a repeated launch: a lookup, no allocation).

use crate::plan::launch::{Plan, Shape};
use crate::range::Range;
use std::sync::{Arc, Mutex};

/// How many plans a kernel keeps: the most recently used.
const KEPT: usize = 4;

/// What a kernel's plan depends on beyond the kernel and its device: everything of the
/// launch that [`crate::plan::launch::plan`] reads.
#[derive(Clone, Debug, Eq)]
pub(crate) struct PlanKey {
    /// The user's global range.
    pub(crate) global: Range,
    /// ND-range in work-groups of a [`LocalSize`](crate::launch::LocalSize), or plain.
    pub(crate) shape: Shape,
    /// The launch's global offset.
    pub(crate) offset: Option<Range>,
    /// The values of the arguments that the kernel's launch-time id conditions compare with,
    /// in the conditions' order (none for most kernels: no allocation).
    pub(crate) values: Vec<i128>,
}

impl PartialEq for PlanKey {
    /// Field by field, the values one by one (a derived comparison calls `bcmp` for them even
    /// when there are none: a fifth of a lookup).
    fn eq(&self, other: &Self) -> bool {
        let values = || self.values.iter().zip(&other.values).all(|(a, b)| a == b);
        self.global == other.global
            && self.shape == other.shape
            && self.offset == other.offset
            && self.values.len() == other.values.len()
            && values()
    }
}

/// A kernel's recent plans, most recently used first.
pub(crate) type Plans = Recent<PlanKey, Arc<Plan>, KEPT>;

/// The values of the `N` most recently used keys, most recently used first: a lookup compares
/// keys (launch keys are a few words: cheaper than hashing them) and allocates nothing.
pub(crate) struct Recent<K, V, const N: usize>(Mutex<Vec<(K, V)>>);

impl<K, V, const N: usize> Default for Recent<K, V, N> {
    fn default() -> Self {
        Recent(Mutex::new(Vec::with_capacity(N)))
    }
}

impl<K: PartialEq, V: Clone, const N: usize> Recent<K, V, N> {
    /// The value of a recent `key`, now the most recently used.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        let mut recent = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let at = recent.iter().position(|(k, _)| k == key)?;
        if at > 0 {
            recent[..=at].rotate_right(1);
        }
        Some(recent[0].1.clone())
    }

    /// Keeps `value` for `key` (replacing its value if kept), dropping the least recently
    /// used beyond `N`.
    pub(crate) fn put(&self, key: K, value: V) {
        let mut recent = self.0.lock().unwrap_or_else(|p| p.into_inner());
        recent.retain(|(k, _)| *k != key);
        recent.truncate(N - 1);
        recent.insert(0, (key, value));
    }

    /// Forgets `key`; whether it was kept.
    #[cfg(feature = "scaling")]
    pub(crate) fn forget(&self, key: &K) -> bool {
        let mut recent = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let kept = recent.len();
        recent.retain(|(k, _)| k != key);
        recent.len() < kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::launch::Piece;
    use crate::plan::rounding::Variant;

    fn key(n: usize) -> PlanKey {
        PlanKey {
            global: Range::d1(n),
            shape: Shape::Plain,
            offset: None,
            values: Vec::new(),
        }
    }

    fn plan(n: usize) -> Arc<Plan> {
        let global = Range::d1(n);
        Arc::new(Plan {
            user: global,
            launch: global,
            local: None,
            pieces: vec![Piece {
                device: 0,
                variant: Variant::Original,
                global,
                local: None,
                offset: Range::d1(0),
            }],
            user_args: false,
            rounding: None,
            #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
            partition: None,
        })
    }

    #[test]
    fn keeps_the_most_recently_used() {
        let plans = Plans::default();
        for n in 1..=KEPT {
            plans.put(key(n), plan(n));
        }
        // 1 is used again: 2 is now the least recently used, and goes first.
        assert_eq!(plans.get(&key(1)).map(|p| p.user), Some(Range::d1(1)));
        plans.put(key(99), plan(99));
        assert!(plans.get(&key(2)).is_none());
        for n in [1, 3, 4, 99] {
            assert_eq!(plans.get(&key(n)).map(|p| p.user), Some(Range::d1(n)));
        }
        // Another offset or another condition value is another launch.
        let offset = PlanKey {
            offset: Some(Range::d1(0)),
            ..key(1)
        };
        let valued = PlanKey {
            values: vec![7],
            ..key(1)
        };
        assert!(plans.get(&offset).is_none() && plans.get(&valued).is_none());
    }

    #[test]
    fn a_key_put_again_replaces_its_value_and_a_forgotten_key_is_gone() {
        let recent: Recent<u32, &str, 2> = Recent::default();
        recent.put(1, "one");
        recent.put(2, "two");
        recent.put(1, "uno");
        // Replaced, not kept twice: 2 is still there.
        assert_eq!((recent.get(&1), recent.get(&2)), (Some("uno"), Some("two")));
        #[cfg(feature = "scaling")]
        {
            recent.forget(&2);
            assert_eq!((recent.get(&1), recent.get(&2)), (Some("uno"), None));
        }
    }
}
