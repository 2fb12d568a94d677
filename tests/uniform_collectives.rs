//! Issue 32, item 4: standard `cl_khr_subgroups` kernels whose collectives sit behind
//! conditions that are uniform in every sub-group (`tests/cl/uniform_collectives.cl`: `&&`/`||`
//! after a collective, branches on `sub_group_any`/`all`, nested branches, conditional
//! expressions, loops whose exit a collective decides) run on every device and give the host's
//! sub-group maths. Where collectives are work-group barriers (the emulated backend, PoCL's
//! native CPU sub-groups) clgroups rewrites them so the whole work-group reaches them
//! (`transform::hoist`); a loop whose exit may differ between the sub-groups of a work-group
//! (a `break` under a collective's result, or a collective in the loop's own condition) runs
//! in lockstep there (`transform::lockstep`, issue 38; refused before). Each case runs in a
//! child process, so a barrier that hangs or crashes PoCL fails the test.

mod common;

use clgroups::{Buffer, LocalSize, Program, Range};

const SRC: &str = include_str!("cl/uniform_collectives.cl");

/// One sub-group as the device formed it: its work-items' global ids, in lane order.
type SubGroup = Vec<usize>;

/// The sub-groups of each work-group of `local` work-items, from the ids the kernel recorded.
fn sub_groups(sg: &[u32], local: usize) -> Vec<SubGroup> {
    let mut out = Vec::new();
    for (w, ids) in sg.chunks(local).enumerate() {
        let count = ids.iter().max().map_or(0, |&m| m as usize + 1);
        for s in 0..count as u32 {
            let lanes: SubGroup = (0..ids.len())
                .filter(|&i| ids[i] == s)
                .map(|i| w * local + i)
                .collect();
            assert!(
                !lanes.is_empty(),
                "sub-group {s} of work-group {w} is empty: {ids:?}"
            );
            out.push(lanes);
        }
    }
    out
}

/// What `kernel` computes for one sub-group of values `v` (in lane order), per lane.
fn expected(kernel: &str, v: &[i32], t: i32) -> Vec<i32> {
    let n = v.len();
    let any = |p: &dyn Fn(i32) -> bool| v.iter().any(|&x| p(x));
    let all = |p: &dyn Fn(i32) -> bool| v.iter().all(|&x| p(x));
    let sum: i32 = v.iter().sum();
    let (min, max) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
    let incl = |l: usize| v[..=l].iter().sum::<i32>();
    let excl = |l: usize| v[..l].iter().sum::<i32>();
    let incl_max = |l: usize| *v[..=l].iter().max().unwrap();
    (0..n)
        .map(|l| match kernel {
            "and_reduce" if any(&|x| x > 0) && sum > t => 1 + max,
            "and_reduce" => 0,
            "or_scan" if all(&|x| x < 0) || incl(l) > t => 1,
            "or_scan" => 2,
            "all_then" if all(&|x| x > -15 + t) => sum + excl(l),
            "all_then" => -1,
            "nested" if any(&|x| x > 2 + t) && all(&|x| x < 18) => min,
            "nested" if any(&|x| x > 2 + t) => v[1],
            "nested" => 0,
            "ternary" if any(&|x| x == t) => sum,
            "ternary" => -incl_max(l),
            "loop_uniform_exit" => (1..=t.max(1)).map(|it| sum * it).sum(),
            "loop_sub_group_exit" => {
                let mut s = 0;
                for _ in 0..8 {
                    s += sum;
                    if s > t {
                        break;
                    }
                }
                s
            }
            "loop_condition" => v[l] * (30 - t - min).max(0),
            // The values as loaded: v[l] + l % 3.
            "data_condition" if (0..n).any(|k| v[k] + (k % 3) as i32 > 10 + t) => {
                (0..n).map(|k| v[k] + (k % 3) as i32).sum()
            }
            "data_condition" => -1,
            _ => unreachable!("{kernel}"),
        })
        .collect()
}

const KERNELS: [&str; 9] = [
    "and_reduce",
    "or_scan",
    "all_then",
    "nested",
    "ternary",
    "loop_uniform_exit",
    "loop_sub_group_exit",
    "loop_condition",
    "data_condition",
];

#[test]
fn collectives_under_sub_group_uniform_conditions_match_the_host() {
    let test = "collectives_under_sub_group_uniform_conditions_match_the_host";
    common::in_child(test, || {
        let q = common::queue();
        let d = q.device().clone();
        let p = Program::from_source(&q, SRC).unwrap_or_else(|e| panic!("{d}: {e}"));
        assert_eq!(p.source(), SRC, "the program keeps the source as given");
        let (global, local) = (256usize, 64usize);
        let x: Vec<i32> = common::values(global, 5)
            .iter()
            .map(|&v| v % 21 - 6)
            .collect();
        let xb = Buffer::from_slice(&q, &x).unwrap();
        let mut checked = 0;
        for kernel in KERNELS {
            for t in [0i32, 3, 9] {
                let out = Buffer::from_slice(&q, &vec![i32::MIN; global]).unwrap();
                let sg = Buffer::from_slice(&q, &vec![u32::MAX; global]).unwrap();
                // Loops that sub-groups leave at different iterations run in lockstep where
                // collectives are work-group barriers (`transform::lockstep`).
                let k = p
                    .kernel(kernel)
                    .unwrap_or_else(|e| panic!("{d}: {kernel}: {e}"));
                // SAFETY: work-item g reads x[g] and writes out[g], sg[g] (global elements
                // each); the collectives are reached by whole sub-groups.
                unsafe {
                    k.launch()
                        .arg(&xb)
                        .arg(&out)
                        .arg(&sg)
                        .arg(t)
                        .nd_range(Range::d1(global), LocalSize::Exact(Range::d1(local)))
                }
                .and_then(|ev| ev.wait())
                .unwrap_or_else(|e| panic!("{d}: {kernel}: {e}"));
                let (got, ids) = (out.read(&q).unwrap(), sg.read(&q).unwrap());
                for lanes in sub_groups(&ids, local) {
                    let v: Vec<i32> = lanes
                        .iter()
                        .enumerate()
                        .map(|(l, &g)| x[g] - (l % 3) as i32)
                        .collect();
                    let want = expected(kernel, &v, t);
                    let have: Vec<i32> = lanes.iter().map(|&g| got[g]).collect();
                    assert_eq!(have, want, "{d}: {kernel} t = {t}, sub-group {lanes:?}");
                    checked += lanes.len();
                }
            }
            println!("{d}: {kernel}: right");
        }
        assert!(checked >= 6 * 3 * global, "{checked}");
    });
}
