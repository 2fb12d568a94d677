//! `cl_khr_subgroup_non_uniform_vote`, `_non_uniform_arithmetic`, `_clustered_reduce` and
//! `_rotate` (`tests/cl/khr_non_uniform.cl`, plain OpenCL C) on every device, native or
//! polyfilled, in the spirit of the OpenCL-CTS `test_subgroups`: every built-in × type × cluster
//! size (1, 2, 4, … up to the sub-group size) × rotation, partial last sub-groups, 1–3 D
//! work-groups, and divergent branches (even lanes, the first lane, random lanes): native on
//! `nvidia-ptx`, computed by every work-item with the identity for the inactive ones where
//! collectives are work-group barriers (`emulated`, PoCL's CPU devices; `transform::nu_mask`).
//! Every result is checked on the host against the sub-group each work-item reports; the checks
//! are counted and printed.

mod common;

use common::shape::{hash, Shape};
use common::suite::Suite;
/// The checks of calls under divergent branches.
#[path = "khr_non_uniform/divergent.rs"]
mod divergent;

use clgroups::buffer::Scalar;
use clgroups::device::ShuffleBackend;
use clgroups::program::SubGroupSize;
use clgroups::{Device, Queue};
use std::collections::BTreeMap;
use std::fmt::Debug;

const SRC: &str = include_str!("cl/khr_non_uniform.cl");

/// Element types with their host reference operations: 0 add, 1 mul, 2 min, 3 max, 4 and, 5 or,
/// 6 xor (the last three for integers only).
trait Elem: Scalar + PartialEq + Debug {
    const INT: bool;
    fn x(g: usize) -> Self;
    /// The factors of the `mul` checks (odd integers; ±1, ±2, ±0.5 floats: products are exact).
    fn y(g: usize) -> Self;
    fn op(op: usize, a: Self, b: Self) -> Self;
    fn ident(op: usize) -> Self;
}

macro_rules! int_elem {
    ($t:ty) => {
        impl Elem for $t {
            const INT: bool = true;
            fn x(g: usize) -> Self {
                hash(g, 1) as $t
            }
            fn y(g: usize) -> Self {
                (hash(g, 2) | 1) as $t
            }
            fn op(op: usize, a: Self, b: Self) -> Self {
                match op {
                    0 => a.wrapping_add(b),
                    1 => a.wrapping_mul(b),
                    2 => Ord::min(a, b),
                    3 => Ord::max(a, b),
                    4 => a & b,
                    5 => a | b,
                    _ => a ^ b,
                }
            }
            fn ident(op: usize) -> Self {
                [0, 1, <$t>::MAX, <$t>::MIN, !0, 0, 0][op]
            }
        }
    };
}
int_elem!(i8);
int_elem!(u8);
int_elem!(i16);
int_elem!(u16);
int_elem!(i32);
int_elem!(u32);
int_elem!(i64);
int_elem!(u64);

macro_rules! float_elem {
    ($t:ty) => {
        impl Elem for $t {
            const INT: bool = false;
            /// Multiples of 1/8 below 125 in magnitude: sums are exact in any order.
            fn x(g: usize) -> Self {
                (hash(g, 1) % 2001) as $t * 0.125 - 125.0
            }
            fn y(g: usize) -> Self {
                [2.0, 0.5, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0][(hash(g, 2) % 8) as usize]
            }
            fn op(op: usize, a: Self, b: Self) -> Self {
                match op {
                    0 => a + b,
                    1 => a * b,
                    2 => a.min(b),
                    _ => a.max(b),
                }
            }
            fn ident(op: usize) -> Self {
                [0.0, 1.0, <$t>::INFINITY, <$t>::NEG_INFINITY][op]
            }
        }
    };
}
float_elem!(f32);
float_elem!(f64);

/// The sub-groups as the work-items report them (sub-group id, local id per global id):
/// members' global ids by local id. `None` when the reports are not a partition into lanes 0..n.
type Groups = BTreeMap<(usize, u32), Vec<usize>>;

fn groups(shape: &Shape, ids: &[(u32, u32)]) -> Option<Groups> {
    let mut slots: BTreeMap<(usize, u32), Vec<Option<usize>>> = BTreeMap::new();
    for (g, &(sg, lane)) in ids.iter().enumerate() {
        let key = (shape.group(g), sg);
        let v = slots.entry(key).or_default();
        let lane = lane as usize;
        if lane > 4096 {
            return None;
        }
        if v.len() <= lane {
            v.resize(lane + 1, None);
        }
        if v[lane].replace(g).is_some() {
            return None;
        }
    }
    slots
        .into_iter()
        .map(|(k, v)| Some((k, v.into_iter().collect::<Option<Vec<_>>>()?)))
        .collect()
}

impl Suite<'_> {
    fn groups(&mut self, shape: &Shape, ids: &[(u32, u32)]) -> Option<Groups> {
        let g = groups(shape, ids);
        if g.is_none() {
            self.check(|| format!("{:?} sub-group ids", shape.local), false, true);
        }
        g
    }

    /// Every arithmetic, clustered and rotate built-in of type `T` at cluster size `c`, rotation `d`.
    fn typed<T: Elem>(&mut self, shape: &Shape, c: usize, d: i32, s: usize) {
        let n = shape.n();
        let x: Vec<T> = (0..n).map(T::x).collect();
        let y: Vec<T> = (0..n).map(T::y).collect();
        let out = self.buf(&vec![T::x(n + 7); 30 * n]);
        let info = self.buf(&vec![-1i32; 5 * n]);
        let k = self.program.kernel(&format!("nu_{}", T::CL_NAME)).unwrap();
        let (xb, yb) = (self.buf(&x), self.buf(&y));
        let l = k.launch().arg(&xb).arg(&yb).arg(c as u32);
        let l = l.arg(d).arg(&out).arg(&info);
        // SAFETY: work-item g writes out[30g..30g + 30] and info[5g..5g + 5].
        unsafe { self.launch(l, &shape.global, &shape.local) };
        let (v, info) = (
            out.read(self.queue).unwrap(),
            info.read(self.queue).unwrap(),
        );
        let ids: Vec<(u32, u32)> = (0..n)
            .map(|g| (info[5 * g] as u32, info[5 * g + 1] as u32))
            .collect();
        let Some(members) = self.groups(shape, &ids) else {
            return;
        };
        let (t, local) = (T::CL_NAME, &shape.local);
        let ops = if T::INT { 7 } else { 4 };
        for m in members.values() {
            let r = m.len();
            // Per operation: folds of every prefix, and of every cluster.
            let folds: Vec<(Vec<T>, Vec<T>)> = (0..ops)
                .map(|op| {
                    let vals: Vec<T> = m
                        .iter()
                        .map(|&j| if op == 1 { y[j] } else { x[j] })
                        .collect();
                    let mut pre = vec![T::ident(op)];
                    for &v in &vals {
                        pre.push(T::op(op, *pre.last().unwrap(), v));
                    }
                    let cl = vals
                        .chunks(c)
                        .map(|k| k.iter().fold(T::ident(op), |a, &b| T::op(op, a, b)))
                        .collect();
                    (pre, cl)
                })
                .collect();
            let same = m.iter().all(|&j| x[j] == x[m[0]]);
            for (i, &g) in m.iter().enumerate() {
                let o = &v[30 * g..30 * g + 30];
                let what = |k: &str| format!("{local:?} {t} c={c} d={d} g={g} lane={i}/{r} {k}");
                for (op, (pre, cl)) in folds.iter().enumerate() {
                    let slot = if op < 4 { 3 * op } else { 12 + 3 * (op - 4) };
                    self.check(|| what(&format!("reduce op{op}")), o[slot], pre[r]);
                    self.check(
                        || what(&format!("inclusive op{op}")),
                        o[slot + 1],
                        pre[i + 1],
                    );
                    self.check(|| what(&format!("exclusive op{op}")), o[slot + 2], pre[i]);
                    let slot = if op < 4 { 21 + op } else { 25 + op - 4 };
                    self.check(|| what(&format!("clustered op{op}")), o[slot], cl[i / c]);
                }
                // Rotations: checked where the source is defined whether the sub-group's size or
                // the maximum size is the modulus (they differ only in partial sub-groups).
                let src = (i as i64 + d as i64).rem_euclid(r as i64) as usize;
                if src == (i as i64 + d as i64).rem_euclid(s as i64) as usize {
                    self.check(|| what("rotate"), o[28], x[m[src]]);
                }
                let src = (i & !(c - 1)) + ((i as i64 + d as i64) as usize & (c - 1));
                if src < r {
                    self.check(|| what("clustered rotate"), o[29], x[m[src]]);
                }
                let f = &info[5 * g..5 * g + 5];
                self.check(|| what("all_equal(x)"), f[2] != 0, same);
                self.check(|| what("all_equal(id)"), f[3] != 0, true);
                self.check(|| what("all_equal(lane == 3)"), f[4] != 0, r <= 3);
            }
        }
    }

    /// Votes and the logical operations at cluster size `c`.
    fn votes(&mut self, shape: &Shape, c: usize) {
        let n = shape.n();
        // Work-group 1 all false, work-group 2 all 5, elsewhere every 5th false.
        let p: Vec<i32> = (0..n)
            .map(|g| match shape.group(g) {
                1 => 0,
                2 => 5,
                _ if g % 5 == 0 => 0,
                _ => (g % 3) as i32 + 1,
            })
            .collect();
        let out = self.buf(&vec![-7i32; 20 * n]);
        let k = self.program.kernel("nu_vote").unwrap();
        let pb = self.buf(&p);
        let l = k.launch().arg(&pb).arg(c as u32).arg(&out);
        // SAFETY: work-item g writes out[20g..20g + 20].
        unsafe { self.launch(l, &shape.global, &shape.local) };
        let v = out.read(self.queue).unwrap();
        let ids: Vec<(u32, u32)> = (0..n)
            .map(|g| (v[20 * g + 16] as u32, v[20 * g + 17] as u32))
            .collect();
        let Some(members) = self.groups(shape, &ids) else {
            return;
        };
        let local = &shape.local;
        let apply = |op: usize, acc: bool, x: bool| match op {
            0 => acc && x,
            1 => acc || x,
            _ => acc ^ x,
        };
        for m in members.values() {
            let b: Vec<bool> = m.iter().map(|&j| p[j] != 0).collect();
            let equal = m.iter().all(|&j| p[j] == p[m[0]]);
            // Per logical operation: folds of every prefix, and of every cluster.
            let folds: Vec<(Vec<bool>, Vec<bool>)> = (0..3)
                .map(|op| {
                    let mut pre = vec![op == 0];
                    for &x in &b {
                        pre.push(apply(op, *pre.last().unwrap(), x));
                    }
                    let cl = b
                        .chunks(c)
                        .map(|k| k.iter().fold(op == 0, |a, &x| apply(op, a, x)));
                    (pre, cl.collect())
                })
                .collect();
            for (i, &g) in m.iter().enumerate() {
                let o: Vec<bool> = v[20 * g..20 * g + 16].iter().map(|&x| x != 0).collect();
                let what = |k: &str| format!("{local:?} vote c={c} g={g} lane={i} {k}");
                self.check(|| what("elect"), o[0], i == 0);
                self.check(|| what("all"), o[1], b.iter().all(|&x| x));
                self.check(|| what("any"), o[2], b.iter().any(|&x| x));
                self.check(|| what("all_equal"), o[3], equal);
                for (op, (pre, cl)) in folds.iter().enumerate() {
                    let want = [pre[b.len()], pre[i + 1], pre[i], cl[i / c]];
                    for (k, w) in want.into_iter().enumerate() {
                        let slot = if k < 3 { 4 + 3 * op + k } else { 13 + op };
                        self.check(|| what(&format!("logical op{op} kind{k}")), o[slot], w);
                    }
                }
            }
        }
    }

    fn shape(&mut self, shape: &Shape, fp64: bool) {
        let s = self.launch_max_size(shape);
        let deltas = |s: i32| [1, 0, s - 1, 3, s + 2, -1, 5, 2 * s - 3, 7, -5];
        let mut c = 1;
        let mut k = 0;
        while c <= s {
            let d = deltas(s as i32)[k % 10];
            self.typed::<i8>(shape, c, d, s);
            self.typed::<u8>(shape, c, d, s);
            self.typed::<i16>(shape, c, d, s);
            self.typed::<u16>(shape, c, d, s);
            self.typed::<i32>(shape, c, d, s);
            self.typed::<u32>(shape, c, d, s);
            self.typed::<i64>(shape, c, d, s);
            self.typed::<u64>(shape, c, d, s);
            self.typed::<f32>(shape, c, d, s);
            if fp64 {
                self.typed::<f64>(shape, c, d, s);
            }
            self.votes(shape, c);
            c *= 2;
            k += 1;
        }
    }
}

/// Launch shapes: global 2000 / local 200, 2-D and 3-D with partial last sub-groups; whole warps
/// on `nvidia-ptx`.
fn shapes(backend: ShuffleBackend) -> Vec<Shape> {
    if backend == ShuffleBackend::NvidiaPtx {
        return vec![
            Shape::new(&[2048], &[256]),
            Shape::new(&[64, 6], &[32, 3]),
            Shape::new(&[16, 8, 4], &[8, 4, 2]),
        ];
    }
    vec![
        Shape::new(&[2000], &[200]),
        Shape::new(&[50, 6], &[25, 3]),
        Shape::new(&[50, 4, 2], &[25, 2, 2]),
    ]
}

/// Every check on `device` with the program default `size`; panics listing the first failures.
fn check_device(device: &Device, size: SubGroupSize) {
    let queue = Queue::new(device).expect("queue");
    let backend = device.sub_groups().effective.shuffle_backend;
    let mut suite = Suite::build(&queue, SRC, "khr_non_uniform.cl", size);
    let fp64 = device.limits().fp64;
    for shape in common::sampled("khr_non_uniform shapes", device, shapes(backend)) {
        let t = std::time::Instant::now();
        suite.shape(&shape, fp64);
        let before = suite.checks;
        let s = suite.launch_max_size(&shape);
        suite.divergent(&shape, s);
        eprintln!("  divergent: {} checks", suite.checks - before);
        eprintln!("  {:?}: {:?}", shape.local, t.elapsed());
    }
    refusals(&mut suite, backend);
    suite.report();
}

/// Where collectives are work-group barriers (`emulated`, PoCL's native CPU devices), a
/// `get_global_id(0) < n` bound that splits a work-group is refused at launch, before
/// enqueueing (one on a work-group boundary runs). Elsewhere the bounded kernel runs on a
/// boundary.
fn refusals(suite: &mut Suite<'_>, backend: ShuffleBackend) {
    let barriers = suite.queue.device().needs_group_uniform_collectives();
    debug_assert!(barriers || backend != ShuffleBackend::Emulated);
    let x: Vec<i32> = (0..512).map(|g| hash(g, 4) as i32 % 1000).collect();
    let local = 64;
    for (n, ok) in [(256u32, true), (100, false)] {
        if !ok && !barriers {
            // A bound inside a sub-group is not valid OpenCL where sub-groups are not
            // work-group barriers: not launched.
            continue;
        }
        let out = suite.buf(&vec![-7i32; 512]);
        let k = suite.program.kernel("nu_bounded").unwrap();
        let xb = suite.buf(&x);
        let l = k.launch().arg(&xb).arg(n).arg(&out);
        let shape = Shape::new(&[512], &[local]);
        // SAFETY: work-item g writes out[g], g < 512.
        let r = unsafe { suite.try_launch(l, &shape.global, &shape.local) };
        let what = || format!("nu_bounded n = {n}: {r:?}");
        suite.check(what, r.is_ok(), ok);
        let got = out.read(suite.queue).unwrap();
        if !ok {
            suite.check(
                || format!("n = {n}: nothing ran"),
                got.iter().all(|&v| v == -7),
                true,
            );
            continue;
        }
        let s = suite.launch_max_size(&shape);
        for (g, &v) in got.iter().enumerate() {
            let lo = g - g % s;
            let want = if g < n as usize {
                x[lo..(lo + s).min(n as usize)].iter().sum()
            } else {
                -7
            };
            suite.check(|| format!("nu_bounded n = {n} g = {g}"), v, want);
        }
    }
}

impl Suite<'_> {
    /// The maximum sub-group size of a launch of `shape`: the largest sub-group it reports.
    fn launch_max_size(&self, shape: &Shape) -> usize {
        let n = shape.n();
        let k = self.program.kernel("nu_vote").unwrap();
        let out = self.buf(&vec![-1i32; 20 * n]);
        let ones = self.buf(&vec![1i32; n]);
        let l = k.launch().arg(&ones).arg(1u32).arg(&out);
        // SAFETY: work-item g writes out[20g..20g + 20].
        unsafe { self.launch(l, &shape.global, &shape.local) };
        let v = out.read(self.queue).unwrap();
        1 + (0..n).map(|g| v[20 * g + 17] as usize).max().unwrap_or(0)
    }
}

#[test]
fn non_uniform_builtins_on_the_devices_own_backend() {
    let d = common::device();
    check_device(&d, SubGroupSize::Primary);
    for s in common::other_sizes(&d) {
        check_device(&d, SubGroupSize::Exact(s));
    }
}

#[test]
fn non_uniform_builtins_emulated_on_a_native_device() {
    let d = common::device();
    if !common::native_or_skip(&d, "non_uniform_builtins_emulated_on_a_native_device") {
        return;
    }
    check_device(
        &d.with_backend(ShuffleBackend::Emulated).unwrap(),
        SubGroupSize::Primary,
    );
}
