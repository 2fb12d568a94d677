//! Adversarial sub-group kernels (branch `hunt-sg`): shapes the other suites do not run, each
//! checked against a host model built from the sub-groups the kernel itself reports (so the
//! device's sub-group size and mapping are the device's business). Every kernel is
//! `k(global const int *x, global int *out, int n)`; work-item `g` (its linear global id) writes
//! `out[W*g]` = its sub-group id, `out[W*g + 1]` = its lane, then `W - 2` results.
//!
//! The passing tests add coverage (2-D/3-D groups with per-sub-group partials in local memory,
//! extended types under data conditions with fast math, helpers taking pointers, macro-made
//! kernels, `#ifdef` variants, required sizes with `reqd_work_group_size`, `switch` on a kernel
//! argument, typed refusals of writes between a vote and its collective). The `#[ignore]`d
//! ones are findings: each fails today (wrong values, a crash or a hang) and names the backends
//! where it does; `cargo test --test hunt_subgroups -- --ignored` runs them.
//!
//! Each test runs in a child process (a crash or a hang of the driver fails the test, not the
//! binary).

mod common;

use clgroups::{Buffer, Device, Error, LocalSize, Program, Queue, Range};
use std::collections::BTreeMap;

/// What a model sees of one sub-group: the inputs in lane order, the work-items' linear global
/// ids, the kernel's `n`, the launch's shape and the work-group's count of sub-groups.
struct Sg<'a> {
    xs: &'a [i32],
    gs: &'a [usize],
    n: i32,
    local: &'a [usize],
    /// How many sub-groups the work-group reports.
    count: i32,
}

impl Sg<'_> {
    /// `x % 50` (C's remainder) in lane order: the value most kernels reduce.
    fn v(&self) -> Vec<i32> {
        self.xs.iter().map(|x| x % 50).collect()
    }

    /// Work-group index of the sub-group (dimension 0 only, for 1-D launches).
    fn group(&self) -> usize {
        self.gs[0] / self.local[0]
    }

    /// Every lane the same row.
    fn all(&self, row: Vec<i32>) -> Vec<Vec<i32>> {
        vec![row; self.xs.len()]
    }
}

/// The vote kernels' model: every lane `[the sub-group's size]` where the sub-group took the
/// branch (`voted`), else `[-1]`.
fn counted(s: &Sg, voted: bool) -> Vec<Vec<i32>> {
    s.all(vec![if voted { s.xs.len() as i32 } else { -1 }])
}

/// [`counted`] under `sub_group_any(v > 40)`.
fn any_above_40(s: &Sg) -> Vec<Vec<i32>> {
    counted(s, s.v().iter().any(|&e| e > 40))
}

/// [`counted`] under `sub_group_any(get_local_id(0) * 4 > 40)` (1-D launches).
fn any_id_above_40(s: &Sg) -> Vec<Vec<i32>> {
    counted(s, s.gs.iter().any(|&g| (g % s.local[0]) as i32 * 4 > 40))
}

/// A sub-group of a launch: its work-group's coordinates and the sub-group id it reports.
type SgKey = (Vec<usize>, i32);

type Model<'m> = dyn Fn(&Sg) -> Vec<Vec<i32>> + 'm;

fn range(dims: &[usize]) -> Range {
    match dims.len() {
        1 => Range::d1(dims[0]),
        2 => Range::d2(dims[0], dims[1]),
        _ => Range::d3(dims[0], dims[1], dims[2]),
    }
}

/// Builds `src` with `options` on the device under test.
fn build(q: &Queue, src: &str, options: &str) -> Program {
    Program::builder(src)
        .options(options)
        .build(q)
        .unwrap_or_else(|e| panic!("{}: {e}", q.device()))
}

/// Launches `name` over `global` in groups of `local` and checks every sub-group it reports
/// against `model`; returns the first problems (empty: right).
#[allow(clippy::too_many_arguments)]
fn check(
    q: &Queue,
    p: &Program,
    name: &str,
    (global, local): (&[usize], &[usize]),
    width: usize,
    n: i32,
    model: &Model<'_>,
) -> Vec<String> {
    let d = q.device();
    let total: usize = global.iter().product();
    let x = common::values(total, 1);
    let k = match p.kernel(name) {
        Ok(k) => k,
        Err(e) => return vec![format!("{name}: refused: {e}")],
    };
    let xb = Buffer::from_slice(q, &x).unwrap();
    let ob = Buffer::from_slice(q, &vec![-99i32; width * total]).unwrap();
    // SAFETY: work-item g (linear global id) reads x[g] and writes out[width*g..width*(g+1)]
    // only; both buffers hold `total` work-items.
    let launched = unsafe {
        k.launch()
            .arg(&xb)
            .arg(&ob)
            .arg(n)
            .nd_range(range(global), LocalSize::Exact(range(local)))
    }
    .and_then(|ev| ev.wait());
    if let Err(e) = launched {
        return vec![format!("{name} {global:?}/{local:?}: launch: {e}")];
    }
    let out = ob.read(q).unwrap();
    // (work-group coordinates, sub-group id) -> (lane, g)
    let mut sgs: BTreeMap<SgKey, Vec<(i32, usize)>> = BTreeMap::new();
    for g in 0..total {
        let (mut rest, mut group) = (g, Vec::new());
        for (dim, l) in global.iter().zip(local) {
            group.push(rest % dim / l);
            rest /= dim;
        }
        sgs.entry((group, out[width * g]))
            .or_default()
            .push((out[width * g + 1], g));
    }
    let mut counts: BTreeMap<Vec<usize>, i32> = BTreeMap::new();
    for (group, _) in sgs.keys() {
        *counts.entry(group.clone()).or_default() += 1;
    }
    let mut bad = Vec::new();
    for ((group, id), mut lanes) in sgs {
        lanes.sort_unstable();
        if !lanes
            .iter()
            .enumerate()
            .all(|(l, &(lane, _))| lane == l as i32)
        {
            bad.push(format!(
                "{name} {global:?}/{local:?}: group {group:?} sub-group {id}: lanes {lanes:?}"
            ));
            continue;
        }
        let gs: Vec<usize> = lanes.iter().map(|&(_, g)| g).collect();
        let xs: Vec<i32> = gs.iter().map(|&g| x[g]).collect();
        let want = model(&Sg {
            xs: &xs,
            gs: &gs,
            n,
            local,
            count: counts[&group],
        });
        let have: Vec<Vec<i32>> = gs
            .iter()
            .map(|&g| out[width * g + 2..width * (g + 1)].to_vec())
            .collect();
        if have != want {
            bad.push(format!(
                "{name} {global:?}/{local:?}: group {group:?} sub-group {id} (work-items {gs:?}): want {want:?}, got {have:?}"
            ));
        }
    }
    if bad.is_empty() {
        println!("{d}: {name} {global:?}/{local:?}: right");
    }
    bad
}

/// Checks each `(kernel, model)` at each shape; fails listing every wrong one.
fn check_all(
    q: &Queue,
    p: &Program,
    kernels: &[(&str, &Model<'_>)],
    shapes: &[(&[usize], &[usize])],
    (width, n): (usize, i32),
) {
    let d = q.device();
    let backend = d.sub_groups().effective.shuffle_backend;
    let mut bad = Vec::new();
    for &(name, model) in kernels {
        for &shape in shapes {
            // Printed as found: a later kernel may crash the process.
            for b in check(q, p, name, shape, width, n, model)
                .into_iter()
                .take(2)
            {
                println!("WRONG: {b}");
                bad.push(b);
            }
        }
    }
    assert!(bad.is_empty(), "{d} ({backend}):\n{}", bad.join("\n"));
}

/// Where collectives are work-group barriers, asserts that each kernel of `kernels` is refused
/// (before anything is enqueued) with a reason holding `why`; elsewhere checks it as
/// [`check_all`] does.
fn refused_or_checked(
    q: &Queue,
    p: &Program,
    kernels: &[(&str, &Model<'_>)],
    why: &str,
    shapes: &[(&[usize], &[usize])],
    (width, n): (usize, i32),
) {
    let d = q.device();
    if !d.needs_group_uniform_collectives() {
        return check_all(q, p, kernels, shapes, (width, n));
    }
    for &(name, _) in kernels {
        match p.kernel(name) {
            Err(e @ Error::Unsupported { .. }) => {
                let text = e.to_string();
                assert!(text.contains(why), "{}: {name}: {text}", device_line(d));
                println!("{}: {name}: refused: {text}", device_line(d));
            }
            r => panic!("{}: {name}: {:?}", device_line(d), r.map(|_| ())),
        }
    }
}

fn device_line(d: &Device) -> String {
    format!("{d} ({})", d.sub_groups().effective.shuffle_backend)
}

const WIDE: [(&[usize], &[usize]); 2] = [(&[96], &[12]), (&[99], &[33])];

/// Where the finding tests may hang (a collective PoCL runs in part of a work-group), each
/// wait gives up after this many seconds (`CLGROUPS_TIMEOUT`) and the launch reports it.
pub(crate) const FINDING_ENV: [(&str, &str); 1] = [("CLGROUPS_TIMEOUT", "30")];

#[path = "hunt_subgroups/coverage.rs"]
mod coverage;
#[path = "hunt_subgroups/findings_flow.rs"]
mod findings_flow;
#[path = "hunt_subgroups/findings_values.rs"]
mod findings_values;
#[path = "hunt_subgroups/shapes.rs"]
mod shapes;

/// Exploration harness, to reproduce a finding on another kernel: `HUNT_SRC` (a file),
/// `HUNT_KERNEL` (names, comma-separated), `HUNT_GLOBAL` / `HUNT_LOCAL` (`24` or `8,3`),
/// `HUNT_WIDTH` (ints per work-item), `HUNT_OPTS`, `HUNT_N` (the int argument), `HUNT_SEED`;
/// the kernels are `k(global const int *x, global int *out, int n)`; prints `X: ...` and
/// `OUT name: ...` (or the error).
#[test]
#[ignore = "exploration harness (needs HUNT_SRC)"]
fn explore() {
    let _ = env_logger::builder().is_test(true).try_init();
    let dims = |v: &str| -> Vec<usize> {
        let s = std::env::var(v).unwrap();
        s.split(',').map(|t| t.trim().parse().unwrap()).collect()
    };
    let src = std::fs::read_to_string(std::env::var("HUNT_SRC").unwrap()).unwrap();
    let q = common::queue();
    let d = q.device().clone();
    let opts = std::env::var("HUNT_OPTS").unwrap_or_default();
    let p = match Program::builder(src).options(&opts).build(&q) {
        Ok(p) => p,
        Err(e) => {
            println!("BUILD-ERR: {e}");
            return;
        }
    };
    let (global, local) = (dims("HUNT_GLOBAL"), dims("HUNT_LOCAL"));
    let width: usize = common::env_or("HUNT_WIDTH", 1);
    let n: i32 = common::env_or("HUNT_N", 0);
    let seed: u64 = common::env_or("HUNT_SEED", 1);
    let total: usize = global.iter().product();
    let x = common::values(total, seed);
    let text = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    println!("X: {}", text(&x));
    let xb = Buffer::from_slice(&q, &x).unwrap();
    for name in std::env::var("HUNT_KERNEL").unwrap().split(',') {
        let k = match p.kernel(name) {
            Ok(k) => k,
            Err(e) => {
                println!("KERNEL-ERR {name}: {e:?} // {e}");
                continue;
            }
        };
        let o = Buffer::from_slice(&q, &vec![-99i32; width * total]).unwrap();
        // SAFETY: exploration kernels write out[width * g..width * (g + 1)] only.
        let r = unsafe {
            k.launch()
                .arg(&xb)
                .arg(&o)
                .arg(n)
                .nd_range(range(&global), LocalSize::Exact(range(&local)))
        }
        .and_then(|ev| ev.wait());
        match r {
            Ok(_) => println!("OUT {name}: {}", text(&o.read(&q).unwrap())),
            Err(e) => println!("LAUNCH-ERR {name}: {e}"),
        }
    }
    println!("DEVICE: {}", device_line(&d));
}
