//! Standard sub-group built-ins (`tests/cl/khr_builtins.cl`, plain `cl_khr_subgroups` /
//! `cl_intel_subgroups` code) on every device, native or polyfilled, in the spirit of the
//! OpenCL-CTS `test_subgroups`: every function × type, the work-item functions, partial last
//! sub-groups (global 2000 / local 200), random shuffle indices and deltas, 1–3 D work-groups.
//! Results are checked on the host against the sub-group each work-item reports (its id and
//! local id), as the CTS does; lanes whose source is outside the sub-group are not checked.

mod common;

use common::shape::{hash, Shape};
use common::suite::Suite;
use common::Poison;

use clgroups::buffer::Scalar;
use clgroups::device::ShuffleBackend;
use clgroups::launch::Local;
use clgroups::program::SubGroupSize;
use clgroups::{Device, Queue};
use std::collections::BTreeMap;

const SRC: &str = include_str!("cl/khr_builtins.cl");

/// Element types with their host reference operations.
trait Elem: Scalar + PartialEq {
    fn val(g: usize, seed: u64) -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    /// Identities of the exclusive min and max scans.
    const MAX_ID: Self;
    const MIN_ID: Self;
    /// Whether the kernel checks the cl_intel_subgroups shuffles for this type.
    const INTEL: bool;
}

macro_rules! int_elem {
    ($t:ty, $intel:expr) => {
        impl Elem for $t {
            fn val(g: usize, seed: u64) -> Self {
                hash(g, seed) as $t
            }
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn min(a: Self, b: Self) -> Self {
                Ord::min(a, b)
            }
            fn max(a: Self, b: Self) -> Self {
                Ord::max(a, b)
            }
            const MAX_ID: Self = <$t>::MAX;
            const MIN_ID: Self = <$t>::MIN;
            const INTEL: bool = $intel;
        }
    };
}
int_elem!(i8, false);
int_elem!(u8, false);
int_elem!(i16, false);
int_elem!(u16, false);
int_elem!(i32, true);
int_elem!(u32, true);
int_elem!(i64, true);
int_elem!(u64, true);

macro_rules! float_elem {
    ($t:ty) => {
        impl Elem for $t {
            /// Multiples of 1/8 below 125 in magnitude: sums are exact in any order.
            fn val(g: usize, seed: u64) -> Self {
                (hash(g, seed) % 2001) as $t * 0.125 - 125.0
            }
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            fn min(a: Self, b: Self) -> Self {
                a.min(b)
            }
            fn max(a: Self, b: Self) -> Self {
                a.max(b)
            }
            const MAX_ID: Self = <$t>::INFINITY;
            const MIN_ID: Self = <$t>::NEG_INFINITY;
            const INTEL: bool = true;
        }
    };
}
float_elem!(f32);
float_elem!(f64);

/// The sub-groups of a launch as the work-items report them: (work-group, sub-group id) ->
/// members' global ids by local id; and each item's (key, local id).
struct Groups {
    members: BTreeMap<(usize, u32), Vec<usize>>,
    of: Vec<((usize, u32), usize)>,
}

impl Groups {
    /// From (sub-group id, local id) per global id; `None` (with a failure) if the reports are
    /// not a partition into lanes 0..n.
    fn new(shape: &Shape, ids: &[(u32, u32)], fails: &mut Vec<String>) -> Option<Groups> {
        let mut slots: BTreeMap<(usize, u32), Vec<Option<usize>>> = BTreeMap::new();
        let mut of = Vec::with_capacity(ids.len());
        for (g, &(sg, lane)) in ids.iter().enumerate() {
            let key = (shape.split(g).0, sg);
            let v = slots.entry(key).or_default();
            let lane = lane as usize;
            if lane >= shape.wg() {
                fails.push(format!("g={g}: local id {lane} >= work-group size"));
                return None;
            }
            if v.len() <= lane {
                v.resize(lane + 1, None);
            }
            if v[lane].replace(g).is_some() {
                fails.push(format!("g={g}: local id {lane} twice in sub-group {key:?}"));
                return None;
            }
            of.push((key, lane));
        }
        let mut members = BTreeMap::new();
        for (key, v) in slots {
            let m: Option<Vec<usize>> = v.into_iter().collect();
            let Some(m) = m else {
                fails.push(format!("sub-group {key:?}: local ids are not 0..n"));
                return None;
            };
            members.insert(key, m);
        }
        Some(Groups { members, of })
    }

    fn of(&self, g: usize) -> (&[usize], usize) {
        let (key, lane) = self.of[g];
        (&self.members[&key], lane)
    }
}

impl Suite<'_> {
    /// Work-item functions (test_workitem); returns the maximum sub-group size.
    fn ids(&mut self, shape: &Shape) -> usize {
        let n = shape.n();
        let out = self.buf(&vec![u32::POISON; 6 * n]);
        let k = self.program.kernel("khr_ids").unwrap();
        // SAFETY: work-item g writes out[6g..6g + 6].
        unsafe { self.launch(k.launch().arg(&out), &shape.global, &shape.local) };
        let v = out.read(self.queue).unwrap();
        let ids: Vec<(u32, u32)> = (0..n).map(|g| (v[6 * g + 4], v[6 * g + 5])).collect();
        let mut fails = Vec::new();
        let Some(groups) = Groups::new(shape, &ids, &mut fails) else {
            fails.into_iter().for_each(|f| self.fail(f));
            return 1;
        };
        let max = v[1] as usize;
        let local = shape.local.clone();
        for g in 0..n {
            let (members, _) = groups.of(g);
            let (w, _) = shape.split(g);
            let count = groups.members.keys().filter(|k| k.0 == w).count() as u32;
            let o = &v[6 * g..6 * g + 6];
            let what = || format!("{local:?} ids g={g}");
            self.check(what, o[0] as usize, members.len());
            self.check(|| format!("{local:?} max g={g}"), o[1] as usize, max);
            self.check(|| format!("{local:?} num g={g}"), o[2], count);
            self.check(|| format!("{local:?} enqueued num g={g}"), o[3], count);
            self.check(|| format!("{local:?} id < num g={g}"), o[4] < count, true);
            self.check(
                || format!("{local:?} size <= max g={g}"),
                o[0] as usize <= max,
                true,
            );
        }
        for (&(w, sg), m) in &groups.members {
            if let Some(first) = groups.members.get(&(w, 0)) {
                self.check(
                    || format!("{local:?} sub-group {sg} not larger than the first"),
                    m.len() <= first.len(),
                    true,
                );
            }
        }
        max
    }

    /// Random shuffle arguments in {0xffffffff, 0..2S-1} (the CTS's generator).
    fn args(n: usize, s: usize) -> Vec<u32> {
        (0..n)
            .map(|g| match hash(g, 99) % (2 * s as u64 + 1) {
                0 => u32::MAX,
                a => a as u32 - 1,
            })
            .collect()
    }

    fn typed<T: Elem>(&mut self, shape: &Shape, s: usize) {
        let n = shape.n();
        let x: Vec<T> = (0..n).map(|g| T::val(g, 1)).collect();
        let y: Vec<T> = (0..n).map(|g| T::val(g, 2)).collect();
        let a = Self::args(n, s);
        let poison = T::val(n + 7, 3);
        let (xb, yb, ab) = (self.buf(&x), self.buf(&y), self.buf(&a));
        let out = self.buf(&vec![poison; 20 * n]);
        let info = self.buf(&vec![u32::POISON; 2 * n]);
        let k = self.program.kernel(&format!("khr_{}", T::CL_NAME)).unwrap();
        let l = k.launch().arg(&xb).arg(&yb).arg(&ab).arg(&out).arg(&info);
        // SAFETY: work-item g writes out[20g..20g + 20] and info[2g..2g + 2].
        unsafe { self.launch(l, &shape.global, &shape.local) };
        let (v, info) = (
            out.read(self.queue).unwrap(),
            info.read(self.queue).unwrap(),
        );
        let ids: Vec<(u32, u32)> = (0..n).map(|g| (info[2 * g], info[2 * g + 1])).collect();
        let mut fails = Vec::new();
        let Some(groups) = Groups::new(shape, &ids, &mut fails) else {
            fails.into_iter().for_each(|f| self.fail(f));
            return;
        };
        let fold = |f: fn(T, T) -> T, vs: &[T], id: T| vs.iter().fold(id, |acc, v| f(acc, *v));
        let (t, local) = (T::CL_NAME, shape.local.clone());
        for g in 0..n {
            let (m, i) = groups.of(g);
            let vals: Vec<T> = m.iter().map(|&j| x[j]).collect();
            let r = m.len();
            let o = &v[20 * g..20 * g + 20];
            let sg = ids[g].0 as usize;
            let b = (sg * 7 + 3) % r;
            let first = vals[0];
            let want = [
                vals[b],
                fold(T::add, &vals[1..], first),
                fold(T::min, &vals[1..], first),
                fold(T::max, &vals[1..], first),
                fold(T::add, &vals[1..=i], first),
                fold(T::min, &vals[1..=i], first),
                fold(T::max, &vals[1..=i], first),
                fold(T::add, &vals[..i], T::default()),
                fold(T::min, &vals[..i], T::MAX_ID),
                fold(T::max, &vals[..i], T::MIN_ID),
            ];
            for (op, w) in want.iter().enumerate() {
                self.check(|| format!("{local:?} {t} op{op} g={g} lane={i}"), o[op], *w);
            }
            self.check(
                || format!("{local:?} {t} non_uniform_broadcast g={g}"),
                o[14],
                vals[b],
            );
            self.check(
                || format!("{local:?} {t} broadcast_first g={g}"),
                o[15],
                first,
            );
            let a = a[g] as usize;
            let sources = [Some(a), Some(i ^ a), i.checked_sub(a), Some(i + a)];
            for (op, src) in sources.iter().enumerate() {
                if let Some(src) = src.filter(|&src| src < r && (op < 2 || a < s)) {
                    self.check(
                        || format!("{local:?} {t} shuffle op{op} a={a} g={g} lane={i}"),
                        o[10 + op],
                        vals[src],
                    );
                    if T::INTEL && op < 2 {
                        self.check(
                            || format!("{local:?} {t} intel shuffle op{op} a={a} g={g}"),
                            o[16 + op],
                            vals[src],
                        );
                    }
                }
            }
            if T::INTEL {
                let d = a % (s + 1);
                let down = if i + d < s {
                    (i + d < r).then(|| x[m[i + d]])
                } else {
                    (i + d - s < r).then(|| y[m[i + d - s]])
                };
                let up = if i >= d {
                    Some(x[m[i - d]])
                } else {
                    (s + i - d < r).then(|| y[m[s + i - d]])
                };
                for (slot, want) in [(18, down), (19, up)] {
                    if let Some(w) = want {
                        self.check(
                            || {
                                format!(
                                    "{local:?} {t} intel two-source {slot} d={d} g={g} lane={i}"
                                )
                            },
                            o[slot],
                            w,
                        );
                    }
                }
            }
        }
    }

    fn ballot(&mut self, shape: &Shape, s: usize) {
        if s > 128 {
            eprintln!(
                "{}: ballot not checked at {:?}: sub-groups of {s} > 128 lanes",
                self.label, shape.local
            );
            return;
        }
        let n = shape.n();
        // Every 3rd item, and no item of work-group 1's sub-group 1.
        let pred: Vec<i32> = (0..n).map(|g| i32::from(hash(g, 5) % 3 == 0) * 7).collect();
        let a = Self::args(n, 64);
        let out = self.buf(&vec![u32::POISON; 33 * n]);
        let k = self.program.kernel("khr_ballot").unwrap();
        let (pb, ab) = (self.buf(&pred), self.buf(&a));
        // SAFETY: work-item g writes out[33g..33g + 33].
        unsafe {
            self.launch(
                k.launch().arg(&pb).arg(&ab).arg(&out),
                &shape.global,
                &shape.local,
            )
        };
        let v = out.read(self.queue).unwrap();
        let ids: Vec<(u32, u32)> = (0..n).map(|g| (v[33 * g + 31], v[33 * g + 32])).collect();
        let mut fails = Vec::new();
        let Some(groups) = Groups::new(shape, &ids, &mut fails) else {
            fails.into_iter().for_each(|f| self.fail(f));
            return;
        };
        let words = |bits: &dyn Fn(usize) -> bool| -> [u32; 4] {
            let mut w = [0u32; 4];
            for b in 0..128 {
                if bits(b) {
                    w[b / 32] |= 1 << (b % 32);
                }
            }
            w
        };
        let local = shape.local.clone();
        for g in 0..n {
            let (m, i) = groups.of(g);
            let r = m.len();
            let o = &v[33 * g..33 * g + 33];
            let set = |b: usize| b < r && pred[m[b]] != 0;
            let ballot = words(&set);
            let count = |hi: usize| (0..hi.min(r)).filter(|&b| set(b)).count() as u32;
            let lsb = (0..r).find(|&b| set(b)).map(|b| b as u32);
            let msb = (0..r).rev().find(|&b| set(b)).map(|b| b as u32);
            let bit = a[g] as usize % 128;
            let what = |k: &str| format!("{local:?} ballot {k} g={g} lane={i}");
            self.check(|| what("ballot"), &o[0..4], &ballot[..]);
            self.check(|| what("inverse"), o[4], u32::from(set(i)));
            self.check(|| what("bit_extract"), o[5], u32::from(set(bit)));
            self.check(|| what("bit_count"), o[6], count(r));
            self.check(|| what("inclusive_scan"), o[7], count(i + 1));
            self.check(|| what("exclusive_scan"), o[8], count(i));
            if let (Some(lsb), Some(msb)) = (lsb, msb) {
                self.check(|| what("find_lsb"), o[9], lsb);
                self.check(|| what("find_msb"), o[10], msb);
            }
            let within = |w: [u32; 4]| words(&|b| b < r && (w[b / 32] >> (b % 32)) & 1 == 1);
            let masks: [(&str, [u32; 4], bool); 5] = [
                ("eq", words(&|b| b == i), false),
                ("ge", words(&|b| b >= i && b < r), true),
                ("gt", words(&|b| b > i && b < r), true),
                ("le", words(&|b| b <= i), false),
                ("lt", words(&|b| b < i), false),
            ];
            for (k, (name, want, only_lanes)) in masks.into_iter().enumerate() {
                let got: [u32; 4] = o[11 + 4 * k..15 + 4 * k].try_into().unwrap();
                let got = if only_lanes { within(got) } else { got };
                self.check(|| what(name), got, want);
            }
        }
    }

    fn votes(&mut self, shape: &Shape) {
        let n = shape.n();
        // False on every 5th item and on all of work-group 1 (so whole sub-groups are false).
        let input: Vec<i32> = (0..n)
            .map(|g| {
                if shape.split(g).0 == 1 || g % 5 == 0 {
                    0
                } else {
                    g as i32 + 1
                }
            })
            .collect();
        let out = self.buf(&vec![7i32; 6 * n]);
        let k = self.program.kernel("khr_votes").unwrap();
        let inb = self.buf(&input);
        let l = k.launch().arg(&inb).arg(&out);
        // SAFETY: work-item g writes out[6g..6g + 6] and its work-group's local slots.
        unsafe {
            self.launch(
                l.arg(Local::<i32>::new(shape.wg())),
                &shape.global,
                &shape.local,
            )
        };
        let v = out.read(self.queue).unwrap();
        let ids: Vec<(u32, u32)> = (0..n)
            .map(|g| (v[6 * g + 4] as u32, v[6 * g + 5] as u32))
            .collect();
        let mut fails = Vec::new();
        let Some(groups) = Groups::new(shape, &ids, &mut fails) else {
            fails.into_iter().for_each(|f| self.fail(f));
            return;
        };
        let local = shape.local.clone();
        for g in 0..n {
            let (m, i) = groups.of(g);
            let p: Vec<i32> = m.iter().map(|&j| input[j]).collect();
            let next = p[(i + 1) % m.len()];
            let want = [
                i32::from(p.iter().any(|&x| x != 0)),
                i32::from(p.iter().all(|&x| x != 0)),
                3 * next + 1,
                5 * next - 2,
            ];
            self.check(
                || format!("{local:?} votes/barrier g={g}"),
                &v[6 * g..6 * g + 4],
                &want[..],
            );
        }
    }

    fn block(&mut self, shape: &Shape, s: usize) {
        let wgs = shape.n() / shape.wg();
        let per_wg = shape.wg().div_ceil(s);
        let len = 15 * s * per_wg * wgs;
        let input: Vec<u32> = (0..len).map(|i| hash(i, 11) as u32).collect();
        let out = self.buf(&vec![u32::POISON; len]);
        let k = self.program.kernel("khr_block").unwrap();
        let inb = self.buf(&input);
        // SAFETY: each sub-group writes its 15 blocks of `s` elements, below len.
        unsafe { self.launch(k.launch().arg(&inb).arg(&out), &shape.global, &shape.local) };
        let v = out.read(self.queue).unwrap();
        let local = shape.local.clone();
        for w in 0..wgs {
            for j in 0..per_wg {
                let lanes = s.min(shape.wg() - j * s);
                let base = 15 * s * (w * per_wg + j);
                for c in 0..15 {
                    for lane in 0..s {
                        let at = base + c * s + lane;
                        let want = if lane < lanes { input[at] } else { u32::POISON };
                        self.check(
                            || format!("{local:?} block wg={w} sg={j} chunk={c} lane={lane}"),
                            v[at],
                            want,
                        );
                    }
                }
            }
        }
    }

    fn shape(&mut self, shape: &Shape) {
        let s = self.ids(shape);
        if let Some(p) = self.pinned() {
            let want = p.min(shape.local.iter().product());
            self.check(
                || format!("{:?} max size of pinned {p}", shape.local),
                s,
                want,
            );
        }
        self.typed::<i8>(shape, s);
        self.typed::<u8>(shape, s);
        self.typed::<i16>(shape, s);
        self.typed::<u16>(shape, s);
        self.typed::<i32>(shape, s);
        self.typed::<u32>(shape, s);
        self.typed::<i64>(shape, s);
        self.typed::<u64>(shape, s);
        self.typed::<f32>(shape, s);
        if self.queue.device().limits().fp64 {
            self.typed::<f64>(shape, s);
        }
        self.ballot(shape, s);
        self.votes(shape);
        self.block(shape, s);
    }
}

/// Launch shapes: the CTS's global 2000 / local 200, 2-D and 3-D with partial last sub-groups
/// (75 and 100 items; on `nvidia-ptx`, partial last warps).
fn shapes(_backend: ShuffleBackend) -> Vec<Shape> {
    // Few local sizes, none with every dimension small: PoCL compiles each kernel once per local
    // size, and unrolls small work-item loops over the many barriers of emulated sub-groups.
    vec![
        Shape::new(&[2000], &[200]),
        Shape::new(&[50, 6], &[25, 3]),
        Shape::new(&[50, 4, 2], &[25, 2, 2]),
    ]
}

/// Work-groups of one and two work-items, checked on every pass (PoCL 6.0's native collectives
/// abort there: the kernels' emulated builds run them).
fn tiny() -> [Shape; 2] {
    [Shape::new(&[3], &[1]), Shape::new(&[4, 3], &[2, 1])]
}

/// Every check on `device` with the program default `size`; panics listing the first failures.
fn check_device(device: &Device, size: SubGroupSize) {
    let queue = Queue::new(device).expect("queue");
    let backend = device.sub_groups().effective.shuffle_backend;
    let mut suite = Suite::build(&queue, SRC, "khr_builtins.cl", size);
    let sampled = common::sampled("khr_polyfill shapes", device, shapes(backend));
    for shape in sampled.into_iter().chain(tiny()) {
        let t = std::time::Instant::now();
        suite.shape(&shape);
        eprintln!("  {:?}: {:?}", shape.local, t.elapsed());
    }
    suite.report();
}

#[test]
fn builtins_on_the_devices_own_backend() {
    let d = common::device();
    check_device(&d, SubGroupSize::Primary);
    if d.sub_groups().effective.shuffle_backend == ShuffleBackend::Khr {
        check_device(&d, SubGroupSize::Automatic);
    }
    for s in common::other_sizes(&d) {
        check_device(&d, SubGroupSize::Exact(s));
    }
}

#[test]
fn builtins_emulated_on_a_native_device() {
    let d = common::device();
    if !common::native_or_skip(&d, "builtins_emulated_on_a_native_device") {
        return;
    }
    check_device(
        &d.with_backend(ShuffleBackend::Emulated).unwrap(),
        SubGroupSize::Primary,
    );
}
