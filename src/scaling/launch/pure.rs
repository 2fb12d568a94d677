//! Decisions that move nothing, kept per launch: a launch that splits as the contract says,
//! or by footprints with nothing to fetch, keep or write back (mandelbrot, SAXPY, Black-Scholes),
//! depends only on its shape, its scalar values and the layout of the buffers it is given.
//! [`RootLaunch::decide`] runs once for each of those and its answer is reused (the analysis
//! took 2.5 us of host time a launch for SAXPY on the H200 machine, 7-13 us for mandelbrot:
//! the second GPU's part starts that much later).

use super::super::arg::Value;
use super::super::kernel::ShapeKey;
use super::terms::{Decision, Fetch};
use super::RootLaunch;
use crate::launch::{Arg, ScalarBytes};
use crate::plan::Refusal;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

/// Decisions kept per kernel, the most recent first.
const KEPT: usize = 8;

/// What a decision depends on besides the kernel: the launch's shape and, per argument, the
/// colored buffer (its launch argument: while a weak reference holds its allocation, no other
/// takes its address; the buffer's memory is not held), the plain buffer's memory object and
/// size, or the value.
#[derive(Clone, Debug)]
pub(in crate::scaling) struct DecideKey {
    shape: ShapeKey,
    args: Vec<ArgKey>,
}

#[derive(Clone, Debug)]
enum ArgKey {
    Colored(Weak<super::super::arg::ColoredArg>),
    Buffer(usize, usize),
    Scalar(ScalarBytes),
    Local(usize),
}

impl PartialEq for ArgKey {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ArgKey::Colored(a), ArgKey::Colored(b)) => Weak::ptr_eq(a, b),
            (ArgKey::Buffer(a, x), ArgKey::Buffer(b, y)) => (a, x) == (b, y),
            (ArgKey::Scalar(a), ArgKey::Scalar(b)) => a[..] == b[..],
            (ArgKey::Local(a), ArgKey::Local(b)) => a == b,
            _ => false,
        }
    }
}

impl PartialEq for DecideKey {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape && self.args == other.args
    }
}

impl Eq for DecideKey {}

impl Hash for DecideKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.shape.hash(h);
        for a in &self.args {
            match a {
                ArgKey::Colored(c) => (0u8, c.as_ptr() as usize).hash(h),
                ArgKey::Buffer(mem, bytes) => (1u8, mem, bytes).hash(h),
                ArgKey::Scalar(bytes) => (2u8, &bytes[..]).hash(h),
                ArgKey::Local(n) => (3u8, n).hash(h),
            }
        }
    }
}

/// A decision that moves nothing (see the module docs).
#[derive(Clone, Debug)]
enum Pure {
    Split,
    /// Split by footprints: why the contract alone did not split it, and the arguments it
    /// did not serve.
    Fetch {
        fetch: Arc<Fetch>,
        why: Arc<Refusal>,
        unserved: Arc<[bool]>,
    },
}

/// The kept decisions of one kernel.
#[derive(Debug, Default)]
pub(in crate::scaling) struct Decided(Mutex<Vec<(DecideKey, Pure)>>);

impl RootLaunch<'_> {
    /// The key of this launch's decision for the launch of shape `shape`.
    pub(super) fn decide_key(&self, shape: ShapeKey) -> DecideKey {
        let args = (self.args.iter())
            .map(|v| match v {
                Value::Colored(c) => ArgKey::Colored(Arc::downgrade(c)),
                Value::Plain(Arg::Buffer { mem, .. }) => {
                    ArgKey::Buffer(mem.raw() as usize, mem.bytes())
                }
                Value::Plain(Arg::Scalar { bytes, .. }) => ArgKey::Scalar(bytes.clone()),
                Value::Plain(Arg::Local(n)) => ArgKey::Local(*n),
            })
            .collect();
        DecideKey { shape, args }
    }

    /// The decision kept for `key`, rebuilt for this launch.
    pub(super) fn kept_decision(&self, key: &DecideKey) -> Option<Decision> {
        let kept = self
            .kernel
            .decided
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let pure = kept.iter().find(|(k, _)| k == key)?.1.clone();
        drop(kept);
        log::debug!(
            "kernel `{}`: {pure:?}, as decided before for this shape, these scalars and buffers",
            self.kernel.name()
        );
        Some(match pure {
            Pure::Split => Decision::Split,
            Pure::Fetch {
                fetch,
                why,
                unserved,
            } => {
                // Whether its parts may be widened depends on the margins' state (lent or
                // not), asked again.
                let deep = self.deep_args(&unserved, &fetch).is_some();
                Decision::Fetch(fetch, why, deep)
            }
        })
    }

    /// Keeps `decision` for `key` where it moves nothing (`unserved`: the arguments the
    /// contract did not serve).
    pub(super) fn keep_decision(&self, key: DecideKey, decision: &Decision, unserved: &[bool]) {
        let pure = match decision {
            Decision::Split => Pure::Split,
            Decision::Fetch(f, why, _) if f.moves_nothing() => Pure::Fetch {
                fetch: f.clone(),
                why: why.clone(),
                unserved: unserved.into(),
            },
            _ => return,
        };
        let mut kept = self
            .kernel
            .decided
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        kept.retain(|(k, _)| *k != key);
        kept.insert(0, (key, pure));
        kept.truncate(KEPT);
    }
}
