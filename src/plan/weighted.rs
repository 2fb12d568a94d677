//! Partitions weighted by each device's throughput (unequal devices: a GPU and a CPU, two
//! different GPUs, a local and a remote device).
//!
//! [`weighted`] picks the dimension as [`partition`] does, then splits its work-groups in
//! proportion to the weights by largest remainders ([`weighted_chunks`](super::shares::weighted_chunks)) in the units of
//! [`crate::plan::shares`] (whole work-groups): the chunks cover the groups exactly, in device
//! order, and each is within one unit of its exact share. Buffers are colored by the same rule
//! ([`weighted_elements`]), so they follow the launch.
//!
//! ```
//! use clgroups::{plan::weighted::weighted, Range};
//! // A device three times as fast takes three quarters of 64 work-groups.
//! let p = weighted(Range::d1(64 * 64), Range::d1(64), &[3.0, 1.0])?;
//! assert_eq!(p.chunks, vec![48, 16]);
//! # Ok::<(), clgroups::Error>(())
//! ```

use super::partition::{partition, Partition};
use super::shares::{shares, Devices};
use crate::error::Result;
use crate::range::Range;

/// The [`partition`] of `global` in work-groups of `local` over `weights.len()` devices, with
/// the chosen dimension's work-groups split by [`weighted_chunks`](super::shares::weighted_chunks). Errors as [`partition`]
/// and [`weighted_chunks`](super::shares::weighted_chunks) do.
///
/// ```
/// use clgroups::{plan::weighted::weighted, Range};
/// let p = weighted(Range::d2(256, 100), Range::d2(16, 1), &[1.0, 4.0])?;
/// assert_eq!((p.dim, p.chunks.clone()), (1, vec![20, 80]));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn weighted(global: Range, local: Range, weights: &[f64]) -> Result<Partition> {
    let even = partition(global, local, weights.len())?;
    let groups = even.chunks.iter().sum();
    let chunks = shares(groups, 1, Devices::Weighted(weights))?;
    log::debug!(
        "weighted partition {weights:?}: dimension {}, chunks {chunks:?}",
        even.dim
    );
    Ok(even.with_chunks(chunks))
}

/// Elements per device of a colored array of `len` elements of `elem` bytes in pages of
/// `page` bytes (widened to whole elements, as [`crate::plan::coloring::color_elements`]
/// does), split by [`shares`] as [`weighted`] splits work-groups: with a page of one
/// work-group slab (or of one element, for 1-D launches in work-groups of a power of two),
/// the chunks of [`weighted`]'s partition. Errors ([`crate::Error::InvalidInput`]) for a zero `page`
/// or `elem`, or bad weights.
///
/// ```
/// use clgroups::plan::weighted::weighted_elements;
/// // 2^20 floats in 64 KiB pages (16384 floats each): 64 pages, 48 and 16.
/// assert_eq!(weighted_elements(1 << 20, 4, 65536, &[3.0, 1.0])?, vec![48 << 14, 16 << 14]);
/// // The last page is partial.
/// assert_eq!(weighted_elements(10, 4, 16, &[1.0, 1.0])?, vec![8, 2]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[cfg(any(test, feature = "unstable-internals"))] // the rule itself, for tests and tools
pub fn weighted_elements(
    len: usize,
    elem: usize,
    page: usize,
    weights: &[f64],
) -> Result<Vec<usize>> {
    if page == 0 || elem == 0 {
        return Err(crate::Error::input(crate::error::InputFault::ColoringUnits));
    }
    shares(
        len,
        page / super::gcd(page, elem),
        Devices::Weighted(weights),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::shares::weighted_chunks;
    use proptest::prelude::*;

    #[test]
    fn bad_weights_are_refused() {
        assert!(weighted_chunks(4, &[]).is_err());
        assert!(weighted_chunks(4, &[1.0, 0.0]).is_err());
        assert!(weighted_chunks(4, &[1.0, f64::NAN]).is_err());
        assert!(weighted_chunks(4, &[f64::INFINITY]).is_err());
    }

    #[test]
    fn equal_weights_give_the_even_split() {
        for g in 0..50 {
            for n in 1..6 {
                let even = partition(Range::d1(g.max(1) * 4), Range::d1(4), n).unwrap();
                let w = weighted_chunks(g.max(1), &vec![1.0; n]).unwrap();
                assert_eq!(w, even.chunks, "{g} groups on {n} devices");
            }
        }
    }

    proptest! {
        #[test]
        fn weighted_colorings_cover_the_array(
            len in 1usize..100_000,
            elem in 1usize..17,
            page in 1usize..5000,
            weights in prop::collection::vec(0.1f64..10.0, 1..5),
        ) {
            let chunks = weighted_elements(len, elem, page, &weights).unwrap();
            prop_assert_eq!(chunks.iter().sum::<usize>(), len);
        }

        #[test]
        fn chunks_cover_the_groups_in_proportion(
            groups in 0usize..100_000,
            weights in prop::collection::vec(0.01f64..1000.0, 1..9),
        ) {
            let chunks = weighted_chunks(groups, &weights).unwrap();
            prop_assert_eq!(chunks.len(), weights.len());
            prop_assert_eq!(chunks.iter().sum::<usize>(), groups);
            let sum: f64 = weights.iter().sum();
            for (c, w) in chunks.iter().zip(&weights) {
                let exact = groups as f64 * w / sum;
                prop_assert!((*c as f64 - exact).abs() < 1.0 + 1e-9, "{} vs {}", c, exact);
            }
        }

        #[test]
        fn weighted_partitions_are_whole_work_groups(
            groups in 1usize..2000,
            local in 1usize..64,
            weights in prop::collection::vec(0.1f64..10.0, 1..5),
        ) {
            let (global, local) = (Range::d1(groups * local), Range::d1(local));
            let p = weighted(global, local, &weights).unwrap();
            let subs = p.sub_ranges(global, local);
            let mut next = 0;
            for (sub, c) in subs.iter().zip(&p.chunks) {
                match sub {
                    Some((o, s)) => {
                        prop_assert_eq!(o.get(0), next);
                        prop_assert_eq!(s.get(0) % local.get(0), 0);
                        next += s.get(0);
                    }
                    None => prop_assert_eq!(*c, 0),
                }
            }
            prop_assert_eq!(next, global.get(0));
        }
    }
}
