//! Issue 32, item 4: `cl_khr_subgroup_non_uniform_*` built-ins called in divergent flow, as they
//! are meant to be (`tests/cl/non_uniform_divergent.cl`: stream compaction's slots, an
//! `if`/`else if`/`else` chain with an elected leader, nested conditions with floats and a
//! clustered reduction), on every device, against the host's maths over the active work-items of
//! each sub-group. Where collectives are work-group barriers (the emulated backend, PoCL's CPU
//! devices) clgroups computes them with every work-item, the inactive ones contributing the
//! identity (`transform::nu_mask`). Each kernel runs in a child process, so a barrier that hangs
//! or crashes PoCL fails the test.

mod common;

use clgroups::{Buffer, LocalSize, Program, Range};
use std::collections::BTreeMap;

const SRC: &str = include_str!("cl/non_uniform_divergent.cl");

/// The sub-groups of a launch: global ids by lane, from the ids the kernel recorded.
fn sub_groups(ids: &[u32], local: usize) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<(usize, u32), BTreeMap<u32, usize>> = BTreeMap::new();
    for g in 0..ids.len() / 2 {
        let lanes = groups.entry((g / local, ids[2 * g])).or_default();
        assert!(lanes.insert(ids[2 * g + 1], g).is_none(), "lane twice: {g}");
    }
    let groups: Vec<Vec<usize>> = groups
        .into_values()
        .map(|l| l.into_values().collect())
        .collect();
    assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), ids.len() / 2);
    groups
}

/// What `kernel` gives each lane of a sub-group of values `x` (in lane order).
fn expected(kernel: &str, x: &[i32], t: i32) -> Vec<f64> {
    let n = x.len();
    let active = |p: &dyn Fn(usize) -> bool| -> Vec<usize> { (0..n).filter(|&l| p(l)).collect() };
    match kernel {
        "compact" => {
            let on = active(&|l| x[l] > t);
            (0..n)
                .map(|l| match on.iter().position(|&a| a == l) {
                    Some(slot) => (slot * 100 + on.len()) as f64,
                    None => -1.0,
                })
                .collect()
        }
        "branches" => {
            let v: Vec<i32> = x.iter().map(|&x| x - 50).collect();
            let a = active(&|l| l % 4 == 1);
            let b = active(&|l| l % 4 != 1 && v[l] < t);
            let c = active(&|l| l % 4 != 1 && v[l] >= t);
            (0..n)
                .map(|l| {
                    if a.contains(&l) {
                        a.iter().map(|&k| v[k]).min().unwrap() as f64
                    } else if b.contains(&l) {
                        let below = b.iter().filter(|&&k| k < l).map(|&k| v[k]);
                        let all = b.iter().all(|&k| v[k] < 0);
                        (below.max().unwrap_or(i16::MIN as i32) + 1000 * i32::from(all)) as f64
                    } else if c[0] == l {
                        (-v[l] - 7) as f64
                    } else {
                        0.0
                    }
                })
                .collect()
        }
        "nested" => {
            let odd = active(&|l| x[l] & 1 != 0);
            let inner = active(&|l| x[l] & 1 != 0 && l > 2);
            let any = odd.iter().any(|&k| x[k] > t + 40);
            (0..n)
                .map(|l| {
                    let mut r = 0.0;
                    if inner.contains(&l) {
                        let a = |k: usize| x[k] as f64 * 0.125;
                        let sum: f64 = inner.iter().map(|&k| a(k)).sum();
                        let cl = inner.iter().filter(|&&k| k / 4 == l / 4).map(|&k| a(k));
                        r = sum + cl.fold(f64::NEG_INFINITY, f64::max);
                    }
                    if odd.contains(&l) {
                        r += f64::from(u8::from(any));
                    }
                    r
                })
                .collect()
        }
        _ => unreachable!("{kernel}"),
    }
}

#[test]
fn non_uniform_builtins_in_divergent_flow_match_the_host() {
    let test = "non_uniform_builtins_in_divergent_flow_match_the_host";
    common::in_child(test, || {
        let q = common::queue();
        let d = q.device().clone();
        let p = Program::from_source(&q, SRC).unwrap_or_else(|e| panic!("{d}: {e}"));
        let global = 240usize;
        let x: Vec<i32> = common::values(global, 11)
            .iter()
            .map(|&v| v % 100)
            .collect();
        let xb = Buffer::from_slice(&q, &x).unwrap();
        let mut checked = 0;
        for kernel in ["compact", "branches", "nested"] {
            let k = p
                .kernel(kernel)
                .unwrap_or_else(|e| panic!("{d}: {kernel}: {e}"));
            for (local, t) in [(48usize, 30i32), (60, 0), (240, -20)] {
                let out = Buffer::from_slice(&q, &vec![-99.0f32; global]).unwrap();
                let outi = Buffer::from_slice(&q, &vec![-99i32; global]).unwrap();
                let ids = Buffer::from_slice(&q, &vec![u32::MAX; 2 * global]).unwrap();
                let l = k.launch().arg(&xb);
                let l = if kernel == "nested" {
                    l.arg(&out)
                } else {
                    l.arg(&outi)
                };
                // SAFETY: work-item g reads x[g] and writes out[g] and ids[2g], ids[2g + 1].
                unsafe {
                    l.arg(&ids)
                        .arg(t)
                        .nd_range(Range::d1(global), LocalSize::Exact(Range::d1(local)))
                }
                .and_then(|ev| ev.wait())
                .unwrap_or_else(|e| panic!("{d}: {kernel}: {e}"));
                let got: Vec<f64> = match kernel {
                    "nested" => out.read(&q).unwrap().iter().map(|&v| v as f64).collect(),
                    _ => outi.read(&q).unwrap().iter().map(|&v| v as f64).collect(),
                };
                for lanes in sub_groups(&ids.read(&q).unwrap(), local) {
                    let xs: Vec<i32> = lanes.iter().map(|&g| x[g]).collect();
                    let have: Vec<f64> = lanes.iter().map(|&g| got[g]).collect();
                    let want = expected(kernel, &xs, t);
                    assert_eq!(have, want, "{d}: {kernel} local {local} t {t}: {lanes:?}");
                    checked += lanes.len();
                }
            }
            println!("{d}: {kernel}: right");
        }
        assert_eq!(checked, 3 * 3 * global);
    });
}
