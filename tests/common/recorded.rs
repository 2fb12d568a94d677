//! Kernels whose work-items record their sub-group, checked per sub-group against the host
//! (`tests/data_conditions.rs`, `tests/collective_chains.rs`): `k(x, out, ids, scalars...)`
//! over [`GLOBAL`] work-items, each writing `width` ints to `out` and its sub-group id and
//! lane to `ids`, in work-groups of each of [`LOCALS`]; each test in a child process, so that
//! a barrier that hangs or crashes PoCL fails it.

use clgroups::{Buffer, Kernel, LocalSize, Program, Queue, Range};
use std::collections::BTreeMap;

/// Work-items of every launch.
pub const GLOBAL: usize = 264;
/// Work-group sizes: multiples of the sub-group size and not.
pub const LOCALS: [usize; 5] = [8, 12, 24, 33, 88];

/// Runs `body` with the device's queue and `src` built on it, in a child process running
/// `test` (`super::in_child`).
pub fn in_child(test: &str, src: &str, body: impl FnOnce(&Queue, &Program)) {
    super::in_child(test, || {
        let q = super::queue();
        let d = q.device().clone();
        let p = Program::from_source(&q, src).unwrap_or_else(|e| panic!("{d}: {e}"));
        body(&q, &p);
    });
}

/// Launches `k(x, out, ids, scalars...)` over [`GLOBAL`] work-items in work-groups of
/// `local`; returns `out` (`width` ints per work-item) and the launch's sub-groups, the
/// global ids of each in lane order, asserting that each work-group's reports make lanes
/// 0..n.
///
/// # Safety
///
/// Work-item `g` of `k` reads `x[g]` and writes `out[width * g..width * (g + 1)]`, `ids[2 * g]`
/// and `ids[2 * g + 1]` only.
pub unsafe fn launch(
    q: &Queue,
    k: &Kernel,
    x: &Buffer<i32>,
    (width, local): (usize, usize),
    scalars: &[i32],
) -> (Vec<i32>, Vec<Vec<usize>>) {
    let d = q.device();
    let out = Buffer::from_slice(q, &vec![-99i32; width * GLOBAL]).unwrap();
    let ids = Buffer::from_slice(q, &vec![u32::MAX; 2 * GLOBAL]).unwrap();
    let l = k.launch().arg(x).arg(&out).arg(&ids);
    let l = scalars.iter().fold(l, |l, &s| l.arg(s));
    // SAFETY: the caller's: `out` and `ids` are sized for `GLOBAL` work-items as it says.
    unsafe { l.nd_range(Range::d1(GLOBAL), LocalSize::Exact(Range::d1(local))) }
        .and_then(|ev| ev.wait())
        .unwrap_or_else(|e| panic!("{d}: {} local {local}: {e}", k.name()));
    let ids = ids.read(q).unwrap();
    // (work-group, sub-group id) -> (lane, global id)
    let mut groups: BTreeMap<(usize, u32), Vec<(u32, usize)>> = BTreeMap::new();
    for g in 0..GLOBAL {
        let key = (g / local, ids[2 * g]);
        groups.entry(key).or_default().push((ids[2 * g + 1], g));
    }
    let sub_groups = groups
        .into_iter()
        .map(|(key, mut lanes)| {
            lanes.sort_unstable();
            assert!(
                lanes
                    .iter()
                    .enumerate()
                    .all(|(l, &(lane, _))| lane as usize == l),
                "{d}: {} local {local}: sub-group {key:?}: lanes {lanes:?}",
                k.name()
            );
            lanes.into_iter().map(|(_, g)| g).collect()
        })
        .collect();
    (out.read(q).unwrap(), sub_groups)
}
