//! Issue 20, item 4: a plain range of a kernel with `reqd_work_group_size` whose declaration
//! clgroups cannot rewrite (CLBlast's `#if RELAX_WORKGROUP_SIZE == 1 ... #endif` around
//! `__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))`), at sizes the work-groups do not
//! divide, runs through a wrapper kernel written from the driver's argument info, or is refused
//! before anything is enqueued, naming why. Results are checked element by element, including
//! that nothing outside the kernel's elements is written.

mod common;

use common::Poison;

use clgroups::kernel::Obstacle;
use clgroups::{Buffer, Error, Program, Queue, Range};

const SRC: &str = include_str!("real_kernels/clblast_xaxpy.cl");
const ALPHA: f32 = 2.5;
/// Sizes 64-thread work-groups do not divide (and one they do).
const SIZES: [usize; 7] = [4099, 1, 63, 65, 1000, 65537, 4096];

/// The program (`RUST_LOG=clgroups=debug` shows each launch's decision).
fn program(q: &Queue, options: &str) -> Program {
    let _ = env_logger::builder().is_test(true).try_init();
    Program::builder(SRC)
        .file_name("clblast_xaxpy.cl")
        .options(options)
        .build(q)
        .expect("CLBlast's level-1 kernels build")
}

/// Integer-valued inputs: `y + ALPHA * x` is exact, with or without a fused multiply-add.
fn x_at(i: usize) -> f32 {
    (i % 97) as f32
}
fn y_at(i: usize) -> f32 {
    (i % 13) as f32 - 6.0
}

/// A strided vector of `n` elements at `offset`, every other element `f32::POISON`, with `pad`
/// more after the last one.
fn strided(n: usize, offset: usize, inc: usize, pad: usize, value: fn(usize) -> f32) -> Vec<f32> {
    let len = offset + n.saturating_sub(1) * inc + 1 + pad;
    let mut v = vec![f32::POISON; len];
    for i in 0..n {
        v[offset + i * inc] = value(i);
    }
    v
}

/// `got` is `y + ALPHA * x` at the `n` elements of the strided view and untouched elsewhere.
fn check(what: &str, got: &[f32], n: usize, offset: usize, inc: usize) {
    let want = strided(n, offset, inc, 0, |i| y_at(i) + ALPHA * x_at(i));
    for (j, &g) in got.iter().enumerate() {
        let w = want.get(j).copied().unwrap_or(f32::POISON);
        assert_eq!(
            g, w,
            "{what}: element {j} (n {n}, offset {offset}, inc {inc})"
        );
    }
}

/// Runs a kernel with CLBlast's Xaxpy parameters over `range(n)`; the output after the launch,
/// or its error.
fn strided_axpy(
    q: &Queue,
    p: &Program,
    kernel: &str,
    n: usize,
    (xo, xi, yo, yi): (usize, usize, usize, usize),
) -> Result<Vec<f32>, Error> {
    let x = Buffer::from_slice(q, &strided(n, xo, xi, 5, x_at))?;
    let y = Buffer::from_slice(q, &strided(n, yo, yi, 70, y_at))?;
    let k = p.kernel(kernel)?;
    let launch = k
        .launch()
        .arg(n as i32)
        .arg(ALPHA)
        .arg(&x)
        .arg(xo as i32)
        .arg(xi as i32)
        .arg(&y)
        .arg(yo as i32)
        .arg(yi as i32);
    // SAFETY: work-item id < n reads x[id*xi + xo] and updates y[id*yi + yo], inside both
    // buffers (built for n elements at these offsets and strides); XaxpyExact's work-items are
    // exactly those of the range, Xaxpy's grid-stride loop visits ids < n only.
    let run = unsafe { launch.range(n) };
    match run {
        Ok(ev) => {
            ev.wait()?;
            y.read(q)
        }
        Err(e) => {
            // Refused before anything was enqueued: y is as it was.
            assert_eq!(y.read(q)?, strided(n, yo, yi, 70, y_at), "{kernel} wrote");
            Err(e)
        }
    }
}

const STRIDES: [(usize, usize, usize, usize); 2] = [(0, 1, 0, 1), (3, 2, 5, 3)];

#[test]
fn clblast_declarations_run_awkward_ranges_through_a_wrapper() {
    let q = common::queue();
    let p = program(&q, "");
    let k = p.kernel("XaxpyStrided").unwrap();
    assert_eq!(k.required_work_group_size(), Some(Range::d1(64)));
    let why = k.rounding_support().unwrap_err();
    let directive = |o: &Obstacle| matches!(o, Obstacle::DirectiveInDeclaration { .. });
    assert!(
        matches!(why, Obstacle::NotRewritten { why, .. } if directive(why)),
        "{why}"
    );
    for kernel in ["XaxpyStrided", "XaxpyExact"] {
        for n in SIZES {
            for s in STRIDES {
                let got = strided_axpy(&q, &p, kernel, n, s).unwrap();
                check(kernel, &got, n, s.2, s.3);
            }
        }
    }
    // The same source with RELAX_WORKGROUP_SIZE=1 (no required size) gives the same elements.
    let relaxed = program(&q, "-DRELAX_WORKGROUP_SIZE=1");
    assert_eq!(
        relaxed
            .kernel("XaxpyStrided")
            .unwrap()
            .required_work_group_size(),
        None
    );
    let got = strided_axpy(&q, &relaxed, "XaxpyStrided", 4099, STRIDES[1]).unwrap();
    check("XaxpyStrided, relaxed", &got, 4099, 5, 3);
}

#[test]
fn upstream_xaxpy_faster_runs_awkward_ranges_and_offsets() {
    let q = common::queue();
    let p = program(&q, "");
    let k = p.kernel("XaxpyFaster").unwrap();
    for (n, offset) in SIZES.iter().map(|&n| (n, 0)).chain([(4104, 5), (70, 69)]) {
        let x = Buffer::from_slice(&q, &strided(n, 0, 1, 5, x_at)).unwrap();
        let y = Buffer::from_slice(&q, &strided(n, 0, 1, 70, y_at)).unwrap();
        let launch = k.launch().arg(n as i32).arg(ALPHA).arg(&x).arg(&y);
        let launch = launch.offset(Range::d1(offset));
        // SAFETY: work-item id in offset..n updates y[id] from x[id], id < n (both longer).
        unsafe { launch.range(n - offset) }.unwrap().wait().unwrap();
        let got = y.read(&q).unwrap();
        let want = |j: usize| match j {
            j if j < offset => y_at(j),
            j if j < n => y_at(j) + ALPHA * x_at(j),
            _ => f32::POISON,
        };
        for (j, &g) in got.iter().enumerate() {
            assert_eq!(
                g,
                want(j),
                "XaxpyFaster: element {j} (n {n}, offset {offset})"
            );
        }
    }
}

/// Kernels that could see the rounded-up range stay refused, naming the cause; at a size their
/// work-groups divide they run as written.
#[test]
fn kernels_that_see_the_launch_shape_are_refused_naming_why() {
    let q = common::queue();
    let p = program(&q, "");
    for n in [4099, 65] {
        let e = strided_axpy(&q, &p, "Xaxpy", n, STRIDES[1]).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{text}");
        for cause in [
            "reqd_work_group_size",
            "get_global_size",
            "preprocessor line",
        ] {
            assert!(text.contains(cause), "{cause}: {text}");
        }
    }
    let got = strided_axpy(&q, &p, "Xaxpy", 4096, STRIDES[1]).unwrap();
    check("Xaxpy", &got, 4096, 5, 3);
    // A macro from the build options is code the scanner does not read.
    let opt = program(&q, "-DSTRIDE=get_global_size(0)");
    let e = strided_axpy(&q, &opt, "XaxpyStrided", 4099, STRIDES[0]).unwrap_err();
    assert!(
        e.to_string()
            .contains("a build option uses `get_global_size`"),
        "{e}"
    );

    let n = 4099;
    let x = Buffer::from_slice(&q, &vec![1.0f32; n]).unwrap();
    let out = Buffer::from_slice(&q, &[f32::POISON; 128]).unwrap();
    let k = p.kernel("Xdot").unwrap();
    let launch = k.launch().arg(n as i32).arg(&x).arg(0i32).arg(1i32);
    let launch = launch.arg(&x).arg(0i32).arg(1i32).arg(&out).arg(0i32);
    // SAFETY: (refused) work-group g would write out[g], g < 65 <= 128.
    let e = unsafe { launch.range(n) }.unwrap_err().to_string();
    for cause in ["reqd_work_group_size", "`__local`"] {
        assert!(e.contains(cause), "{cause}: {e}");
    }
    assert_eq!(out.read(&q).unwrap(), [f32::POISON; 128]);
}

/// A wrapper that does not build (here: a macro of the user's named like its parameters) leaves
/// the launch refused, every time, naming the build; the kernel still runs at other sizes.
#[test]
fn a_wrapper_that_does_not_build_is_a_refusal() {
    let q = common::queue();
    let src = format!("{SRC}\n#define clg_arg0 )\n");
    let p = Program::builder(src).build(&q).unwrap();
    let k = p.kernel("XaxpyFaster").unwrap();
    let (n, x) = (4099, Buffer::from_slice(&q, &vec![1.0f32; 4160]).unwrap());
    let y = Buffer::from_slice(&q, &[f32::POISON; 4160]).unwrap();
    for _ in 0..2 {
        let launch = k.launch().arg(n as i32).arg(ALPHA).arg(&x).arg(&y);
        // SAFETY: (refused) work-item id < n would update y[id] from x[id], both of 4160.
        let e = unsafe { launch.range(n) }.unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{text}");
        assert!(text.contains("the wrapper did not build"), "{text}");
    }
    assert_eq!(y.read(&q).unwrap(), [f32::POISON; 4160]);
    let launch = k.launch().arg(64i32).arg(ALPHA).arg(&x).arg(&y);
    // SAFETY: work-item id < 64 updates y[id] from x[id].
    unsafe { launch.range(64) }.unwrap().wait().unwrap();
    assert_eq!(y.read(&q).unwrap()[63], f32::POISON + ALPHA);
}

/// Two dimensions in 8x8 work-groups: a 37x29 range of a 48x40 matrix writes exactly its own
/// elements through the wrapper; CLBlast's CopyMatrixFast (rows from `get_group_id`) is refused.
#[test]
fn two_dimensional_ranges_are_guarded_in_both_dimensions() {
    let q = common::queue();
    let p = program(&q, "");
    let (ld, rows) = (48usize, 40usize);
    let src: Vec<f32> = (0..ld * rows).map(x_at).collect();
    let x = Buffer::from_slice(&q, &src).unwrap();
    for (cols, used) in [(37, 29), (8, 8), (1, 40), (48, 33)] {
        for kernel in ["CopyMatrixGlobal", "CopyMatrixFast"] {
            let y = Buffer::from_slice(&q, &vec![f32::POISON; ld * rows]).unwrap();
            let k = p.kernel(kernel).unwrap();
            assert_eq!(k.required_work_group_size(), Some(Range::d2(8, 8)));
            let launch = k.launch().arg(ld as i32).arg(&x).arg(&y).arg(ALPHA);
            // SAFETY: work-item (c, r), c < cols <= ld, r < used <= rows, reads src[r*ld + c]
            // and writes dest[r*ld + c], inside both (ld * rows elements).
            let run = unsafe { launch.range(Range::d2(cols, used)) };
            let whole = cols % 8 == 0 && used % 8 == 0;
            if kernel == "CopyMatrixFast" && !whole {
                let e = run.unwrap_err().to_string();
                assert!(e.contains("get_group_id"), "{e}");
                assert_eq!(y.read(&q).unwrap(), vec![f32::POISON; ld * rows]);
                continue;
            }
            run.unwrap().wait().unwrap();
            for (j, &g) in y.read(&q).unwrap().iter().enumerate() {
                let inside = j % ld < cols && j / ld < used;
                let want = if inside { ALPHA * src[j] } else { f32::POISON };
                assert_eq!(g, want, "{kernel} {cols}x{used}: element {j}");
            }
        }
    }
}

/// The wrapper's guard is written after the user's code: a user macro named like
/// `get_global_id` changed it (it compared local ids with the range, so all 64 work-items of a
/// range of 61 ran); it now compares the real global id.
#[test]
fn user_macros_named_like_work_item_queries_leave_the_wrapper_alone() {
    let src = "#define get_global_id(d) get_local_id(d)\n#if RELAX == 1\n__kernel\n#else\n\
               __kernel __attribute__((reqd_work_group_size(8, 1, 1)))\n#endif\n\
               void lanes(global int *hits, global int *count) {\n\
               atomic_inc(&hits[get_global_id(0)]);\n  atomic_inc(count);\n}\n";
    let q = common::queue();
    let p = Program::builder(src).build(&q).unwrap();
    let k = p.kernel("lanes").unwrap();
    assert!(k.rounding_support().is_err(), "the wrapper runs it");
    let (hits, count) = (
        Buffer::from_slice(&q, &[0; 8]).unwrap(),
        Buffer::from_slice(&q, &[0]).unwrap(),
    );
    // SAFETY: `lanes` writes hits[local id] (below 8, its work-group size) and count[0].
    unsafe { k.launch().arg(&hits).arg(&count).range(61) }
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(hits.read(&q).unwrap(), [8, 8, 8, 8, 8, 7, 7, 7]);
    assert_eq!(count.read(&q).unwrap(), [61]);
}
