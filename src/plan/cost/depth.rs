//! The halo depth of a split (`scaling`'s deeper margins: a device computes `(k - 1)` extra
//! work-group rows on each side redundantly, and neighbours exchange halos once every `k`
//! launches), priced from the model's terms: a split launch of depth 1 takes `split` seconds,
//! `latency` of them the one cross-device dependency of its exchange, the rest (`compute`)
//! each device's work over its `rows` work-group rows. At depth `k` a launch pays the
//! dependency once every `k` launches and computes `(k - 1) / rows` more on average (the bytes
//! moved per launch stay the same: `k` times the halo once every `k` launches).

use super::Sample;

/// The halo depths a split may run at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Depth {
    /// This depth, the split's samples measured at it (forced with
    /// `RootDevice::with_halo_depth`, or 1 where the launch keeps no deeper margins).
    Fixed(usize),
    /// The model's choice in `1..=max` (the split's samples measured at depth 1), each device's
    /// part `rows` work-group rows deep in the split dimension; `kept`: the depth chosen for
    /// this shape before (kept, not chosen again: its later launches exchange only once every
    /// `kept`, so their bytes between devices no longer show the depth-1 exchange).
    Chosen {
        rows: usize,
        max: usize,
        kept: Option<Kept>,
    },
}

/// A halo depth kept for a shape and the split's times per launch measured at it (windows of
/// as many launches as the depth: [`crate::plan::cost::watch::Timing::Open`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kept {
    /// The depth.
    pub depth: usize,
    /// The split's times per launch at it.
    pub measured: Sample,
}

impl Kept {
    /// Depth `depth`, with the shape's deep times (`deep`: [`Figures::deep`](super::Figures::deep))
    /// where they were measured at it.
    pub fn new(depth: usize, deep: (usize, Sample)) -> Kept {
        let measured = if deep.0 == depth {
            deep.1
        } else {
            Sample::default()
        };
        Kept { depth, measured }
    }
}

/// Seconds per launch of a split at depth `k` whose depth-1 launch takes `split`, `latency` of
/// them one dependency, over `rows` work-group rows: `split + compute × (k - 1) / rows -
/// latency × (1 - 1 / k)`, with `compute = split - latency` (the latency at most `split`).
/// Exactly `split` at `k = 1`.
///
/// ```
/// use clgroups::plan::cost::split_at_depth;
/// assert_eq!(split_at_depth(270e-6, 200e-6, 128, 1), 270e-6);
/// // Depth 8: 70 us x 7 / 128 more compute, 200 us x 7 / 8 less waiting.
/// assert!((split_at_depth(270e-6, 200e-6, 128, 8) - 98.8e-6).abs() < 0.1e-6);
/// ```
pub fn split_at_depth(split: f64, latency: f64, rows: usize, k: usize) -> f64 {
    if k <= 1 {
        return split;
    }
    let latency = latency.clamp(0.0, split.max(0.0));
    let compute = split - latency;
    let k = k as f64;
    split + compute * (k - 1.0) / rows.max(1) as f64 - latency * (1.0 - 1.0 / k)
}

/// The halo depth `k` in `1..=max` that least costs a chain of split launches
/// ([`split_at_depth`]; ties: the smaller; depth 1 where nothing is known to save).
///
/// ```
/// use clgroups::plan::cost::halo_depth;
/// // 200 us per dependency, 70 us of compute over 128 rows: deep margins pay.
/// assert!(halo_depth(200e-6, 270e-6, 128, 16) >= 8);
/// // 20 us per dependency, 250 us of compute over 32 rows: depth 1 or 2.
/// assert!(halo_depth(20e-6, 270e-6, 32, 16) <= 2);
/// assert_eq!(halo_depth(0.0, 1e-3, 100, 16), 1);
/// ```
pub fn halo_depth(latency: f64, split: f64, rows: usize, max: usize) -> usize {
    let cost = |k: usize| split_at_depth(split, latency, rows, k);
    (1..=max.max(1)).fold(1, |best, k| if cost(k) < cost(best) { k } else { best })
}
