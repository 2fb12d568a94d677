//! Per-queue state of the algorithms: built kernels and reusable buffers, one entry per
//! (queue, element type, operation), so that a call allocates nothing and builds nothing once
//! warm. An entry lives as long as its queue: it holds a [`Queue`] handle (as do its programs),
//! and entries whose queue has no handle left outside the cache are dropped on the next call.

use super::{Element, ReduceOp, State};
use crate::error::Result;
use crate::queue::Queue;
use once_cell::sync::Lazy;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Slot = Arc<dyn Any + Send + Sync>;

struct Entry {
    queue: Queue,
    /// Handles of the queue held inside this entry (its own and its programs').
    internal: usize,
    slots: HashMap<(TypeId, ReduceOp), Slot>,
}

static CACHE: Lazy<Mutex<HashMap<usize, Entry>>> = Lazy::new(Default::default);

/// The state of `op` on `T` for `queue`, built on first use.
pub(super) fn state<T: Element>(queue: &Queue, op: ReduceOp) -> Result<Arc<Mutex<State<T>>>> {
    let mut cache = super::lock(&CACHE);
    cache.retain(|_, e| e.queue.handles() > e.internal);
    let entry = cache.entry(queue.key()).or_insert_with(|| Entry {
        queue: queue.clone(),
        internal: 1,
        slots: HashMap::new(),
    });
    let key = (TypeId::of::<T>(), op);
    if let Some(slot) = entry.slots.get(&key) {
        return Ok(Arc::clone(slot).downcast().expect("slot of its type"));
    }
    let before = queue.handles();
    let state = Arc::new(Mutex::new(State::<T>::new(queue, op)?));
    entry.internal += queue.handles().saturating_sub(before);
    entry.slots.insert(key, state.clone());
    Ok(state)
}

/// Held by tests that count entries or make their own (the cache is one per process).
#[cfg(test)]
pub(super) static TESTS: Mutex<()> = Mutex::new(());

/// Number of queues with an entry (for tests).
#[cfg(test)]
pub(super) fn queues() -> usize {
    let mut cache = super::lock(&CACHE);
    cache.retain(|_, e| e.queue.handles() > e.internal);
    cache.len()
}
