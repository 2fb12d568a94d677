//! Static partitioning of one ND-range over several devices ("stacks"), after the rule Intel's
//! root-device driver uses for implicit scaling.
//!
//! # The rule
//!
//! The slowest-moving dimension is split into `stacks` contiguous chunks of *work-groups*, in
//! order (device 0 takes the first chunk), by [`shares`]: in units of whole work-groups (one
//! work-group, or a power of two of them when every device gets at least 64 units), the first
//! chunks taking one more unit when the units do not divide evenly; buffer colorings cut by the
//! same rule ([`crate::plan::shares`]). If that split leaves an [`imbalance`] above [`MAX_IMBALANCE`] (5%), the next
//! faster dimension is tried, and so on down to x; a faster dimension is only taken when it is
//! less imbalanced than every slower one. Put another way: the slowest dimension whose imbalance
//! is at most 5% is chosen; when none is, the slowest of the least imbalanced ones. Work-items of
//! one work-group always run on one device; a launch of one work-group runs on device 0 only
//! (chunks `[1, 0, ..]`).
//!
//! # Dimension order
//!
//! Everything here is in OpenCL order: dimension 0 is x, the fastest, and the slowest dimension
//! of a rank-`r` range is `r - 1`. SYCL writes ranges slowest first: SYCL's
//! `range<3>{nz, ny, nx}` is [`Range::d3`]`(nx, ny, nz)` (see [`Range::from_sycl_order`]), so
//! SYCL dimension `d` is OpenCL dimension `r - 1 - d`; the "z" of Intel's implicit-scaling
//! guide is dimension 2 here.
//!
//! ```
//! use clgroups::{plan::partition::partition, Range};
//! // SYCL global {19, 512, 512}, local {1, 1, 16}: 19 z-groups on 2 stacks is 5.3% imbalanced,
//! // so y (dimension 1, 512 groups) is split instead.
//! let global = Range::from_sycl_order(&[19, 512, 512]).unwrap();
//! let local = Range::from_sycl_order(&[1, 1, 16]).unwrap();
//! let p = partition(global, local, 2).unwrap();
//! assert_eq!((p.dim, p.chunks.clone()), (1, vec![256, 256]));
//! ```

use super::shares::{shares, Devices};
use crate::error::{Error, InputFault, Result};
use crate::range::Range;

/// The largest [`imbalance`] (5%) accepted before a faster dimension is considered.
pub const MAX_IMBALANCE: f64 = 0.05;
// `acceptable` checks it exactly, in integers: excess / g <= 1/20.
const _: () = assert!(MAX_IMBALANCE * 20.0 == 1.0);

/// How one ND-range is split over devices: `chunks[i]` work-groups of dimension `dim` go to
/// device `i`, contiguously and in device order.
///
/// ```
/// use clgroups::{plan::partition::partition, Range};
/// // 100 work-groups of 64 over 3 devices: 34 + 33 + 33.
/// let p = partition(Range::d1(6_400), Range::d1(64), 3)?;
/// assert_eq!((p.dim, p.chunks.clone()), (0, vec![34, 33, 33]));
/// // 1000 over 3: units of 4 work-groups (250 units: 84 + 83 + 83).
/// let p = partition(Range::d1(64_000), Range::d1(64), 3)?;
/// assert_eq!(p.chunks, vec![336, 332, 332]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Partition {
    /// The partitioned dimension, OpenCL numbering (0 = x, fastest).
    pub dim: usize,
    /// Work-groups of `dim` per device, in device order; trailing zeros when there are fewer
    /// groups than devices.
    pub chunks: Vec<usize>,
}

impl Partition {
    /// This partition's dimension with other chunks (e.g. [`crate::plan::weighted`]'s).
    pub(crate) fn with_chunks(self, chunks: Vec<usize>) -> Self {
        Partition { chunks, ..self }
    }

    /// Per device, the `(global offset, global size)` of its sub-launch in OpenCL order, or
    /// `None` for an empty chunk.
    ///
    /// `global` and `local` must be the ranges this partition was made from; the offsets are
    /// relative to the launch's own global offset (add it when the launch has one).
    ///
    /// ```
    /// use clgroups::{plan::partition::partition, Range};
    /// let (global, local) = (Range::d2(64, 5), Range::d2(16, 1));
    /// let p = partition(global, local, 3).unwrap();
    /// assert_eq!(p.chunks, vec![2, 2, 1]); // 5 y-groups: 20% imbalance; 4 x-groups: 50%
    /// let sub = p.sub_ranges(global, local);
    /// assert_eq!(sub[0], Some((Range::d2(0, 0), Range::d2(64, 2))));
    /// assert_eq!(sub[2], Some((Range::d2(0, 4), Range::d2(64, 1))));
    /// ```
    pub fn sub_ranges(&self, global: Range, local: Range) -> Vec<Option<(Range, Range)>> {
        let rank = global.rank();
        let step = local.get(self.dim);
        let mut start = 0;
        self.chunks
            .iter()
            .map(|&groups| {
                let first = start;
                start += groups;
                (groups > 0).then(|| {
                    let mut offset = [0; 3];
                    let mut size = global.padded();
                    offset[self.dim] = first * step;
                    size[self.dim] = groups * step;
                    (with_rank(offset, rank), with_rank(size, rank))
                })
            })
            .collect()
    }
}

/// A range of `rank` (1 to 3) dimensions from padded sizes.
fn with_rank(d: [usize; 3], rank: usize) -> Range {
    match rank {
        1 => Range::d1(d[0]),
        2 => Range::d2(d[0], d[1]),
        _ => Range::d3(d[0], d[1], d[2]),
    }
}

/// Relative excess of the busiest of `stacks` devices over an even share of `groups`
/// work-groups: `(ceil(g/s) - g/s) / (g/s)`, i.e. `(ceil(g/s)·s - g) / g`.
///
/// This is the definition that reproduces every example of Intel's partitioning table: 21
/// groups on 2 stacks is 4.76% (≤ 5%, kept), 19 is 5.26% (> 5%, a faster dimension is tried),
/// even counts are 0. For 2 stacks it is `1/g` for odd `g`, so only odd sizes up to 19 are
/// affected, as Intel's text says. (Measured against the busiest chunk instead,
/// `(max - g/s) / max`, 19 would give exactly 5% and stay in z, contradicting the table.)
/// Returns 0 when there are no groups or no stacks (nothing to balance).
///
/// ```
/// use clgroups::plan::partition::imbalance;
/// assert!((imbalance(21, 2) - 0.5 / 10.5).abs() < 1e-12);
/// assert!((imbalance(19, 2) - 0.5 / 9.5).abs() < 1e-12);
/// assert_eq!(imbalance(18, 2), 0.0);
/// assert_eq!(imbalance(1, 2), 1.0); // one group on two stacks: the busy one does twice its share
/// ```
pub fn imbalance(groups: usize, stacks: usize) -> f64 {
    if groups == 0 || stacks == 0 {
        return 0.0;
    }
    excess(groups, stacks) as f64 / groups as f64
}

/// `ceil(g/s)·s - g`: the numerator of [`imbalance`] over the denominator `g`, exact.
fn excess(groups: usize, stacks: usize) -> u128 {
    (groups.div_ceil(stacks) as u128) * (stacks as u128) - groups as u128
}

/// Whether `a` groups are strictly less imbalanced than `b` groups over `stacks` (exact).
fn less_imbalanced(a: usize, b: usize, stacks: usize) -> bool {
    excess(a, stacks) * (b as u128) < excess(b, stacks) * (a as u128)
}

/// Whether `groups` over `stacks` stays within [`MAX_IMBALANCE`] (exact: excess / g ≤ 1/20).
fn acceptable(groups: usize, stacks: usize) -> bool {
    excess(groups, stacks) * 20 <= groups as u128
}

/// Checks that `global` and `local` form a valid uniform ND-range for `stacks` devices.
fn validate(global: Range, local: Range, stacks: usize) -> Result<()> {
    if stacks == 0 {
        return Err(Error::input(InputFault::PartitionOverNoDevices));
    }
    if global.rank() != local.rank() {
        return Err(Error::input(InputFault::RanksDiffer {
            global: global.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
        }));
    }
    if global.is_empty() || local.is_empty() {
        return Err(Error::input(InputFault::ZeroSize {
            global: global.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
        }));
    }
    let bad = (0..global.rank()).find(|&d| global.get(d) % local.get(d) != 0);
    match bad {
        Some(dim) => Err(Error::input(InputFault::NotDivisible {
            dim,
            global: global.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
        })),
        None => Ok(()),
    }
}

/// Chooses the dimension to split and splits its work-groups over `stacks` devices (see the
/// [module documentation](self) for the rule). Ranges are in OpenCL order.
///
/// Errors ([`Error::InvalidInput`]): `stacks == 0`, ranks differ, a zero size, or a local size
/// that does not divide the global size.
///
/// ```
/// use clgroups::{plan::partition::partition, Range};
/// // SYCL {38, 512, 512}: local {1, 1, 16} gives 38 z-groups, even: z (dimension 2).
/// let global = Range::d3(512, 512, 38);
/// assert_eq!(partition(global, Range::d3(16, 1, 1), 2).unwrap().dim, 2);
/// // local {2, 1, 8} gives 19 z-groups (5.3%): y (dimension 1) is split instead.
/// assert_eq!(partition(global, Range::d3(8, 1, 2), 2).unwrap().dim, 1);
/// // One work-group runs on device 0 only.
/// assert_eq!(partition(Range::d1(64), Range::d1(64), 2).unwrap().chunks, vec![1, 0]);
/// ```
pub fn partition(global: Range, local: Range, stacks: usize) -> Result<Partition> {
    validate(global, local, stacks)?;
    let groups = |d: usize| global.get(d) / local.get(d);
    let mut dim = global.rank() - 1;
    for d in (0..dim).rev() {
        if acceptable(groups(dim), stacks) {
            break;
        }
        if less_imbalanced(groups(d), groups(dim), stacks) {
            dim = d;
        }
    }
    let chunks = shares(groups(dim), 1, Devices::Even(stacks))?;
    log::debug!(
        "partition: global {global:?} local {local:?} over {stacks} devices -> dimension {dim} \
         ({} groups, imbalance {:.2}%), chunks {chunks:?}",
        groups(dim),
        imbalance(groups(dim), stacks) * 100.0
    );
    Ok(Partition { dim, chunks })
}

/// Whether the sub-launch `offset`, `size` (without the launch's offset) lies inside `user`.
///
/// ```
/// use clgroups::{plan::partition::inside, Range};
/// let user = Range::d1(1000);
/// assert!(inside(Range::d1(0), Range::d1(512), user));
/// assert!(!inside(Range::d1(512), Range::d1(512), user)); // ends at 1024
/// ```
pub fn inside(offset: Range, size: Range, user: Range) -> bool {
    (0..user.rank()).all(|d| offset.get(d) + size.get(d) <= user.get(d))
}

/// A sub-launch `offset`, `size` of a rounded launch (work-groups of `local`) that leaves the
/// user's range `user`, as pieces `(guarded, offset, size)`: when it leaves `user` in one
/// dimension only, the whole work-groups inside `user` unguarded, then the rest guarded (a
/// guard in every work-item stops CPU drivers from vectorising); else all of it guarded.
/// Offsets exclude the launch's own offset.
///
/// ```
/// use clgroups::{plan::partition::guarded_pieces, Range};
/// // The second half of a 1024-item launch for a user range of 1000, in groups of 64.
/// let p = guarded_pieces(Range::d1(512), Range::d1(512), Range::d1(1000), Range::d1(64));
/// assert_eq!(p, [(false, Range::d1(512), Range::d1(448)), (true, Range::d1(960), Range::d1(64))]);
/// ```
pub fn guarded_pieces(
    offset: Range,
    size: Range,
    user: Range,
    local: Range,
) -> Vec<(bool, Range, Range)> {
    let over: Vec<usize> = (0..user.rank())
        .filter(|&d| offset.get(d) + size.get(d) > user.get(d))
        .collect();
    let [d] = over[..] else {
        return vec![(true, offset, size)];
    };
    let inner_end = user.get(d) / local.get(d) * local.get(d);
    let (start, end) = (offset.get(d), offset.get(d) + size.get(d));
    if inner_end <= start {
        return vec![(true, offset, size)];
    }
    vec![
        (false, offset, size.with(d, inner_end - start)),
        (
            true,
            offset.with(d, inner_end),
            size.with(d, end - inner_end),
        ),
    ]
}

/// The part of the sub-launch `offset`, `size` inside `user` (its size), if any.
///
/// ```
/// use clgroups::{plan::partition::clipped, Range};
/// let user = Range::d1(1000);
/// assert_eq!(clipped(Range::d1(512), Range::d1(512), user), Some(Range::d1(488)));
/// assert_eq!(clipped(Range::d1(1024), Range::d1(64), user), None);
/// ```
pub fn clipped(offset: Range, size: Range, user: Range) -> Option<Range> {
    let mut out = size;
    for d in 0..user.rank() {
        let end = (offset.get(d) + size.get(d)).min(user.get(d));
        if end <= offset.get(d) {
            return None;
        }
        out = out.with(d, end - offset.get(d));
    }
    Some(out)
}

/// The global linear ids `x + X * (y + Y * z)` of `global` (no offset) that the sub-range
/// `offset`, `size` covers, as `[start, end)` runs in ascending order, adjacent runs merged:
/// the elements a device owns in a buffer colored for one launch's partition.
///
/// ```
/// use clgroups::{plan::partition::linear_runs, Range};
/// // Columns 2..4 of an 8 x 3 range: one run per row.
/// assert_eq!(linear_runs(Range::d2(8, 3), Range::d2(2, 0), Range::d2(2, 3)), [(2, 4), (10, 12), (18, 20)]);
/// // Rows 1..3 of it: one run.
/// assert_eq!(linear_runs(Range::d2(8, 3), Range::d2(0, 1), Range::d2(8, 2)), [(8, 24)]);
/// ```
pub fn linear_runs(global: Range, offset: Range, size: Range) -> Vec<(usize, usize)> {
    let (g, rank) = (global.padded(), global.rank());
    let at = |r: Range, d: usize| if d < rank { r.get(d) } else { 0 };
    let len = |d: usize| if d < rank { size.get(d) } else { 1 };
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for z in at(offset, 2)..at(offset, 2) + len(2) {
        for y in at(offset, 1)..at(offset, 1) + len(1) {
            let start = at(offset, 0) + g[0] * (y + g[1] * z);
            let end = start + len(0);
            match runs.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => runs.push((start, end)),
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The partitioned dimension for a SYCL-order global and local range on 2 stacks.
    fn sycl_dim(global: &[usize], local: &[usize]) -> usize {
        let g = Range::from_sycl_order(global).unwrap();
        let l = Range::from_sycl_order(local).unwrap();
        partition(g, l, 2).unwrap().dim
    }

    /// OpenCL dimension numbers of SYCL's z, y, x in a rank-3 range.
    const Z: usize = 2;
    const Y: usize = 1;
    const X: usize = 0;

    #[test]
    fn sycl_mapping_puts_z_last() {
        let g = Range::from_sycl_order(&[19, 20, 512]).unwrap();
        assert_eq!(g, Range::d3(512, 20, 19));
        assert_eq!((g.get(Z), g.get(Y), g.get(X)), (19, 20, 512));
    }

    #[test]
    fn seed_table_local_1_1_16() {
        let l = [1, 1, 16];
        assert_eq!(sycl_dim(&[512, 512, 512], &l), Z);
        assert_eq!(sycl_dim(&[21, 512, 512], &l), Z);
        assert_eq!(sycl_dim(&[19, 512, 512], &l), Y);
        assert_eq!(sycl_dim(&[18, 512, 512], &l), Z);
        assert_eq!(sycl_dim(&[19, 19, 512], &l), X);
    }

    #[test]
    fn seed_multi_dimensional_local() {
        assert_eq!(sycl_dim(&[38, 512, 512], &[2, 1, 8]), Y);
        assert_eq!(sycl_dim(&[38, 512, 512], &[1, 1, 16]), Z);
    }

    #[test]
    fn seed_chunks_and_sub_ranges() {
        let g = Range::from_sycl_order(&[19, 19, 512]).unwrap();
        let l = Range::from_sycl_order(&[1, 1, 16]).unwrap();
        let p = partition(g, l, 2).unwrap();
        assert_eq!(p.chunks, vec![16, 16]);
        let sub = p.sub_ranges(g, l);
        assert_eq!(sub[0], Some((Range::d3(0, 0, 0), Range::d3(256, 19, 19))));
        assert_eq!(sub[1], Some((Range::d3(256, 0, 0), Range::d3(256, 19, 19))));
        let p = partition(
            Range::from_sycl_order(&[21, 8]).unwrap(),
            Range::d2(8, 1),
            2,
        )
        .unwrap();
        assert_eq!((p.dim, p.chunks), (1, vec![11, 10]));
    }

    #[test]
    fn imbalance_values() {
        assert!((imbalance(21, 2) - 1.0 / 21.0).abs() < 1e-12);
        assert!((imbalance(7, 4) - 1.0 / 7.0).abs() < 1e-12);
        assert_eq!(imbalance(12, 4), 0.0);
        assert_eq!(imbalance(3, 8), 5.0 / 3.0);
        assert_eq!(imbalance(0, 2), 0.0);
        assert_eq!(imbalance(5, 0), 0.0);
        // 20 groups on 21 stacks: exactly 5%, accepted.
        assert!(acceptable(20, 21));
        assert!(!acceptable(19, 2));
        assert!(acceptable(21, 2));
    }

    #[test]
    fn no_dimension_balanced_keeps_slowest_best() {
        // groups (x, y, z) = (3, 5, 3) on 2 stacks: 33%, 20%, 33% -> y.
        let p = partition(Range::d3(3, 5, 3), Range::d3(1, 1, 1), 2).unwrap();
        assert_eq!((p.dim, p.chunks), (1, vec![3, 2]));
        // (5, 5, 5): all 20% -> the slowest, z.
        assert_eq!(
            partition(Range::d3(5, 5, 5), Range::d3(1, 1, 1), 2)
                .unwrap()
                .dim,
            2
        );
    }

    #[test]
    fn fewer_groups_than_stacks() {
        let p = partition(Range::d1(96), Range::d1(32), 5).unwrap();
        assert_eq!(p.chunks, vec![1, 1, 1, 0, 0]);
        let sub = p.sub_ranges(Range::d1(96), Range::d1(32));
        assert_eq!(sub[2], Some((Range::d1(64), Range::d1(32))));
        assert_eq!(sub[3], None);
        let one = partition(Range::d2(8, 4), Range::d2(8, 4), 3).unwrap();
        assert_eq!((one.dim, one.chunks), (1, vec![1, 0, 0]));
    }

    #[test]
    fn rejects_bad_input() {
        let msg = |r: Result<Partition>| r.unwrap_err().to_string();
        assert!(msg(partition(Range::d1(64), Range::d1(8), 0)).contains("0 devices"));
        assert!(msg(partition(Range::d2(64, 2), Range::d1(8), 2)).contains("2 dimensions"));
        assert!(msg(partition(Range::d1(0), Range::d1(8), 2)).contains("zero"));
        assert!(msg(partition(Range::d1(8), Range::d1(0), 2)).contains("zero"));
        let e = msg(partition(Range::d2(64, 10), Range::d2(8, 4), 2));
        assert!(
            e.contains("local size 4 does not divide global size 10 in dimension 1"),
            "{e}"
        );
    }

    /// A random rank-1..3 (global, local) pair with local dividing global, and a stack count.
    fn shapes() -> impl Strategy<Value = (Range, Range, usize)> {
        let dim = (1usize..=16, 1usize..=40); // (local, groups)
        (prop::collection::vec(dim, 1..=3), 1usize..=8).prop_map(|(dims, stacks)| {
            let local: Vec<usize> = dims.iter().map(|&(l, _)| l).collect();
            let global: Vec<usize> = dims.iter().map(|&(l, g)| l * g).collect();
            (
                Range::new(&global).unwrap(),
                Range::new(&local).unwrap(),
                stacks,
            )
        })
    }

    #[test]
    fn pieces_leaving_the_user_range_are_guarded_only_where_they_leave() {
        let (user, local) = (Range::d1(1000), Range::d1(64));
        // Device 1 of a 1024-item launch: groups 8..16, the last one partly outside.
        let p = guarded_pieces(Range::d1(512), Range::d1(512), user, local);
        assert_eq!(
            p,
            vec![
                (false, Range::d1(512), Range::d1(448)),
                (true, Range::d1(960), Range::d1(64))
            ]
        );
        // Only the partial group.
        let p = guarded_pieces(Range::d1(960), Range::d1(64), user, local);
        assert_eq!(p, vec![(true, Range::d1(960), Range::d1(64))]);
        // 2-D, rounded in y only: rows inside, then the last row of groups.
        let p = guarded_pieces(
            Range::d2(0, 8),
            Range::d2(32, 8),
            Range::d2(32, 13),
            Range::d2(32, 4),
        );
        assert_eq!(
            p,
            vec![
                (false, Range::d2(0, 8), Range::d2(32, 4)),
                (true, Range::d2(0, 12), Range::d2(32, 4))
            ]
        );
        assert!(inside(Range::d1(0), Range::d1(512), user));
        assert_eq!(
            clipped(Range::d1(512), Range::d1(512), user),
            Some(Range::d1(488))
        );
        assert_eq!(clipped(Range::d1(1024), Range::d1(64), user), None);
    }

    #[test]
    fn runs_of_a_3d_split_in_y() {
        // 4 x 6 x 2, y split at 3: each z-plane contributes one run of 3 rows.
        let g = Range::d3(4, 6, 2);
        assert_eq!(
            linear_runs(g, Range::d3(0, 3, 0), Range::d3(4, 3, 2)),
            [(12, 24), (36, 48)]
        );
        assert_eq!(linear_runs(g, Range::d3(0, 0, 0), g), [(0, 48)]);
        assert_eq!(
            linear_runs(Range::d1(10), Range::d1(4), Range::d1(3)),
            [(4, 7)]
        );
    }

    proptest! {
        #[test]
        fn partition_runs_tile_the_range((global, local, stacks) in shapes()) {
            let p = partition(global, local, stacks).unwrap();
            let mut all: Vec<(usize, usize)> = p
                .sub_ranges(global, local)
                .into_iter()
                .flatten()
                .flat_map(|(o, s)| linear_runs(global, o, s))
                .collect();
            all.sort();
            let mut next = 0;
            for (a, b) in all {
                prop_assert_eq!(a, next);
                prop_assert!(b > a);
                next = b;
            }
            prop_assert_eq!(next, global.len());
        }

        #[test]
        fn guarded_pieces_tile_the_sub_launch(
            (groups, user_groups, first, count, local) in (1usize..40, 1usize..40, 0usize..40, 1usize..40, 1usize..9)
                .prop_map(|(g, u, f, c, l)| (g, u.min(g), f.min(g - 1), c, l)),
            partial in 0usize..8,
        ) {
            // A 2-D launch of `groups` rows of work-groups of `local` rows; the user's range
            // ends `partial` rows into the last of its `user_groups` rows of groups.
            let rows = user_groups * local - (partial % local);
            let user = Range::d2(16, rows);
            let count = count.min(groups - first);
            let (off, size) = (Range::d2(0, first * local), Range::d2(16, count * local));
            let l = Range::d2(16, local);
            let pieces = guarded_pieces(off, size, user, l);
            let mut at = off.get(1);
            for (guarded, o, s) in &pieces {
                prop_assert_eq!(o.get(1), at);
                prop_assert_eq!(s.get(1) % local, 0);
                prop_assert_eq!((o.get(0), s.get(0)), (0, 16));
                prop_assert!(*guarded || inside(*o, *s, user));
                at += s.get(1);
            }
            prop_assert_eq!(at, off.get(1) + size.get(1));
            prop_assert!(pieces.iter().filter(|p| p.0).count() <= 1);
        }

        #[test]
        fn partition_properties((global, local, stacks) in shapes()) {
            let p = partition(global, local, stacks).unwrap();
            let groups = |d: usize| global.get(d) / local.get(d);
            prop_assert!(p.dim < global.rank());
            prop_assert_eq!(p.chunks.len(), stacks);
            prop_assert_eq!(p.chunks.iter().sum::<usize>(), groups(p.dim));
            // Whole units of the split (the last one may be partial), the first devices
            // taking at most one more.
            let u = crate::plan::shares::unit(1, groups(p.dim), stacks);
            let units: Vec<usize> = p.chunks.iter().map(|c| c.div_ceil(u)).collect();
            prop_assert!(units.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
            let last = p.chunks.iter().rposition(|&c| c > 0);
            prop_assert!((0..stacks).all(|i| Some(i) == last || p.chunks[i] % u == 0));
            // Imbalance rule: every slower dimension is over 5% and strictly more imbalanced
            // than the chosen one; a chosen dimension over 5% has no less imbalanced faster one.
            for d in p.dim + 1..global.rank() {
                prop_assert!(!acceptable(groups(d), stacks));
                prop_assert!(less_imbalanced(groups(p.dim), groups(d), stacks));
            }
            if !acceptable(groups(p.dim), stacks) {
                for d in 0..p.dim {
                    prop_assert!(!less_imbalanced(groups(d), groups(p.dim), stacks));
                }
            }
            // Sub-ranges tile the global range along dim, in order, each group exactly once.
            let mut next = 0;
            for (sub, &c) in p.sub_ranges(global, local).iter().zip(&p.chunks) {
                match sub {
                    None => prop_assert_eq!(c, 0),
                    Some((off, size)) => {
                        prop_assert_eq!(off.get(p.dim), next);
                        prop_assert_eq!(size.get(p.dim), c * local.get(p.dim));
                        for d in (0..global.rank()).filter(|&d| d != p.dim) {
                            prop_assert_eq!((off.get(d), size.get(d)), (0, global.get(d)));
                        }
                        next += size.get(p.dim);
                    }
                }
            }
            prop_assert_eq!(next, global.get(p.dim));
        }
    }
}
