//! First runs on devices that compile alone ([`Device::compiles_alone`]: PoCL before 4 on
//! CPUs), one at a time in the whole process.
//!
//! Such a driver compiles a kernel's work-group function in its worker threads when the
//! kernel first runs with a given local size (and global size and offset, which it may
//! specialise on), and two such compilations at once (two devices of one context) sometimes
//! aborted it ("Failed to create kernel compiler pass") or crashed LLVM (docs/devices.md).
//! Every kernel enqueue goes through [`Launch::execute`](crate::launch::Launch::execute): one
//! device's launches, each device's part of a root launch, the algorithms' kernels. There, on
//! such a device, a piece whose [`RunKey`] its kernel object has not run takes the
//! process-wide [`alone`] lock, is enqueued, waited for until it runs (PoCL marks a kernel
//! command running once its work-group function is compiled; waiting for its end made a long
//! kernel's first launch block, and time out under `CLGROUPS_TIMEOUT`) and recorded
//! ([`Runs`]), and releases the lock; a piece already run takes nothing. Other devices test one
//! `bool`.
//!
//! The lock is taken after the piece's kernel handle is locked and held only until the piece
//! starts, which needs no other lock: a piece's command waits only for commands already
//! enqueued (its queue's, and the events it waits for); the wait is bounded all the same.

#[cfg(doc)]
use crate::device::Device;
use crate::range::Range;
use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};

/// What a first run compiles a work-group function for: the kernel object (the raw handle of
/// one variant of one kernel, on the one device its program was built for), the global size,
/// the local size (`None`: the driver's choice, which depends on the global size only) and the
/// offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RunKey {
    pub(crate) kernel: usize,
    pub(crate) global: Range,
    pub(crate) local: Option<Range>,
    pub(crate) offset: Range,
}

/// The most keys a kernel keeps: past it, the set starts again (a forgotten key only makes a
/// launch run alone once more, never the reverse).
pub(crate) const MAX_RUNS: usize = 256;

/// The [`RunKey`]s one kernel's pieces have run (pure; the kernel keeps it behind a lock, and
/// only on devices that compile alone does anything read or write it).
#[derive(Debug, Default)]
pub(crate) struct Runs {
    ran: HashSet<RunKey>,
}

impl Runs {
    /// Whether a piece of `key` ran before (started: its work-group function compiled).
    pub(crate) fn ran(&self, key: &RunKey) -> bool {
        self.ran.contains(key)
    }

    /// Records that a piece of `key` started (the set emptied first when full).
    pub(crate) fn record(&mut self, key: RunKey) {
        if self.ran.len() >= MAX_RUNS && !self.ran.contains(&key) {
            log::debug!("first runs: a kernel ran {MAX_RUNS} shapes; its record starts again");
            self.ran.clear();
        }
        self.ran.insert(key);
    }
}

/// The one lock of first runs on devices that compile alone, process-wide.
static ALONE: Mutex<()> = Mutex::new(());

/// Takes the lock of first runs (a panic elsewhere while holding it leaves nothing to repair).
pub(crate) fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::{RunKey, Runs, MAX_RUNS};
    use crate::range::Range;

    fn key(kernel: usize, global: usize, local: Option<usize>, offset: usize) -> RunKey {
        RunKey {
            kernel,
            global: Range::d1(global),
            local: local.map(Range::d1),
            offset: Range::d1(offset),
        }
    }

    #[test]
    fn a_key_runs_alone_until_it_ran() {
        let mut runs = Runs::default();
        let k = key(1, 256, Some(64), 0);
        assert!(!runs.ran(&k));
        runs.record(k);
        assert!(runs.ran(&k));
        // Every part of the key counts: another kernel object, global or local size, offset,
        // the driver's local size, or another rank.
        for other in [
            key(2, 256, Some(64), 0),
            key(1, 512, Some(64), 0),
            key(1, 256, Some(32), 0),
            key(1, 256, None, 0),
            key(1, 256, Some(64), 128),
        ] {
            assert!(!runs.ran(&other), "{other:?}");
        }
        let d2 = RunKey {
            global: Range::d2(256, 1),
            local: Some(Range::d2(64, 1)),
            offset: Range::d2(0, 0),
            ..k
        };
        assert!(!runs.ran(&d2));
    }

    #[test]
    fn a_full_record_starts_again_and_keeps_the_new_key() {
        let mut runs = Runs::default();
        for g in 1..=MAX_RUNS {
            runs.record(key(1, g, None, 0));
        }
        assert!(runs.ran(&key(1, 1, None, 0)));
        // Recording a known key forgets nothing.
        runs.record(key(1, 1, None, 0));
        assert!(runs.ran(&key(1, MAX_RUNS, None, 0)));
        runs.record(key(1, MAX_RUNS + 1, None, 0));
        assert!(runs.ran(&key(1, MAX_RUNS + 1, None, 0)));
        assert!(!runs.ran(&key(1, 1, None, 0)));
        assert_eq!(runs.ran.len(), 1);
    }
}
