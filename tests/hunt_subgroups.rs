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

/// Runs `body` in a child process running `test` (ignored tests included), with `env`.
fn in_child(test: &str, env: &[(&str, &str)], body: impl FnOnce()) {
    const CHILD: &str = "CLGROUPS_TEST_CHILD";
    if std::env::var(CHILD).is_ok() {
        body();
        println!("CHILD-OK");
        std::process::exit(0);
    }
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        test,
        "--nocapture",
        "--test-threads=1",
        "--include-ignored",
    ])
    .env(CHILD, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains("CHILD-OK"),
        "{test}: child {:?}\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{stdout}");
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

fn device_line(d: &Device) -> String {
    format!("{d} ({})", d.sub_groups().effective.shuffle_backend)
}

const WIDE: [(&[usize], &[usize]); 2] = [(&[96], &[12]), (&[99], &[33])];

// ---------------------------------------------------------------------------------------------
// Right everywhere: coverage the other suites lack.
// ---------------------------------------------------------------------------------------------

const TYPES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_extended_types : enable
#define W 10
kernel void masked(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0);
    int v = x[g];
    float f = (float)(v % 100) + 0.5f;
    uchar u = (uchar)(v & 0xff);
    char ch = (char)(v & 0xff);
    ulong ul = (ulong)(uint)v * 3000000000UL;
    int r0 = -7, r1 = -7, r2 = -7, r3 = -7, r4 = -7, r5 = -7, r6 = -7, r7 = -7;
    if (x[g] > 0) {
        r0 = (int)(sub_group_reduce_min(f) * 2.0f);
        r1 = (int)(sub_group_reduce_max(-f) * 2.0f);
        r2 = sub_group_reduce_min(u);
        r3 = sub_group_reduce_max(ch);
        r4 = (int)(sub_group_reduce_min(ul) >> 20);
        r5 = sub_group_scan_inclusive_min(ch);
        r6 = sub_group_scan_exclusive_max(u);
        r7 = (int)(sub_group_scan_inclusive_min(f) * 2.0f);
    }
    out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id();
    out[W*g+2] = r0; out[W*g+3] = r1; out[W*g+4] = r2; out[W*g+5] = r3; out[W*g+6] = r4;
    out[W*g+7] = r5; out[W*g+8] = r6; out[W*g+9] = r7;
}
"#;

fn masked_types(s: &Sg) -> Vec<Vec<i32>> {
    let act: Vec<usize> = (0..s.xs.len()).filter(|&l| s.xs[l] > 0).collect();
    let f = |i: usize| (s.xs[i] % 100) as f32 + 0.5;
    let u = |i: usize| (s.xs[i] & 0xff) as u8 as i32;
    let ch = |i: usize| (s.xs[i] & 0xff) as u8 as i8 as i32;
    let ul = |i: usize| (s.xs[i] as u32 as u64).wrapping_mul(3_000_000_000);
    (0..s.xs.len())
        .map(|l| {
            if s.xs[l] <= 0 {
                return vec![-7; 8];
            }
            let k = act.iter().position(|&a| a == l).unwrap();
            let fmin = act.iter().map(|&i| f(i)).fold(f32::INFINITY, f32::min);
            let fmax_neg = act.iter().map(|&i| -f(i)).fold(f32::NEG_INFINITY, f32::max);
            let r7 = (act[..=k]
                .iter()
                .map(|&i| f(i))
                .fold(f32::INFINITY, f32::min)
                * 2.0) as i32;
            vec![
                (fmin * 2.0) as i32,
                (fmax_neg * 2.0) as i32,
                act.iter().map(|&i| u(i)).min().unwrap(),
                act.iter().map(|&i| ch(i)).max().unwrap(),
                (act.iter().map(|&i| ul(i)).min().unwrap() >> 20) as i32,
                act[..=k].iter().map(|&i| ch(i)).min().unwrap(),
                act[..k].iter().map(|&i| u(i)).max().unwrap_or(0),
                r7,
            ]
        })
        .collect()
}

/// Reductions and scans of `float`, `uchar`, `char` and `ulong` under a condition on a loaded
/// value (masked with each type's identity: `+INFINITY` for a float minimum, 255 for a `uchar`
/// one, -128 for a `char` maximum, `ULONG_MAX`), also under `-cl-fast-relaxed-math` and
/// `-cl-finite-math-only`, where an infinite identity could be folded away.
#[test]
fn extended_types_under_data_conditions_with_fast_math() {
    let test = "extended_types_under_data_conditions_with_fast_math";
    in_child(test, &[], || {
        let q = common::queue();
        for options in ["", "-cl-fast-relaxed-math", "-cl-finite-math-only"] {
            let p = build(&q, TYPES_SRC, options);
            check_all(&q, &p, &[("masked", &masked_types)], &WIDE, (10, 0));
        }
    });
}

const PARTIALS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
#define W 8
kernel void partials(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    int v = x[g] % 50;
    local int part[64];
    uint sg = get_sub_group_id(), lane = get_sub_group_local_id();
    int ra = sub_group_reduce_add(v);
    if (lane == 0) part[sg] = ra;
    barrier(CLK_LOCAL_MEM_FENCE);
    int tot = 0;
    for (uint i = 0; i < get_num_sub_groups(); i++) tot += part[i];
    out[W*g] = sg; out[W*g+1] = lane;
    out[W*g+2] = tot;
    out[W*g+3] = sub_group_scan_inclusive_add(v);
    out[W*g+4] = sub_group_shuffle(v, (lane + 1) % get_sub_group_size());
    out[W*g+5] = get_sub_group_size();
    out[W*g+6] = get_num_sub_groups() * 100 + get_enqueued_num_sub_groups();
    out[W*g+7] = sub_group_broadcast(v, get_sub_group_size() - 1);
}
"#;

/// The classic two-level reduction (each sub-group's lane 0 writes its partial to
/// `local int part[get_sub_group_id()]`, a barrier, every work-item sums
/// `get_num_sub_groups()` partials), plus a scan, a rotating shuffle, a broadcast of the last
/// lane and the counts, in 2-D and 3-D work-groups whose size is not a multiple of the
/// sub-group size ((8, 3), (5, 5), (3, 3, 3), (7, 2)). The work-group total is checked against
/// the host's sum over the work-group.
#[test]
fn per_sub_group_partials_in_2d_and_3d_groups() {
    let test = "per_sub_group_partials_in_2d_and_3d_groups";
    in_child(test, &[], || {
        let q = common::queue();
        let p = build(&q, PARTIALS_SRC, "");
        let shapes: [(&[usize], &[usize]); 5] = [
            (&[16, 6], &[8, 3]),
            (&[10, 10], &[5, 5]),
            (&[6, 6, 6], &[3, 3, 3]),
            (&[7, 2], &[7, 2]),
            (&[4, 4, 4], &[2, 2, 4]),
        ];
        let mut bad = Vec::new();
        for (global, local) in shapes {
            let total: usize = global.iter().product();
            let x = common::values(total, 1);
            let group_of = |g: usize| {
                let (mut rest, mut group) = (g, Vec::new());
                for (dim, l) in global.iter().zip(local) {
                    group.push(rest % dim / l);
                    rest /= dim;
                }
                group
            };
            let mut sums: BTreeMap<Vec<usize>, i32> = BTreeMap::new();
            for (g, xv) in x.iter().enumerate() {
                *sums.entry(group_of(g)).or_default() += xv % 50;
            }
            let model = |s: &Sg| {
                let v = s.v();
                let n = v.len();
                let tot = sums[&group_of(s.gs[0])];
                (0..n)
                    .map(|l| {
                        vec![
                            tot,
                            v[..=l].iter().sum(),
                            v[(l + 1) % n],
                            n as i32,
                            s.count * 101,
                            v[n - 1],
                        ]
                    })
                    .collect()
            };
            bad.extend(check(&q, &p, "partials", (global, local), 8, 0, &model));
        }
        assert!(
            bad.is_empty(),
            "{}:\n{}",
            device_line(q.device()),
            bad.join("\n")
        );
    });
}

const SHAPES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4

/* ?: with a lane-dependent condition nested in built-in calls' arguments. */
kernel void tern_args(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; uint lane = get_sub_group_local_id();
    out[W*g+2] = max(lane < 3u ? sub_group_reduce_add(v) : -100, sub_group_broadcast(v, 0u));
    out[W*g+3] = clamp(lane % 2u ? sub_group_reduce_max(v) : sub_group_reduce_min(v), -30, 30);
    REC;
}

/* Helpers taking local and global pointers and calling collectives. */
void stage(local int *t, int v) { t[get_local_id(0)] = sub_group_reduce_add(v); }
kernel void local_helper(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; local int t[128];
    stage(t, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[W*g+2] = t[get_local_id(0)]; out[W*g+3] = t[get_local_id(0)] - sub_group_reduce_add(v);
    REC;
}
void put(global int *p, int v) { *p = sub_group_scan_exclusive_add(v); }
kernel void global_ptr_helper(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    put(out + W*g + 2, v);
    put(&out[W*g + 3], 1);
    REC;
}

/* Work-group barriers, sub_group_barrier and collectives interleaved. */
kernel void barrier_mix(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; local int t[128]; uint lid = get_local_id(0);
    t[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int w = t[(lid + 1) % get_local_size(0)];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    int s = sub_group_reduce_add(w);
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] = s;
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[W*g+2] = s; out[W*g+3] = t[lid] - s;
    REC;
}

/* Kernels stamped out by a macro with ##-pasted built-in names. */
#define MAKE(NAME, OP) kernel void NAME(global const int *x, global int *out, int n) { \
    size_t g = get_global_id(0); int v = x[g] % 50; \
    out[W*g+2] = sub_group_reduce_##OP(v); out[W*g+3] = sub_group_scan_inclusive_##OP(v); REC; }
MAKE(macro_max, max)
MAKE(macro_min, min)

/* Variants chosen by build options. */
kernel void variant(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
#ifdef USE_SCAN
    out[W*g+2] = sub_group_scan_inclusive_add(v);
#else
    out[W*g+2] = sub_group_reduce_add(v);
#endif
#if defined(cl_khr_subgroups) && (FACTOR > 1)
    out[W*g+3] = FACTOR * sub_group_any(v > 45);
#else
    out[W*g+3] = -3;
#endif
    REC;
}

/* A loop bounded by a kernel argument, left by a vote. */
kernel void vote_break(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int s = 0, i = 0;
    for (i = 0; i < n; i++) {
        if (sub_group_all(v < 10 * i)) break;
        s += sub_group_reduce_max(v - i);
    }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}

/* switch on a kernel argument (a fallthrough into a broadcast; a reduction there is
   uniform_condition_collectives' finding), a do-while with a uniform continue,
   broadcasts from a uniform non-constant lane, uniform early returns. */
kernel void switch_arg(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1, s = -1;
    switch (n) {
    case 0: r = sub_group_reduce_add(v); break;
    case 5: r = 2 * n;
    case 6: s = sub_group_broadcast(v, 1u % get_sub_group_size()); break;
    default: r = -5;
    }
    out[W*g+2] = r; out[W*g+3] = s; REC;
}
kernel void do_continue(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    int i = 0, s = 0;
    do {
        i++;
        if (i == 2) continue;
        s += sub_group_reduce_add(v * i);
    } while (i < n);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
kernel void lanes(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    out[W*g+2] = sub_group_broadcast(v, get_sub_group_size() - 1);
    out[W*g+3] = sub_group_broadcast(v, (uint)n % get_sub_group_size());
    REC;
}
kernel void group_return(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    REC; out[W*g+2] = -1; out[W*g+3] = -1;
    if (get_group_id(0) == 1) return;
    if (get_local_size(0) > 100 || get_num_groups(0) == 1000 || get_work_dim() == 3) return;
    out[W*g+2] = sub_group_reduce_add(v); out[W*g+3] = 0;
}
"#;

/// Shapes the other suites do not run, right everywhere: `?:` nested in built-in calls'
/// arguments, helpers taking `local`/`global` pointers, barriers and `sub_group_barrier`
/// between collectives, `##`-made kernels, `#ifdef`/`#if` variants from `-D` options, a vote
/// `break` in a loop bounded by a kernel argument, `switch` on a kernel argument with a
/// fallthrough, a `do` loop with a uniform `continue`, broadcasts from a uniform non-constant
/// lane, early returns on the group id and local size.
#[test]
fn helpers_macros_variants_and_uniform_flow() {
    let test = "helpers_macros_variants_and_uniform_flow";
    in_child(test, &[], || {
        let q = common::queue();
        let p = build(&q, SHAPES_SRC, "-DUSE_SCAN -DFACTOR=3");
        let sum = |v: &[i32]| v.iter().sum::<i32>();
        let tern_args = |s: &Sg| {
            let v = s.v();
            let (mx, mn) = (*v.iter().max().unwrap(), *v.iter().min().unwrap());
            (0..v.len())
                .map(|l| {
                    let a = if l < 3 { sum(&v) } else { -100 };
                    let b = if l % 2 == 1 { mx } else { mn };
                    vec![a.max(v[0]), b.clamp(-30, 30)]
                })
                .collect()
        };
        let local_helper = |s: &Sg| s.all(vec![sum(&s.v()), 0]);
        let global_ptr = |s: &Sg| {
            let v = s.v();
            (0..v.len()).map(|l| vec![sum(&v[..l]), l as i32]).collect()
        };
        let barrier_mix = |s: &Sg| {
            let l = s.local[0];
            let x = common::values(s.gs.iter().max().unwrap() + l + 1, 1);
            let w: Vec<i32> = (s.gs.iter())
                .map(|&g| x[g / l * l + (g % l + 1) % l] % 50)
                .collect();
            s.all(vec![sum(&w), 0])
        };
        let macro_max = |s: &Sg| {
            let v = s.v();
            let m = *v.iter().max().unwrap();
            (0..v.len())
                .map(|l| vec![m, *v[..=l].iter().max().unwrap()])
                .collect()
        };
        let macro_min = |s: &Sg| {
            let v = s.v();
            let m = *v.iter().min().unwrap();
            (0..v.len())
                .map(|l| vec![m, *v[..=l].iter().min().unwrap()])
                .collect()
        };
        let variant = |s: &Sg| {
            let v = s.v();
            let any = 3 * i32::from(v.iter().any(|&e| e > 45));
            (0..v.len()).map(|l| vec![sum(&v[..=l]), any]).collect()
        };
        let vote_break = |s: &Sg| {
            let v = s.v();
            let (mut sum, mut i) = (0, 0);
            while i < s.n {
                if v.iter().all(|&e| e < 10 * i) {
                    break;
                }
                sum += v.iter().map(|&e| e - i).max().unwrap();
                i += 1;
            }
            s.all(vec![sum, i])
        };
        let switch_arg = |s: &Sg| {
            let v = s.v();
            assert_eq!(s.n, 5);
            s.all(vec![10, v[1 % v.len()]])
        };
        let do_continue = |s: &Sg| {
            let v = s.v();
            let total = (1..=s.n).filter(|&i| i != 2).map(|i| sum(&v) * i).sum();
            s.all(vec![total, s.n])
        };
        let lanes = |s: &Sg| {
            let v = s.v();
            s.all(vec![v[v.len() - 1], v[s.n as usize % v.len()]])
        };
        let group_return = |s: &Sg| match s.group() {
            1 => s.all(vec![-1, -1]),
            _ => s.all(vec![sum(&s.v()), 0]),
        };
        check_all(
            &q,
            &p,
            &[
                ("tern_args", &tern_args),
                ("local_helper", &local_helper),
                ("global_ptr_helper", &global_ptr),
                ("barrier_mix", &barrier_mix),
                ("macro_max", &macro_max),
                ("macro_min", &macro_min),
                ("variant", &variant),
                ("vote_break", &vote_break),
                ("switch_arg", &switch_arg),
                ("do_continue", &do_continue),
                ("lanes", &lanes),
                ("group_return", &group_return),
            ],
            &WIDE,
            (4, 5),
        );
    });
}

const REQD_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#define W 7
#define BODY \
    size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1); \
    int v = x[g] % 50; \
    out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id(); \
    out[W*g+2] = sub_group_reduce_add(v); \
    out[W*g+3] = sub_group_scan_inclusive_max(v); \
    out[W*g+4] = get_sub_group_size() * 100 + get_num_sub_groups(); \
    out[W*g+5] = get_max_sub_group_size(); \
    out[W*g+6] = intel_sub_group_shuffle(v, (get_sub_group_local_id() + 1) % get_sub_group_size());
__attribute__((intel_reqd_sub_group_size(4))) __attribute__((reqd_work_group_size(12, 1, 1)))
kernel void s4_12(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(8))) __attribute__((reqd_work_group_size(4, 3, 1)))
kernel void s8_4x3(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(4))) __attribute__((reqd_work_group_size(5, 1, 1)))
kernel void s4_5(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(16))) __attribute__((reqd_work_group_size(3, 3, 1)))
kernel void s16_3x3(global const int *x, global int *out, int n) { BODY }
"#;

/// `intel_reqd_sub_group_size(S)` together with `reqd_work_group_size`, 1-D and 2-D, with
/// partial last sub-groups (12 = 3 x 4, 4 x 3 = 8 + 4, 5 = 4 + 1, 3 x 3 = 9 < 16).
#[test]
fn required_sizes_with_required_work_group_sizes() {
    let test = "required_sizes_with_required_work_group_sizes";
    in_child(test, &[], || {
        let q = common::queue();
        let p = build(&q, REQD_SRC, "");
        let mut bad = Vec::new();
        for (name, size, global, local) in [
            ("s4_12", 4, &[24usize][..], &[12usize][..]),
            ("s8_4x3", 8, &[8, 6], &[4, 3]),
            ("s4_5", 4, &[15], &[5]),
            ("s16_3x3", 16, &[6, 6], &[3, 3]),
        ] {
            let group: usize = local.iter().product();
            let model = |s: &Sg| {
                let v = s.v();
                let n = v.len();
                let count = group.div_ceil(size) as i32;
                (0..n)
                    .map(|l| {
                        vec![
                            v.iter().sum(),
                            *v[..=l].iter().max().unwrap(),
                            n as i32 * 100 + count,
                            size.min(group) as i32,
                            v[(l + 1) % n],
                        ]
                    })
                    .collect()
            };
            match p.kernel(name) {
                Err(Error::FeatureNotSupported { .. }) => {
                    println!(
                        "{}: {name}: size {size} not offered",
                        device_line(q.device())
                    );
                }
                _ => bad.extend(check(&q, &p, name, (global, local), 7, 0, &model)),
            }
        }
        assert!(
            bad.is_empty(),
            "{}:\n{}",
            device_line(q.device()),
            bad.join("\n")
        );
    });
}

const WRITES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void direct(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) { v = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
void set_one(int *p) { *p = 1; }
kernel void helper_write(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) { set_one(&v); r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void comma(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) r = (v = 1, sub_group_reduce_add(v));
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void post_increment(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int k = 1;
    if (sub_group_any(v > 40)) r = sub_group_reduce_add(k++);
    out[W*g+2] = r; out[W*g+3] = k; REC;
}
typedef struct { int a; int b; } pair_t;
kernel void member(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); pair_t p; p.a = x[g] % 50; p.b = 0; int r = -1;
    if (sub_group_any(p.a > 40)) { p.a = 1; r = sub_group_reduce_add(p.a); }
    out[W*g+2] = r; out[W*g+3] = p.a; REC;
}
"#;

/// A collective under a vote whose operand is written between the vote and the call (directly,
/// through a helper taking its address, by a comma operator, a struct member) or has a side
/// effect (`k++`): where collectives are work-group barriers it cannot be computed ahead, and
/// is refused with a typed error naming why; elsewhere it runs, checked against the host.
#[test]
fn writes_between_a_vote_and_its_collective() {
    let test = "writes_between_a_vote_and_its_collective";
    in_child(test, &[], || {
        let q = common::queue();
        let d = q.device();
        let p = build(&q, WRITES_SRC, "");
        let one = |s: &Sg| {
            let v = s.v();
            match v.iter().any(|&e| e > 40) {
                true => s.all(vec![v.len() as i32, 1]),
                false => v.iter().map(|&e| vec![-1, e]).collect(),
            }
        };
        let inc = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 2]),
            false => s.all(vec![-1, 1]),
        };
        for (name, why) in [
            ("direct", "written before the call"),
            ("helper_write", "written before the call"),
            ("comma", "written before the call"),
            ("post_increment", "not safe to evaluate everywhere"),
            ("member", "written before the call"),
        ] {
            if d.needs_group_uniform_collectives() {
                match p.kernel(name) {
                    Err(e @ Error::Unsupported { .. }) => {
                        let text = e.to_string();
                        assert!(text.contains(why), "{}: {name}: {text}", device_line(d));
                        println!("{}: {name}: refused: {text}", device_line(d));
                    }
                    r => panic!("{}: {name}: {:?}", device_line(d), r.map(|_| ())),
                }
            } else {
                let model: &Model = if name == "post_increment" { &inc } else { &one };
                check_all(&q, &p, &[(name, model)], &WIDE, (4, 0));
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Findings: each fails today where its doc comment says.
// ---------------------------------------------------------------------------------------------

/// Where the finding tests may hang (a collective PoCL runs in part of a work-group), each
/// wait gives up after this many seconds (`CLGROUPS_TIMEOUT`) and the launch reports it.
const FINDING_ENV: [(&str, &str); 1] = [("CLGROUPS_TIMEOUT", "30")];

const UNIFORM_SRC: &str = r#"
#include <clgroups/subgroup.h>
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void scan_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n == 3) r = sub_group_scan_exclusive_add(1);
    out[W*g+2] = r; REC;
}
kernel void scan_ternary(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0);
    int r = n == 3 ? sub_group_scan_inclusive_add(2) : 5;
    out[W*g+2] = r; REC;
}
kernel void layer_scan_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n > 2) r = sg_inclusive_scan_add(1);
    out[W*g+2] = r; REC;
}
kernel void reduce_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n == 3) r = sub_group_reduce_max(x[g] % 50);
    out[W*g+2] = r; REC;
}
kernel void reduce_switch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    switch (n) {
    case 3: r = sub_group_reduce_max(x[g] % 50); break;
    default: r = -5;
    }
    out[W*g+2] = r; REC;
}
"#;

/// **Finding: a scan or reduction under a condition on a kernel argument (`if (n == 3) r =
/// sub_group_scan_exclusive_add(1);`, `n == 3 ? scan : 5`, `switch (n)`, the layer's
/// `sg_inclusive_scan_add` too) gives wrong values, crashes or hangs on the emulated backend.**
/// Every work-item reaches the collective (the condition is a kernel argument), so the kernel
/// is valid and the docs say such conditions are accepted.
///
/// - PoCL 3.1 (`emulated`): `scan_if` gives 0 on every lane and `get_sub_group_local_id()`
///   after it reads 0 on every lane; `scan_ternary` takes the `5` branch; `reduce_if` and
///   `reduce_switch` (no scan: the reduction's loop) segfault in work-groups of 33 and hang
///   in work-groups of 9 (a last sub-group of one work-item); right in groups of 12.
/// - PoCL 6.0 `emulated` forced: the scans give lane 0's value on every lane, the lanes read 0.
/// - PoCL 6.0 `khr`: right (native collectives).
///
/// The cause is PoCL's (3.1 and 6.0): a barrier inside a uniform conditional region followed
/// by a loop whose trip count differs between work-items is miscompiled, without sub-groups:
///
/// ```c
/// kernel void p(global int *out, int n) {
///   local ulong s[64]; uint lid = get_local_id(0); int r = -1;
///   if (n == 3) {
///      s[lid] = 1; barrier(CLK_LOCAL_MEM_FENCE);
///      uint l = lid % 8; int acc = 0;
///      for (uint i = 0; i < l; ++i) acc += (int)s[lid - l + i];
///      r = acc;
///   }
///   out[2 * lid] = r; out[2 * lid + 1] = lid % 8;  /* 0 everywhere, for both */
/// }
/// ```
///
/// The emulated scans and reductions (`cl/clgroups/detail/sg_emulated.h`,
/// `CLG_EMU_ALGORITHMS`/`CLG_EMU_REDUCE`: `for (i < l)` / `for (i < n)` after
/// `clg_emu_publish`'s barriers) are exactly that shape. A loop of uniform trip count
/// (`for (i = 0; i < CLG_SUB_GROUP_SIZE; i++) if (i < l) ...`) ran right in the same position.
#[test]
#[ignore = "finding: collectives under a kernel-argument condition are wrong/crash/hang on emulated (PoCL's conditional-barrier miscompile)"]
fn collectives_under_a_uniform_argument_condition() {
    let test = "collectives_under_a_uniform_argument_condition";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, UNIFORM_SRC, "");
        let lane =
            |f: fn(usize) -> i32| move |s: &Sg| (0..s.xs.len()).map(|l| vec![f(l)]).collect();
        let scan_if = lane(|l| l as i32);
        let scan_ternary = lane(|l| 2 * (l as i32 + 1));
        let layer = lane(|l| l as i32 + 1);
        let max = |s: &Sg| s.all(vec![*s.v().iter().max().unwrap()]);
        let shapes: [(&[usize], &[usize]); 3] = [(&[24], &[12]), (&[99], &[33]), (&[18], &[9])];
        check_all(
            &q,
            &p,
            &[
                ("scan_if", &scan_if),
                ("scan_ternary", &scan_ternary),
                ("layer_scan_if", &layer),
                ("reduce_if", &max),
                ("reduce_switch", &max),
            ],
            &shapes,
            (3, 3),
        );
    });
}

const POINTERS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void vote_alias(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int *pv = &v;
    if (sub_group_any(v > 40)) { *pv = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void data_alias(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -7; int *pv = &v;
    if (x[g] > 0) { *pv = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
"#;

/// **Finding: a collective moved ahead of its `if` misses a write through a pointer between
/// the condition and the call, silently.** `int *pv = &v; if (sub_group_any(v > 40)) { *pv =
/// 1; r = sub_group_reduce_add(v); }` gives the sum of the old `v` (e.g. 37 for 8 ones); the
/// same with a direct `v = 1;` is refused ("its operand reads `v`, written before the call"),
/// so the check sees names, not stores through pointers (`transform/hoist.rs`). The same for a
/// condition on a loaded value (`if (x[g] > 0) { *pv = 1; r = sub_group_reduce_add(v); }`,
/// `transform/nu_mask.rs`): 65 where 4 work-items take the branch. Wrong on PoCL 3.1, PoCL 6.0
/// `khr` and `emulated` (both rewrite on PoCL's CPU devices). Expected: the write seen (or the
/// kernel refused, as for the direct write).
#[test]
#[ignore = "finding: writes through a pointer between a vote/data condition and its collective are missed when the collective is moved ahead"]
fn writes_through_pointers_before_a_moved_collective() {
    let test = "writes_through_pointers_before_a_moved_collective";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, POINTERS_SRC, "");
        let vote = |s: &Sg| {
            let v = s.v();
            match v.iter().any(|&e| e > 40) {
                true => s.all(vec![v.len() as i32, 1]),
                false => v.iter().map(|&e| vec![-1, e]).collect(),
            }
        };
        let data = |s: &Sg| {
            let taken = s.xs.iter().filter(|&&x| x > 0).count() as i32;
            (s.xs.iter())
                .map(|&x| {
                    if x > 0 {
                        vec![taken, 1]
                    } else {
                        vec![-7, x % 50]
                    }
                })
                .collect()
        };
        check_all(
            &q,
            &p,
            &[("vote_alias", &vote), ("data_alias", &data)],
            &WIDE,
            (4, 0),
        );
    });
}

const CONDITION_WRITE_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void assign_in_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int w = 0;
    if (sub_group_any(v > 40) && (w = 1)) r = sub_group_reduce_add(w);
    out[W*g+2] = r; out[W*g+3] = w; REC;
}
"#;

/// **Finding: a collective moved ahead of an `if` whose condition assigns its operand reads
/// the value from before the assignment, silently.** `if (sub_group_any(v > 40) && (w = 1)) r =
/// sub_group_reduce_add(w);` gives 0 (the sum of `w = 0`) where it should give the sub-group's
/// size. The check for writes between the `if` and the call (`transform/hoist.rs`) looks at
/// the statements in between, not at the condition itself. Wrong on PoCL 3.1, PoCL 6.0 `khr`
/// and `emulated`.
#[test]
#[ignore = "finding: an assignment in a vote condition is missed by the collective moved ahead of it"]
fn assignment_in_a_vote_condition() {
    let test = "assignment_in_a_vote_condition";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, CONDITION_WRITE_SRC, "");
        let model = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 1]),
            false => s.all(vec![-1, 0]),
        };
        check_all(&q, &p, &[("assign_in_condition", &model)], &WIDE, (4, 0));
    });
}

const HIDDEN_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
#define VOTE(c) if (sub_group_any((c) > 40)) r = sub_group_reduce_add(1); out[W*g+2] = r; REC
kernel void array_element(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2]; a[0] = x[g] % 50; a[1] = 0;
    VOTE(a[0]);
}
kernel void array_initializer(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2] = { x[g] % 50, 0 };
    VOTE(a[0]);
}
int val(global const int *x) { return x[get_global_id(0)] % 50; }
kernel void helper_value(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    VOTE(val(x));
}
uint my_lid(void) { return get_local_id(0); }
kernel void helper_id(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    VOTE((int)my_lid() * 4);
}
void get(int *o, global const int *x) { *o = x[get_global_id(0)] % 50; }
kernel void out_parameter(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t = 0; get(&t, x);
    VOTE(t);
}
kernel void pointer_into_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[4] = {0, 0, 0, 0}; int *p = a + 1; *p = x[g] % 50;
    VOTE(a[1]);
}
kernel void memcpy_copy(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t; __builtin_memcpy(&t, &x[g], 4); t %= 50;
    VOTE(t);
}
kernel void vote_in_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1; int f[1];
    f[0] = sub_group_any(v > 40);
    if (f[0]) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
"#;

/// **Finding: a vote whose work-item values reach it through a private array, a helper
/// function's return value or out-parameter, pointer arithmetic or `__builtin_memcpy` is taken
/// as uniform in the work-group, so the collective under it is left in place, silently.**
/// `int a[2]; a[0] = x[g] % 50; if (sub_group_any(a[0] > 40)) r = sub_group_reduce_add(1);`
/// is valid OpenCL (the vote is uniform in each sub-group) but splits the work-group; where
/// collectives are work-group barriers the branch then runs in sub-groups that did not take it
/// (r = 4 where it should stay -1), and PoCL 3.1 segfaults in work-groups of 33. The same
/// kernel with a scalar (`int t = x[g] % 50`), a struct member, a vector component or a
/// pointer to a scalar is moved ahead and right. Also a helper returning `get_local_id(0)`
/// (`uint my_lid(void)`), and a vote stored in an array (`f[0] = sub_group_any(...); if
/// (f[0])`). Wrong on PoCL 3.1 and PoCL 6.0 `emulated` forced; PoCL 6.0 `khr` is right here
/// only because its sub-group is the whole work-group. Cause (guess): the work-item-value
/// tracking (`transform/divergence.rs`, `transform/sg_uniform.rs`) follows assignments to
/// plain names only, and treats calls of user functions as uniform.
#[test]
#[ignore = "finding: work-item values through arrays/helpers/out-parameters hide a vote's divergence; collective left under a work-group-divergent branch"]
fn work_item_values_through_arrays_and_helpers() {
    let test = "work_item_values_through_arrays_and_helpers";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, HIDDEN_SRC, "");
        let model = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32]),
            false => s.all(vec![-1]),
        };
        let by_id = |s: &Sg| {
            let local = s.local[0];
            match s.gs.iter().any(|&g| (g % local) as i32 * 4 > 40) {
                true => s.all(vec![s.xs.len() as i32]),
                false => s.all(vec![-1]),
            }
        };
        check_all(
            &q,
            &p,
            &[
                ("array_element", &model),
                ("array_initializer", &model),
                ("helper_value", &model),
                ("helper_id", &by_id),
                ("out_parameter", &model),
                ("pointer_into_array", &model),
                ("memcpy_copy", &model),
                ("vote_in_array", &model),
            ],
            &[(&[96], &[12])],
            (3, 0),
        );
    });
}

const SIZE_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle_relative : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void size_branch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (get_sub_group_size() == 8) r = sub_group_reduce_add(v);
    out[W*g+2] = r; REC;
}
kernel void broadcast_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int s = 0;
    for (uint i = 0; i < get_sub_group_size(); i++) s += sub_group_broadcast(v, i) * (int)(i + 1);
    out[W*g+2] = s; REC;
}
kernel void shuffle_up_scan(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int t = x[g] % 50;
    for (uint off = 1; off < get_sub_group_size(); off <<= 1) {
        int o = sub_group_shuffle_up(t, off);
        if (get_sub_group_local_id() >= off) t += o;
    }
    out[W*g+2] = t; REC;
}
"#;

/// **Finding: branches and loops on `get_sub_group_size()` — the classic `for (i = 0; i <
/// get_sub_group_size(); i++) s += sub_group_broadcast(v, i);` and the shuffle-up scan `for
/// (off = 1; off < get_sub_group_size(); off <<= 1)` — are taken as uniform in the work-group,
/// but a work-group that is not a multiple of the sub-group size has a partial last sub-group
/// of another size.** Valid OpenCL; with work-groups of 12 (sub-groups of 8 and 4) the loops
/// run different trip counts per sub-group and, where collectives are work-group barriers,
/// give wrong values (PoCL 6.0 `emulated`: `broadcast_loop` 167 where -13, even in the full
/// sub-group; `size_branch` writes 68 in the sub-group of 4) or crash (PoCL 3.1: segfault).
/// PoCL 6.0 `khr` is right (one sub-group per work-group there). Right in work-groups that are
/// multiples of 8. Expected: run in lockstep (as for loops bounded by a reduction) or refused.
#[test]
#[ignore = "finding: loops/branches on get_sub_group_size() in work-groups with a partial sub-group are wrong or crash on emulated"]
fn branches_and_loops_on_the_sub_group_size() {
    let test = "branches_and_loops_on_the_sub_group_size";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SIZE_SRC, "");
        let size_branch = |s: &Sg| {
            let v = s.v();
            s.all(vec![if v.len() == 8 { v.iter().sum() } else { -1 }])
        };
        let broadcast_loop = |s: &Sg| {
            let v = s.v();
            s.all(vec![(0..v.len()).map(|i| v[i] * (i as i32 + 1)).sum()])
        };
        let scan = |s: &Sg| {
            let v = s.v();
            (0..v.len()).map(|l| vec![v[..=l].iter().sum()]).collect()
        };
        check_all(
            &q,
            &p,
            &[
                ("size_branch", &size_branch),
                ("broadcast_loop", &broadcast_loop),
                ("shuffle_up_scan", &scan),
            ],
            &[(&[24], &[12]), (&[33], &[11])],
            (3, 0),
        );
    });
}

const LANE_CONDITIONS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_vote : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
#define UNDER(c) int v = x[g] % 50; int r = -1000; if (c) r = sub_group_non_uniform_reduce_add(v); out[W*g+2] = r; REC
kernel void under_scan(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_scan_exclusive_add(1) < 2);
}
kernel void under_inverse_ballot(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_inverse_ballot((uint4)(5u, 0u, 0u, 0u)));
}
kernel void under_elect(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_elect());
}
"#;

/// **Finding: a `non_uniform` reduction under a condition made of a lane-varying collective
/// (`if (sub_group_elect())`, `if (sub_group_scan_exclusive_add(1) < 2)`, `if
/// (sub_group_inverse_ballot(...))`) is not masked: the condition is taken as uniform.**
/// The same reduction under `get_sub_group_local_id() == 0`, a shuffle or a ballot bit
/// is masked and right. `sub_group_elect()` — the canonical leader test — segfaults the
/// process on PoCL 3.1, PoCL 6.0 `khr` and `emulated`; the scan condition gives every lane
/// the sum over the whole sub-group (38 where lanes 0 and 1 should get 29 and the others keep
/// -1000) on all three; the inverse ballot is wrong on PoCL 6.0 and segfaults PoCL 3.1. Cause
/// (guess): `transform/sg_uniform.rs` counts every sub-group built-in's result as uniform in
/// the sub-group; elect, scans, inverse ballots, ballot scans and shuffles are per lane.
#[test]
#[ignore = "finding: lane-varying collectives (elect, scans, inverse_ballot) as conditions are taken as uniform: wrong values or segfault"]
fn non_uniform_collectives_under_lane_varying_conditions() {
    let test = "non_uniform_collectives_under_lane_varying_conditions";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, LANE_CONDITIONS_SRC, "");
        let over = |lanes: fn(usize) -> bool| {
            move |s: &Sg| {
                let v = s.v();
                let sum: i32 = (0..v.len()).filter(|&l| lanes(l)).map(|l| v[l]).sum();
                (0..v.len())
                    .map(|l| vec![if lanes(l) { sum } else { -1000 }])
                    .collect()
            }
        };
        let scan = over(|l| l < 2);
        let inverse = over(|l| l == 0 || l == 2);
        let elect = over(|l| l == 0);
        check_all(
            &q,
            &p,
            &[
                ("under_scan", &scan),
                ("under_inverse_ballot", &inverse),
                ("under_elect", &elect),
            ],
            &[(&[32], &[16]), (&[24], &[12])],
            (3, 0),
        );
    });
}

const IDS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
uint my_lid(void) { return get_local_id(0); }
kernel void helper_id(global const int *x, global int *out, int n) {
    int r = -1;
    if (my_lid() < 4u) r = sub_group_reduce_add(1);
    out[get_global_id(0)] = r;
}
kernel void array_id(global const int *x, global int *out, int n) {
    int r = -1; uint a[1]; a[0] = get_local_id(0);
    if (a[0] < 4u) r = sub_group_reduce_add(1);
    out[get_global_id(0)] = r;
}
"#;

/// **Finding: a collective under a condition on a work-item id that reaches it through a
/// helper (`uint my_lid(void) { return get_local_id(0); } if (my_lid() < 4u) ...`) or a
/// private array (`a[0] = get_local_id(0); if (a[0] < 4u) ...`) is not refused** where
/// collectives are work-group barriers (the docs promise `Error::Unsupported` for conditions
/// on ids "or a variable computed from one"). Launched, it hangs PoCL 6.0 (`khr` and
/// `emulated`: killed after 120 s) and segfaults PoCL 3.1. The test only creates the kernels
/// (nothing is launched).
#[test]
#[ignore = "finding: id conditions through a helper or an array are not refused (launch hangs PoCL 6.0, segfaults PoCL 3.1)"]
fn id_conditions_through_helpers_and_arrays_are_refused() {
    let test = "id_conditions_through_helpers_and_arrays_are_refused";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let d = q.device();
        if !d.needs_group_uniform_collectives() {
            println!(
                "{}: not run: collectives are not work-group barriers",
                device_line(d)
            );
            return;
        }
        let p = build(&q, IDS_SRC, "");
        let mut bad = Vec::new();
        for name in ["helper_id", "array_id"] {
            match p.kernel(name) {
                Err(e @ Error::Unsupported { .. }) => println!("{name}: refused: {e}"),
                r => bad.push(format!("{name}: {:?}", r.map(|_| "created (would run)"))),
            }
        }
        assert!(bad.is_empty(), "{}:\n{}", device_line(d), bad.join("\n"));
    });
}

const SWITCH_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void vote_switch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    switch (sub_group_any(v > 40)) { case 1: r = sub_group_reduce_add(1); break; default: r = -1; }
    out[W*g+2] = r; REC;
}
"#;

/// **Finding (a valid kernel refused, with a wrong reason): a collective in a `switch` on a
/// vote** (`switch (sub_group_any(v > 40)) { case 1: r = sub_group_reduce_add(1); break; }`,
/// the same as the `if` form, which runs) is refused where collectives are work-group barriers
/// with "not moved ahead: it runs in a loop" — there is no loop (the `switch`'s `break` is
/// probably read as a loop's). A `switch` on a loaded value (`switch (x[g] > 0)`) is refused
/// with the same wrong reason. PoCL 3.1, PoCL 6.0 `khr` and `emulated`.
#[test]
#[ignore = "finding: switch on a vote refused as 'it runs in a loop'"]
fn switch_on_a_vote() {
    let test = "switch_on_a_vote";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SWITCH_SRC, "");
        let model = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32]),
            false => s.all(vec![-1]),
        };
        check_all(&q, &p, &[("vote_switch", &model)], &WIDE, (3, 0));
    });
}

const MACRO_FLOW_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
#define LOOP_WHILE_ANY while (sub_group_any(i < v))
kernel void object_macro_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    LOOP_WHILE_ANY { s += sub_group_reduce_add(1); i++; }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
#define UNTIL_ALL(c, body) while (!sub_group_all(c)) { body; }
kernel void function_macro_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    UNTIL_ALL(i >= v, s += sub_group_reduce_add(1); i++);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
#define IF_ANY(c) if (sub_group_any(c))
kernel void function_macro_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    IF_ANY(v > 40) r = sub_group_reduce_add(1);
    out[W*g+2] = r; out[W*g+3] = 0; REC;
}
"#;

/// **Finding: a vote loop or a vote `if` written by a macro runs unchecked, silently wrong.**
/// `#define LOOP_WHILE_ANY while (sub_group_any(i < v))` then `LOOP_WHILE_ANY { s +=
/// sub_group_reduce_add(1); i++; }`, the same through `#define UNTIL_ALL(c, body) while
/// (!sub_group_all(c)) { body; }`, and `#define IF_ANY(c) if (sub_group_any(c))` are valid
/// OpenCL that the same code without the macro runs right (in lockstep, or moved ahead); with
/// the macro, neither lockstep nor the move applies and nothing is refused: PoCL 3.1 and PoCL
/// 6.0 `emulated` give 40 / 5 where 48 / 6 (the loop), 4 where -1 (the `if`, in a sub-group
/// that did not take it), and PoCL 3.1 segfaults in work-groups of 33. PoCL 6.0 `khr` is
/// right (one sub-group per work-group). Where the
/// macro is function-like and used in the condition only (`while (ANY_BELOW(i, v))`) or in
/// the body (`BODY_SUM(s)`), the kernel is refused instead (naming the macro as the collective,
/// and `__clg_l2`, an internal name, as the condition). Cause (guess): `transform/lockstep.rs`
/// and `transform/hoist.rs` read the kernel's tokens before macro expansion; a vote or loop
/// keyword inside a macro's replacement list is not seen.
#[test]
#[ignore = "finding: vote loops / vote ifs written by macros run unchecked on emulated: wrong values"]
fn vote_flow_written_by_macros() {
    let test = "vote_flow_written_by_macros";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, MACRO_FLOW_SRC, "");
        let loops = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap();
            s.all(vec![most * s.xs.len() as i32, most])
        };
        let branch = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 0]),
            false => s.all(vec![-1, 0]),
        };
        check_all(
            &q,
            &p,
            &[
                ("object_macro_loop", &loops),
                ("function_macro_loop", &loops),
                ("function_macro_if", &branch),
            ],
            &WIDE,
            (4, 0),
        );
    });
}

const GOTO_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void goto_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
again:
    s += sub_group_reduce_add(1);
    i++;
    if (sub_group_any(i < v)) goto again;
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
"#;

/// **Finding: a loop written with `goto` under a vote runs unchecked, silently wrong.**
/// `again: s += sub_group_reduce_add(1); i++; if (sub_group_any(i < v)) goto again;` is valid
/// OpenCL C (each sub-group loops as one), the `do { } while (sub_group_any(i < v))` form runs
/// in lockstep, but the `goto` form is neither run in lockstep nor refused: PoCL 3.1 and PoCL
/// 6.0 `emulated` give 40 / 5 where 48 / 6. PoCL 6.0 `khr` is right (one sub-group per
/// work-group). The docs refuse a `goto` in a lockstep loop's body; a backward `goto` that
/// makes the loop is not seen at all (`transform/lockstep.rs`, `transform/divergence.rs`).
#[test]
#[ignore = "finding: a backward goto under a vote makes a loop that runs unchecked on emulated: wrong values"]
fn goto_loop_under_a_vote() {
    let test = "goto_loop_under_a_vote";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, GOTO_SRC, "");
        let model = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap().max(1);
            s.all(vec![most * s.xs.len() as i32, most])
        };
        check_all(&q, &p, &[("goto_loop", &model)], &WIDE, (4, 0));
    });
}

const SHORT_CIRCUIT_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void ternary_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    while (i < n ? sub_group_any(i < v) : 0) { s += sub_group_reduce_add(1); i++; }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
kernel void for_and_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i, s = 0;
    for (i = 0; i < n && sub_group_any(i < v); i++) s += sub_group_reduce_add(1);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
"#;

/// **Finding: a lockstep loop whose condition holds its vote behind `?:` or `&&` keeps the
/// vote conditional, so work-items whose loop already ended skip it: a segfault or a hang.**
/// `while (i < n ? sub_group_any(i < v) : 0)` becomes `__clg_l0 = __clg_l0 & ((i < n ?
/// sub_group_any(i < v) : 0) != 0);` inside the lockstep `for (;;)`: a work-item whose
/// sub-group left the loop earlier still has `i < n` and reaches the vote, one whose sub-group
/// went on to `i == n` does not. PoCL 3.1 and PoCL 6.0 `emulated` segfault in work-groups of
/// 33 (right in groups of 12 by luck). `for (i = 0; i < n && sub_group_any(i < v); i++)` hangs
/// PoCL 6.0 `khr` in work-groups of 12 (killed after 120 s; the `while` form of the same loop
/// runs). Valid OpenCL: `i` is uniform in each sub-group. Expected: the vote computed by every
/// work-item (as the docs do for `&&`/`||` chains under `if`: `((L) != 0) & ((R) != 0)`), or a
/// refusal (`transform/lockstep.rs`).
#[test]
#[ignore = "finding: lockstep loop conditions with the vote behind ?: or && crash (emulated) or hang (PoCL 6.0 khr)"]
fn lockstep_conditions_with_short_circuits() {
    let test = "lockstep_conditions_with_short_circuits";
    in_child(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SHORT_CIRCUIT_SRC, "");
        let model = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap();
            let i = most.min(s.n);
            s.all(vec![i * s.xs.len() as i32, i])
        };
        check_all(
            &q,
            &p,
            &[("for_and_condition", &model), ("ternary_condition", &model)],
            &WIDE,
            (4, 4),
        );
    });
}

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
