//! Issue 38, item 3: the layer's collectives (and the standard ones) under conditions on values
//! loaded at a work-item's index (`if (x[g] > 0) r = sg_reduce_add(v);`). Where collectives
//! are work-group barriers (the emulated backend, PoCL's native CPU sub-groups) such a branch
//! that splits a sub-group ran unchecked before (unspecified values on PoCL 3.1). Now the build
//! computes reductions, scans and votes by every work-item over the work-items the condition
//! takes (the others contributing the identity: the original's value wherever every work-item
//! of the sub-group takes the branch, the operation over those that do elsewhere), broadcasts
//! and shuffles ahead as they are, and refuses what it cannot rewrite (a loop whose trip count
//! a loaded value decides, a barrier, a helper that loads: run unchecked before) before
//! anything is enqueued, naming why; a helper or macro any work-item may evaluate is computed
//! ahead like the collectives it calls (branches after them included), and a helper's
//! condition on a parameter passed a loaded value is masked like the kernel's own. Values drawn so
//! that some sub-groups take the branch whole, some in part and some not at all; work-groups
//! that are and are not multiples of the sub-group size (`tests/common/recorded.rs`).

mod common;

use common::recorded::{self, GLOBAL, LOCALS};

use clgroups::{Buffer, Error};

const SRC: &str = r#"
#include <clgroups/subgroup.h>
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

/* Each kernel: out[g], and the sub-group id and lane the layer reports. */
#define RECORD ids[2 * g] = sg_get_group_id(); ids[2 * g + 1] = sg_get_local_id()

kernel void reduce(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (x[g] > 0) r = sg_reduce_add(v);
    out[g] = r;
    RECORD;
}

kernel void scans(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (v > 0) {
        r = sg_inclusive_scan_add(v);
        r += 1000 * sg_exclusive_scan_add(1);
    }
    out[g] = r;
    RECORD;
}

kernel void extremes(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (v > 0) r = sg_reduce_max(v) * 1000 + sg_reduce_min(v);
    out[g] = r;
    RECORD;
}

kernel void votes(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (v > 0) r = 2 * sg_any(v > 50) + sg_all(v > 50);
    out[g] = r;
    RECORD;
}

kernel void standard(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (x[g] > 0) r = sub_group_reduce_add(v) + 1000 * sub_group_scan_exclusive_add(1);
    out[g] = r;
    RECORD;
}

kernel void broadcast(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (v > 0) r = sg_broadcast(v, 0u);
    out[g] = r;
    RECORD;
}

/* A helper and a macro any work-item may evaluate: computed ahead like their collectives. */
int doubled_sum(int v) { return sub_group_reduce_add(2 * v); }
#define TRIPLE_SUM(v) (3 * sub_group_reduce_add(v))
kernel void helper(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (x[g] > 0) r = doubled_sum(v) + TRIPLE_SUM(v);
    out[g] = r;
    RECORD;
}

/* A helper branching after its collective (reached wherever the helper is): computed ahead. */
int leader_sum(int v) {
    int s = sub_group_reduce_add(v);
    if (get_sub_group_local_id() == 0)
        return s;
    return -s;
}
kernel void leader(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    int v = x[g];
    int r = -7;
    if (x[g] > 0) r = leader_sum(v + 1);
    out[g] = r;
    RECORD;
}

/* A helper's condition on its parameter, passed a loaded value: masked like the kernel's own. */
int positive_sum(int v) { if (v > 0) return sub_group_reduce_add(v); return -7; }
kernel void parameter(global const int *x, global int *out, global uint *ids) {
    size_t g = get_global_id(0);
    out[g] = positive_sum(x[g]);
    RECORD;
}

/* Not rewritable: a loop whose trip count a loaded value decides, a barrier, a helper that
   loads. */
int first_of(global const int *p) { return sg_reduce_add(p[0]); }
kernel void helper_loading(global const int *x, global int *out) {
    size_t g = get_global_id(0);
    int r = 0;
    if (x[g] > 0) r = first_of(x + g);
    out[g] = r;
}

kernel void loop(global const int *x, global int *out) {
    size_t g = get_global_id(0);
    int v = x[g];
    while (v > 3) v = sg_shuffle_down(v, 1u) - 1;
    out[g] = v;
}

kernel void barrier_under_data(global const int *x, global int *out) {
    size_t g = get_global_id(0);
    if (x[g] > 0) sg_barrier();
    out[g] = 1;
}
"#;

/// What `kernel` writes for one sub-group of values `v` (lane order), per lane.
fn expected(kernel: &str, v: &[i32]) -> Vec<i32> {
    let active: Vec<usize> = (0..v.len()).filter(|&l| v[l] > 0).collect();
    let sum: i32 = active.iter().map(|&k| v[k]).sum();
    let on = |l: usize, value: i32| if v[l] > 0 { value } else { -7 };
    (0..v.len())
        .map(|l| {
            let below = active.iter().filter(|&&k| k < l);
            match kernel {
                "reduce" | "parameter" => on(l, sum),
                "scans" => {
                    let incl: i32 = active.iter().filter(|&&k| k <= l).map(|&k| v[k]).sum();
                    on(l, incl + 1000 * below.count() as i32)
                }
                "extremes" => {
                    let max = active.iter().map(|&k| v[k]).max().unwrap_or(0);
                    let min = active.iter().map(|&k| v[k]).min().unwrap_or(0);
                    on(l, max * 1000 + min)
                }
                "votes" => {
                    let any = active.iter().any(|&k| v[k] > 50);
                    let all = active.iter().all(|&k| v[k] > 50);
                    on(l, 2 * i32::from(any) + i32::from(all))
                }
                "standard" => on(l, sum + 1000 * below.count() as i32),
                // Computed ahead: lane 0's value, whether lane 0 takes the branch or not.
                "broadcast" => on(l, v[0]),
                // Computed ahead as it is: over every lane.
                "helper" => on(l, 5 * v.iter().sum::<i32>()),
                "leader" => {
                    let all: i32 = v.iter().map(|x| x + 1).sum();
                    on(l, if l == 0 { all } else { -all })
                }
                _ => unreachable!("{kernel}"),
            }
        })
        .collect()
}

#[test]
fn collectives_under_data_conditions_are_masked_or_refused() {
    let test = "collectives_under_data_conditions_are_masked_or_refused";
    recorded::in_child(test, SRC, |q, p| {
        let d = q.device();
        // Blocks of 24 work-items: all positive, all negative, then mixed signs.
        let raw = common::values(GLOBAL, 38);
        let x: Vec<i32> = (0..GLOBAL)
            .map(|g| match (g / 24) % 3 {
                0 => raw[g].rem_euclid(99) + 1,
                1 => -raw[g].rem_euclid(99) - 1,
                _ => raw[g] % 100,
            })
            .collect();
        let xb = Buffer::from_slice(q, &x).unwrap();
        // Where collectives are not work-group barriers (NVIDIA's warps), nothing is rewritten:
        // a sub-group that the condition splits reaches the collective in part, which is
        // undefined there as in SYCL and CUDA; only sub-groups that take the branch whole or
        // not at all are checked.
        let masked = d.needs_group_uniform_collectives();
        let (mut checked, mut undefined) = (0, 0);
        for kernel in [
            "reduce",
            "scans",
            "extremes",
            "votes",
            "standard",
            "broadcast",
            "helper",
            "leader",
            "parameter",
        ] {
            let k = p
                .kernel(kernel)
                .unwrap_or_else(|e| panic!("{d}: {kernel}: {e}"));
            for local in LOCALS {
                // SAFETY: work-item g reads x[g] and writes out[g], ids[2g] and ids[2g + 1].
                let (got, sub_groups) = unsafe { recorded::launch(q, &k, &xb, (1, local), &[]) };
                for lanes in sub_groups {
                    let xs: Vec<i32> = lanes.iter().map(|&g| x[g]).collect();
                    let taken = xs.iter().filter(|&&v| v > 0).count();
                    if !masked && taken != 0 && taken != xs.len() {
                        undefined += lanes.len();
                        continue;
                    }
                    let have: Vec<i32> = lanes.iter().map(|&g| got[g]).collect();
                    let want = expected(kernel, &xs);
                    assert_eq!(
                        have, want,
                        "{d}: {kernel} local {local}: {lanes:?} x {xs:?}"
                    );
                    checked += lanes.len();
                }
            }
            println!("{d}: {kernel}: right");
        }
        assert_eq!(checked + undefined, 9 * 5 * GLOBAL);
        println!("{d}: {checked} work-items checked");
        if undefined > 0 {
            println!(
                "{d}: {undefined} work-items of split sub-groups not checked (undefined here)"
            );
        }
        let backend = d.sub_groups().effective.shuffle_backend;
        for (kernel, why) in [
            ("loop", "not shown uniform"),
            ("barrier_under_data", "a barrier"),
            ("helper_loading", "first_of at line"),
        ] {
            match p.kernel(kernel) {
                // Where collectives are work-group barriers: refused before anything runs.
                Err(e @ Error::Unsupported { .. }) if d.needs_group_uniform_collectives() => {
                    let text = e.to_string();
                    assert!(text.contains(why), "{d}: {kernel}: {text}");
                    println!("{d} ({backend}): {kernel}: refused: {text}");
                }
                Ok(_) if !d.needs_group_uniform_collectives() => {
                    println!("{d} ({backend}): {kernel}: left to the driver");
                }
                r => panic!("{d} ({backend}): {kernel}: {:?}", r.map(|_| ())),
            }
        }
    });
}
