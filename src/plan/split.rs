//! The fallback of a plain-range launch for kernels without generated variants, and the fit of
//! a range to a required work-group size.
//!
//! A kernel that cannot be rounded (no variant could be written or built, or it uses barriers,
//! local memory or sub-groups) would run over a prime range in work-groups of one work-item.
//! Instead, the range is enqueued as a *bulk* launch over whole work-groups and one *tail*
//! launch over the rest, at a global offset, in one work-group row of its own. Every work-item
//! keeps its `get_global_id`; what changes is what the kernel would see of the launch as a
//! whole, so the split is only used when the kernel's source never asks for it
//! (the split-sensitive built-ins; a whole-source, whole-word check, comments included: conservative).

use crate::plan::local_size::{group_score, rounding_group_size, tuned, Limits};
use crate::range::Range;

/// Whether a source that uses none of the built-ins whose answer differs between one launch and
/// a bulk + tail split (the built-in table's `SPLIT`; `uses(word)`: the source uses `word`) may
/// run as bulk + tail launches.
///
/// ```
/// use clgroups::plan::split::splittable;
/// let words = |src: &'static str| move |w: &str| src.split(|c: char| !c.is_alphanumeric() && c != '_').any(|x| x == w);
/// assert!(splittable(words("x[get_global_id(0)] = 1;")));
/// assert!(!splittable(words("x[0] = get_global_size(0);")));
/// ```
pub fn splittable(uses: impl Fn(&str) -> bool) -> bool {
    !crate::builtins::named(crate::builtins::Flags::SPLIT).any(uses)
}

/// One enqueue of a split launch.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::split::split;
/// use clgroups::Range;
/// let cpu = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: false };
/// if let Some(pieces) = split(Range::d1(1_000_003), &cpu, false) {
///     let covered: usize = pieces.iter().map(|p| p.global.len()).sum();
///     assert_eq!(covered, 1_000_003);
///     assert!(pieces.iter().all(|p| p.global.get(0) % p.local.get(0) == 0));
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPiece {
    /// Global offset (added to the user's).
    pub offset: Range,
    /// Global range.
    pub global: Range,
    /// Local range (divides `global`).
    pub local: Range,
}

/// A bulk + tail split of `user` along its slowest dimension, when it gives larger work-groups
/// than the tuned local size of `user` (within the rounding work-group size `W` of
/// [`rounding_group_size`]); with `avoid_single`, also whenever that tuned size is one or two
/// work-items, and no piece then has a work-group of one or two work-items. A tail of one
/// work-item is avoided in any case. `None`: launch `user` whole.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::split::split;
/// use clgroups::Range;
/// let gpu = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// let p = split(Range::d1(7727), &gpu, false).unwrap();
/// assert_eq!((p[0].global, p[0].local), (Range::d1(7680), Range::d1(256)));
/// assert_eq!((p[1].offset, p[1].global, p[1].local), (Range::d1(7680), Range::d1(47), Range::d1(47)));
/// assert_eq!(split(Range::d1(7680), &gpu, false), None);
/// ```
pub fn split(user: Range, lim: &Limits, avoid_single: bool) -> Option<Vec<SplitPiece>> {
    let w = rounding_group_size(lim);
    let budget = Limits {
        max_work_group_size: w.min(lim.max_work_group_size),
        ..lim.clone()
    };
    let s = user.rank() - 1;
    let n = user.get(s);
    let before = tuned(user, &budget).len();
    let inner = tuned(user.with(s, 1), &budget);
    let mut f = (w / inner.len())
        .min(lim.max_work_item_sizes[s].max(1))
        .min(n);
    // Work-groups a tail may not have: one work-item, and with `avoid_single` two (PoCL's
    // native collectives abort in work-groups of one or two work-items).
    let tiny = |g: usize| g == 1 || (avoid_single && g == 2);
    while f > 1 && tiny(inner.len() * (n % f)) {
        f -= 1;
    }
    let pm = lim.preferred_multiple;
    let better = group_score(inner.len() * f, pm) > group_score(before, pm);
    if f <= 1 || tiny(inner.len() * f) || !(better || (avoid_single && tiny(before))) {
        return None;
    }
    let zero = user.zeros_like();
    let bulk = n / f * f;
    let mut pieces = vec![SplitPiece {
        offset: zero,
        global: user.with(s, bulk),
        local: inner.with(s, f),
    }];
    if n > bulk {
        pieces.push(SplitPiece {
            offset: zero.with(s, bulk),
            global: user.with(s, n - bulk),
            local: inner.with(s, n - bulk),
        });
    }
    log::debug!("range {user:?}: split into {pieces:?} (tuned group {before}, W {w})");
    Some(pieces)
}

/// The range a kernel with a required work-group size `required` runs over for a plain range
/// `user`: `user` rounded up to a multiple of `required` in each dimension (the caller runs a
/// guarded variant), or `user` itself when it is already such a multiple.
///
/// ```
/// use clgroups::plan::split::round_to_required;
/// use clgroups::Range;
/// assert_eq!(round_to_required(Range::d2(101, 7), Range::d1(64)), Range::d2(128, 7));
/// ```
pub fn round_to_required(user: Range, required: Range) -> Range {
    (0..user.rank()).fold(user, |r, d| {
        let q = required.padded()[d].max(1);
        r.with(d, user.get(d).div_ceil(q) * q)
    })
}

/// `r` with `rank` dimensions (missing ones are 1); `None` when `r` has a dimension above 1
/// beyond `rank`.
///
/// ```
/// use clgroups::plan::split::at_rank;
/// use clgroups::Range;
/// assert_eq!(at_rank(Range::d1(16), 2), Some(Range::d2(16, 1)));
/// assert_eq!(at_rank(Range::d2(4, 2), 1), None);
/// ```
pub fn at_rank(r: Range, rank: usize) -> Option<Range> {
    let p = r.padded();
    if p[rank..].iter().any(|&d| d != 1) {
        return None;
    }
    Range::new(&p[..rank]).ok()
}

/// Whether `required` divides `global` in every dimension (missing dimensions are 1).
///
/// ```
/// use clgroups::plan::split::fits_required;
/// use clgroups::Range;
/// assert!(fits_required(Range::d2(128, 3), Range::d1(64)));
/// assert!(!fits_required(Range::d1(100), Range::d1(64)));
/// ```
pub fn fits_required(global: Range, required: Range) -> bool {
    let (g, r) = (global.padded(), required.padded());
    (0..3).all(|d| g[d] % r[d].max(1) == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::local_size::fixtures::{cpu, gpu};
    use proptest::prelude::*;

    #[test]
    fn single_work_items_are_avoided_on_request() {
        // 7 on a GPU: the tuned group is 7 (better than nothing), no split needed.
        assert_eq!(split(Range::d1(7), &gpu(), false), None);
        let p = split(Range::d1(257), &gpu(), true).unwrap();
        assert!(p.iter().all(|p| p.local.len() > 1), "{p:?}");
        // A remainder of one work-item is avoided by a smaller row.
        let p = split(Range::d1(4097), &cpu(), true).unwrap();
        assert!(p.iter().all(|p| p.local.len() > 1), "{p:?}");
        // ... and of two, on request.
        let p = split(Range::d1(4098), &cpu(), true).unwrap();
        assert!(p.iter().all(|p| p.local.len() > 2), "{p:?}");
    }

    proptest! {
        #[test]
        fn pieces_tile_the_range_in_whole_groups(
            dims in prop::collection::vec(1usize..3000, 1..=3),
            on_gpu: bool,
            avoid: bool,
        ) {
            let user = Range::new(&dims).unwrap();
            let lim = if on_gpu { gpu() } else { cpu() };
            if let Some(pieces) = split(user, &lim, avoid) {
                let s = user.rank() - 1;
                let mut next = 0;
                for p in &pieces {
                    prop_assert_eq!(p.offset.get(s), next);
                    next += p.global.get(s);
                    for d in 0..user.rank() {
                        prop_assert_eq!(p.global.get(d) % p.local.get(d), 0);
                        if d != s {
                            prop_assert_eq!(p.global.get(d), user.get(d));
                        }
                    }
                    prop_assert!(p.local.len() <= lim.max_work_group_size);
                    if avoid {
                        prop_assert!(p.local.len() > 1);
                    }
                }
                prop_assert_eq!(next, user.get(s));
            }
        }
    }
}
