//! Tests of [`super`]: launches and colorings cut alike, without a device.

use super::*;
use crate::plan::coloring::element_shares;
use crate::plan::partition::partition;
use crate::plan::weighted::weighted;
use crate::range::Range;
use proptest::prelude::*;

/// Per device, the work-items `[start, end)` of a 1-D launch over `n` items (rounded up to
/// whole work-groups of `local`) that lie below `n`, as a launch partitions them.
fn launch_cuts(n: usize, local: usize, devices: Devices) -> Vec<usize> {
    let global = Range::d1(n.div_ceil(local) * local);
    let l = Range::d1(local);
    let p = match devices {
        Devices::Even(d) => partition(global, l, d).unwrap(),
        Devices::Weighted(w) => weighted(global, l, w).unwrap(),
    };
    let mut at = 0;
    p.chunks
        .iter()
        .map(|&g| {
            let start = at;
            at = (at + g * local).min(n);
            at - start
        })
        .collect()
}

#[test]
fn the_issue_s_cases_agree() {
    // Three devices, 65536 floats, work-groups of 64: device 1 worked on [21888, 43712) but
    // held [32768, 49152).
    let even = Devices::Even(3);
    let colored = element_shares(65536, 4, 4, 1, even).unwrap();
    assert_eq!(colored, launch_cuts(65536, 64, even));
    assert_eq!(colored, [22016, 21760, 21760]);
    // Four devices weighted 3 : 1 : 1 : 1, 2^20 floats: [699072, 873856) against
    // [704512, 884736) for device 2.
    let w = [3.0, 1.0, 1.0, 1.0];
    let colored = element_shares(1 << 20, 4, 4, 1, Devices::Weighted(&w)).unwrap();
    assert_eq!(colored, launch_cuts(1 << 20, 64, Devices::Weighted(&w)));
    let start2: usize = colored[..2].iter().sum();
    assert_eq!((start2, start2 + colored[2]), (700416, 874496));
}

#[test]
fn units_are_powers_of_two_of_the_granule() {
    assert_eq!(unit(3, 10, 2), 3);
    assert_eq!(unit(3, 3 * 128 + 1, 1), 6); // 6 · 64 < 385
    assert_eq!(unit(1, 129, 2), 1);
    assert_eq!(unit(1, 257, 2), 2);
    assert_eq!(unit(0, 100, 2), 0);
    assert_eq!(unit(5, 100, 0), 5);
    assert_eq!(unit(usize::MAX, usize::MAX, 2), usize::MAX);
    assert!(shares(10, 0, Devices::Even(2)).is_err());
    assert!(shares(10, 1, Devices::Even(0)).is_err());
    assert!(shares(10, 1, Devices::Weighted(&[1.0, -1.0])).is_err());
    assert_eq!(shares(0, 1, Devices::Even(3)).unwrap(), [0, 0, 0]);
}

/// Weights of 1 to 8 devices, or none.
fn devices() -> impl Strategy<Value = (usize, Option<Vec<f64>>)> {
    (1usize..=8).prop_flat_map(|n| {
        let w = prop::collection::vec(0.05f64..20.0, n);
        (Just(n), prop::option::of(w))
    })
}

fn of(n: usize, w: &Option<Vec<f64>>) -> Devices<'_> {
    match w {
        Some(w) => Devices::Weighted(w),
        None => Devices::Even(n),
    }
}

proptest! {
    #[test]
    fn shares_cover_in_whole_units(
        len in 0usize..1 << 26,
        granule in 1usize..5000,
        (n, w) in devices(),
    ) {
        let d = of(n, &w);
        let s = shares(len, granule, d).unwrap();
        prop_assert_eq!(s.len(), n);
        prop_assert_eq!(s.iter().sum::<usize>(), len);
        let u = unit(granule, len, n);
        prop_assert_eq!(u % granule, 0);
        prop_assert!((u / granule).is_power_of_two());
        let last = s.iter().rposition(|&c| c > 0);
        prop_assert!((0..n).all(|i| Some(i) == last || s[i] % u == 0));
        let units = len.div_ceil(u);
        if u > granule {
            // Coarser than the granule only when every device gets 64 units or more.
            prop_assert!(units > n * UNITS_PER_DEVICE);
        }
        let sum: f64 = w.as_ref().map_or(n as f64, |w| w.iter().sum());
        for (i, &c) in s.iter().enumerate() {
            let share = w.as_ref().map_or(1.0, |w| w[i]) / sum;
            let exact = units as f64 * share;
            prop_assert!((c.div_ceil(u) as f64 - exact).abs() < 1.0 + 1e-9);
        }
    }

    /// A default buffer (pages of one element) of any element type follows every 1-D launch
    /// over its elements in work-groups of a power of two up to the unit, rounded or not, on
    /// 1 to 8 devices, even or weighted; a buffer in pages of one work-group follows the launch
    /// whatever the work-group size.
    #[test]
    fn colorings_follow_launches(
        len in 1usize..1 << 24,
        local_log in 0u32..11,
        odd_local in 1usize..300,
        elem in prop::sample::select(vec![1usize, 2, 4, 8, 12, 16, 64]),
        (n, w) in devices(),
    ) {
        let d = of(n, &w);
        let local = 1usize << local_log;
        let default = element_shares(len, elem, elem, 1, d).unwrap();
        if local <= unit(1, len, n) {
            prop_assert_eq!(&default, &launch_cuts(len, local, d), "local {}", local);
        }
        for l in [local, odd_local] {
            let slab = element_shares(len, elem, l * elem, 1, d).unwrap();
            prop_assert_eq!(&slab, &launch_cuts(len, l, d), "page of one work-group of {}", l);
        }
    }
}
