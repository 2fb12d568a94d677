//! Adversarial kernels over a root device, each launch (or chain of launches, host writes,
//! fills, reads) mirrored on one device and compared byte for byte after every step: index
//! math through helpers and macros, pointer arithmetic, vector loads, aliasing, in-place
//! neighbours, gathers and scatters, atomics, global offsets, 2-D transposes, tiling, grid-stride
//! loops, wide stencils, narrow and wide element types, build options, coherence across chains.
//! Every root is forced to split (`SpreadPolicy::Split`), in partitioned placement (depths 1
//! and 3) and shared placement. Tests marked `#[ignore = "finding: ..."]` reproduce a bug
//! (`cargo test --release --test hunt_scaling -- --ignored finding`), `"note: ..."` a
//! questionable behaviour. Findings: writes and changes through parenthesized lvalues
//! (`(y[i + 1]) = v`, `(j) = ..`, `&(j)`, `(n) = ..`, `(k) += ..`), build options and `#if`
//! branches unseen by the footprints, atomics and launch-value helpers unseen in included
//! headers, token-pasted or `__sync_*` atomics merged, a lent part stale after a resident
//! launch, a tiny colored buffer refused under a wider launch.

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
        for &n in &sizes {
            d.reset();
            d.name = format!("{test} n={n}");
            f(&mut d, n);
        }
        eprintln!("{test} [{}]: right", desc(&root));
    }
}

const INDEX_MATH: &str = r#"
int idx(int i, int w) { return i * w; }
int mirror(int i, int n) { return n - 1 - i; }
#define AT(a, i) a[(i) + 1]
#define W 2

kernel void through_helper(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[mirror(i, n)] = x[idx(i, 1)] + 1;
}
kernel void through_macro(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) AT(y, i) = x[i] * 3;
}
kernel void twice_by_literal(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[W * i] = x[i];
    y[W * i + 1] = -x[i];
}
kernel void minus_chain(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 1 && i + 1 < n) y[i] = x[i - 1 - 1 + 1] * 10 + x[i + 1 - 1 + 1];
}
kernel void negative_scale(global int *y, global const int *x, int s, int o) {
    int i = get_global_id(0);
    y[i * s + o] = x[i] + 5;
}
kernel void octal_hex(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 010 < n) y[i] = x[i + 010] + x[i + 0x3];
    else y[i] = -1;
}
kernel void narrow_cast(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 256) y[(uchar)i] = x[i];
}
kernel void short_cast(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 40) y[(ushort)(i + 65496)] = x[i];
}
kernel void unsigned_wrap(global int *y, global const int *x, uint n) {
    uint i = get_global_id(0);
    uint j = i - 1u;
    y[i] = j < n ? x[j] : 100;
}
kernel void shadowed(global int *y, global int *z, global const int *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i];
    if (i == 0) {
        int i = n - 1;
        z[i] = 77;
    }
}
kernel void local_changed_via_pointer(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    int j = i;
    int *pj = &j;
    *pj = n - 1 - i;
    y[j] = x[i];
}
void bump(int *k, int n) { *k = n - 1 - *k; }
kernel void local_changed_in_helper(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    int j = i;
    bump(&j, n);
    y[j] = x[i];
}
kernel void deref_write(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) *(y + i + 1) = x[i];
}
kernel void comment_in_index(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) y[i /* + 5 */ + 1 // - 1
    ] = x[i];
}
kernel void group_math(global int *y, global const int *x) {
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    y[i] = x[i] * 2 + (int)get_local_id(0);
}
kernel void dim1_in_1d(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i + get_global_id(1) * 1000] = x[i] + 1;
}
"#;

#[test]
fn index_math_of_every_spelling() {
    each_diff(
        "index_math_of_every_spelling",
        INDEX_MATH,
        "",
        SIZES,
        |d, n| {
            let x = ints(n, n as u64);
            let n_i = n as i32;
            let cases: &[(&str, Vec<Arg>)] = &[
                ("through_helper", vec![I(n_i)]),
                ("through_macro", vec![I(n_i)]),
                ("minus_chain", vec![I(n_i)]),
                ("octal_hex", vec![I(n_i)]),
                ("narrow_cast", vec![I(n_i)]),
                ("short_cast", vec![I(n_i)]),
                ("unsigned_wrap", vec![U(n as u32)]),
                ("local_changed_via_pointer", vec![I(n_i)]),
                ("local_changed_in_helper", vec![I(n_i)]),
                ("deref_write", vec![I(n_i)]),
                ("comment_in_index", vec![I(n_i)]),
                ("group_math", vec![]),
                ("dim1_in_1d", vec![]),
            ];
            for (k, rest) in cases {
                if (*k == "octal_hex" && n < 9) || (*k == "group_math" && n % 2 == 1 && n > 3) {
                    continue;
                }
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                let mut args = vec![B(y), B(xb)];
                args.extend(rest.iter().copied());
                let local = (*k == "group_math").then(|| d1(if n % 2 == 0 { 2 } else { 1 }));
                d.launch(k, d1(n), local, &args);
                d.check(k);
            }
            // Two outputs, and the literal multiple.
            d.reset();
            let y = d.col(&vec![-9i32; 2 * n]);
            let xb = d.col(&x);
            d.launch("twice_by_literal", d1(n), None, &[B(y), B(xb)]);
            d.check("twice_by_literal");
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let z = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("shadowed", d1(n), None, &[B(y), B(z), B(xb), I(n_i)]);
            d.check("shadowed");
            // Reversed through a negative scalar stride.
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch(
                "negative_scale",
                d1(n),
                None,
                &[B(y), B(xb), I(-1), I(n_i - 1)],
            );
            d.check("negative_scale");
        },
    );
}

const OPTIONS_SRC: &str = r#"
#ifndef STRIDE
#define STRIDE 1
#endif
kernel void strided(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * STRIDE] = x[i] + 1;
}
#ifdef SHIFTED
kernel void variant(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i];
}
#else
kernel void variant(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i];
}
#endif
#define K 1
kernel void first_k(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * K] = x[i];
}
#undef K
#define K 2
kernel void second_k(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * K] = x[i];
}
"#;

#[test]
fn build_options_and_redefined_macros() {
    // -DSTRIDE=2 over the source's default: finding_build_option_overriding_a_default_macro.
    for opts in ["", "-DSHIFTED", "-D SHIFTED=1"] {
        let stride = 1;
        each_diff(
            "build_options_and_redefined_macros",
            OPTIONS_SRC,
            opts,
            SIZES,
            |d, n| {
                let x = ints(n, 3);
                let y = d.col(&vec![-9i32; stride * n]);
                let xb = d.col(&x);
                d.launch("strided", d1(n), None, &[B(y), B(xb)]);
                d.check(&format!("strided {opts}"));
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                d.launch("variant", d1(n), None, &[B(y), B(xb), I(n as i32)]);
                d.check(&format!("variant {opts}"));
                d.reset();
                let y = d.col(&vec![-9i32; 2 * n]);
                let xb = d.col(&x);
                d.launch("first_k", d1(n), None, &[B(y), B(xb)]);
                d.launch("second_k", d1(n), None, &[B(y), B(xb)]);
                d.check("first_k, second_k");
            },
        );
    }
}

const WRITES_SRC: &str = r#"
typedef struct { int a; short b; char c; } S;
typedef struct { global int *p; int off; } View;
kernel void vec4(global int *y, global const int *x) {
    int i = get_global_id(0);
    int4 v = vload4(i, x);
    vstore4(v * 2 + (int4)(1, 2, 3, 4), i, y);
}
kernel void vec4_shifted(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (4 * i + 5 < 4 * n) vstore4(vload4(i + 1, x), i, y + 1);
}
kernel void half_only(global float *y, global const half *x) {
    int i = get_global_id(0);
    y[i] = vload_half(i, x) * 2.0f;
}
kernel void struct_member(global S *s, global const int *x) {
    int i = get_global_id(0);
    s[i].a = x[i];
    s[i].b = (short)(x[i] * 3);
    s[i].c = (char)i;
}
kernel void through_view(global int *y, global const int *x, int off, int n) {
    int i = get_global_id(0);
    View v;
    v.p = y;
    v.off = off;
    if (i + off < n) v.p[i + v.off] = x[i];
}
kernel void offset_param(global int *y, global const int *x, int off, int n) {
    global int *row = y + off;
    int i = get_global_id(0);
    if (i + off < n) row[i] = x[i] * 7;
}
kernel void rows(global int *a, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    global int *row = a + y * w;
    row[x] = row[x] * 2 + y;
}
kernel void const_cast(global const int *x) {
    int i = get_global_id(0);
    ((global int *)x)[i] = x[i] + 1000;
}
kernel void hist(global int *h, global const int *x, int nb) {
    int i = get_global_id(0);
    atomic_add(&h[(x[i] & 0xff) % nb], 1);
}
kernel void counter_max(global int *m, global const int *x) {
    atomic_max(&m[0], x[get_global_id(0)]);
}
"#;

#[test]
fn vectors_structs_views_atomics() {
    each_diff(
        "vectors_structs_views_atomics",
        WRITES_SRC,
        "",
        SIZES,
        |d, n| {
            let x = ints(4 * n + 8, 11);
            let y = d.col(&vec![-9i32; 4 * n]);
            let xb = d.col(&x);
            d.launch("vec4", d1(n), None, &[B(y), B(xb)]);
            d.check("vec4");
            d.launch("vec4_shifted", d1(n), None, &[B(y), B(xb), I(n as i32)]);
            d.check("vec4_shifted");

            d.reset();
            let hx: Vec<u16> = (0..n)
                .map(|i| half::f16::from_f32(i as f32 - 3.5).to_bits())
                .collect();
            let hx: Vec<half::f16> = hx.into_iter().map(half::f16::from_bits).collect();
            let y = d.col(&vec![0f32; n]);
            let xb = d.col(&hx);
            d.launch("half_only", d1(n), None, &[B(y), B(xb)]);
            d.check("half_only");

            d.reset();
            let s = d.col(&vec![[0i32; 2]; n]);
            let xb = d.col(&x);
            d.launch("struct_member", d1(n), None, &[B(s), B(xb)]);
            d.check("struct_member");

            for off in [0, 1, 5] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                d.launch(
                    "through_view",
                    d1(n),
                    None,
                    &[B(y), B(xb), I(off), I(n as i32)],
                );
                d.check("through_view");
                d.launch(
                    "offset_param",
                    d1(n),
                    None,
                    &[B(y), B(xb), I(off), I(n as i32)],
                );
                d.check("offset_param");
            }

            d.reset();
            let w = 5;
            let a = d.col(&ints(w * n, 2));
            d.launch("rows", Range::d2(w, n), None, &[B(a), I(w as i32)]);
            d.check("rows");

            d.reset();
            let h = d.col(&[0i32; 2]);
            let xb = d.col(&x);
            d.launch("hist", d1(n), None, &[B(h), B(xb), I(2)]);
            d.check("hist");
            let h = d.col(&[0i32; 7]);
            d.launch("hist", d1(n), None, &[B(h), B(xb), I(7)]);
            d.check("hist 7");
            let m = d.col(&[i32::MIN]);
            d.launch("counter_max", d1(n), None, &[B(m), B(xb)]);
            d.check("counter_max");
        },
    );
}

/// Note (documented, not a bug of the analysis): writes through a `const` pointee cast away,
/// `((global int *)x)[i] = ...`, are lost in partitioned placement: "only reads" is the
/// driver's `const`, so the buffer is replicated and not merged (root: x unchanged). Valid C
/// where the buffer itself is writable; a refusal would be kinder.
#[test]
#[ignore = "note: writes through a const pointee cast away are dropped (const is trusted)"]
fn note_const_cast_away_writes_are_lost() {
    each_diff(
        "note_const_cast_away_writes_are_lost",
        WRITES_SRC,
        "",
        &[1, 64],
        |d, n| {
            let xb = d.col(&ints(n, 11));
            d.launch("const_cast", d1(n), None, &[B(xb)]);
            d.check("const_cast");
        },
    );
}

const SHAPES_SRC: &str = r#"
kernel void with_offset(global int *y, global const int *x) {
    int i = get_global_id(0);
    int o = get_global_offset(0);
    y[i] = x[i - o] * 2 + o;
}
kernel void transpose(global int *dst, global const int *src, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    dst[x * h + y] = src[y * w + x];
}
kernel void col_sums(global int *out, global const int *a, int w, int h) {
    int c = get_global_id(0);
    int s = 0;
    for (int r = 0; r < h; r++) s += a[r * w + c];
    out[c] = s;
}
kernel void tiled(global int *y, global const int *x, local int *tile, int n) {
    int l = get_local_id(0), g = get_group_id(0), L = get_local_size(0);
    int base = g * L;
    tile[l] = x[base + l];
    if (l == 0 && base + L < n) tile[L] = x[base + L];
    barrier(CLK_LOCAL_MEM_FENCE);
    int right = (l + 1 < L || base + L < n) ? tile[l + 1] : 0;
    y[base + l] = tile[l] * 10 + right;
}
kernel void grid_stride(global int *y, global const int *x, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + i;
}
kernel void radius(global int *y, global const int *x, int r, int n) {
    int i = get_global_id(0);
    int s = 0;
    for (int k = -r; k <= r; k++) {
        int j = i + k;
        if (j >= 0 && j < n) s += x[j];
    }
    y[i] = s;
}
kernel void radius3(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 3 && i + 3 < n) y[i] = x[i - 3] + x[i + 3] * 2;
    else y[i] = x[i];
}
kernel void early_return(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    if (x[i] < 0) return;
    y[i] = x[i] + 1;
}
kernel void chars(global char *y, global const char *x, int n) {
    int i = get_global_id(0);
    y[i] = (char)(x[i] + (i + 1 < n ? x[i + 1] : 0));
}
kernel void shorts(global short *y, global const short *x, int n) {
    int i = get_global_id(0);
    y[i] = (short)(x[i] * 3 - (i > 0 ? x[i - 1] : 0));
}
kernel void doubles(global double *y, global const double *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i] * 0.5 + (i > 0 ? x[i - 1] : 1.0);
}
kernel void longs(global long *y, global const long *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] + (long)i;
}
kernel void bytes_as_ints(global uchar *y, global const int *x) {
    int i = get_global_id(0);
    y[4 * i] = (uchar)x[i];
    y[4 * i + 1] = (uchar)(x[i] >> 8);
    y[4 * i + 2] = 0;
    y[4 * i + 3] = 1;
}
kernel void inplace_neighbour(global int *a, int n) {
    int i = get_global_id(0);
    a[i] = a[i] * 2 + 1;
}
kernel void gather(global int *y, global const int *x, global const int *idx) {
    int i = get_global_id(0);
    y[i] = x[idx[i]];
}
kernel void scatter(global int *y, global const int *x, global const int *idx) {
    int i = get_global_id(0);
    y[idx[i]] = x[i];
}
kernel void cond_write(global int *y, global const int *x) {
    int i = get_global_id(0);
    if (x[i] > 0) y[i] = x[i];
}
"#;

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

#[test]
fn shapes_types_and_ranges() {
    each_diff("shapes_types_and_ranges", SHAPES_SRC, "", SIZES, |d, n| {
        let ni = n as i32;
        let x = ints(n, 21);
        // A global offset (the kernel subtracts it).
        for off in [1usize, 5] {
            d.reset();
            let y = d.col(&vec![-9i32; n + off]);
            let xb = d.col(&x);
            d.try_launch("with_offset", d1(n), None, Some(d1(off)), &[B(y), B(xb)])
                .unwrap_or_else(|e| panic!("with_offset refused: {e}"));
            d.check("with_offset");
        }
        // 2-D: a transpose and column sums of w x n, the split along rows.
        for w in [1usize, 3, 17] {
            d.reset();
            let a = d.col(&ints(w * n, 4));
            let t = d.col(&vec![-9i32; w * n]);
            d.launch(
                "transpose",
                Range::d2(w, n),
                None,
                &[B(t), B(a), I(w as i32), I(ni)],
            );
            d.check("transpose");
            // back again: the transposed is n wide, w high
            let b = d.col(&vec![-9i32; w * n]);
            d.launch(
                "transpose",
                Range::d2(n, w),
                None,
                &[B(b), B(t), I(ni), I(w as i32)],
            );
            d.check("transpose back");
            let s = d.col(&vec![-9i32; w]);
            d.launch("col_sums", d1(w), None, &[B(s), B(a), I(w as i32), I(ni)]);
            d.check("col_sums");
        }
        // Tiles in local memory, one element beyond.
        for l in [1usize, 2, 4] {
            if n % l != 0 {
                continue;
            }
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch(
                "tiled",
                d1(n),
                Some(d1(l)),
                &[B(y), B(xb), Arg::Local(4 * (l + 1)), I(ni)],
            );
            d.check("tiled");
        }
        // Grid-stride over fewer work-items than elements.
        for g in [1usize, 3, 8] {
            if n < d.root.len() && g > n && std::env::var("HUNT_TINY").is_err() {
                continue; // finding: tiny_buffer_under_a_wider_launch_is_refused
            }
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("grid_stride", d1(g), None, &[B(y), B(xb), I(ni)]);
            d.check("grid_stride");
        }
        for r in [0, 1, 3, 40] {
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("radius", d1(n), None, &[B(y), B(xb), I(r), I(ni)]);
            d.check("radius");
        }
        d.reset();
        let y = d.col(&vec![-9i32; n]);
        let xb = d.col(&x);
        d.launch("radius3", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("radius3");
        d.launch("early_return", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("early_return");
        d.launch("cond_write", d1(n), None, &[B(y), B(xb)]);
        d.check("cond_write");
        d.launch("inplace_neighbour", d1(n), None, &[B(y), I(ni)]);
        d.check("inplace_neighbour");
        let p = perm(n, n as u64);
        let pb = d.col(&p);
        d.launch("gather", d1(n), None, &[B(y), B(xb), B(pb)]);
        d.check("gather");
        d.launch("scatter", d1(n), None, &[B(y), B(xb), B(pb)]);
        d.check("scatter");

        d.reset();
        let cx: Vec<i8> = x.iter().map(|&v| v as i8).collect();
        let y = d.col(&vec![0i8; n]);
        let xb = d.col(&cx);
        d.launch("chars", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("chars");
        let sx: Vec<i16> = x.iter().map(|&v| v as i16).collect();
        let y = d.col(&vec![0i16; n]);
        let xb = d.col(&sx);
        d.launch("shorts", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("shorts");
        let fx: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let y = d.col(&vec![0f64; n]);
        let xb = d.col(&fx);
        d.launch("doubles", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("doubles");
        let lx: Vec<i64> = x.iter().map(|&v| (v as i64) << 33).collect();
        let y = d.col(&vec![0i64; n]);
        let xb = d.col(&lx);
        d.launch("longs", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("longs");
        let y = d.col(&vec![0u8; 4 * n]);
        let xb = d.col(&x);
        d.launch("bytes_as_ints", d1(n), None, &[B(y), B(xb)]);
        d.check("bytes_as_ints");
    });
}

impl Diff {
    /// Adds a root over the same devices launching the same program (another spread or depth).
    fn alt(&mut self, root: RootDevice, src: &str) {
        let p = root.program(src).unwrap();
        self.alts.push((root, p));
    }

    /// The sum of colored `i32` buffer `b` by `scaling::reduce_sum`, and on the host from one
    /// device's copy.
    fn sums(&self, b: usize) -> (i32, i32) {
        let pair = self.bufs[b].as_any().downcast_ref::<Pair<i32>>().unwrap();
        let RootBuf::Colored(c) = &pair.root else {
            panic!("not colored")
        };
        let got = clgroups::scaling::reduce_sum(&self.root, c).unwrap();
        let want = pair.one.read(&self.q).unwrap();
        (want.iter().fold(0i32, |a, &v| a.wrapping_add(v)), got)
    }
}

const CHAIN_SRC: &str = r#"
kernel void blur_r(global const int *x, global int *y, int r, int n) {
    int i = get_global_id(0);
    int s = 0;
    for (int k = -r; k <= r; k++) {
        int j = i + k;
        s = s * 3 + ((j >= 0 && j < n) ? x[j] : 1);
    }
    y[i] = s;
}
kernel void cond_step(global const int *x, global int *y, int n) {
    int i = get_global_id(0);
    if (x[i] & 1) y[i] = (i > 0 ? x[i - 1] : x[n - 1]) + 3;
}
kernel void scale_inplace(global int *a) {
    int i = get_global_id(0);
    a[i] = a[i] * 3 + 1;
}
kernel void shift_by(global const int *x, global int *y, int s, int n) {
    int i = get_global_id(0);
    y[i] = (i + s < n) ? x[i + s] : -i;
}
kernel void heat(global const int *t, global int *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]) / 4 + 1;
}
kernel void mirror(global const int *x, global int *y, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] ^ 5;
}
"#;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self, m: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % m
    }
}

/// A seeded chain over two colored buffers (1-D `n`, or `w` x `n/w` for heat) through roots
/// of every spread, with host writes, fills, reduces and reads in between.
fn chain(d: &mut Diff, n: usize, seed: u64, steps: usize) {
    chain_with(d, n, seed, steps, true)
}

/// [`chain`] with `b` plain (`colored_b: false`) or colored.
fn chain_with(d: &mut Diff, n: usize, seed: u64, steps: usize, colored_b: bool) {
    let mut rng = Lcg(seed);
    let (w, h) = (
        if n % 5 == 0 { 5 } else { 1 },
        n / if n % 5 == 0 { 5 } else { 1 },
    );
    let ni = n as i32;
    let a = d.col(&ints(n, seed));
    let b = d.buf(&ints(n, seed + 1), colored_b);
    let mut log = Vec::new();
    for step in 0..steps {
        let (src, dst) = if rng.next(2) == 0 { (a, b) } else { (b, a) };
        d.via = rng.next(d.alts.len() as u64 + 1) as usize;
        let op = rng.next(11);
        log.push(format!("{step}: op {op} via {} {src}->{dst}", d.via));
        match op {
            0 | 1 => {
                let r = rng.next(4) as i32;
                d.launch("blur_r", d1(n), None, &[B(src), B(dst), I(r), I(ni)]);
            }
            2 => {
                d.launch("cond_step", d1(n), None, &[B(src), B(dst), I(ni)]);
            }
            3 => {
                d.launch("scale_inplace", d1(n), None, &[B(dst)]);
            }
            4 => {
                let s = rng.next(3) as i32;
                d.launch("shift_by", d1(n), None, &[B(src), B(dst), I(s), I(ni)]);
            }
            5 | 6 => {
                d.launch(
                    "heat",
                    Range::d2(w, h),
                    None,
                    &[B(src), B(dst), I(w as i32), I(h as i32)],
                );
            }
            7 => {
                d.launch("mirror", d1(n), None, &[B(src), B(dst), I(ni)]);
            }
            8 => d.write(dst, &ints(n, seed + step as u64)),
            9 => d.bufs[dst].fill_first(&d.q, &d.root),
            _ if colored_b || dst == a => {
                let (want, got) = d.sums(dst);
                assert_eq!(got, want, "{}: reduce_sum after {log:?}", d.name);
            }
            _ => {}
        }
        if rng.next(3) == 0 || step + 1 == steps {
            d.check(&format!("{log:?}"));
        }
    }
}

#[test]
fn chains_across_spreads_with_host_access() {
    let sizes = [1usize, 2, 3, 10, 35, 64, 97, 130];
    for root in roots("chains_across_spreads_with_host_access") {
        let mut d = Diff::new("chains", &root, CHAIN_SRC, "");
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for &n in &sizes {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                d.reset();
                d.name = format!("chains n={n} seed={seed}");
                chain(&mut d, n, seed, common::env_or("HUNT_STEPS", 30usize));
            }
        }
        eprintln!("chains [{}]: right", desc(&root));
    }
}

// ---------------------------------------------------------------------------------------
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

/// [`repro_yxn`] in a child process without checked mode.
fn repro_in_child(test: &str, src: &str, opts: &str, kernel: &str, n: usize, ylen: usize) {
    const CHILD: &str = "HUNT_CHILD";
    if std::env::var(CHILD).is_ok() {
        repro_yxn(test, src, opts, kernel, n, ylen);
        println!("CHILD-OK");
        std::process::exit(0);
    }
    // A corrupted heap may also hang the child (seen on 3 devices): 60 s, then killed.
    let dir = std::env::temp_dir();
    let (out_path, err_path) = (
        dir.join(format!("{test}.{}.out", std::process::id())),
        dir.join(format!("{test}.{}.err", std::process::id())),
    );
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test,
            "--nocapture",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("CLGROUPS_CHECKED", "0")
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{test}: child hung for 60 s (killed)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let why = (stderr.lines())
        .find(|l| l.contains("WRONG") || l.contains("refused"))
        .unwrap_or("");
    assert!(
        status.success() && stdout.contains("CHILD-OK"),
        "{test}: child {status:?}: {why}"
    );
}

/// Finding 1: a parenthesized element as the target of an assignment, `(y[i + 1]) = v`, is
/// not seen as a write (`footprint/uses.rs` looks only at the token after `]`): `y` counts as
/// read at `i + 1`, so the device whose last work-item writes `y[i + 1]` into its fetched
/// margin copy loses that write. 2 devices, n = 64: y[32] stays -9 (one device: 31).
#[test]
#[ignore = "finding: (y[i + 1]) = v is not seen as a write: the write across the part boundary is lost"]
fn finding_parenthesized_element_write_is_lost() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        if (i + 1 < n) (y[i + 1]) = x[i];
    }";
    repro_yxn(
        "finding_parenthesized_element_write_is_lost",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

/// Finding 2: a local (or scalar parameter, or loop variable) changed through a parenthesized
/// name, `(j) = ...`, `&(j)`, `(k) += ...`, keeps the value of its declaration
/// (`footprint/parse.rs::modified` and `address_of` look only at the neighbouring tokens), so
/// `y[j]` counts as `y[i]`: each device writes the other's elements outside its part.
/// Release builds (checked mode off): heap corruption (abort, SIGSEGV) or wrong values;
/// `CLGROUPS_CHECKED=1` reports `OutOfChunk`. 2 devices, n = 64.
#[test]
#[ignore = "finding: (j) = ..., &(j), (n) = ... not seen as changes: writes outside the device's part (heap corruption)"]
fn finding_parenthesized_change_of_a_local_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        int j = i;
        (j) = n - 1 - i;
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_local_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

#[test]
#[ignore = "finding: &(j) is not seen as taking j's address: writes outside the device's part"]
fn finding_address_of_parenthesized_local_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        int j = i;
        int *pj = &(j);
        *pj = n - 1 - i;
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_address_of_parenthesized_local_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

#[test]
#[ignore = "finding: (n) = ... is not seen as a change of scalar parameter n"]
fn finding_parenthesized_change_of_a_parameter_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        (n) = 0;
        y[63 - i + n] = x[i];
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_parameter_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

/// Finding 3: build options are not seen by the footprints: with `#ifndef STRIDE` /
/// `#define STRIDE 1` in the source and `-DSTRIDE=2` in the options, `y[i * STRIDE]` is read
/// as `y[i]` (the macro's one definition in the source: `footprint/expr.rs::resolve`), so the
/// launch is split as own-id while each device writes `y[2 i]`: outside its part. Release:
/// heap corruption; checked: `OutOfChunk`. 2 or 3 devices, n = 64.
#[test]
#[ignore = "finding: -DSTRIDE=2 over #ifndef STRIDE / #define STRIDE 1: footprint uses 1, writes land outside the part"]
fn finding_build_option_overriding_a_default_macro() {
    const SRC: &str = "#ifndef STRIDE
    #define STRIDE 1
    #endif
    kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        y[i * STRIDE] = x[i];
    }";
    repro_in_child(
        "finding_build_option_overriding_a_default_macro",
        SRC,
        "-DSTRIDE=2",
        "k",
        64,
        128,
    );
}

/// Finding 3b: the same for a read: `x[i + R]` with `#define R 1` by default and `-DR=3`:
/// each device fetches a margin of 1 and reads 3 beyond its part.
#[test]
#[ignore = "finding: -DR=3 over #ifndef R / #define R 1: reads beyond the fetched margin"]
fn finding_build_option_widening_a_read() {
    const SRC: &str = "#ifndef R
    #define R 1
    #endif
    kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        y[i] = i + R < n ? x[i + R] : -1;
    }";
    repro_in_child(
        "finding_build_option_widening_a_read",
        SRC,
        "-DR=3",
        "k",
        64,
        64,
    );
}

/// Finding 4 (valid launch refused): a colored buffer shorter than the device count (device 1
/// holds none of it) under a launch wider than it whose extra work-items touch nothing
/// (a grid-stride loop over 8 work-items: two work-groups): `InvalidInput: ...
/// device 1 holds none of its elements`. One device runs it.
#[test]
#[ignore = "finding: a 1-element colored buffer under an 8-work-item grid-stride launch is refused (device 1 holds none of it)"]
fn finding_tiny_buffer_under_a_wider_launch_is_refused() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + 1;
    }";
    for root in roots("finding_tiny_buffer_under_a_wider_launch_is_refused") {
        let mut d = Diff::new(&format!("tiny {}", desc(&root)), &root, SRC, "");
        for g in [1, 3, 8, 64] {
            d.reset();
            let y = d.col(&[-9i32]);
            let x = d.col(&[5i32]);
            d.launch("k", d1(g), None, &[B(y), B(x), I(1)]);
            d.check("k");
        }
    }
}

const BUILTINS_SRC: &str = r#"
kernel void sizes1(global int *y) {
    size_t i = get_global_id(0) - get_global_offset(0);
    y[i] = (int)(get_global_size(0) * 100000 + get_num_groups(0) * 1000 + get_group_id(0) * 10
                 + get_work_dim()) ^ (int)(get_local_size(0) << 20) ^ (int)(get_global_linear_id() << 8)
                 ^ (int)(get_local_linear_id() << 4) ^ (int)get_global_offset(0);
}
kernel void sizes2(global int *y) {
    size_t x = get_global_id(0) - get_global_offset(0), r = get_global_id(1) - get_global_offset(1);
    size_t i = r * get_global_size(0) + x;
    y[i] = (int)(get_global_size(1) * 100000 + get_num_groups(1) * 1000 + get_group_id(1) * 10
                 + get_work_dim()) ^ (int)(get_local_size(1) << 20) ^ (int)(get_global_linear_id() << 8)
                 ^ (int)(get_global_size(0) << 24) ^ (int)(get_group_id(0) << 16)
                 ^ (int)get_global_offset(1);
}
#define get_global_id(d) get_local_id(d)
kernel void redefined_builtin(global int *y, global const int *x) {
    if (get_group_id(0) == 0) y[get_global_id(0)] = x[get_global_id(0)] + 1;
}
"#;

#[test]
fn work_item_builtins_report_the_whole_launch() {
    each_diff(
        "work_item_builtins_report_the_whole_launch",
        BUILTINS_SRC,
        "",
        &[1, 3, 7, 64, 97],
        |d, n| {
            for off in [0usize, 3] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let o = (off > 0).then(|| d1(off));
                let l = if n % 8 == 0 { 8 } else { 1 };
                d.try_launch("sizes1", d1(n), Some(d1(l)), o, &[B(y)])
                    .unwrap();
                d.check("sizes1 nd");
                for w in [1usize, 5] {
                    d.reset();
                    let y = d.col(&vec![-9i32; w * n]);
                    let o = (off > 0).then(|| Range::d2(off, off + 1));
                    let l = if n % 8 == 0 { 8 } else { 1 };
                    d.try_launch("sizes2", Range::d2(w, n), Some(Range::d2(1, l)), o, &[B(y)])
                        .unwrap();
                    d.check("sizes2 nd");
                }
            }
        },
    );
}

/// Note (contrived): a macro named like a work-item built-in (`#define get_global_id(d)
/// get_local_id(d)`) also rewrites the partitioned variant's own `get_group_id` macro (defined
/// through `get_global_id`, `src/transform/partitioned.rs`), so device 1's work-items see
/// group 0 and write outside their part: heap corruption in release builds (PoCL aborts in
/// `pocl_create_migration_commands`), `OutOfChunk` in checked mode. Runs with `HUNT_CRASH=1`
/// (it takes the test binary down).
#[test]
#[ignore = "note: #define get_global_id(d) get_local_id(d) breaks the partitioned variant's get_group_id"]
fn note_redefined_builtin() {
    if std::env::var("HUNT_CRASH").is_err() {
        eprintln!("note_redefined_builtin: aborts the process; run with HUNT_CRASH=1");
        return;
    }
    each_diff("note_redefined_builtin", BUILTINS_SRC, "", &[64], |d, n| {
        let y = d.col(&vec![-9i32; n]);
        let x = d.col(&iota(n));
        d.launch("redefined_builtin", d1(n), Some(d1(16)), &[B(y), B(x)]);
        d.check("redefined_builtin");
    });
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
#[test]
fn lent_parts_written_between_root_launches() {
    for root in roots("lent_parts_written_between_root_launches") {
        let p = root.program(PART_SRC).unwrap();
        let (add, blur) = (p.kernel("add").unwrap(), p.kernel("blur").unwrap());
        let one = Program::from_source(&root.queues()[1], PART_SRC).unwrap();
        let one_add = one.kernel("add").unwrap();
        for n in [2usize, 3, 64, 97] {
            let mut want: Vec<i32> = iota(n);
            let x = ColoredBuffer::from_slice(&root, &want).unwrap();
            let y = ColoredBuffer::<i32>::new(&root, n).unwrap();
            let blur_now = |x: &ColoredBuffer<i32>| {
                // SAFETY: work-item i < n writes y[i], reads x[i - 1 ..= i + 1] inside n.
                unsafe { blur.launch().arg(x).arg(&y).arg(n as i32).range(n) }
                    .unwrap()
                    .wait()
                    .unwrap();
            };
            blur_now(&x);
            assert_eq!(y.read().unwrap(), host_blur3(&want), "{n}: first blur");
            let stored = x.stored()[1];
            let Some(part) = x.part(1) else {
                continue; // shared placement's pages: device 1 holds none of a small buffer
            };
            // SAFETY: one work-item per element of the part.
            unsafe {
                one_add
                    .launch()
                    .arg(part)
                    .arg(1000i32)
                    .range(stored.1 - stored.0)
            }
            .unwrap()
            .wait()
            .unwrap();
            for v in &mut want[stored.0..stored.1] {
                *v += 1000;
            }
            blur_now(&x);
            assert_eq!(
                y.read().unwrap(),
                host_blur3(&want),
                "{n} [{}]: blur after a write through part 1",
                desc(&root)
            );
            // SAFETY: as above.
            unsafe { add.launch().arg(&x).arg(1i32).range(n) }
                .unwrap()
                .wait()
                .unwrap();
            for v in &mut want {
                *v += 1;
            }
            assert_eq!(x.read().unwrap(), want, "{n}: after a split add");
        }
        eprintln!("lent parts [{}]: right", desc(&root));
    }
}

/// Finding 5: a part lent out by `ColoredBuffer::part` goes stale when a later root launch
/// runs on one device with the buffer moved whole there (`SpreadPolicy::OneDevice`, or the
/// cost model's `Spread::Resident` under the default `Model`): the part is still a valid
/// `&Buffer` (the borrow allows it), but reading it (or launching on it) sees the values from
/// before that launch. 2 devices, n = 2: part 1 reads [1] instead of [8]. (`part()` moves the
/// buffer back to its parts only when called; the resident move does not check for lent parts.)
#[test]
#[ignore = "finding: a lent part is stale after a root launch that moved the buffer whole to one device"]
fn finding_lent_part_stale_after_a_resident_launch() {
    let Some(root) = partitioned_split("finding_lent_part_stale_after_a_resident_launch") else {
        return;
    };
    let one_dev = root.clone().with_spread(SpreadPolicy::OneDevice);
    let p = one_dev.program(PART_SRC).unwrap();
    let x = ColoredBuffer::from_slice(&root, &[0i32, 1]).unwrap();
    let part = x.part(1).unwrap();
    // SAFETY: one work-item per element.
    let ev = unsafe { p.kernel("add").unwrap().launch().arg(&x).arg(7i32).range(2) }.unwrap();
    ev.wait().unwrap();
    eprintln!("spread: {}", words(ev.spread()));
    root.finish().unwrap();
    let got = part.read(&root.queues()[1]).unwrap();
    assert_eq!(x.read().unwrap(), [7, 8]);
    assert_eq!(got, [8], "part 1 after the launch");
}

#[test]
fn chains_with_a_plain_buffer() {
    let sizes = [1usize, 2, 3, 10, 35, 64, 97, 130];
    for root in roots("chains_with_a_plain_buffer") {
        let mut d = Diff::new("plain chains", &root, CHAIN_SRC, "");
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for &n in &sizes {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                d.reset();
                d.name = format!("plain chains n={n} seed={seed}");
                chain_with(
                    &mut d,
                    n,
                    seed,
                    common::env_or("HUNT_STEPS", 30usize),
                    false,
                );
            }
        }
        eprintln!("plain chains [{}]: right", desc(&root));
    }
}

/// Finding 2c: the same for a counted loop's variable changed as `(k) += ...` in its body.
#[test]
#[ignore = "finding: (k) += ... in a counted loop's body is not seen: k taken as [0, 1)"]
fn finding_parenthesized_change_of_a_loop_variable_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        for (int k = 0; k < 1; k++) {
            (k) += n - 1 - 2 * i;
            y[i + k] = x[i];
            break;
        }
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_loop_variable_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

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

/// Finding 6: atomics the crate cannot see are merged element by element, and where every
/// device's updates leave an element at the same value the merge keeps that value: a
/// histogram over `n` ones with the increment in a header included through `-I` (or
/// named through token pasting, `CAT(ato, mic_inc)`) counts each device's share once
/// (`contract::uses_atomics` reads only the program's source; `launch/merge.rs` takes an
/// element two devices changed alike). 48 work-items in groups of 4 (equal shares): 2
/// devices h[0] = 24, 3 devices 16; one device 48.
#[test]
#[ignore = "finding: atomics in an included header are merged: equal per-device counts kept once (h[0] = 24, not 48, on 2 devices)"]
fn finding_atomics_in_a_header_are_merged() {
    const SRC: &str = "#include \"count.h\"
    kernel void hist(global int *h, global const int *x) {
        count(&h[x[get_global_id(0)]]);
    }";
    let Some(root) = partitioned_split("finding_atomics_in_a_header_are_merged") else {
        return;
    };
    let opts = format!("-I {}", header_dir().display());
    let mut d = Diff::new("atomics in a header", &root, SRC, &opts);
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

#[test]
#[ignore = "finding: atomics named by token pasting are merged (see finding_atomics_in_a_header_are_merged)"]
fn finding_atomics_named_by_token_pasting_are_merged() {
    const SRC: &str = "#define CAT(a, b) a##b
    kernel void hist(global int *h, global const int *x) {
        CAT(ato, mic_inc)(&h[x[get_global_id(0)]]);
    }";
    let Some(root) = partitioned_split("finding_atomics_named_by_token_pasting_are_merged") else {
        return;
    };
    let mut d = Diff::new("pasted atomics", &root, SRC, "");
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

/// Finding 6c: clang's `__sync_fetch_and_add` (accepted by PoCL's compiler) is not seen as
/// an atomic either.
#[test]
#[ignore = "finding: __sync_fetch_and_add is not seen as an atomic: merged, h[0] = 24 not 48 on 2 devices"]
fn finding_sync_builtins_are_merged() {
    const SRC: &str = "kernel void hist(global int *h, global const int *x) {
        __sync_fetch_and_add(&h[x[get_global_id(0)]], 1);
    }";
    let Some(root) = partitioned_split("finding_sync_builtins_are_merged") else {
        return;
    };
    let mut d = Diff::new("sync builtins", &root, SRC, "");
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

const GRID_SRC: &str = r#"
kernel void offset2d(global int *y, global const int *x, int w) {
    int gx = get_global_id(0) - get_global_offset(0), gy = get_global_id(1) - get_global_offset(1);
    y[gy * w + gx] = x[gy * w + gx] * 3 + (gy > 0 ? x[(gy - 1) * w + gx] : 0);
}
kernel void tile2d(global int *y, global const int *x, local int *t, int w, int h) {
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * get_local_size(0) + lx, gy = get_group_id(1) * get_local_size(1) + ly;
    t[ly * get_local_size(0) + lx] = x[gy * w + gx];
    barrier(CLK_LOCAL_MEM_FENCE);
    int mx = get_local_size(0) - 1 - lx;
    y[gy * w + gx] = t[ly * get_local_size(0) + mx] + (gy + 1 < h ? x[(gy + 1) * w + gx] : 0);
}
kernel void transpose(global int *dst, global const int *src, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    dst[x * h + y] = src[y * w + x];
}
"#;

/// 2-D launches split along either dimension (odd slowest dimensions make the partition split
/// the faster one), offsets, tiles in local memory, transposes, over even and uneven weights.
#[test]
fn grids_offsets_tiles_and_weights() {
    for root in roots("grids_offsets_tiles_and_weights") {
        let weighted = root
            .clone()
            .with_weights(
                &vec![1.0; root.len() - 1]
                    .into_iter()
                    .chain([3.0])
                    .collect::<Vec<_>>(),
            )
            .unwrap();
        for r in [root, weighted] {
            let mut d = Diff::new("grids", &r, GRID_SRC, "");
            for (w, h, lx, ly) in [
                (4usize, 3usize, 2usize, 1usize),
                (64, 3, 8, 1),
                (6, 19, 2, 1),
                (8, 21, 4, 3),
                (2, 64, 2, 8),
                (33, 5, 1, 5),
            ] {
                d.reset();
                d.name = format!("grids {w}x{h} local {lx}x{ly}");
                let x = d.col(&ints(w * h, 9));
                let y = d.col(&vec![-9i32; w * h]);
                d.launch(
                    "offset2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[B(y), B(x), I(w as i32)],
                );
                d.check("offset2d");
                d.try_launch(
                    "offset2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    Some(Range::d2(3, 2)),
                    &[B(y), B(x), I(w as i32)],
                )
                .unwrap();
                d.check("offset2d with offset");
                d.launch(
                    "tile2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[
                        B(y),
                        B(x),
                        Arg::Local(4 * lx * ly),
                        I(w as i32),
                        I(h as i32),
                    ],
                );
                d.check("tile2d");
                let t = d.col(&vec![-9i32; w * h]);
                d.launch(
                    "transpose",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[B(t), B(y), I(w as i32), I(h as i32)],
                );
                d.check("transpose");
                d.launch(
                    "transpose",
                    Range::d2(h, w),
                    None,
                    &[B(x), B(t), I(h as i32), I(w as i32)],
                );
                d.check("transpose back");
            }
            eprintln!("grids [{} weights {:?}]: right", desc(&r), r.weights());
        }
    }
}

const CONST_POINTER_SRC: &str = r#"
kernel void own(global int *const y, global const int *x) {
    int i = get_global_id(0);
    y[i] = x[i] + 1;
}
kernel void shifted(global int *const y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) y[i + 1] = x[i] + 2;
}
kernel void mirrored(global int *const restrict y, global int const *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] + 3;
}
"#;

/// A const pointer to writable elements (`global int *const y`).
#[test]
fn const_pointers_to_writable_elements() {
    each_diff(
        "const_pointers_to_writable_elements",
        CONST_POINTER_SRC,
        "",
        &[2, 3, 64, 97],
        |d, n| {
            let ni = n as i32;
            for (k, extra) in [
                ("own", None),
                ("shifted", Some(I(ni))),
                ("mirrored", Some(I(ni))),
            ] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let x = d.col(&iota(n));
                let mut args = vec![B(y), B(x)];
                args.extend(extra);
                d.launch(k, d1(n), None, &args);
                d.check(k);
            }
        },
    );
}

const HELPERS_SRC: &str = r#"
int group_of(void) { return (int)get_group_id(0); }
int groups(void) { return (int)get_num_groups(0); }
int linear(void) { return (int)get_global_linear_id(); }
int size_of_launch(void) { return (int)get_global_size(0); }
int off_of(void) { return (int)get_global_offset(0); }
int plain_id(void) { return (int)get_global_id(0); }
kernel void via_group(global int *y) { y[get_global_id(0)] = group_of(); }
kernel void via_groups(global int *y) { y[get_global_id(0)] = groups(); }
kernel void via_linear(global int *y) { y[get_global_id(0)] = linear(); }
kernel void via_size(global int *y) { y[get_global_id(0)] = size_of_launch(); }
kernel void via_off(global int *y) { y[get_global_id(0) - off_of()] = off_of(); }
kernel void via_id(global int *y) { y[get_global_id(0)] = plain_id() * 2; }
"#;

/// Helpers asking for whole-launch values: right or refused, never wrong.
#[test]
fn helpers_asking_for_launch_values() {
    each_diff(
        "helpers_asking_for_launch_values",
        HELPERS_SRC,
        "",
        &[8, 64, 97],
        |d, n| {
            for k in [
                "via_group",
                "via_groups",
                "via_linear",
                "via_size",
                "via_off",
                "via_id",
            ] {
                d.reset();
                let y = d.col(&vec![-9i32; n + 2]);
                let l = if n % 8 == 0 { 4 } else { 1 };
                let o = (k == "via_off").then(|| d1(2));
                match d.try_launch(k, d1(n), Some(d1(l)), o, &[B(y)]) {
                    Ok(_) => d.check(k),
                    Err(e) => eprintln!("{k}: refused: {e}"),
                }
            }
        },
    );
}

/// Finding 7: a helper in an included header asking for `get_group_id` (or the global size,
/// offset, number of groups, linear id) is not refused: the crate scans only the program's
/// source (`src/scaling/program.rs`), and each device's part reports its own group ids.
/// 2 devices, 64 work-items in groups of 4: y[32] = 0 (one device: 8).
#[test]
#[ignore = "finding: get_group_id in a helper from an included header: device 1 reports its own group ids"]
fn finding_launch_values_in_a_header_helper() {
    const SRC: &str = "#include \"group.h\"
    kernel void k(global int *y) { y[get_global_id(0)] = group_of(); }";
    let Some(root) = partitioned_split("finding_launch_values_in_a_header_helper") else {
        return;
    };
    let opts = format!("-I {}", header_dir().display());
    let mut d = Diff::new("group id in a header", &root, SRC, &opts);
    let y = d.col(&[-9i32; 64]);
    d.launch("k", d1(64), Some(d1(4)), &[B(y)]);
    d.check("k");
}

/// Finding 8: both branches of an `#if` inside a kernel are read as one text, so a local
/// declared in each branch takes the value of the last declaration: with the first branch
/// compiled (`#if 1`, or `#ifdef FLIP` with `#define FLIP` or `-DFLIP`) `y[j]` is read as
/// `y[i]` while each device writes `y[n - 1 - i]`: outside its part. Release: heap
/// corruption or wrong values; checked: `OutOfChunk`. 2 devices, n = 64.
#[test]
#[ignore = "finding: #if 1 / int j = n - 1 - i; / #else / int j = i; / #endif: j taken as i, writes outside the part"]
fn finding_declarations_in_both_if_branches() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
    #if 1
        int j = n - 1 - i;
    #else
        int j = i;
    #endif
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_declarations_in_both_if_branches",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

const SCALARS_SRC: &str = r#"
kernel void by_short(global int *y, global const int *x, short off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i] = x[i + off]; else y[i] = -1;
}
kernel void by_long(global int *y, global const int *x, long off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i] = x[i + off]; else y[i] = -1;
}
kernel void write_by_short(global int *y, global const int *x, short off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i + off] = x[i];
}
kernel void write_by_long(global int *y, global const int *x, long off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i + off] = x[i];
}
"#;

/// Negative offsets in `short` and `long` scalar parameters.
#[test]
fn narrow_and_wide_signed_scalars() {
    each_diff(
        "narrow_and_wide_signed_scalars",
        SCALARS_SRC,
        "",
        &[3, 64, 97],
        |d, n| {
            let ni = n as i32;
            for off in [-3i64, -1, 1, 2] {
                for k in ["by_short", "by_long", "write_by_short", "write_by_long"] {
                    d.reset();
                    let y = d.col(&vec![-9i32; n]);
                    let x = d.col(&iota(n));
                    let o = if k.ends_with("short") {
                        Arg::S(off as i16)
                    } else {
                        Arg::L(off)
                    };
                    d.launch(k, d1(n), None, &[B(y), B(x), o, I(ni)]);
                    d.check(&format!("{k} {off}"));
                }
            }
        },
    );
}

/// The chains of [`chain`] with no root launch waited for: host writes, fills, reduces and
/// reads must order themselves after the launches before them.
#[test]
fn chains_never_waited_for() {
    let sizes = [1usize, 3, 35, 64, 130];
    for root in roots("chains_never_waited_for") {
        let mut d = Diff::new("unwaited chains", &root, CHAIN_SRC, "");
        d.nowait = true;
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for &n in &sizes {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                for colored_b in [true, false] {
                    d.reset();
                    d.name = format!("unwaited chains n={n} seed={seed} colored b {colored_b}");
                    chain_with(
                        &mut d,
                        n,
                        seed + 100,
                        common::env_or("HUNT_STEPS", 30usize),
                        colored_b,
                    );
                }
            }
        }
        eprintln!("unwaited chains [{}]: right", desc(&root));
    }
}
