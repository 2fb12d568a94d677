//! Issue 38, item 2: sub-group collectives inside `&&` / `||` / `?:` chains whose earlier
//! operands depend on the work-item, where collectives are work-group barriers (the emulated
//! backend, PoCL's native CPU sub-groups). A standard `cl_khr_subgroups` collective must be
//! reached by its whole sub-group (else the kernel is undefined), so it is computed ahead;
//! a `non_uniform` one is computed by every work-item over those the chain's earlier values let
//! reach it (`A || B`: where `A` is false). Both were refused before ("its condition is not
//! shown uniform in each sub-group", "a non_uniform built-in's result depends on the work-items
//! reaching it"). Checked against the host over the sub-groups each kernel reports, in
//! work-groups that are and are not multiples of the sub-group size (`tests/common/recorded.rs`).

mod common;

use common::recorded::{self, GLOBAL, LOCALS};

use clgroups::Buffer;

const SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

kernel void chains(global const int *x, global int *out, global uint *ids, int t) {
    size_t g = get_global_id(0);
    uint lid = get_sub_group_local_id();
    int v = x[g];
    int e = 0;
    /* Self-checks, as the CTS writes them: the scans are reached by every lane where right. */
    if (sub_group_scan_inclusive_add(1) != (int)lid + 1 || sub_group_scan_exclusive_add(1u) != lid) e |= 1;
    int m = lid < 100000u ? sub_group_reduce_max(v) : 0;
    if (m != sub_group_broadcast(m, 0u)) e |= 2;
    /* The non_uniform ones, masked by the chain's earlier values. */
    int a = lid % 3u != 0u && sub_group_non_uniform_reduce_add(v) > t;
    int b = lid % 2u == 0u ? sub_group_non_uniform_scan_inclusive_add(v) : -(int)lid;
    int c = lid == 1u || lid > 4u && v > 0 || sub_group_non_uniform_reduce_max(v) > t;
    out[4 * g] = e;
    out[4 * g + 1] = m;
    out[4 * g + 2] = a + 2 * c;
    out[4 * g + 3] = b;
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = lid;
}
"#;

/// What `chains` writes for one sub-group of values `v` (lane order), per lane: `[e, m, a +
/// 2 c, b]`.
fn expected(v: &[i32], t: i32) -> Vec<[i32; 4]> {
    let n = v.len();
    let max = *v.iter().max().unwrap();
    let a_lanes: Vec<usize> = (0..n).filter(|l| l % 3 != 0).collect();
    let a_sum: i32 = a_lanes.iter().map(|&l| v[l]).sum();
    // `c`'s last operand runs where neither `lid == 1` nor `lid > 4 && v > 0` holds.
    let c_lanes: Vec<usize> = (0..n).filter(|&l| !(l == 1 || l > 4 && v[l] > 0)).collect();
    let c_max = c_lanes.iter().map(|&l| v[l]).max();
    (0..n)
        .map(|l| {
            let a = i32::from(l % 3 != 0 && a_sum > t);
            let c = i32::from(l == 1 || l > 4 && v[l] > 0 || c_max.is_some_and(|m| m > t));
            let b = match l % 2 {
                0 => (0..=l).filter(|k| k % 2 == 0).map(|k| v[k]).sum(),
                _ => -(l as i32),
            };
            [0, max, a + 2 * c, b]
        })
        .collect()
}

#[test]
fn collectives_in_divergent_chains_match_the_host() {
    let test = "collectives_in_divergent_chains_match_the_host";
    recorded::in_child(test, SRC, |q, p| {
        let d = q.device();
        let k = p.kernel("chains").unwrap_or_else(|e| panic!("{d}: {e}"));
        let x: Vec<i32> = common::values(GLOBAL, 5).iter().map(|v| v % 50).collect();
        let xb = Buffer::from_slice(q, &x).unwrap();
        let mut checked = 0;
        for (local, t) in LOCALS.into_iter().zip([0i32, 20, -30, 5, 40]) {
            // SAFETY: work-item g reads x[g] and writes out[4g..4g + 4], ids[2g], ids[2g + 1].
            let (got, sub_groups) = unsafe { recorded::launch(q, &k, &xb, (4, local), &[t]) };
            for gs in sub_groups {
                let xs: Vec<i32> = gs.iter().map(|&g| x[g]).collect();
                let have: Vec<[i32; 4]> = (gs.iter())
                    .map(|&g| [0, 1, 2, 3].map(|f| got[4 * g + f]))
                    .collect();
                let want = expected(&xs, t);
                assert_eq!(have, want, "{d}: local {local} t {t}: {gs:?} x {xs:?}");
                checked += gs.len();
            }
        }
        assert_eq!(checked, 5 * GLOBAL);
        println!("{d}: chains: right, {checked} work-items");
    });
}
