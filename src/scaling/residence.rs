//! Where a colored buffer's valid data is ([`Residence`]): the state that
//! [`super::resident`]'s moves read and write, kept in each [`ColoredArg`](super::arg::ColoredArg).

use crate::buffer::Buffer;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where a colored buffer's valid data is.
#[derive(Debug, Default)]
pub(crate) struct Residence {
    state: Mutex<State>,
    /// A command on another device's queue may still touch the parts (a whole move, a
    /// merge's copies, a fallback): launches must wait for every queue (markers) until one
    /// that did clears it ([`Residence::ordered`]).
    crossed: AtomicBool,
    /// Written since it was last moved whole (meaningful while it is whole: the parts are
    /// stale). Outside the lock, so that a launch kept where the buffer is marks it with one
    /// store; every move whole clears it ([`Residence::made_whole`]).
    dirty: AtomicBool,
}

#[derive(Debug, Default)]
pub(super) struct State {
    /// The buffer held whole on a device, if it is.
    pub(super) whole: Option<Whole>,
    /// The last whole allocation, kept for the next move to the same device.
    pub(super) spare: Option<Whole>,
}

#[derive(Clone, Debug)]
pub(super) struct Whole {
    pub(super) device: usize,
    /// Its allocation there; `None` in shared placement, where the one parent buffer that
    /// every device's part is a sub-buffer of is the whole (nothing is copied).
    pub(super) buf: Option<Arc<Buffer<u8>>>,
}

impl Residence {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device holding the buffer whole and whether its parts are stale, if it is whole.
    pub(super) fn holder(&self) -> Option<(usize, bool)> {
        let dirty = self.dirty.load(Ordering::Relaxed);
        self.lock().whole.as_ref().map(|w| (w.device, dirty))
    }

    /// The whole buffer and its device, if it is whole in an allocation of its own
    /// (partitioned placement).
    pub(super) fn whole(&self) -> Option<(usize, Arc<Buffer<u8>>)> {
        let s = self.lock();
        let w = s.whole.as_ref()?;
        Some((w.device, w.buf.clone()?))
    }

    /// `f` of the buffer's allocation on device `d` (`None` in shared placement: the parent)
    /// where it is whole there, in one look.
    pub(super) fn held_on<R>(
        &self,
        d: usize,
        f: impl FnOnce(Option<&Buffer<u8>>) -> R,
    ) -> Option<R> {
        let s = self.lock();
        let w = s.whole.as_ref().filter(|w| w.device == d)?;
        Some(f(w.buf.as_deref()))
    }

    /// Records `whole` as where the buffer is, not written since (under the lock, `s`).
    pub(super) fn made_whole(&self, s: &mut State, whole: Whole) {
        s.whole = Some(whole);
        self.dirty.store(false, Ordering::Relaxed);
    }

    /// Whether the buffer was written since it was last moved whole.
    pub(super) fn written_since(&self) -> bool {
        self.dirty.load(Ordering::Relaxed)
    }

    /// A command touching the parts from another device's queue was enqueued.
    pub(super) fn cross(&self) {
        self.crossed.store(true, Ordering::Relaxed);
    }

    /// Every command enqueued so far is ordered before what comes next on every queue
    /// (markers on every queue, or every queue finished).
    pub(super) fn ordered(&self) {
        self.crossed.store(false, Ordering::Relaxed);
    }

    /// Whether a command on another device's queue may still touch the parts.
    pub(super) fn crossed(&self) -> bool {
        self.crossed.load(Ordering::Relaxed)
    }

    /// The whole buffer is written (its parts are stale).
    pub(super) fn dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Every element is about to be overwritten through the parts (a host write or fill, a
    /// scan's output): the parts hold the valid data from now on.
    pub(super) fn discard(&self) {
        let mut s = self.lock();
        if let Some(w) = s.whole.take() {
            s.spare = Some(w);
        }
    }
}
