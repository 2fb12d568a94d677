//! Local-size decisions: a tuned work-group for a global range, validation of an explicit one,
//! and the work-group size that range-rounded launches aim for.
//!
//! Everything here is pure: the caller gathers the device and kernel queries into [`Limits`].

use super::Refusal;
use crate::range::Range;
use std::collections::BTreeMap;

/// Kind of device, as far as planning cares.
///
/// ```
/// use clgroups::plan::local_size::DeviceKind;
/// let device = clgroups::default_device()?;
/// println!("{} is a {:?} device", device, device.kind());
/// assert_ne!(DeviceKind::Cpu, DeviceKind::Gpu);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A CPU device (PoCL's `cpu`/`pthread`, Intel's CPU runtime, ...): wants large groups.
    Cpu,
    /// A GPU.
    Gpu,
    /// An accelerator (FPGA emulators, DSPs, ...).
    Accelerator,
    /// Anything else (`CL_DEVICE_TYPE_CUSTOM`, ...).
    Other,
}

/// What a local-size decision needs to know about one kernel on one device.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// let gpu = Limits {
///     kind: DeviceKind::Gpu,
///     max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64],
///     preferred_multiple: 32,
///     non_uniform: false,
/// };
/// assert_eq!(clgroups::plan::local_size::rounding_group_size(&gpu), 256);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The kind of device.
    pub kind: DeviceKind,
    /// `min(CL_KERNEL_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_GROUP_SIZE)`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`, OpenCL order (1 for missing dimensions).
    pub max_work_item_sizes: [usize; 3],
    /// `CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE` (the SIMD width, as far as OpenCL says).
    pub preferred_multiple: usize,
    /// Whether the device and program allow non-uniform work-groups (OpenCL 2.0+ feature).
    pub non_uniform: bool,
}

impl Limits {
    /// The largest work-group total, at least 1.
    fn group_cap(&self) -> usize {
        self.max_work_group_size.max(1)
    }

    /// The preferred multiple, at least 1.
    fn multiple(&self) -> usize {
        self.preferred_multiple.max(1)
    }

    /// The largest local size in dimension `d`, at least 1.
    fn item_cap(&self, d: usize) -> usize {
        self.max_work_item_sizes[d].max(1)
    }
}

/// How good a work-group total is, larger is better: first the work-items in full SIMD units
/// (`total` rounded down to a multiple of `multiple`), then exact multiples, then the total.
pub(crate) fn group_score(total: usize, multiple: usize) -> (usize, bool, usize) {
    let m = multiple.max(1);
    (total / m * m, total % m == 0, total)
}

/// The tuned local size for `global`: the kernel-query approach of
/// `sycl_ext_oneapi_auto_local_range`, for 1 to 3 dimensions.
///
/// The rule, exactly:
/// 1. Candidates are the local ranges `L` with `L[d]` dividing `global[d]` and
///    `L[d] <= max_work_item_sizes[d]` in every dimension, and `L.len() <= max_work_group_size`
///    (a zero `global[d]` allows only `L[d] = 1`).
/// 2. The winner has the best total by `(total rounded down to a multiple of
///    preferred_multiple, total is such a multiple, total)`: the most work-items in full SIMD
///    units, ties going to exact multiples and then to the larger total. With
///    `preferred_multiple = 1` this is simply the largest total.
/// 3. Among shapes with that total, the lexicographically largest `(L[0], L[1], L[2])` wins:
///    dimension 0, the fastest, is filled first (coalesced accesses).
///
/// Cost: each dimension is factored by trial division up to `min(max_work_group_size,
/// sqrt(global[d]))` (prime factors above the group cap cannot occur in a local size), so
/// global sizes up to 2^40 and beyond stay cheap; shapes are then combined per distinct total.
///
/// ```
/// use clgroups::plan::local_size::{tuned, DeviceKind, Limits};
/// use clgroups::Range;
/// let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// assert_eq!(tuned(Range::d1(7744), &lim), Range::d1(968));
/// assert_eq!(tuned(Range::d2(1920, 1080), &lim), Range::d2(128, 8));
/// assert_eq!(tuned(Range::d1(7727), &lim), Range::d1(1)); // a prime
/// ```
pub fn tuned(global: Range, lim: &Limits) -> Range {
    let multiple = lim.multiple();
    let shapes = shapes_by_total(global, lim);
    let (total, shape) = shapes
        .into_iter()
        .max_by_key(|(total, shape)| (group_score(*total, multiple), *shape))
        .unwrap_or((1, [1; 3]));
    let local = (0..global.rank()).fold(global, |r, d| r.with(d, shape[d]));
    log::debug!(
        "tuned local size for global {global:?}: {local:?} (total {total}, limits {lim:?})"
    );
    local
}

/// Like [`tuned`], among work-groups whose total is a multiple of `unit` only (whole warps for
/// sub-group kernels on NVIDIA); `None` when no such work-group divides `global`.
///
/// ```
/// use clgroups::plan::local_size::{tuned_whole, DeviceKind, Limits};
/// use clgroups::Range;
/// let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
/// assert_eq!(tuned_whole(Range::d2(97, 64), &lim, 32), Some(Range::d2(1, 64)));
/// assert_eq!(tuned_whole(Range::d1(7727), &lim, 32), None);
/// ```
pub fn tuned_whole(global: Range, lim: &Limits, unit: usize) -> Option<Range> {
    let unit = unit.max(1);
    let (total, shape) = shapes_by_total(global, lim)
        .into_iter()
        .filter(|(total, _)| total % unit == 0)
        .max_by_key(|(total, shape)| (*total, *shape))?;
    let local = (0..global.rank()).fold(global, |r, d| r.with(d, shape[d]));
    log::debug!("tuned local size in units of {unit} for {global:?}: {local:?} (total {total})");
    Some(local)
}

/// Every reachable work-group total mapped to its preferred shape (largest `L[0]`, then `L[1]`).
fn shapes_by_total(global: Range, lim: &Limits) -> BTreeMap<usize, [usize; 3]> {
    let cap = lim.group_cap();
    let mut shapes = BTreeMap::from([(1usize, [1usize; 3])]);
    for (d, &g) in global.as_slice().iter().enumerate() {
        let divisors = divisors_up_to(g.max(1), cap.min(lim.item_cap(d)));
        let mut next: BTreeMap<usize, [usize; 3]> = BTreeMap::new();
        for (&total, shape) in &shapes {
            for &l in &divisors {
                let Some(t) = total.checked_mul(l).filter(|&t| t <= cap) else {
                    break;
                };
                let mut s = *shape;
                s[d] = l;
                let best = next.entry(t).or_insert(s);
                if s > *best {
                    *best = s;
                }
            }
        }
        shapes = next;
    }
    shapes
}

/// The divisors of `n >= 1` that are at most `cap`, ascending.
fn divisors_up_to(n: usize, cap: usize) -> Vec<usize> {
    let mut divisors = vec![1usize];
    for (p, exp) in prime_factors_up_to(n, cap) {
        let existing = divisors.clone();
        for d in existing {
            let mut v = d;
            for _ in 0..exp {
                match v.checked_mul(p).filter(|&v| v <= cap) {
                    Some(next) => {
                        v = next;
                        divisors.push(v);
                    }
                    None => break,
                }
            }
        }
    }
    divisors.sort_unstable();
    divisors
}

/// The prime factors `p <= cap` of `n >= 1` with their exponents. Trial division stops at
/// `min(cap, sqrt(rest))`, so it costs at most `min(cap, sqrt(n)) / 2` steps.
fn prime_factors_up_to(n: usize, cap: usize) -> Vec<(usize, u32)> {
    let mut factors = Vec::new();
    let mut rest = n;
    let mut p = 2usize;
    while p <= cap && p.saturating_mul(p) <= rest {
        let mut exp = 0;
        while rest % p == 0 {
            rest /= p;
            exp += 1;
        }
        if exp > 0 {
            factors.push((p, exp));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    // `rest` is now 1, a prime (loop ended on sqrt), or a product of primes above `cap`.
    if rest > 1 && rest <= cap {
        factors.push((rest, 1));
    }
    factors
}

/// Checks an explicit local size against `global` and the limits; `Err` says why it is invalid.
///
/// Invalid: different ranks, a zero size, a local size above `max_work_item_sizes`, a total above
/// `max_work_group_size`, or (unless `non_uniform`) a local size that does not divide the global
/// size.
///
/// ```
/// use clgroups::plan::local_size::{validate, DeviceKind, Limits};
/// use clgroups::Range;
/// let lim = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: false };
/// assert!(validate(Range::d1(1024), Range::d1(256), &lim).is_ok());
/// let err = validate(Range::d1(1000), Range::d1(256), &lim).unwrap_err();
/// let err = err.to_string();
/// assert!(err.contains("1000") && err.contains("256"), "{err}");
/// ```
pub fn validate(global: Range, local: Range, lim: &Limits) -> Result<(), Refusal> {
    if global.rank() != local.rank() {
        return Err(Refusal::RankMismatch { global, local });
    }
    for d in 0..global.rank() {
        check_dim(d, global.get(d), local.get(d), lim)?;
    }
    if local.len() > lim.max_work_group_size {
        return Err(Refusal::GroupTooLarge {
            local,
            max: lim.max_work_group_size,
        });
    }
    Ok(())
}

/// The per-dimension checks of [`validate`].
fn check_dim(dim: usize, global: usize, local: usize, lim: &Limits) -> Result<(), Refusal> {
    if global == 0 {
        return Err(Refusal::ZeroGlobal { dim });
    }
    if local == 0 {
        return Err(Refusal::ZeroLocal { dim });
    }
    let max = lim.max_work_item_sizes[dim];
    if local > max {
        return Err(Refusal::BeyondItemSize { dim, local, max });
    }
    if !lim.non_uniform && global % local != 0 {
        return Err(Refusal::NotDividing { dim, local, global });
    }
    Ok(())
}

/// The work-group size `W` a range-rounded launch aims for when the user gave no explicit
/// rounding parameters.
///
/// Let `cap = min(max_work_group_size, max_work_item_sizes[0])`.
/// * [`DeviceKind::Cpu`]: the largest power of two `<= cap`. CPUs want large groups: on PoCL a
///   NULL local size at 2^22 picks 4096, and a prime range rounded to only 256 still ran 3.4x
///   slower than the power of two.
/// * Every other kind: `target = min(256, cap)` (an H100 picks 256 for a NULL local size, and
///   rounding to 256 ran at 0.995x the power-of-two throughput). With a power-of-two
///   `preferred_multiple <= target` the answer is the largest power of two `<= target`; with
///   another multiple `<= target`, the largest multiple of it `<= target`; a multiple above
///   `target` but within `cap` is used as is; otherwise the largest power of two `<= target`.
///   The result is a power of two whenever `preferred_multiple` is one.
///
/// ```
/// use clgroups::plan::local_size::{rounding_group_size, DeviceKind, Limits};
/// let cpu = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: true };
/// assert_eq!(rounding_group_size(&cpu), 4096);
/// ```
pub fn rounding_group_size(lim: &Limits) -> usize {
    let cap = lim.group_cap().min(lim.item_cap(0));
    let pm = lim.multiple();
    let target = 256.min(cap);
    let w = match lim.kind {
        DeviceKind::Cpu => prev_power_of_two(cap),
        _ if pm <= target && pm.is_power_of_two() => prev_power_of_two(target),
        _ if pm <= target => target / pm * pm,
        _ if pm <= cap => pm,
        _ => prev_power_of_two(target),
    };
    log::debug!("rounding work-group size for {lim:?}: {w}");
    w
}

/// The largest power of two `<= n` (1 for `n = 0`).
pub(crate) fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Limits of the devices the plans' tests reason about.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{DeviceKind, Limits};

    /// An H100-like GPU.
    pub(crate) fn gpu() -> Limits {
        Limits {
            kind: DeviceKind::Gpu,
            max_work_group_size: 1024,
            max_work_item_sizes: [1024, 1024, 64],
            preferred_multiple: 32,
            non_uniform: false,
        }
    }

    /// PoCL's CPU device.
    pub(crate) fn cpu() -> Limits {
        Limits {
            kind: DeviceKind::Cpu,
            max_work_group_size: 4096,
            max_work_item_sizes: [4096; 3],
            preferred_multiple: 8,
            non_uniform: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{cpu, gpu};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn factors_and_divisors() {
        assert_eq!(prime_factors_up_to(7727, 1 << 20), vec![(7727, 1)]);
        assert_eq!(prime_factors_up_to(7727, 1024), vec![]);
        assert_eq!(prime_factors_up_to(1 << 40, 4096), vec![(2, 40)]);
        assert_eq!(
            prime_factors_up_to(2 * 3 * 3 * 1031, 64),
            vec![(2, 1), (3, 2)]
        );
        assert_eq!(
            divisors_up_to(360, 20),
            vec![1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20]
        );
        assert_eq!(divisors_up_to(1, 10), vec![1]);
        // 4,194,319 is prime; 2^40 - 87 (= 1099511627689) is prime too.
        assert_eq!(divisors_up_to(4_194_319, 4096), vec![1]);
        assert_eq!(divisors_up_to((1 << 40) - 87, 4096), vec![1]);
    }

    #[test]
    fn tuned_one_dimension() {
        assert_eq!(tuned(Range::d1(1 << 26), &gpu()), Range::d1(1024));
        assert_eq!(tuned(Range::d1(1 << 22), &cpu()), Range::d1(4096));
        assert_eq!(tuned(Range::d1(4_194_319), &cpu()), Range::d1(1));
        assert_eq!(tuned(Range::d1(4_198_400), &cpu()), Range::d1(4096));
        // 1500: 750 has 736 items in full warps, more than any other divisor.
        assert_eq!(tuned(Range::d1(1500), &gpu()), Range::d1(750));
        // 2592 = 2^5 * 3^4: 864 = 27 full warps is its largest divisor up to 1024.
        assert_eq!(tuned(Range::d1(2592), &gpu()), Range::d1(864));
        assert_eq!(tuned(Range::d1(0), &gpu()), Range::d1(1));
        assert_eq!(tuned(Range::d1(((1 << 40) - 87) * 3), &gpu()), Range::d1(3));
    }

    #[test]
    fn tuned_fills_dimension_zero_first() {
        // totals first (1024 beats 640 x 1), then the largest dimension 0 among 1024-shapes
        assert_eq!(tuned(Range::d2(1920, 1080), &gpu()), Range::d2(128, 8));
        assert_eq!(tuned(Range::d2(7, 7744), &gpu()), Range::d2(1, 968));
        assert_eq!(tuned(Range::d2(256, 256), &gpu()), Range::d2(256, 4));
        assert_eq!(tuned(Range::d3(8, 8, 64), &gpu()), Range::d3(8, 8, 16));
        // dimension 2 is capped at 64 on this GPU
        assert_eq!(tuned(Range::d3(1, 1, 4096), &gpu()), Range::d3(1, 1, 64));
        assert_eq!(tuned(Range::d3(43, 79, 7), &gpu()), Range::d3(1, 79, 7));
    }

    #[test]
    fn tuned_honours_preferred_multiple() {
        let mut lim = gpu();
        lim.max_work_group_size = 256;
        // 6000's divisors up to 256 end 200, 240, 250: 250 has the most items in full warps (224)
        assert_eq!(tuned(Range::d1(6000), &lim), Range::d1(250));
        lim.preferred_multiple = 64;
        // 240 and 250 both have 192 items in full 64-wide units; neither is exact: larger wins
        assert_eq!(tuned(Range::d1(6000), &lim), Range::d1(250));
        // 9600 has the exact 192 = 3 * 64, which beats the inexact 240 (also 192 full)
        assert_eq!(tuned(Range::d1(9600), &lim), Range::d1(192));
    }

    #[test]
    fn validate_reports_reasons() {
        let lim = gpu();
        assert_eq!(validate(Range::d2(64, 64), Range::d2(32, 8), &lim), Ok(()));
        let cases = [
            (Range::d1(64), Range::d2(8, 8), "2"),
            (Range::d2(0, 64), Range::d2(8, 8), "dimension 0 is 0"),
            (
                Range::d1(64),
                Range::d1(0),
                "local size of dimension 0 is 0",
            ),
            (
                Range::d3(64, 64, 128),
                Range::d3(1, 1, 128),
                "maximum work-item size 64",
            ),
            (Range::d2(2048, 2), Range::d2(1024, 2), "2048 work-items"),
            (
                Range::d1(1000),
                Range::d1(16),
                "16 does not divide global size 1000",
            ),
        ];
        for (g, l, want) in cases {
            let err = validate(g, l, &lim).unwrap_err().to_string();
            assert!(err.contains(want), "{g:?} {l:?}: {err}");
        }
        let mut nu = lim;
        nu.non_uniform = true;
        assert_eq!(validate(Range::d1(1000), Range::d1(16), &nu), Ok(()));
    }

    #[test]
    fn rounding_group_sizes() {
        assert_eq!(rounding_group_size(&cpu()), 4096);
        assert_eq!(rounding_group_size(&gpu()), 256);
        let mut lim = cpu();
        lim.max_work_group_size = 3000;
        assert_eq!(rounding_group_size(&lim), 2048);
        lim.max_work_item_sizes[0] = 1000;
        assert_eq!(rounding_group_size(&lim), 512);
        let mut lim = gpu();
        lim.max_work_group_size = 200;
        assert_eq!(rounding_group_size(&lim), 128);
        lim.preferred_multiple = 48;
        assert_eq!(rounding_group_size(&lim), 192);
        lim.max_work_group_size = 1024;
        lim.preferred_multiple = 512;
        assert_eq!(rounding_group_size(&lim), 512);
        lim.max_work_group_size = 300;
        assert_eq!(rounding_group_size(&lim), 256);
        lim.kind = DeviceKind::Accelerator;
        lim.max_work_group_size = 1;
        assert_eq!(rounding_group_size(&lim), 1);
    }

    /// Exhaustive reference for `tuned` on small ranges.
    fn brute_force(global: Range, lim: &Limits) -> Range {
        let g = global.padded();
        let mut best: Option<((usize, bool, usize), [usize; 3])> = None;
        for a in 1..=g[0].min(lim.max_work_item_sizes[0]) {
            for b in 1..=g[1].min(lim.max_work_item_sizes[1]) {
                for c in 1..=g[2].min(lim.max_work_item_sizes[2]) {
                    let t = a * b * c;
                    if g[0] % a != 0 || g[1] % b != 0 || g[2] % c != 0 {
                        continue;
                    }
                    if t > lim.max_work_group_size {
                        continue;
                    }
                    let key = (group_score(t, lim.preferred_multiple), [a, b, c]);
                    if best.is_none_or(|b| key > b) {
                        best = Some(key);
                    }
                }
            }
        }
        let shape = best.map_or([1; 3], |b| b.1);
        (0..global.rank()).fold(global, |r, d| r.with(d, shape[d]))
    }

    fn small_range() -> impl Strategy<Value = Range> {
        prop::collection::vec(1usize..120, 1..=3).prop_map(|v| Range::new(&v).unwrap())
    }

    proptest! {
        #[test]
        fn tuned_matches_brute_force(g in small_range(), wg in 1usize..300, pm in 1usize..40) {
            let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: wg,
                max_work_item_sizes: [64, 50, 16], preferred_multiple: pm, non_uniform: false };
            let local = tuned(g, &lim);
            prop_assert_eq!(local, brute_force(g, &lim));
            prop_assert_eq!(validate(g, local, &lim), Ok(()));
        }

        #[test]
        fn tuned_is_valid_for_large_ranges(
            dims in prop::collection::vec(1usize..(1 << 40), 1..=3),
        ) {
            let g = Range::new(&dims).unwrap();
            for lim in [gpu(), cpu()] {
                let local = tuned(g, &lim);
                prop_assert_eq!(validate(g, local, &lim), Ok(()));
            }
        }
    }
}
