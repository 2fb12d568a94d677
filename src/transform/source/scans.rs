//! How often each text was scanned on this thread (the tests' proof that one build scans each
//! text once; `Scanned::new` counts).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

thread_local! {
    static SCANS: RefCell<HashMap<u64, (usize, usize)>> = RefCell::default();
}

/// Counts one scan of `src`.
pub(crate) fn count(src: &str) {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    src.hash(&mut h);
    SCANS.with(|m| m.borrow_mut().entry(h.finish()).or_insert((0, src.len())).0 += 1);
}

/// The scans counted since the last call, as (times scanned, text length) per text.
pub(crate) fn take() -> Vec<(usize, usize)> {
    SCANS.with(|m| m.borrow_mut().drain().map(|(_, v)| v).collect())
}
