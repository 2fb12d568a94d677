//! One rule for how much of a launch, and of an array, each device gets: a launch's partition
//! ([`crate::plan::partition`], [`crate::plan::weighted`]) and a buffer's coloring
//! ([`crate::plan::coloring`]) both come from [`shares`], so that they cut alike.
//!
//! # The rule
//!
//! `len` things (work-groups of the split dimension, or elements, or bytes) come in granules
//! of `granule` (one work-group, or one coloring page; the last granule may be partial). They
//! are cut in *units* of `granule · 2^k` ([`unit()`]): the largest such unit of which every
//! device still gets about [`UNITS_PER_DEVICE`] (at least that many between them all, so no
//! device is off its exact share by more than about 1/64 of it), the granule itself when the
//! array is too short for that. The units go to the devices in order, contiguously: evenly,
//! the first devices taking one more when they do not divide ([`Devices::Even`]); or in
//! proportion to weights by largest remainders ([`Devices::Weighted`]).
//!
//! # Why a power of two
//!
//! A unit depends on `len` only through its number of granules, and doubling the granule
//! halves it: a 1-D launch of `n` work-items in work-groups of `l` (a power of two) is cut
//! into units of `l · 2^k` work-items, the largest with `l · 2^k · devices · 64 < n`; a buffer
//! of `n` elements colored in pages of one element is cut into units of `2^j` elements, the
//! largest with `2^j · devices · 64 < n`: the same number, whenever it is at least `l`. So a
//! default [`ColoredBuffer`](crate::ColoredBuffer) of any element type follows every such
//! launch over its elements, on any number of devices and any weights; and a page of one
//! work-group slab follows the launch whatever the slab ([`shares`] then sees the same counts
//! on both sides). A range rounded up to whole work-groups keeps the unit (the bound is
//! strict, and `n` is rounded up to a multiple of `l`, which divides the next power of two).
//!
//! ```
//! use clgroups::plan::shares::{shares, Devices};
//! // 1024 work-groups of 64 over 3 devices, and 65536 elements in pages of one element:
//! let groups = shares(1024, 1, Devices::Even(3))?;
//! let elements = shares(65536, 1, Devices::Even(3))?;
//! assert_eq!(groups, [344, 340, 340]); // units of 4 work-groups: 86, 85, 85
//! assert_eq!(elements, groups.iter().map(|g| g * 64).collect::<Vec<_>>());
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::error::{Error, InputFault, Result, Weight};

/// About how many units each device gets at least (see the [module documentation](self)).
pub const UNITS_PER_DEVICE: usize = 64;

/// The devices a length is shared over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Devices<'a> {
    /// This many devices, equally.
    Even(usize),
    /// One device per weight (positive, finite), in proportion.
    Weighted(&'a [f64]),
}

impl Devices<'_> {
    /// The number of devices.
    ///
    /// ```
    /// use clgroups::plan::shares::Devices;
    /// assert_eq!(Devices::Weighted(&[3.0, 1.0]).len(), 2);
    /// assert_eq!(Devices::Even(4).len(), 4);
    /// ```
    #[allow(clippy::len_without_is_empty)] // zero devices is an error, not an empty set
    pub fn len(&self) -> usize {
        match self {
            Devices::Even(n) => *n,
            Devices::Weighted(w) => w.len(),
        }
    }
}

/// The unit `len` things in granules of `granule` are cut in over `devices` devices: the
/// largest `granule · 2^k` with `granule · 2^k · devices · UNITS_PER_DEVICE < len`, else
/// `granule` (also for `granule` or `devices` 0).
///
/// ```
/// use clgroups::plan::shares::unit;
/// assert_eq!(unit(1, 1 << 20, 4), 2048);  // 2048 · 4 · 64 = 2^19 < 2^20
/// assert_eq!(unit(64, 1 << 20, 4), 2048); // the same, whatever the granule below it
/// assert_eq!(unit(64, 1000, 2), 64);      // too short: the granule
/// ```
pub fn unit(granule: usize, len: usize, devices: usize) -> usize {
    let Some(step) = granule.checked_mul(devices.saturating_mul(UNITS_PER_DEVICE)) else {
        return granule;
    };
    if step == 0 || step >= len {
        return granule;
    }
    // The largest 2^k with step · 2^k < len, i.e. 2^k <= (len - 1) / step.
    let k = ((len - 1) / step).ilog2();
    granule << k
}

/// `units` split over `n` devices in order, the first ones taking one more.
fn even(units: usize, n: usize) -> Vec<usize> {
    let (base, extra) = (units / n, units % n);
    (0..n).map(|i| base + usize::from(i < extra)).collect()
}

/// How many of `len` things (in granules of `granule`) each device gets, in device order:
/// whole [`unit()`]s, contiguous, the last non-empty share ending at `len` (see the [module
/// documentation](self)); the shares add up to `len`.
///
/// Errors ([`Error::InvalidInput`]): `granule` is 0, no devices, or a weight that is not
/// positive and finite.
///
/// ```
/// use clgroups::plan::shares::{shares, Devices};
/// // 10 granules of 100, the last one partial, on 4 devices: 3, 3, 2, 2 granules.
/// assert_eq!(shares(950, 100, Devices::Even(4))?, [300, 300, 200, 150]);
/// assert_eq!(shares(2 << 20, 1, Devices::Weighted(&[3.0, 1.0]))?, [3 << 19, 1 << 19]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn shares(len: usize, granule: usize, devices: Devices) -> Result<Vec<usize>> {
    let n = devices.len();
    if granule == 0 || n == 0 {
        return Err(Error::input(InputFault::Granule {
            granule,
            devices: n,
        }));
    }
    let unit = unit(granule, len, n);
    let units = len.div_ceil(unit);
    let per_device = match devices {
        Devices::Even(n) => even(units, n),
        Devices::Weighted(w) => weighted_chunks(units, w)?,
    };
    let mut at = 0;
    let shares = (per_device.iter())
        .map(|&u| {
            let start = at;
            at += u;
            (at.saturating_mul(unit)).min(len) - (start.saturating_mul(unit)).min(len)
        })
        .collect();
    log::debug!(
        "shares: {len} in granules of {granule}, units of {unit} ({units}) over {devices:?} -> {shares:?}"
    );
    Ok(shares)
}

/// `groups` work-groups split over devices in proportion to `weights` (positive, finite):
/// each device gets the floor of its exact share `groups * w / sum`, and the groups left over
/// go one each to the largest remainders (ties: the first device). Errors
/// ([`Error::InvalidInput`]) for no weights or a weight that is not positive and finite.
///
/// ```
/// use clgroups::plan::shares::weighted_chunks;
/// assert_eq!(weighted_chunks(10, &[1.0, 1.0, 1.0])?, vec![4, 3, 3]);
/// assert_eq!(weighted_chunks(10, &[2.0, 1.0, 1.0, 1.0])?, vec![4, 2, 2, 2]);
/// assert_eq!(weighted_chunks(1, &[1.0, 9.0])?, vec![0, 1]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn weighted_chunks(groups: usize, weights: &[f64]) -> Result<Vec<usize>> {
    if weights.is_empty() {
        return Err(Error::input(InputFault::SplitOverNoDevices));
    }
    if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
        return Err(Error::input(InputFault::Weight { weight: Weight(*w) }));
    }
    let sum: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| groups as f64 * w / sum).collect();
    let mut chunks: Vec<usize> = exact
        .iter()
        .map(|e| (e.floor() as usize).min(groups))
        .collect();
    let given: usize = chunks.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    // Largest remainder first; a stable sort keeps ties in device order.
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - chunks[a] as f64, exact[b] - chunks[b] as f64);
        rb.total_cmp(&ra)
    });
    let mut left = groups.saturating_sub(given);
    for &d in order.iter().cycle() {
        if left == 0 {
            break;
        }
        chunks[d] += 1;
        left -= 1;
    }
    Ok(chunks)
}

#[cfg(test)]
#[path = "shares_tests.rs"]
mod tests;
