//! Issue 38, item 2: sub-group collectives in loops whose trip count is uniform in each
//! sub-group but not in the work-group (the vote loop `while (sub_group_any(i < v))`, a `do`
//! loop on `sub_group_all`, bounds from a reduction, collectives in the body, a `break` under
//! a vote, `for (;;)` left by one, a `continue` under one, such loops inside each other),
//! where collectives are work-group barriers (the emulated backend, PoCL's native CPU
//! sub-groups): run by the work-group in lockstep (`transform::lockstep`); refused before, "it
//! decides whether its loop runs again". Checked against the host over the sub-groups each
//! kernel reports, in work-groups that are and are not multiples of the sub-group size
//! (`tests/common/recorded.rs`).

mod common;

use common::recorded::{self, GLOBAL, LOCALS};

use clgroups::Buffer;

const SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int i = 0, s = 0;
    while (sub_group_any(i < v)) {
        if (i < v)
            s += i;
        i++;
    }
    int j = 0;
    do {
        j++;
    } while (sub_group_all(j < v));
    int k;
    for (k = 0; sub_group_reduce_max(v) > k; k++)
        ;
    int n = sub_group_reduce_max(v), t = 0;
    for (int m = 0; m < n; m++)
        t += sub_group_reduce_add(m < v ? 1 : 0);
    int b = 0;
    for (int m = 0; m < 100; m++) {
        if (sub_group_any(m >= v))
            break;
        b++;
    }
    int w = 0;
    for (int r = 0; r < 2; r++) {
        int q = 0;
        while (sub_group_any(q < v + r))
            q++;
        w += q;
    }
    out[10 * g] = s;
    out[10 * g + 1] = j;
    out[10 * g + 2] = k;
    out[10 * g + 3] = t;
    out[10 * g + 4] = b;
    out[10 * g + 5] = w;
    out[10 * g + 6] = i;
    int e = 0;
    for (;;) {
        e++;
        if (sub_group_all(e >= v))
            break;
    }
    out[10 * g + 7] = e;
    int c = 0, cs = 0;
    for (int m = 0; m < n; m++) {
        if (sub_group_all(m >= v - 2))
            continue;
        cs += sub_group_reduce_add(1);
        c++;
    }
    out[10 * g + 8] = c;
    out[10 * g + 9] = cs;
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}
"#;

/// The same vote loop written with the sub-group layer.
const LAYER_SRC: &str = r#"
#include <clgroups/subgroup.h>

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int i = 0, s = 0;
    while (sg_any(i < v)) {
        s += sg_reduce_add(i < v ? 1 : 0);
        i++;
    }
    out[2 * g] = s;
    out[2 * g + 1] = i;
    ids[2 * g] = sg_get_group_id();
    ids[2 * g + 1] = sg_get_local_id();
}
"#;

/// The extensions' built-ins in a vote loop: a `non_uniform` sum under the loop's own
/// condition, a ballot's count.
const EXTENSION_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int i = 0, a = 0, b = 0;
    while (sub_group_any(i < v)) {
        if (i < v)
            a += sub_group_non_uniform_reduce_add(1);
        b += (int)sub_group_ballot_bit_count(sub_group_ballot(i < v));
        i++;
    }
    out[2 * g] = a;
    out[2 * g + 1] = b;
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}
"#;

/// Such loops inside each other: a vote loop in a vote loop (a reduction in the inner one), a
/// vote loop before the `break` that makes its outer loop one, a `do` loop in a loop bounded
/// by a reduction; and collectives after a `break` under a vote (the vote in a variable, and
/// a vote loop whose condition loads: `x[g]` masked by the flag once the `break` is taken).
const NESTED_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int a = 0, z = 0;
    while (sub_group_any(a < v)) {
        int q = 0;
        while (sub_group_any(q < a)) {
            z += sub_group_reduce_add(1);
            q++;
        }
        a++;
    }
    int y = 0;
    for (int m = 0; m < 50; m++) {
        int q = 0;
        while (sub_group_any(q < v))
            q++;
        y += q;
        if (sub_group_all(m >= v))
            break;
    }
    int n = sub_group_reduce_max(v), c = 0;
    for (int m = 0; m < n; m++) {
        int q = m;
        do {
            q++;
        } while (sub_group_any(q < v));
        c += q - m;
    }
    int u = 0, d = 0;
    for (int m = 0; m < 100; m++) {
        if (sub_group_all(m >= v))
            break;
        u += sub_group_reduce_add(1);
    }
    for (int m = 0; m < 100; m++) {
        int done = sub_group_all(m >= v);
        if (done) {
            d += 1000;
            break;
        }
        d += sub_group_reduce_add(m);
    }
    int h = 0, hs = 0;
    while (sub_group_any(x[g] > h)) {
        h++;
        if (sub_group_all(h >= 4))
            break;
        hs += sub_group_reduce_add(1);
    }
    out[8 * g] = a;
    out[8 * g + 1] = z;
    out[8 * g + 2] = y;
    out[8 * g + 3] = c;
    out[8 * g + 4] = u;
    out[8 * g + 5] = d;
    out[8 * g + 6] = h;
    out[8 * g + 7] = hs;
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}
"#;

/// Helper functions with collectives, written straight (no condition, no pointer; a
/// program-scope `constant` read), in a vote loop's body and under a vote: every work-item
/// calls them ahead (`statement::pure_helper`); and a helper whose collective a vote on its
/// parameter guards, called with each work-item's value (moved ahead inside the helper); a
/// macro calling a helper (a use of its collectives, moved like it).
const HELPER_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

constant int TWO = 2;
int helper(int v) { return sub_group_reduce_add(v); }
int scaled(int v) {
    int w = v * TWO;
    return helper(w) + sub_group_reduce_max(v);
}
int plain(int a, int b) { return a > b ? a - b : b - a; }
#define REDUCE(x) helper(x)
int voted(int v) {
    if (sub_group_any(v > 3))
        return sub_group_reduce_add(v);
    return 0;
}

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int i = 0, s = 0;
    while (sub_group_any(i < v)) {
        s += helper(1) + scaled(i);
        i++;
    }
    int u = -1;
    if (sub_group_any(v > 3))
        u = scaled(v) + plain(v, 2) + REDUCE(1);
    out[3 * g] = s;
    out[3 * g + 1] = u;
    out[3 * g + 2] = voted(v);
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}
"#;

/// Loops whose bodies end with an `if` on the lane after a collective: the shuffle-up scan
/// bounded by `get_sub_group_size()` (a partial sub-group loops less), a vote loop, a `do`
/// loop. PoCL 6.0 took the scan's last step in no work-item before each lockstep iteration
/// ended with a barrier (`hunt_subgroups`' `branches_and_loops_on_the_sub_group_size`).
const LANE_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle_relative : enable

kernel void loops(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int t = v;
    for (uint off = 1; off < get_sub_group_size(); off <<= 1) {
        int o = sub_group_shuffle_up(t, off);
        if (get_sub_group_local_id() >= off)
            t += o;
    }
    int i = 0, s = 0;
    while (sub_group_any(i < v)) {
        int r = sub_group_reduce_add(1);
        if (get_sub_group_local_id() < (uint)i)
            s += r;
        i++;
    }
    int j = 0, d = 0;
    do {
        int r = sub_group_reduce_max(j);
        if (get_sub_group_local_id() & 1)
            d += r;
        j++;
    } while (sub_group_any(j < v));
    out[3 * g] = t;
    out[3 * g + 1] = s;
    out[3 * g + 2] = d;
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}
"#;

/// What `loops` writes for one sub-group of values `v` (lane order), per lane.
fn expected(v: &[i32]) -> Vec<[i32; 10]> {
    let (max, min) = (*v.iter().max().unwrap(), *v.iter().min().unwrap());
    let sum: i32 = v.iter().sum();
    // Iterations `m` not skipped: those where some work-item has `m < v - 2`.
    let kept = (max - 2).max(0);
    let lanes = v.len() as i32;
    v.iter()
        .map(|&x| {
            let s = (0..x).sum();
            let low = [s, min.max(1), max, sum, min, 2 * max + 1, max, max.max(1)];
            let mut all = [kept; 10];
            all[..8].copy_from_slice(&low);
            all[9] = kept * lanes;
            all
        })
        .collect()
}

/// Runs `src`'s `loops` (`width` ints per work-item) in every work-group size of [`LOCALS`]
/// and checks each sub-group against `want`.
fn check<const W: usize>(test: &str, src: &str, want: fn(&[i32]) -> Vec<[i32; W]>) {
    recorded::in_child(test, src, |q, p| {
        let d = q.device();
        let k = p.kernel("loops").unwrap_or_else(|e| panic!("{d}: {e}"));
        let x: Vec<i32> = (common::values(GLOBAL, 5).iter())
            .map(|v| v.rem_euclid(9))
            .collect();
        let xb = Buffer::from_slice(q, &x).unwrap();
        let mut checked = 0;
        for local in LOCALS {
            // SAFETY: work-item g reads x[g] and writes out[W g..W (g + 1)], ids[2g], ids[2g + 1].
            let (got, sub_groups) = unsafe { recorded::launch(q, &k, &xb, (W, local), &[]) };
            for gs in sub_groups {
                let xs: Vec<i32> = gs.iter().map(|&g| x[g]).collect();
                let have: Vec<[i32; W]> = (gs.iter())
                    .map(|&g| std::array::from_fn(|f| got[W * g + f]))
                    .collect();
                assert_eq!(have, want(&xs), "{d}: local {local}: {gs:?} x {xs:?}");
                checked += gs.len();
            }
        }
        assert_eq!(checked, LOCALS.len() * GLOBAL);
        println!("{d}: loops: right, {checked} work-items");
    });
}

#[test]
fn collectives_in_loops_match_the_host() {
    check("collectives_in_loops_match_the_host", SRC, expected);
}

#[test]
fn layer_collectives_in_loops_match_the_host() {
    let want = |v: &[i32]| {
        let max = *v.iter().max().unwrap();
        let s = v.iter().sum();
        vec![[s, max]; v.len()]
    };
    check("layer_collectives_in_loops_match_the_host", LAYER_SRC, want);
}

#[test]
fn extension_built_ins_in_loops_match_the_host() {
    let want = |v: &[i32]| {
        // At iteration `i`, the work-items still below their own `v`.
        let below = |i: i32| v.iter().filter(|&&x| i < x).count() as i32;
        let b = v.iter().sum();
        (v.iter()).map(|&x| [(0..x).map(below).sum(), b]).collect()
    };
    check(
        "extension_built_ins_in_loops_match_the_host",
        EXTENSION_SRC,
        want,
    );
}

#[test]
fn nested_loops_and_breaks_match_the_host() {
    let want = |v: &[i32]| {
        let (m, lanes) = (*v.iter().max().unwrap(), v.len() as i32);
        let sum = lanes * m * (m - 1) / 2;
        let (h, hs) = (m.min(4), m.min(3) * lanes);
        vec![
            [
                m,
                sum,
                m * (m + 1),
                m * (m + 1) / 2,
                lanes * m,
                sum + 1000,
                h,
                hs
            ];
            v.len()
        ]
    };
    check("nested_loops_and_breaks_match_the_host", NESTED_SRC, want);
}

#[test]
fn helpers_with_collectives_match_the_host() {
    let want = |v: &[i32]| {
        let (m, lanes) = (*v.iter().max().unwrap(), v.len() as i32);
        let s = m * lanes + (2 * lanes + 1) * m * (m - 1) / 2;
        let sum: i32 = v.iter().sum();
        let u = |x: i32| match m > 3 {
            true => 2 * sum + m + (x - 2).abs() + lanes,
            false => -1,
        };
        let voted = if m > 3 { sum } else { 0 };
        v.iter().map(|&x| [s, u(x), voted]).collect()
    };
    check("helpers_with_collectives_match_the_host", HELPER_SRC, want);
}

#[test]
fn lane_branches_ending_loop_bodies_match_the_host() {
    let want = |v: &[i32]| {
        let (m, lanes) = (*v.iter().max().unwrap(), v.len() as i32);
        let j = m.max(1);
        (0..v.len())
            .map(|l| {
                let t = v[..=l].iter().sum();
                let s = lanes * (m - 1 - l as i32).max(0);
                [t, s, if l % 2 == 1 { j * (j - 1) / 2 } else { 0 }]
            })
            .collect()
    };
    check(
        "lane_branches_ending_loop_bodies_match_the_host",
        LANE_SRC,
        want,
    );
}
