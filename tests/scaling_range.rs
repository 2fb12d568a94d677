//! Launches over a root device with automatic and tuned local sizes and plain (rounded) ranges,
//! in both placements: whole work-groups on every device, the user's range as the kernel's
//! global size, every element checked.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use clgroups::launch::LocalSize;
use clgroups::scaling::{RootDevice, RootKernel};
use clgroups::Range;

const SOURCE: &str = r#"
#include <clgroups/subgroup.h>

kernel void sub_group_sums(global int *y, global const int *x) {
    size_t i = get_global_id(0);
    y[i] = sg_reduce_add(x[i]);
}

kernel void saxpy(global int *y, global const int *x, int a) {
    size_t i = get_global_id(0);
    y[i] += a * x[i] + (int)get_global_size(0);
}

kernel void block_sum(global int *y, global const int *x, local int *t) {
    size_t i = get_global_id(0), l = get_local_id(0);
    t[l] = x[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    y[i] = t[l] + t[0];
}
"#;

fn saxpy_checked(root: &RootDevice, k: &RootKernel, n: usize, how: &str) {
    let (xs, ys) = (common::values(n, 1), common::values(n, 2));
    let local = match how {
        "range" => k.range_plan(Range::d1(n)).unwrap().1.len(),
        _ => clgroups::plan::local_size::tuned(Range::d1(n), &limits(k)).len(),
    };
    let x = common::colored(root, &xs, local);
    let y = common::colored(root, &ys, local);
    let launch = k.launch().arg(&y).arg(&x).arg(3i32);
    // SAFETY: the kernel touches x and y only at global ids below n, their length.
    let ev = unsafe {
        match how {
            "range" => launch.range(n),
            "auto" => launch.nd_range(n, LocalSize::Auto),
            _ => launch.nd_range(n, LocalSize::Tuned),
        }
    }
    .unwrap_or_else(|e| panic!("{how} n={n} ({} placement): {e}", root.placement()));
    let p = ev.partition().clone();
    let got = y.read().unwrap();
    for i in 0..n {
        let want = ys[i] + 3 * xs[i] + n as i32;
        assert_eq!(
            got[i],
            want,
            "{how} n={n} element {i} ({} placement)",
            root.placement()
        );
    }
    eprintln!(
        "{how} n={n} ({} placement): local {local}, partition {p:?}",
        root.placement()
    );
    if how == "range" && n > 4 * local {
        assert!(
            ev.events().iter().all(Option::is_some),
            "every device works"
        );
    }
}

fn limits(k: &RootKernel) -> clgroups::plan::local_size::Limits {
    k.kernels()[0].limits().clone()
}

#[test]
fn ranges_round_and_split_in_whole_work_groups() {
    for root in common::roots("ranges_round_and_split_in_whole_work_groups") {
        let k = root.program(SOURCE).unwrap().kernel("saxpy").unwrap();
        for n in [1, 31, 4096, 100_003, 1 << 17, 1_000_003] {
            saxpy_checked(&root, &k, n, "range");
        }
        // A prime range is rounded: large work-groups, not work-groups of one.
        let (launch, local) = k.range_plan(Range::d1(1_000_003)).unwrap();
        assert!(local.len() >= 64, "{local:?}");
        assert!(launch.len() >= 1_000_003 && launch.len() % local.len() == 0);
    }
}

#[test]
fn automatic_and_tuned_local_sizes() {
    for root in common::roots("automatic_and_tuned_local_sizes") {
        let k = root.program(SOURCE).unwrap().kernel("saxpy").unwrap();
        for n in [4096, 3 * 64 * 61] {
            saxpy_checked(&root, &k, n, "auto");
            saxpy_checked(&root, &k, n, "tuned");
        }
    }
}

/// A kernel with a barrier is never rounded: its range runs in work-groups that divide it.
#[test]
fn kernels_with_barriers_are_not_rounded() {
    for root in common::roots("kernels_with_barriers_are_not_rounded") {
        let k = root.program(SOURCE).unwrap().kernel("block_sum").unwrap();
        let n = 64 * 61;
        let (launch, local) = k.range_plan(Range::d1(n)).unwrap();
        assert_eq!(launch, Range::d1(n));
        let xs = common::values(n, 3);
        let x = common::colored(&root, &xs, local.len());
        let y = common::colored(&root, &vec![0; n], local.len());
        let l = local.len();
        // SAFETY: the kernels touch their buffers only at global ids below the launched range, the buffers' length.
        unsafe {
            k.launch()
                .arg(&y)
                .arg(&x)
                .arg(clgroups::launch::Local::<i32>::new(l))
                .range(n)
        }
        .unwrap();
        let got = y.read().unwrap();
        for i in 0..n {
            assert_eq!(got[i], xs[i] + xs[i / l * l], "element {i}");
        }
    }
}

/// Sub-group kernels (on PoCL 3.1 with the emulated layer's hidden scratch argument) run over
/// the devices in work-groups of whole sub-groups.
#[test]
fn sub_group_kernels_over_devices() {
    for root in common::roots("sub_group_kernels_over_devices") {
        let k = root
            .program(SOURCE)
            .unwrap()
            .kernel("sub_group_sums")
            .unwrap();
        let (n, local) = (64 * 61, 64);
        let xs = common::values(n, 9);
        let x = common::colored(&root, &xs, local);
        let y = common::colored(&root, &vec![0; n], local);
        // SAFETY: the kernels touch their buffers only at global ids below the launched range, the buffers' length.
        let ev = unsafe { k.launch().arg(&y).arg(&x).nd_range(n, Range::d1(local)) }.unwrap();
        assert!(ev.events().iter().all(Option::is_some));
        let got = y.read().unwrap();
        let sg = k.kernels()[0].sub_groups();
        let size = sg.max_sub_group_size(Range::d1(local)).unwrap();
        for (i, &g) in got.iter().enumerate() {
            let first = i / size * size;
            let want = xs[first..(first + size).min(n)]
                .iter()
                .fold(0i32, |a, &b| a.wrapping_add(b));
            assert_eq!(g, want, "element {i}, sub-group size {size}");
        }
    }
}
