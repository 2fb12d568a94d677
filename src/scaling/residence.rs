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
    /// Written since it moved: the parts are stale.
    pub(super) dirty: bool,
}

impl Residence {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device holding the buffer whole and whether its parts are stale, if it is whole.
    pub(super) fn holder(&self) -> Option<(usize, bool)> {
        self.lock().whole.as_ref().map(|w| (w.device, w.dirty))
    }

    /// The whole buffer and its device, if it is whole in an allocation of its own
    /// (partitioned placement).
    pub(super) fn whole(&self) -> Option<(usize, Arc<Buffer<u8>>)> {
        let s = self.lock();
        let w = s.whole.as_ref()?;
        Some((w.device, w.buf.clone()?))
    }

    /// Whether the buffer is whole on device `d`, and its allocation there (`None` in shared
    /// placement: the parent), in one look.
    pub(super) fn held_on(&self, d: usize) -> Option<Option<Arc<Buffer<u8>>>> {
        let s = self.lock();
        let w = s.whole.as_ref().filter(|w| w.device == d)?;
        Some(w.buf.clone())
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
        if let Some(w) = self.lock().whole.as_mut() {
            w.dirty = true;
        }
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
