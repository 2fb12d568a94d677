//! Range-rounded launches (`Launch::range`) compared element by element with unrounded ones:
//! every output element equal, nothing written past the user's range, `get_global_size` and
//! `get_global_linear_id` reporting the user's range, global offsets, rounding modes, and the
//! `CLGROUPS_RANGE_ROUNDING_TRACE` output.

mod common;

use common::Poison;

use clgroups::plan::rounding::{self, RoundingConfig, RoundingMode, RoundingParams};
use clgroups::{Buffer, Kernel, Program, Queue, Range};
use std::process::Command;

/// Every output indexes with `get_global_size`: `out` forwards, `rev` backwards, `lin` through
/// `get_global_linear_id()`. Written for 3 dimensions; lower ranks see sizes of 1. Writes stay
/// below `cap` (the buffers' length), so a broken guard fails an assertion instead of crashing.
const SRC: &str = r#"
kernel void shape(global int *out, global int *rev, global int *lin, global const int *in, int k,
                    ulong cap) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t w = get_global_size(0), h = get_global_size(1), d = get_global_size(2);
    size_t i = (z * h + y) * w + x;
    size_t r = ((d - 1 - z) * h + (h - 1 - y)) * w + (w - 1 - x);
    int v = in[i < cap ? i : 0] * k + (int)(x * 7 + y * 131 + z * 1543) + (int)(w * h * d);
    size_t l = get_global_linear_id();
    if (i < cap) out[i] = v;
    if (r < cap) rev[r] = v;
    if (l < cap) lin[l] = (int)(x * 3 + y * 257 + z * 4099) + 1;
}

kernel void which(global int *o) {
#ifdef get_global_size
    o[get_global_id(0)] = 1;
#else
    o[get_global_id(0)] = 2;
#endif
}

kernel void shifted(global int *o, int k) {
    size_t i = get_global_id(0);
    o[i] = (int)(i * 5) + k + (int)get_global_size(0);
}
"#;

fn config(mode: RoundingMode, params: Option<&str>, experimental: bool) -> RoundingConfig {
    RoundingConfig {
        mode,
        params: params.map(|p| p.parse::<RoundingParams>().expect("parameters")),
        experimental,
        trace: false,
    }
}

fn program(q: &Queue, cfg: RoundingConfig) -> Program {
    Program::builder(SRC)
        .rounding(cfg)
        .build(q)
        .expect("the test program builds")
}

/// A buffer of `len` elements, every one [`Poison`](common::Poison).
fn poisoned(q: &Queue, len: usize) -> Buffer<i32> {
    let mut b = Buffer::new(q.context(), len).expect("buffer");
    b.fill(q, i32::POISON).expect("fill");
    b
}

/// What `shape` writes over `user`, the first `user.len()` elements of `(out, rev, lin)`.
fn expected(user: Range, input: &[i32], k: i32) -> [Vec<i32>; 3] {
    let [w, h, d] = user.padded();
    let n = user.len();
    let (mut out, mut rev, mut lin) = (vec![0; n], vec![0; n], vec![0; n]);
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let i = (z * h + y) * w + x;
                let r = ((d - 1 - z) * h + (h - 1 - y)) * w + (w - 1 - x);
                let v = input[i] * k + (x * 7 + y * 131 + z * 1543) as i32 + n as i32;
                out[i] = v;
                rev[r] = v;
                lin[i] = (x * 3 + y * 257 + z * 4099) as i32 + 1;
            }
        }
    }
    [out, rev, lin]
}

/// Runs `shape` over `user` with `cfg`; returns the three outputs, each `cap` elements long.
fn run_shape(q: &Queue, cfg: RoundingConfig, user: Range, cap: usize) -> [Vec<i32>; 3] {
    let p = program(q, cfg);
    let k = p.kernel("shape").unwrap();
    let input = common::values(cap, user.len() as u64);
    let inb = Buffer::from_slice(q, &input).unwrap();
    let bufs = [poisoned(q, cap), poisoned(q, cap), poisoned(q, cap)];
    let launch = k.launch().arg(&bufs[0]).arg(&bufs[1]).arg(&bufs[2]);
    let launch = launch.arg(&inb).arg(3i32).arg(cap as u64);
    // SAFETY: `shape` compares every index with `cap`, the length of all four buffers.
    let ev = unsafe { launch.range(user) }.expect("launch");
    ev.wait().unwrap();
    bufs.map(|b| b.read(q).unwrap())
}

/// The rounding plan `cfg` makes for `shape` over `user`.
fn plan_of(q: &Queue, cfg: RoundingConfig, user: Range) -> rounding::RoundingPlan {
    let p = program(q, cfg);
    let k: Kernel = p.kernel("shape").unwrap();
    assert_eq!(k.rounding_support(), Ok(()));
    rounding::plan(user, &cfg, k.limits(), true)
}

/// Rounded and unrounded runs agree with each other and with the host on every element, and
/// the poisoned tail (past the user's range, as long as the rounded launch) stays untouched.
fn check_rounded(cfg: RoundingConfig, user: Range, rounded_dims: &[usize]) {
    let q = common::queue();
    let plan = plan_of(&q, cfg, user);
    let dims: Vec<usize> = plan.adjustments.iter().map(|a| a.dim).collect();
    assert_eq!(dims, rounded_dims, "{user:?} with {cfg:?}: {plan:?}");
    assert!(plan.rounded_variant, "{plan:?}");
    eprintln!("{user:?}: launch {:?}, local {:?}", plan.launch, plan.local);
    let cap = plan.launch.len() + 257;
    let n = user.len();
    let rounded = run_shape(&q, cfg, user, cap);
    let plain = run_shape(&q, config(RoundingMode::Disable, None, false), user, cap);
    let input = common::values(cap, n as u64);
    let want = expected(user, &input, 3);
    for (o, name) in ["out", "rev", "lin"].iter().enumerate() {
        for i in 0..cap {
            let host = if i < n { want[o][i] } else { i32::POISON };
            assert_eq!(plain[o][i], host, "{name}[{i}] unrounded, {user:?}");
            assert_eq!(
                rounded[o][i], host,
                "{name}[{i}] rounded, {user:?} {plan:?}"
            );
        }
    }
}

#[test]
fn one_dimension_device_aware_default() {
    // A prime: the device-aware default rounds the only dimension.
    check_rounded(config(RoundingMode::On, None, false), Range::d1(7727), &[0]);
}

#[test]
fn one_dimension_dpcpp_parameters() {
    let cfg = config(RoundingMode::On, Some("16:32:1024"), false);
    let q = common::queue();
    assert_eq!(plan_of(&q, cfg, Range::d1(7727)).launch, Range::d1(7744));
    check_rounded(cfg, Range::d1(7727), &[0]);
}

#[test]
fn two_dimensions_every_dimension_rounded() {
    let cfg = config(RoundingMode::On, Some("1:256:1"), true);
    let q = common::queue();
    assert_eq!(
        plan_of(&q, cfg, Range::d2(37, 1031)).launch,
        Range::d2(256, 1280)
    );
    check_rounded(cfg, Range::d2(37, 1031), &[0, 1]);
}

#[test]
fn three_dimensions_every_dimension_rounded() {
    // 1:64:1 keeps the rounded launch (and the poisoned tail) at 64^3 work-items.
    let cfg = config(RoundingMode::On, Some("1:64:1"), true);
    let q = common::queue();
    let user = Range::d3(13, 11, 7);
    assert_eq!(plan_of(&q, cfg, user).launch, Range::d3(64, 64, 64));
    check_rounded(cfg, user, &[0, 1, 2]);
}

#[test]
fn three_dimensions_slowest_dimension_rounded() {
    // The device-aware default rounds only dimension 2 (SYCL's dimension 0).
    check_rounded(
        config(RoundingMode::On, None, false),
        Range::d3(5, 3, 2053),
        &[2],
    );
}

/// Runs `which` over `n` items with `cfg`: 1 everywhere if the rounded variant ran, 2 if the
/// original did.
fn which_variant(cfg: RoundingConfig, n: usize) -> Vec<i32> {
    let q = common::queue();
    let p = program(&q, cfg);
    let out = poisoned(&q, n + 64);
    let k = p.kernel("which").unwrap();
    // SAFETY: `which` writes o[get_global_id(0)] for ids below n; `out` has n + 64 elements.
    unsafe { k.launch().arg(&out).range(n) }
        .unwrap()
        .wait()
        .unwrap();
    out.read(&q).unwrap()
}

fn variant_of(out: &[i32], n: usize) -> i32 {
    assert!(out[n..].iter().all(|&v| v == i32::POISON), "tail written");
    assert!(out[..n].iter().all(|&v| v == out[0]), "mixed variants");
    out[0]
}

#[test]
fn modes_select_the_variant() {
    // 4096 needs no rounding: `on` keeps the original, `force` still runs the variant.
    let n = 4096;
    let on = which_variant(config(RoundingMode::On, None, false), n);
    assert_eq!(variant_of(&on, n), 2);
    let force = which_variant(config(RoundingMode::Force, None, false), n);
    assert_eq!(variant_of(&force, n), 1);
    // A prime is rounded with `on` and `force`, never with `disable`.
    let n = 7727;
    let on = which_variant(config(RoundingMode::On, None, false), n);
    assert_eq!(variant_of(&on, n), 1);
    let force = which_variant(config(RoundingMode::Force, Some("16:32:1024"), false), n);
    assert_eq!(variant_of(&force, n), 1);
    let off = which_variant(config(RoundingMode::Disable, Some("1:256:1"), true), n);
    assert_eq!(variant_of(&off, n), 2);
}

#[test]
fn force_matches_unrounded_results() {
    check_rounded(
        config(RoundingMode::Force, Some("1:64:1"), true),
        Range::d2(61, 67),
        &[0, 1],
    );
}

/// `shifted` over `n` items from `offset` with `cfg`.
fn run_shifted(q: &Queue, cfg: RoundingConfig, offset: usize, n: usize, cap: usize) -> Vec<i32> {
    let p = program(q, cfg);
    let out = poisoned(q, cap);
    assert!(offset + n <= cap, "`shifted` writes o[offset..offset + n]");
    let k = p.kernel("shifted").unwrap();
    let launch = k.launch().arg(&out).arg(11i32).offset(Range::d1(offset));
    // SAFETY: `shifted` writes o[i] for ids offset <= i < offset + n <= cap (asserted).
    let ev = unsafe { launch.range(n) }.expect("launch with an offset");
    ev.wait().unwrap();
    out.read(q).unwrap()
}

#[test]
fn global_offset_is_honoured() {
    let q = common::queue();
    let (offset, n) = (100, 7727);
    let cfg = config(RoundingMode::On, Some("16:32:1024"), false);
    let cap = offset + 7744 + 300;
    let rounded = run_shifted(&q, cfg, offset, n, cap);
    let plain = run_shifted(
        &q,
        config(RoundingMode::Disable, None, false),
        offset,
        n,
        cap,
    );
    for i in 0..cap {
        let want = if (offset..offset + n).contains(&i) {
            i as i32 * 5 + 11 + n as i32
        } else {
            i32::POISON
        };
        assert_eq!(plain[i], want, "unrounded [{i}]");
        assert_eq!(rounded[i], want, "rounded [{i}]");
    }
}

#[test]
fn trace_prints_adjustments() {
    if std::env::var("CLGROUPS_TEST_CHILD").is_ok() {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let out = poisoned(&q, 8192);
        let k = p.kernel("which").unwrap();
        // SAFETY: `which` writes o[get_global_id(0)], below 7727 and then 37; `out` has 8192.
        unsafe {
            k.launch().arg(&out).range(7727).unwrap().wait().unwrap();
            let ev = k.launch().arg(&out).range(Range::d2(37, 100)).unwrap();
            ev.wait().unwrap();
        }
        println!("CHILD-DONE");
        return;
    }
    let run = |exp: bool| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "trace_prints_adjustments", "--nocapture"])
            .env("CLGROUPS_TEST_CHILD", "1")
            .env("CLGROUPS_RANGE_ROUNDING_TRACE", "1")
            .env("CLGROUPS_RANGE_ROUNDING_PARAMS", "16:32:1024")
            .env_remove("CLGROUPS_DISABLE_RANGE_ROUNDING")
            .env_remove("CLGROUPS_RANGE_ROUNDING")
            .env_remove("CLGROUPS_EXP_RANGE_ROUNDING");
        if exp {
            cmd.env("CLGROUPS_EXP_RANGE_ROUNDING", "1");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("CHILD-DONE"), "child failed: {text}");
        text.lines()
            .filter(|l| l.starts_with("parallel_for range adjusted"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // Default: only the slowest dimension, only when it is >= 1024 (37 x 100 is not rounded).
    assert_eq!(
        run(false),
        ["parallel_for range adjusted at dim 0 from 7727 to 7744"]
    );
    // Experimental: every dimension, to a multiple of GoodFactor (32).
    assert_eq!(
        run(true),
        [
            "parallel_for range adjusted at dim 0 from 7727 to 7744",
            "parallel_for range adjusted at dim 0 from 37 to 64",
            "parallel_for range adjusted at dim 1 from 100 to 128",
        ]
    );
}

/// clpeak's global-bandwidth kernels index by the work-group shape; written as clpeak writes
/// them (a `FETCH` macro, the shape queries inline).
const CLPEAK_LIKE: &str = r#"
#define FETCH_PER_WI 4
kernel void global_bandwidth_v1(global const float *A, global float *B, global uint *shape) {
    int id = (get_group_id(0) * get_local_size(0) * FETCH_PER_WI) + get_local_id(0);
    float sum = 0;
    for (int i = 0; i < FETCH_PER_WI; i++) {
        sum += A[id];
        id += get_local_size(0);
    }
    B[get_global_id(0)] = sum;
    if (get_global_id(0) == 0) shape[0] = (uint)get_local_size(0);
}
"#;

#[test]
fn plain_ranges_of_shape_dependent_kernels_keep_the_drivers_shape() {
    let q = common::queue();
    let p = Program::from_source(&q, CLPEAK_LIKE).unwrap();
    let k = p.kernel("global_bandwidth_v1").unwrap();
    for n in [4099usize, 1000, 4096] {
        let host: Vec<f32> = (0..n * 4).map(|i| i as f32).collect();
        let a = Buffer::from_slice(&q, &host).unwrap();
        let b = Buffer::from_slice(&q, &vec![f32::NAN; n]).unwrap();
        let shape = Buffer::from_slice(&q, &[0u32]).unwrap();
        let launch = k.launch().arg(&a).arg(&b).arg(&shape);
        // SAFETY: with the work-groups of one launch of exactly n work-items (the plain OpenCL
        // launch `range` stands for), every index is below n * FETCH_PER_WI = a.len().
        unsafe { launch.range(n) }.unwrap().wait().unwrap();
        let l = shape.read(&q).unwrap()[0] as usize;
        assert!(
            l > 0 && n % l == 0,
            "n {n}: local size {l} is not one launch's"
        );
        let want: Vec<f32> = (0..n)
            .map(|g| {
                let first = (g / l) * l * 4 + g % l;
                (0..4).map(|i| host[first + i * l]).sum()
            })
            .collect();
        assert_eq!(b.read(&q).unwrap(), want, "n {n}, local {l}");
    }
}

/// A user macro named like `get_global_id` changes the user's uses only: the guard of the
/// rounded variant (here over the last of 8 work-groups of 8 for a range of 61) still compares
/// the real global id with the user's range. It compared the local id, so 64 work-items ran.
const REDEFINED_ID: &str = r#"
#define get_global_id(d) get_local_id(d)
kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void lanes(global int *hits, global int *count) {
    atomic_inc(&hits[get_global_id(0)]);
    atomic_inc(count);
}
"#;

/// Runs `lanes` of `src` (built with `options`) over `n` work-items: per lane, how many
/// work-items of that local id ran, then how many ran; or the launch's error.
fn run_lanes(q: &Queue, src: &str, options: &str, n: usize) -> clgroups::Result<Vec<i32>> {
    let p = Program::builder(src).options(options).build(q)?;
    let k = p.kernel("lanes")?;
    let (hits, count) = (
        Buffer::from_slice(q, &[0; 8])?,
        Buffer::from_slice(q, &[0])?,
    );
    // SAFETY: `lanes` writes hits[local id] (below 8, its work-group size) and count[0].
    unsafe { k.launch().arg(&hits).arg(&count).range(n) }?.wait()?;
    Ok([hits.read(q)?, count.read(q)?].concat())
}

#[test]
fn user_macros_named_like_work_item_queries_leave_the_guard_alone() {
    let q = common::queue();
    let got = run_lanes(&q, REDEFINED_ID, "", 61).unwrap();
    assert_eq!(got, [8, 8, 8, 8, 8, 7, 7, 7, 61]);
    // Defined by a build option, the macro would change the real query too: refused.
    let bare = REDEFINED_ID.replacen("#define get_global_id(d) get_local_id(d)", "", 1);
    let e = run_lanes(&q, &bare, "-Dget_global_id(d)=get_local_id(d)", 61).unwrap_err();
    assert!(e.to_string().contains("`get_global_id`"), "{e}");
    let got = run_lanes(&q, &bare, "-Dget_global_id(d)=get_local_id(d)", 64).unwrap();
    assert_eq!(got, [8, 8, 8, 8, 8, 8, 8, 8, 64]);
}

/// A source that defines a query the rounded variants define runs unrounded: the variants'
/// definition replaced the user's (`size` wrote 7727, not 5) and their `#undef` removed it for
/// the kernels after them. So does a program whose build options define one (a `-D` changes
/// the declaration of the built-in in PoCL's header too: it must stay a function's).
#[test]
fn sources_defining_a_rounded_query_run_unrounded() {
    let body = "kernel void size(global int *o) { o[get_global_id(0)] = get_global_size(0); }\n\
                kernel void after(global int *o) { o[get_global_id(0)] = get_global_size(0); }";
    let q = common::queue();
    let run = |src: &str, options: &str, mode: RoundingMode, kernel: &str, n: usize| {
        let cfg = config(mode, None, false);
        let p = Program::builder(src)
            .options(options)
            .rounding(cfg)
            .build(&q)
            .unwrap();
        let k = p.kernel(kernel).unwrap();
        if mode == RoundingMode::On {
            let why = k.rounding_support().unwrap_err().to_string();
            assert!(why.contains("`get_global_size`"), "{options}: {why}");
        }
        let out = poisoned(&q, n + 64);
        // SAFETY: the kernels write o[get_global_id(0)], below n; `out` has n + 64.
        unsafe { k.launch().arg(&out).range(n) }
            .unwrap()
            .wait()
            .unwrap();
        out.read(&q).unwrap()
    };
    for (src, options) in [
        (format!("#define get_global_size(d) 5\n{body}"), ""),
        (body.to_string(), "-Dget_global_size(d)=get_local_size(d)"),
    ] {
        for (kernel, n) in [("size", 7727), ("after", 4096)] {
            let out = run(&src, options, RoundingMode::On, kernel, n);
            let plain = run(&src, options, RoundingMode::Disable, kernel, n);
            assert_eq!(out, plain, "{kernel} {options:?}");
            if options.is_empty() {
                assert!(out[..n].iter().all(|&v| v == 5), "{kernel}");
            }
            assert!(out[n..].iter().all(|&v| v == i32::POISON), "{kernel}");
        }
    }
}
