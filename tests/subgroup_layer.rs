//! The sub-group layer (`cl/clgroups/subgroup.h`) through the crate's `Program`: every function
//! and type of `tests/cl/subgroup_layer.cl` against a host reference, over many local shapes, on
//! the device's own backend and, on native devices, the same device forced to `emulated` and
//! `intel`. Sub-group sizes and build errors: `tests/sub_group_sizes.rs`.
//!
//! Reference model (see the `.cl` header): work-items are numbered over the work-group's linear
//! local id `l = x + X*(y + Y*z)`; lane `i = l % S`, sub-group `j = l / S`, range
//! `n = min(S, W - j*S)`. Only defined lanes are checked (a shuffle reading lane `>= n` is
//! unspecified, but must not crash).

mod common;

use common::suite::Suite;
use common::Poison;

use clgroups::buffer::Scalar;
use clgroups::device::ShuffleBackend;
use clgroups::program::{ResolvedSize, SubGroupSize};
use clgroups::{Device, Queue, Range};

const SRC: &str = include_str!("cl/subgroup_layer.cl");

/// Element types of the shuffle and algorithm kernels, with lane-revealing values.
trait Elem: Scalar + PartialEq {
    /// Distinct per global id, never zero (shuffles).
    fn shuf(g: usize) -> Self;
    /// Small and exact under float addition in any order (algorithms).
    fn alg(g: usize) -> Self;
    fn add(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
}

fn sign(g: usize) -> i64 {
    if g % 2 == 1 {
        -1
    } else {
        1
    }
}

macro_rules! int_elem {
    ($t:ty, $shuf:expr) => {
        impl Elem for $t {
            fn shuf(g: usize) -> Self {
                $shuf(g)
            }
            fn alg(g: usize) -> Self {
                $shuf(g)
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
        }
    };
}

int_elem!(i32, |g: usize| (sign(g) * (1000 * g as i64 + 7)) as i32);
int_elem!(u32, |g: usize| (g as u32).wrapping_mul(2_654_435_761) ^ 7);
int_elem!(i64, |g: usize| sign(g)
    * ((1000 * g as i64 + 7) * (1i64 << 33) + 5));
int_elem!(u64, |g: usize| (g as u64 + 1)
    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
    ^ 7);

macro_rules! float_elem {
    ($t:ty) => {
        impl Elem for $t {
            fn shuf(g: usize) -> Self {
                (sign(g) * (1000 * g as i64 + 7)) as $t * 0.25
            }
            fn alg(g: usize) -> Self {
                ((g * 37) % 101) as $t * 0.125 - 6.25
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
        }
    };
}

float_elem!(f32);
float_elem!(f64);

/// One launch: local shape, two work-groups along x, sub-group size `s`.
struct Geo {
    local: Vec<usize>,
    global: Vec<usize>,
    s: usize,
}

impl Geo {
    fn new(local: &[usize], s: usize) -> Geo {
        let mut global = local.to_vec();
        global[0] *= 2;
        Geo {
            local: local.to_vec(),
            global,
            s,
        }
    }

    fn wg(&self) -> usize {
        self.local.iter().product()
    }

    /// `sg_get_max_local_range()`: the largest sub-group, never above the work-group.
    fn max(&self) -> usize {
        self.s.min(self.wg())
    }

    fn n(&self) -> usize {
        self.global.iter().product()
    }

    fn dim(v: &[usize], d: usize) -> usize {
        v.get(d).copied().unwrap_or(1)
    }

    /// (work-group index along x, linear local id) of global linear id `g`.
    fn split(&self, g: usize) -> (usize, usize) {
        let (gx, gy) = (self.global[0], Self::dim(&self.global, 1));
        let (x, y, z) = (g % gx, (g / gx) % gy, g / (gx * gy));
        let (lx, ly) = (self.local[0], Self::dim(&self.local, 1));
        (x / lx, x % lx + lx * (y % ly + ly * z))
    }

    /// `table[w][l]`: the global linear id of linear local id `l` in work-group `w`.
    fn table(&self) -> Vec<Vec<usize>> {
        let mut t = vec![vec![0; self.wg()]; self.n() / self.wg()];
        for g in 0..self.n() {
            let (w, l) = self.split(g);
            t[w][l] = g;
        }
        t
    }

    /// Lane, sub-group id and range of linear local id `l`.
    fn lane(&self, l: usize) -> (usize, usize, usize) {
        let j = l / self.s;
        (l % self.s, j, self.s.min(self.wg() - j * self.s))
    }

    /// Global ids of the members of `g`'s sub-group, by lane.
    fn members(&self, t: &[Vec<usize>], g: usize) -> Vec<usize> {
        let (w, l) = self.split(g);
        let (i, _, r) = self.lane(l);
        (0..r).map(|s| t[w][l - i + s]).collect()
    }
}

impl Suite<'_> {
    /// The sub-group size of a launch over `local`: the kernel's fixed size, or the driver's.
    fn size_for(&self, local: &[usize]) -> usize {
        let k = self.kernel("clg_test_ids");
        match k.resolved_sub_group_size() {
            ResolvedSize::Size(0) => k
                .sub_groups()
                .max_sub_group_size(Range::new(local).expect("local"))
                .expect("driver sub-group size"),
            ResolvedSize::Size(s) => s,
            ResolvedSize::Unsupported(s) => panic!("size {s} unsupported"),
        }
    }

    fn ids(&mut self, geo: &Geo) {
        let out = self.buf(&vec![u32::POISON; 10 * geo.n()]);
        // SAFETY: sized per the kernel's header entry (`G` = n work-items).
        unsafe {
            self.launch(
                self.kernel("clg_test_ids").launch().arg(&out),
                &geo.global,
                &geo.local,
            )
        };
        let v = self.read(&out);
        let groups = geo.wg().div_ceil(geo.s);
        for g in 0..geo.n() {
            let (_, l) = geo.split(g);
            let (i, j, r) = geo.lane(l);
            let want = [i, i, r, geo.max(), j, j, groups, groups, l, 1].map(|x| x as u32);
            let local = &geo.local;
            self.check(
                || format!("{local:?} ids g={g}"),
                &v[10 * g..10 * g + 10],
                &want[..],
            );
        }
    }

    fn shuffles<T: Elem>(&mut self, geo: &Geo) {
        let (n, nargs) = (geo.n(), 2 * geo.s + 1);
        let input: Vec<T> = (0..n).map(T::shuf).collect();
        let inb = self.buf(&input);
        let out = self.buf(&vec![T::shuf(n + 1); 6 * nargs * n]);
        let k = self.kernel(&format!("clg_test_shuffles_{}", T::CL_NAME));
        // SAFETY: sized per the kernel's header entry (`G` = n work-items).
        unsafe {
            self.launch(
                k.launch().arg(&inb).arg(&out).arg(nargs as u32),
                &geo.global,
                &geo.local,
            )
        };
        let v = self.read(&out);
        let t = geo.table();
        for g in 0..n {
            let members = geo.members(&t, g);
            let (i, r) = (geo.lane(geo.split(g).1).0, members.len());
            for k in 0..nargs {
                let a: usize = if k + 1 < nargs { k } else { 0xffff_ffff };
                let wrapped = (i as u32).wrapping_add(a as u32) % (2 * geo.max() as u32);
                let sources = [
                    Some(a),
                    Some(i ^ a),
                    i.checked_sub(a),
                    Some(i + a),
                    Some(a),
                    Some(wrapped as usize),
                ];
                for (op, src) in sources.iter().enumerate() {
                    let Some(src) = src.filter(|&s| s < r) else {
                        continue;
                    };
                    let local = &geo.local;
                    self.check(
                        || format!("{local:?} shuffle {} op{op} a={a} g={g}", T::CL_NAME),
                        v[(g * nargs + k) * 6 + op],
                        input[members[src]],
                    );
                }
            }
        }
    }

    fn algorithms<T: Elem>(&mut self, geo: &Geo) {
        let n = geo.n();
        let input: Vec<T> = (0..n).map(T::alg).collect();
        let inb = self.buf(&input);
        let out = self.buf(&vec![T::shuf(n + 1); 5 * n]);
        let k = self.kernel(&format!("clg_test_algorithms_{}", T::CL_NAME));
        // SAFETY: sized per the kernel's header entry (`G` = n work-items).
        unsafe { self.launch(k.launch().arg(&inb).arg(&out), &geo.global, &geo.local) };
        let v = self.read(&out);
        let t = geo.table();
        let fold = |f: fn(T, T) -> T, vs: &[T]| vs[1..].iter().fold(vs[0], |a, b| f(a, *b));
        for g in 0..n {
            let vals: Vec<T> = geo.members(&t, g).iter().map(|&m| input[m]).collect();
            let i = geo.lane(geo.split(g).1).0;
            let excl = if i == 0 {
                T::default()
            } else {
                fold(T::add, &vals[..i])
            };
            let want = [
                fold(T::add, &vals),
                fold(T::min, &vals),
                fold(T::max, &vals),
                fold(T::add, &vals[..=i]),
                excl,
            ];
            let local = &geo.local;
            self.check(
                || format!("{local:?} algorithms {} g={g} lane={i}", T::CL_NAME),
                &v[5 * g..5 * g + 5],
                &want[..],
            );
        }
    }

    fn votes(&mut self, geo: &Geo) {
        let n = geo.n();
        // False on every 5th item and on whole odd sub-groups of work-group 1.
        let input: Vec<i32> = (0..n)
            .map(|g| {
                let (w, l) = geo.split(g);
                let odd = geo.lane(l).1 % 2 == 1;
                if (w == 1 && odd) || g % 5 == 0 {
                    0
                } else {
                    -3
                }
            })
            .collect();
        let inb = self.buf(&input);
        let out = self.buf(&vec![7i32; 10 * n]);
        let k = self.kernel("clg_test_votes");
        // SAFETY: sized per the kernel's header entry (`G` = n work-items).
        unsafe { self.launch(k.launch().arg(&inb).arg(&out), &geo.global, &geo.local) };
        let v = self.read(&out);
        let t = geo.table();
        let any = |p: &[bool]| p.iter().any(|&b| b) as i32;
        let all = |p: &[bool]| p.iter().all(|&b| b) as i32;
        for g in 0..n {
            let members = geo.members(&t, g);
            let r = members.len();
            let p0: Vec<bool> = members.iter().map(|&m| input[m] != 0).collect();
            let p2: Vec<bool> = (0..r).map(|s| s == r - 1).collect();
            let p4: Vec<bool> = (0..r).map(|s| s != 0).collect();
            let want = [
                any(&p0),
                all(&p0),
                1,
                1,
                any(&p2),
                all(&p2),
                0,
                0,
                any(&p4),
                all(&p4),
            ];
            let local = &geo.local;
            self.check(
                || format!("{local:?} votes g={g}"),
                &v[10 * g..10 * g + 10],
                &want[..],
            );
        }
    }

    fn barrier_and_helpers(&mut self, geo: &Geo) {
        let n = geo.n();
        let input: Vec<i32> = (0..n).map(i32::shuf).collect();
        let inb = self.buf(&input);
        let t = geo.table();
        if geo.wg() <= 256 {
            let out = self.buf(&vec![i32::POISON; n]);
            let k = self.kernel("clg_test_barrier");
            // SAFETY: sized per the kernel's header entry; its 256-slot local array holds the
            // work-group (checked above).
            unsafe { self.launch(k.launch().arg(&inb).arg(&out), &geo.global, &geo.local) };
            let v = self.read(&out);
            for (g, got) in v.into_iter().enumerate() {
                let members = geo.members(&t, g);
                let i = geo.lane(geo.split(g).1).0;
                let local = &geo.local;
                let want = input[members[(i + 1) % members.len()]];
                self.check(|| format!("{local:?} barrier g={g}"), got, want);
            }
        }
        let out = self.buf(&vec![i32::POISON; 2 * n]);
        let k = self.kernel("clg_test_helpers");
        // SAFETY: sized per the kernel's header entry (`G` = n work-items).
        unsafe { self.launch(k.launch().arg(&inb).arg(&out), &geo.global, &geo.local) };
        let v = self.read(&out);
        for g in 0..n {
            let members = geo.members(&t, g);
            let i = geo.lane(geo.split(g).1).0;
            let sum = members.iter().fold(0i32, |a, &m| a.wrapping_add(input[m]));
            let want = [sum.wrapping_add(i as i32), members.len() as i32];
            let local = &geo.local;
            self.check(
                || format!("{local:?} helpers g={g}"),
                &v[2 * g..2 * g + 2],
                &want[..],
            );
        }
    }

    fn shape(&mut self, local: &[usize]) {
        let geo = Geo::new(local, self.size_for(local));
        self.ids(&geo);
        self.shuffles::<i32>(&geo);
        self.shuffles::<u32>(&geo);
        self.shuffles::<i64>(&geo);
        self.shuffles::<u64>(&geo);
        self.shuffles::<f32>(&geo);
        self.algorithms::<i32>(&geo);
        self.algorithms::<u32>(&geo);
        self.algorithms::<i64>(&geo);
        self.algorithms::<u64>(&geo);
        self.algorithms::<f32>(&geo);
        if self.queue.device().limits().fp64 {
            self.shuffles::<f64>(&geo);
            self.algorithms::<f64>(&geo);
        }
        self.votes(&geo);
        self.barrier_and_helpers(&geo);
    }
}

/// Local shapes: partial last sub-groups included (partial warps on `nvidia-ptx`).
fn shapes(_backend: ShuffleBackend) -> Vec<Vec<usize>> {
    let mut v: Vec<Vec<usize>> = [6, 31, 32, 33, 64, 200].map(|n| vec![n]).to_vec();
    v.extend([vec![8, 4], vec![16, 16], vec![4, 4, 2]]);
    v
}

/// Work-groups of one and two work-items, checked on every pass (PoCL 6.0's native collectives
/// abort there: the kernels' emulated builds run them).
const TINY: [&[usize]; 3] = [&[1], &[2], &[1, 2]];

/// Every check of the layer on `device` with the program default `size`; panics listing the
/// first failures.
fn check_layer(device: &Device, size: SubGroupSize) {
    let queue = Queue::new(device).expect("queue");
    let backend = device.sub_groups().effective.shuffle_backend;
    let mut suite = Suite::build(&queue, SRC, "subgroup_layer.cl", size);
    let sampled = common::sampled("subgroup_layer shapes", device, shapes(backend));
    for local in sampled.into_iter().chain(TINY.map(<[usize]>::to_vec)) {
        suite.shape(&local);
    }
    suite.report();
}

#[test]
fn layer_on_the_devices_own_backend() {
    let d = common::device();
    check_layer(&d, SubGroupSize::Primary);
    if d.sub_groups().effective.shuffle_backend == ShuffleBackend::Khr {
        check_layer(&d, SubGroupSize::Exact(16));
        check_layer(&d, SubGroupSize::Automatic);
    }
    for s in common::other_sizes(&d) {
        check_layer(&d, SubGroupSize::Exact(s));
    }
}

#[test]
fn layer_emulated_on_a_native_device() {
    let d = common::device();
    if !common::native_or_skip(&d, "layer_emulated_on_a_native_device") {
        return;
    }
    let emulated = d.with_backend(ShuffleBackend::Emulated).expect("emulated");
    check_layer(&emulated, SubGroupSize::Primary);
}

#[test]
fn layer_intel_on_a_native_device() {
    let d = common::device();
    match d.with_backend(ShuffleBackend::Intel) {
        Ok(intel) if d.sub_groups().effective.shuffle_backend != ShuffleBackend::Intel => {
            check_layer(&intel, SubGroupSize::Primary)
        }
        Ok(_) => eprintln!("intel is the device's own backend: covered there"),
        Err(e) => eprintln!("layer_intel_on_a_native_device: not run: {e}"),
    }
}
