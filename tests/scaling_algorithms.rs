//! Reduce and scan over a colored buffer on a root device, in both placements, against the
//! host: every element checked. `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device
//! setup" into a failure.

mod common;

use clgroups::scaling::{algorithms, Access, ColoredBuffer, Placement};

const SIZES: [usize; 5] = [1, 31, 4099, 65537, (1 << 20) + 3];

#[test]
fn reductions_match_the_host() {
    for root in common::roots("reductions_match_the_host") {
        for n in SIZES {
            let xs = common::values(n, n as u64);
            let x = ColoredBuffer::from_slice(&root, &xs).unwrap();
            let busy = x.chunks().iter().filter(|&&c| c > 0).count();
            let sum = xs.iter().fold(0i32, |a, &b| a.wrapping_add(b));
            let case = format!("n={n} ({} placement, {busy} devices)", root.placement());
            assert_eq!(algorithms::reduce_sum(&root, &x).unwrap(), sum, "{case}");
            let min = *xs.iter().min().unwrap();
            assert_eq!(algorithms::reduce_min(&root, &x).unwrap(), min, "{case}");
            let max = *xs.iter().max().unwrap();
            assert_eq!(algorithms::reduce_max(&root, &x).unwrap(), max, "{case}");
            eprintln!("reduce {case}: ok");
            if n > 1 << 20 {
                assert_eq!(
                    busy,
                    root.len(),
                    "large inputs are spread over every device"
                );
            }
        }
        // Floats: within the single-device bound.
        let xs: Vec<f32> = (0..(1 << 20) + 3).map(|i| (i % 97) as f32 * 0.25).collect();
        let x = ColoredBuffer::from_slice(&root, &xs).unwrap();
        let want: f64 = xs.iter().map(|&v| v as f64).sum();
        let got = algorithms::reduce_sum(&root, &x).unwrap() as f64;
        assert!((got - want).abs() <= want * 1e-5, "{got} vs {want}");
    }
}

#[test]
fn scans_match_the_host() {
    for root in common::roots("scans_match_the_host") {
        for n in SIZES {
            let xs = common::values(n, 7 + n as u64);
            let x = ColoredBuffer::from_slice(&root, &xs).unwrap();
            let mut y = ColoredBuffer::<i32>::new(&root, n).unwrap();
            let case = format!("n={n} ({} placement)", root.placement());
            algorithms::inclusive_scan_sum(&root, &x, &mut y).unwrap();
            let mut acc = 0i32;
            let got = y.read().unwrap();
            for (i, &v) in xs.iter().enumerate() {
                acc = acc.wrapping_add(v);
                assert_eq!(got[i], acc, "inclusive {case} element {i}");
            }
            algorithms::exclusive_scan_sum(&root, &x, &mut y).unwrap();
            let mut acc = 0i32;
            let got = y.read().unwrap();
            for (i, &v) in xs.iter().enumerate() {
                assert_eq!(got[i], acc, "exclusive {case} element {i}");
                acc = acc.wrapping_add(v);
            }
            eprintln!("scans {case}: ok");
        }
    }
}

#[test]
fn buffers_holding_halos_are_reduced_and_scanned_from_their_own_elements() {
    for root in common::roots("buffers_holding_halos") {
        let n = 1 << 16;
        let xs = common::values(n, 3);
        let sum = xs.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        let mut inclusive = xs.clone();
        (1..n).for_each(|i| inclusive[i] = inclusive[i - 1].wrapping_add(inclusive[i]));
        // Parts holding 4 elements either side, or every element (partitioned placement):
        // each device scans a copy of its own elements, the halos not counted twice (a
        // replicated buffer is reduced on device 0).
        for access in [Access::Halo(4), Access::Stencil(4), Access::Replicated] {
            let mut x = ColoredBuffer::with_access(&root, n, access).unwrap();
            x.write(&xs).unwrap();
            assert_eq!(
                algorithms::reduce_sum(&root, &x).unwrap(),
                sum,
                "{access:?}"
            );
            let mut y = ColoredBuffer::new(&root, n).unwrap();
            algorithms::inclusive_scan_sum(&root, &x, &mut y).unwrap();
            assert!(
                y.read().unwrap() == inclusive,
                "{access:?}: the scan differs"
            );
            // A scan into such a buffer would leave its halos stale: refused there.
            let r = algorithms::inclusive_scan_sum(&root, &y, &mut x);
            match root.placement() {
                Placement::Shared => r.unwrap(),
                Placement::Partitioned => {
                    let e = r.unwrap_err().to_string();
                    assert!(e.contains("exactly their chunks"), "{e}");
                }
            }
        }
    }
}

/// A split launch whose parts write other devices' chunks (shared placement splits any
/// launch), then a reduce and a scan of what it wrote: each device's part of the reduce or
/// scan runs on its own queue, so it must wait for the other queues' parts of the launch.
/// Device 0's part is made slow (it spins before writing the upper half), so that without the
/// wait device 1's reduce reads its chunk before device 0 wrote it (1 in 20 rounds on two
/// PoCL 6.0 devices without the spin).
#[test]
fn reduces_and_scans_see_a_split_launch_that_wrote_other_chunks() {
    let source = "kernel void scatter(global int *y, int v, int spin) {
        size_t i = get_global_id(0), n = get_global_size(0);
        int w = v;
        for (int k = 0; k < (i < n / 2 ? spin : 0); k++) w = (w * 7 + k) % 1000003;
        y[(i + n / 2) % n] = (spin > 0 && w < 0) ? 0 : v; }";
    for root in common::roots("reduces_and_scans_see_a_split_launch") {
        let k = root.program(source).unwrap().kernel("scatter").unwrap();
        let n = 1usize << 16;
        for round in 1..=6 {
            let y = ColoredBuffer::from_slice(&root, &vec![0i32; n]).unwrap();
            let case = format!("round {round} ({} placement)", root.placement());
            // SAFETY: work-item i writes y[(i + n/2) % n], inside y (n).
            unsafe { k.launch().arg(&y).arg(round).arg(2000i32).range(n) }.unwrap();
            let sum = algorithms::reduce_sum(&root, &y).unwrap();
            assert_eq!(sum, n as i32 * round, "reduce, {case}");
            // SAFETY: as above.
            unsafe { k.launch().arg(&y).arg(round + 1).arg(2000i32).range(n) }.unwrap();
            let mut z = ColoredBuffer::<i32>::new(&root, n).unwrap();
            algorithms::inclusive_scan_sum(&root, &y, &mut z).unwrap();
            assert_eq!(
                z.read().unwrap()[n - 1],
                n as i32 * (round + 1),
                "scan, {case}"
            );
        }
    }
}
