//! Issue 38, item 2: sub-group collectives inside `&&` / `||` / `?:` chains whose earlier
//! operands depend on the work-item, where collectives are work-group barriers (the emulated
//! backend, PoCL's native CPU sub-groups). A standard `cl_khr_subgroups` collective must be
//! reached by its whole sub-group (else the kernel is undefined), so it is computed ahead;
//! a `non_uniform` one is computed by every work-item over those the chain's earlier values let
//! reach it (`A || B`: where `A` is false). Both were refused before ("its condition is not
//! shown uniform in each sub-group", "a non_uniform built-in's result depends on the work-items
//! reaching it"). Checked against the host over the sub-groups each kernel reports, in
//! work-groups that are and are not multiples of the sub-group size; each case in a child
//! process, so a barrier that hangs or crashes PoCL fails the test.

mod common;

use clgroups::{Buffer, LocalSize, Program, Range};

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
    common::in_child(test, || {
        let q = common::queue();
        let d = q.device().clone();
        let p = Program::from_source(&q, SRC).unwrap_or_else(|e| panic!("{d}: {e}"));
        let k = p.kernel("chains").unwrap_or_else(|e| panic!("{d}: {e}"));
        let global = 264usize;
        let x: Vec<i32> = common::values(global, 5).iter().map(|v| v % 50).collect();
        let xb = Buffer::from_slice(&q, &x).unwrap();
        let mut checked = 0;
        for (local, t) in [(8usize, 0i32), (12, 20), (24, -30), (33, 5), (88, 40)] {
            let out = Buffer::from_slice(&q, &vec![-99i32; 4 * global]).unwrap();
            let ids = Buffer::from_slice(&q, &vec![u32::MAX; 2 * global]).unwrap();
            // SAFETY: work-item g reads x[g] and writes out[4g..4g + 4], ids[2g], ids[2g + 1].
            unsafe {
                k.launch()
                    .arg(&xb)
                    .arg(&out)
                    .arg(&ids)
                    .arg(t)
                    .nd_range(Range::d1(global), LocalSize::Exact(Range::d1(local)))
            }
            .and_then(|ev| ev.wait())
            .unwrap_or_else(|e| panic!("{d}: local {local}: {e}"));
            let got = out.read(&q).unwrap();
            let ids = ids.read(&q).unwrap();
            // The sub-groups: (work-group, sub-group id) -> global ids in lane order.
            let mut groups: std::collections::BTreeMap<(usize, u32), Vec<(u32, usize)>> =
                Default::default();
            for g in 0..global {
                let key = (g / local, ids[2 * g]);
                groups.entry(key).or_default().push((ids[2 * g + 1], g));
            }
            for (key, mut lanes) in groups {
                lanes.sort_unstable();
                let gs: Vec<usize> = lanes.iter().map(|&(_, g)| g).collect();
                assert!(
                    lanes
                        .iter()
                        .enumerate()
                        .all(|(l, &(lane, _))| lane as usize == l),
                    "{d}: local {local}: sub-group {key:?}: lanes {lanes:?}"
                );
                let xs: Vec<i32> = gs.iter().map(|&g| x[g]).collect();
                let have: Vec<[i32; 4]> = (gs.iter())
                    .map(|&g| [0, 1, 2, 3].map(|f| got[4 * g + f]))
                    .collect();
                let want = expected(&xs, t);
                assert_eq!(have, want, "{d}: local {local} t {t}: {gs:?} x {xs:?}");
                checked += gs.len();
            }
        }
        assert_eq!(checked, 5 * global);
        println!("{d}: chains: right, {checked} work-items");
    });
}
