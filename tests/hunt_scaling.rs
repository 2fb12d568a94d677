//! Adversarial kernels over a root device, each launch (or chain of launches, host writes,
//! fills, reads) mirrored on one device and compared byte for byte after every step: index
//! math through helpers and macros, pointer arithmetic, vector loads, aliasing, in-place
//! neighbours, gathers and scatters, atomics, global offsets, 2-D transposes, tiling, grid-stride
//! loops, wide stencils, narrow and wide element types, build options, coherence across chains.
//! Every root is forced to split (`SpreadPolicy::Split`), in partitioned placement (depths 1
//! and 3) and shared placement. Tests marked `#[ignore = "note: ..."]` would show a
//! questionable behaviour (the last two, writes through a `const` cast away and a macro named
//! like a work-item built-in, are fixed). The `findings` part holds the reproducers of fixed
//! bugs: writes and changes through parenthesized lvalues, build options and `#if` branches
//! unseen by the footprints, atomics and launch-value helpers in included headers, token-pasted
//! or `__sync_*` atomics merged, a lent part stale after a resident launch, a tiny colored
//! buffer refused.

mod common;

use bytemuck::Pod;
use clgroups::launch::{Launch, Local, LocalSize};
use clgroups::scaling::{
    ColoredBuffer, Placement, RootDevice, RootLaunch, RootProgram, Spread, SpreadPolicy,
};
use clgroups::{Buffer, Program, Queue, Range};

/// One side of a mirrored buffer on the root device.
#[allow(clippy::large_enum_variant)]
enum RootBuf<T: Pod> {
    Colored(ColoredBuffer<T>),
    Plain(Buffer<T>),
}

/// A buffer mirrored: on one device and over the root device.
struct Pair<T: Pod> {
    one: Buffer<T>,
    root: RootBuf<T>,
}

/// What the harness does with a mirrored buffer of any element type.
trait Twin {
    fn one_arg<'a>(&'a self, l: Launch<'a>) -> Launch<'a>;
    fn root_arg<'a>(&'a self, l: RootLaunch<'a>) -> RootLaunch<'a>;
    fn one_bytes(&self, q: &Queue) -> Vec<u8>;
    fn root_bytes(&self, root: &RootDevice) -> Vec<u8>;
    fn write_bytes(&mut self, q: &Queue, root: &RootDevice, bytes: &[u8]);
    fn fill_first(&mut self, q: &Queue, root: &RootDevice);
    fn elem(&self) -> usize;
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: Pod + Send + Sync + std::fmt::Debug + 'static> Twin for Pair<T> {
    fn one_arg<'a>(&'a self, l: Launch<'a>) -> Launch<'a> {
        l.arg(&self.one)
    }
    fn root_arg<'a>(&'a self, l: RootLaunch<'a>) -> RootLaunch<'a> {
        match &self.root {
            RootBuf::Colored(b) => l.arg(b),
            RootBuf::Plain(b) => l.arg(b),
        }
    }
    fn one_bytes(&self, q: &Queue) -> Vec<u8> {
        bytemuck::cast_slice(&self.one.read(q).unwrap()).to_vec()
    }
    fn root_bytes(&self, root: &RootDevice) -> Vec<u8> {
        let v = match &self.root {
            RootBuf::Colored(b) => b.read().unwrap(),
            RootBuf::Plain(b) => b.read(&root.queues()[0]).unwrap(),
        };
        bytemuck::cast_slice(&v).to_vec()
    }
    fn write_bytes(&mut self, q: &Queue, root: &RootDevice, bytes: &[u8]) {
        let mut v = vec![T::zeroed(); bytes.len() / size_of::<T>()];
        bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
        self.one.write(q, &v).unwrap();
        match &mut self.root {
            RootBuf::Colored(b) => b.write(&v).unwrap(),
            RootBuf::Plain(b) => b.write(&root.queues()[0], &v).unwrap(),
        }
    }
    /// Fills both with the first element's current value (one device's).
    fn fill_first(&mut self, q: &Queue, root: &RootDevice) {
        let v = self.one.read(q).unwrap()[0];
        self.one.fill(q, v).unwrap();
        match &mut self.root {
            RootBuf::Colored(b) => b.fill(v).unwrap(),
            RootBuf::Plain(b) => b.fill(&root.queues()[0], v).unwrap(),
        }
    }
    fn elem(&self) -> usize {
        size_of::<T>()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A kernel argument: a mirrored buffer (by index), a scalar, local memory (bytes).
#[derive(Clone, Copy, Debug)]
enum Arg {
    B(usize),
    I(i32),
    U(u32),
    S(i16),
    L(i64),
    Local(usize),
}

/// One program on one device and over a root device, with mirrored buffers.
struct Diff {
    name: String,
    q: Queue,
    root: RootDevice,
    one_p: Program,
    root_p: RootProgram,
    bufs: Vec<Box<dyn Twin>>,
    spreads: Vec<String>,
    /// Other roots over the same devices (other spreads, depths) and their programs.
    alts: Vec<(RootDevice, RootProgram)>,
    /// Which root launches: 0 the main one, `i` `alts[i - 1]`.
    via: usize,
    /// Root launches are not waited for (host accesses and later launches must order).
    nowait: bool,
}

impl Diff {
    fn new(name: &str, root: &RootDevice, src: &str, options: &str) -> Diff {
        let q = Queue::new(&root.devices()[0]).unwrap();
        let one_p = Program::builder(src).options(options).build(&q).unwrap();
        let root_p = root
            .build(Program::builder(src).options(options))
            .unwrap_or_else(|e| panic!("{name}: root build: {e}"));
        Diff {
            name: name.to_string(),
            q,
            root: root.clone(),
            one_p,
            root_p,
            bufs: Vec::new(),
            spreads: Vec::new(),
            alts: Vec::new(),
            via: 0,
            nowait: false,
        }
    }

    /// A mirrored buffer holding `data`: colored over the root, or plain on its queue 0.
    fn buf<T: Pod + Send + Sync + std::fmt::Debug + 'static>(
        &mut self,
        data: &[T],
        colored: bool,
    ) -> usize {
        let one = Buffer::from_slice(&self.q, data).unwrap();
        let root = match colored {
            true => RootBuf::Colored(ColoredBuffer::from_slice(&self.root, data).unwrap()),
            false => RootBuf::Plain(Buffer::from_slice(&self.root.queues()[0], data).unwrap()),
        };
        self.bufs.push(Box::new(Pair { one, root }));
        self.bufs.len() - 1
    }

    /// A colored mirrored buffer holding `data`.
    fn col<T: Pod + Send + Sync + std::fmt::Debug + 'static>(&mut self, data: &[T]) -> usize {
        self.buf(data, true)
    }

    /// Launches `kernel` on both sides and waits; the root's spread, or its error.
    fn try_launch(
        &mut self,
        kernel: &str,
        global: Range,
        local: Option<Range>,
        offset: Option<Range>,
        args: &[Arg],
    ) -> clgroups::Result<Spread> {
        let k1 = self.one_p.kernel(kernel).unwrap();
        let mut l = k1.launch();
        for a in args {
            l = match *a {
                Arg::B(i) => self.bufs[i].one_arg(l),
                Arg::I(v) => l.arg(v),
                Arg::U(v) => l.arg(v),
                Arg::S(v) => l.arg(v),
                Arg::L(v) => l.arg(v),
                Arg::Local(n) => l.arg(Local::<u8>::new(n)),
            };
        }
        if let Some(o) = offset {
            l = l.offset(o);
        }
        // SAFETY: every test sizes its buffers for the kernel's accesses over the range.
        let ev = unsafe {
            match local {
                Some(local) => l.nd_range(global, LocalSize::Exact(local)),
                None => l.range(global),
            }
        }
        .unwrap();
        ev.wait().unwrap();

        let kr = match self.via {
            0 => self.root_p.kernel(kernel).unwrap(),
            v => self.alts[v - 1].1.kernel(kernel).unwrap(),
        };
        let mut l = kr.launch();
        for a in args {
            l = match *a {
                Arg::B(i) => self.bufs[i].root_arg(l),
                Arg::I(v) => l.arg(v),
                Arg::U(v) => l.arg(v),
                Arg::S(v) => l.arg(v),
                Arg::L(v) => l.arg(v),
                Arg::Local(n) => l.arg(Local::<u8>::new(n)),
            };
        }
        if let Some(o) = offset {
            l = l.offset(o);
        }
        // SAFETY: as above, for the whole launch.
        let ev = unsafe {
            match local {
                Some(local) => l.nd_range(global, local),
                None => l.range(global),
            }
        }?;
        if !self.nowait {
            ev.wait()?;
        }
        let s = ev.spread().clone();
        self.spreads.push(format!("{kernel}: {}", words(&s)));
        Ok(s)
    }

    /// [`Diff::try_launch`], panicking on a refusal.
    fn launch(
        &mut self,
        kernel: &str,
        global: Range,
        local: Option<Range>,
        args: &[Arg],
    ) -> Spread {
        let name = self.name.clone();
        self.try_launch(kernel, global, local, None, args)
            .unwrap_or_else(|e| panic!("{name}: {kernel}: refused: {e}"))
    }

    /// Buffer `i` of ints as the one device holds it (the root's, after a [`Diff::check`]).
    fn ints_of(&self, i: usize) -> Vec<i32> {
        let bytes = self.bufs[i].one_bytes(&self.q);
        (bytes.chunks_exact(4))
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Host write of `data` into buffer `i` on both sides.
    fn write<T: Pod>(&mut self, i: usize, data: &[T]) {
        self.bufs[i].write_bytes(&self.q, &self.root, bytemuck::cast_slice(data));
    }

    /// The first mismatch of any buffer: (buffer, byte offset, element index), if any.
    fn first_mismatch(&self) -> Option<(usize, usize, Vec<u8>, Vec<u8>)> {
        for (b, t) in self.bufs.iter().enumerate() {
            let (w, g) = (t.one_bytes(&self.q), t.root_bytes(&self.root));
            if w != g {
                let at = (0..w.len()).find(|&i| w[i] != g[i]).unwrap();
                let e = t.elem();
                let el = at / e;
                return Some((
                    b,
                    el,
                    w[el * e..(el + 1) * e].to_vec(),
                    g[el * e..(el + 1) * e].to_vec(),
                ));
            }
        }
        None
    }

    /// Asserts every buffer equals its one-device twin byte for byte.
    fn check(&self, step: &str) {
        if std::env::var("HUNT_VERBOSE").is_ok() {
            eprintln!(
                "{} [{}] {step}: {:?}",
                self.name,
                desc(&self.root),
                self.spreads
            );
        }
        if let Some((b, el, w, g)) = self.first_mismatch() {
            panic!(
                "{} [{}]: WRONG after {step}: buffer {b} element {el}: one device {w:?}, root {g:?}; spreads {:?}",
                self.name,
                desc(&self.root),
                self.spreads
            );
        }
    }
}

fn words(s: &Spread) -> String {
    match s {
        Spread::Split => "split".into(),
        Spread::Merged { .. } => "merged".into(),
        Spread::OneDevice(r) => format!("one device ({r})"),
        Spread::Resident { .. } => "resident".into(),
        Spread::Fetched { .. } => "fetched".into(),
        other => format!("{other:?}"),
    }
}

fn desc(root: &RootDevice) -> String {
    format!(
        "{} devices, {:?}, depth {:?}",
        root.len(),
        root.placement(),
        root.halo_depth()
    )
}

/// The root devices every test runs over, all forced to do what the analysis proves:
/// partitioned at halo depths 1 and 3, and shared.
fn roots(test: &str) -> Vec<RootDevice> {
    let Some(root) = common::root_device(test) else {
        return Vec::new();
    };
    let root = root.with_spread(SpreadPolicy::Split);
    let part = root.clone().with_placement(Placement::Partitioned);
    let mut v = vec![part.clone(), part.with_halo_depth(3)];
    if root
        .devices()
        .iter()
        .all(|d| d.limits().host_unified_memory)
    {
        v.push(root.with_placement(Placement::Shared));
    }
    v
}

fn ints(n: usize, seed: u64) -> Vec<i32> {
    common::values(n, seed)
}

fn iota(n: usize) -> Vec<i32> {
    (0..n as i32).collect()
}

use Arg::{B, I, U};

fn d1(n: usize) -> Range {
    Range::d1(n)
}

const SIZES: &[usize] = &[1, 2, 3, 7, 61, 64, 97, 130, 300];

/// The sizes `test` runs over `root`: all of them, or in CI a third chosen per root
/// (`common::sampled`: the roots of one run, and the runs, cover different sizes), unless
/// `HUNT_SIZES` names them.
fn sizes_for(test: &str, root: &RootDevice, sizes: &[usize]) -> Vec<usize> {
    if std::env::var("HUNT_SIZES").is_ok() {
        return sizes.to_vec();
    }
    let label = format!("{test} [{}]", desc(root));
    common::sampled(&label, &root.devices()[0], sizes.to_vec())
}

impl Diff {
    /// Drops every buffer (the next size starts afresh).
    fn reset(&mut self) {
        self.bufs.clear();
        self.spreads.clear();
    }
}

/// For every root: one program, then `f` at each size (buffers reset in between).
fn each_diff(
    test: &str,
    src: &str,
    options: &str,
    sizes: &[usize],
    mut f: impl FnMut(&mut Diff, usize),
) {
    let sizes: Vec<usize> = match std::env::var("HUNT_SIZES") {
        Ok(v) => v.split(',').map(|s| s.parse().unwrap()).collect(),
        Err(_) => sizes.to_vec(),
    };
    for root in roots(test) {
        let mut d = Diff::new(test, &root, src, options);
        for n in sizes_for(test, &root, &sizes) {
            d.reset();
            d.name = format!("{test} n={n}");
            f(&mut d, n);
        }
        eprintln!("{test} [{}]: right", desc(&root));
    }
}

// Findings: each test reproduces one bug (ignored until fixed). Those whose symptom is memory
// corruption run their body in a child process (`CLGROUPS_CHECKED=0`, the release default),
// so that a crash fails the test instead of the binary.

/// The root device under test in partitioned placement, forced to split.
fn partitioned_split(test: &str) -> Option<RootDevice> {
    common::root_device(test).map(|r| {
        r.with_spread(SpreadPolicy::Split)
            .with_placement(Placement::Partitioned)
    })
}

/// Runs `kernel(y, x, n)` of `src` (options `opts`) over `n` work-items, `y` of `ylen` ints
/// (all -9) and `x = 0, 1, ...` of `n` ints, on one device and over the root; asserts equal.
fn repro_yxn(test: &str, src: &str, opts: &str, kernel: &str, n: usize, ylen: usize) {
    let Some(root) = partitioned_split(test) else {
        return;
    };
    let mut d = Diff::new(test, &root, src, opts);
    let y = d.col(&vec![-9i32; ylen]);
    let x = d.col(&iota(n));
    d.launch(kernel, d1(n), None, &[B(y), B(x), I(n as i32)]);
    d.check(kernel);
}

/// [`repro_yxn`] in a child process without checked mode (`test`: a test of `findings`).
fn repro_in_child(test: &str, src: &str, opts: &str, kernel: &str, n: usize, ylen: usize) {
    // A corrupted heap may also hang the child (seen on 3 devices): 60 s, then killed.
    let limit = Some(std::time::Duration::from_secs(60));
    common::in_child_within(test, &[("CLGROUPS_CHECKED", "0")], limit, || {
        repro_yxn(test, src, opts, kernel, n, ylen)
    });
}

fn perm(n: usize, seed: u64) -> Vec<i32> {
    let mut p: Vec<i32> = (0..n as i32).collect();
    let mut s = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    for i in (1..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p.swap(i, (s % (i as u64 + 1)) as usize);
    }
    p
}

/// The host's blur of `x`.
fn host_blur3(x: &[i32]) -> Vec<i32> {
    let n = x.len();
    (0..n)
        .map(|i| {
            let l = if i > 0 { x[i - 1] } else { 0 };
            let r = if i + 1 < n { x[i + 1] } else { 0 };
            l.wrapping_mul(100)
                .wrapping_add(x[i].wrapping_mul(10))
                .wrapping_add(r)
        })
        .collect()
}

/// Parts lent out (`ColoredBuffer::part`) and written through by single-device launches on
/// the root's queues, between root launches that keep margins or move buffers whole.
/// A header with an atomic helper, included through `-I` (the source the crate reads names
/// no atomic).
fn header_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hunt_scaling_inc_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("count.h"),
        "inline void count(volatile global int *c) { atomic_inc(c); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("group.h"),
        "inline int group_of(void) { return (int)get_group_id(0); }\n",
    )
    .unwrap();
    dir
}

const PART_SRC: &str = r#"
kernel void add(global int *p, int v) {
    p[get_global_id(0)] += v;
}
kernel void blur(global const int *x, global int *y, int n) {
    int i = get_global_id(0);
    y[i] = (i > 0 ? x[i - 1] : 0) * 100 + x[i] * 10 + (i + 1 < n ? x[i + 1] : 0);
}
kernel void copy(global int *y, global const int *x) {
    y[get_global_id(0)] = x[get_global_id(0)];
}
"#;

#[path = "hunt_scaling/chains.rs"]
mod chains;
#[path = "hunt_scaling/findings.rs"]
mod findings;
#[path = "hunt_scaling/grids.rs"]
mod grids;
#[path = "hunt_scaling/index_math.rs"]
mod index_math;
#[path = "hunt_scaling/writes_shapes.rs"]
mod writes_shapes;
