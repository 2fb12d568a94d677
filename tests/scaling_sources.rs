//! Sources as people write them over a root device, in both placements: build options, an
//! `#ifdef` whose branches each open the kernel, a kernel named by a macro, and a kernel with
//! `reqd_work_group_size`. Every launch is correct against a host reference or refused with a
//! typed error that says why, before anything is enqueued; every source builds. Kernels the
//! scanner cannot rewrite run as written (per device, or on device 0 with colored buffers
//! gathered there), also when they ask for their global size.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use clgroups::launch::LocalSize;
use clgroups::scaling::{ColoredBuffer, MultiEvent, Placement};
use clgroups::{Error, Program, Range};

/// Asserts that `launched` ran and `x` now holds `want`; returns how many devices ran it.
fn correct(
    case: &str,
    launched: clgroups::Result<MultiEvent>,
    x: &ColoredBuffer<i32>,
    want: &[i32],
) -> usize {
    let ev = launched.unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(x.read().unwrap(), want, "{case}");
    let busy = ev.events().iter().flatten().count();
    eprintln!("{case}: correct, on {busy} device(s)");
    busy
}

/// Asserts that `launched` was refused with [`Error::InvalidLaunch`] whose text contains
/// `why`, and that `x` still holds `before`.
fn refused(
    case: &str,
    launched: clgroups::Result<MultiEvent>,
    x: &ColoredBuffer<i32>,
    before: &[i32],
    why: &str,
) {
    match launched {
        Err(e @ Error::InvalidLaunch { .. }) => {
            assert!(e.to_string().contains(why), "{case}: {e}");
            eprintln!("{case}: refused: {e}");
        }
        Err(e) => panic!("{case}: want a refused launch, got {e}"),
        Ok(_) => panic!("{case}: want a refused launch, but it ran"),
    }
    assert_eq!(
        x.read().unwrap(),
        before,
        "{case}: refused, but the buffer changed"
    );
}

#[test]
fn build_options_reach_every_device() {
    const N: usize = 1009;
    let src = "kernel void scale(global int *x) { x[get_global_id(0)] *= SCALE; }";
    for root in common::roots("build_options_reach_every_device") {
        let case = format!("-DSCALE=3 ({} placement)", root.placement());
        let p = root
            .build(Program::builder(src).options("-DSCALE=3"))
            .unwrap();
        let k = p.kernel("scale").unwrap();
        assert_eq!(k.rewrite_obstacle(), None, "{case}");
        let xs = common::values(N, 1);
        let x = common::colored(&root, &xs, k.range_plan(Range::d1(N)).unwrap().1.len());
        // SAFETY: `scale` touches x[get_global_id(0)] only, below N, x's length.
        let launched = unsafe { k.launch().arg(&x).range(N) };
        let want: Vec<i32> = xs.iter().map(|v| v.wrapping_mul(3)).collect();
        correct(&case, launched, &x, &want);
        assert!(
            root.program(src).is_err(),
            "{case}: SCALE undefined must not build"
        );
    }
}

/// `#ifdef` branches that each open the kernel: valid OpenCL C the scanner cannot read.
const IFDEF: &str = r#"
#ifdef TWICE
kernel void k(global int *x) { x[get_global_id(0)] *= 2;
#else
kernel void k(global int *x) { x[get_global_id(0)] *= 3;
#endif
}
"#;

#[test]
fn ifdef_branches_opening_a_kernel_build_and_run_as_written() {
    const N: usize = 256;
    for root in common::roots("ifdef_branches_opening_a_kernel") {
        for options in ["", "-DTWICE"] {
            let case = format!(
                "#ifdef source, options {options:?} ({} placement)",
                root.placement()
            );
            let p = root
                .build(Program::builder(IFDEF).options(options))
                .unwrap();
            let k = p.kernel("k").unwrap();
            let why = k
                .rewrite_obstacle()
                .unwrap_or_else(|| panic!("{case}: rewritten"));
            eprintln!("{case}: no partitioned variant: {why}");
            let f = if options.is_empty() { 3 } else { 2 };
            let xs = common::values(N, 2);
            let mut want = xs.clone();
            let x = common::colored(&root, &xs, 64);
            // SAFETY: `k` touches x[get_global_id(0)] only, below N, x's length.
            let launched = unsafe { k.launch().arg(&x).range(N) };
            want.iter_mut().for_each(|v| *v = v.wrapping_mul(f));
            let busy = correct(&format!("{case}, range"), launched, &x, &want);
            // Shared placement and a source that never asks for whole-launch values: every
            // device runs its part. Partitioned placement: device 0, on gathered buffers.
            let per_device = root.placement() == Placement::Shared;
            assert_eq!(busy, if per_device { root.len() } else { 1 }, "{case}");
            // SAFETY: as above.
            let launched = unsafe { k.launch().arg(&x).nd_range(N, Range::d1(64)) };
            want.iter_mut().for_each(|v| *v = v.wrapping_mul(f));
            let busy = correct(&format!("{case}, ND-range"), launched, &x, &want);
            assert_eq!(busy, if per_device { root.len() } else { 1 }, "{case}");
        }
    }
}

/// A kernel named by a macro beside one the scanner reads (no macro mentions its `x`, so its
/// partitioned variant's own-id proof holds); macro-made kernels with global
/// sizes (a grid-stride loop), a 2-D range, required work-groups, an offset and halo reads.
const MACRO_NAMED: &str = r#"
kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }

#define MAKE(NAME, F) kernel void NAME(global int *p) { p[get_global_id(0)] *= F; }
MAKE(triple, 3)

#define STRIDED(NAME) kernel void NAME(global int *p, uint n) { \
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) p[i] += 5; }
STRIDED(strided)

#define ROWS(NAME) kernel void NAME(global int *p, uint w) { \
    p[get_global_id(1) * w + get_global_id(0)] += (int)get_global_id(1); }
ROWS(rows)

#define REQD(NAME) kernel __attribute__((reqd_work_group_size(16, 1, 1))) \
    void NAME(global int *p) { p[get_global_id(0)] += (int)get_local_size(0); }
REQD(reqd16)

#define AVG(NAME) kernel void NAME(global const int *a, global int *b, uint n) { \
    size_t i = get_global_id(0); \
    b[i] = a[i > 0 ? i - 1 : i] + a[i] + a[i + 1 < n ? i + 1 : i]; }
AVG(avg3)
"#;

#[test]
fn macro_named_kernels_run_as_written() {
    use clgroups::scaling::Access;
    const N: usize = 1009;
    for root in common::roots("macro_named_kernels") {
        let case = format!("macro-named kernel ({} placement)", root.placement());
        let p = root.program(MACRO_NAMED).unwrap();
        let twice = p.kernel("twice").unwrap();
        assert_eq!(twice.rewrite_obstacle(), None, "{case}");
        let local = twice.range_plan(Range::d1(N)).unwrap().1.len();
        let xs = common::values(N, 3);
        let mut want = xs.clone();
        let x = common::colored(&root, &xs, local);
        for name in ["triple", "strided", "rows", "reqd16", "avg3"] {
            let why = p
                .kernel(name)
                .unwrap()
                .rewrite_obstacle()
                .map(ToString::to_string);
            let why = why.unwrap_or_else(|| panic!("{case}: `{name}` rewritten"));
            assert!(why.contains("macro"), "{case}: {why}");
        }
        let triple = p.kernel("triple").unwrap();
        // SAFETY: the kernels below touch x[get_global_id(0)] only, below N, x's length
        // (`strided`: every i < N once; `rows`: the 2-D id's linear index below N).
        let launched = unsafe { triple.launch().arg(&x).range(N) };
        want.iter_mut().for_each(|v| *v = v.wrapping_mul(3));
        // The source asks for get_global_size (in `strided`): device 0 runs every launch.
        let busy = correct(&format!("{case}, `triple` range"), launched, &x, &want);
        assert_eq!(busy, 1, "{case}");
        // SAFETY: as above.
        let launched = unsafe { twice.launch().arg(&x).range(N) };
        want.iter_mut().for_each(|v| *v = v.wrapping_mul(2));
        correct(&format!("{case}, `twice`"), launched, &x, &want);
        let strided = p.kernel("strided").unwrap();
        // SAFETY: as above; 64 work-items stride over all N elements.
        let launched = unsafe {
            strided
                .launch()
                .arg(&x)
                .arg(N as u32)
                .nd_range(64, Range::d1(16))
        };
        want.iter_mut().for_each(|v| *v = v.wrapping_add(5));
        correct(&format!("{case}, `strided` ND-range"), launched, &x, &want);
        // SAFETY: as above, 64 work-items in a plain range.
        let launched = unsafe { strided.launch().arg(&x).arg(N as u32).range(64) };
        want.iter_mut().for_each(|v| *v = v.wrapping_add(5));
        correct(&format!("{case}, `strided` range"), launched, &x, &want);
        let launch = triple.launch().arg(&x).offset(Range::d1(500));
        // SAFETY: as above, work-items at offset 500 touch x[500..N].
        let launched = unsafe { launch.range(N - 500) };
        want[500..].iter_mut().for_each(|v| *v = v.wrapping_mul(3));
        correct(
            &format!("{case}, `triple` at offset 500"),
            launched,
            &x,
            &want,
        );

        // 2-D: 1009 = 1 x 1009 rows of one element; a 13 x 77 grid over 1001 elements.
        let (w, h) = (13, 77);
        let rows = p.kernel("rows").unwrap();
        // SAFETY: (x, y) touches x[y * w + x] < w * h <= N.
        let launched = unsafe { rows.launch().arg(&x).arg(w as u32).range(Range::d2(w, h)) };
        (0..w * h).for_each(|i| want[i] = want[i].wrapping_add((i / w) as i32));
        correct(&format!("{case}, `rows` 2-D range"), launched, &x, &want);

        // Required work-groups of 16 over 1008 work-items.
        let reqd = p.kernel("reqd16").unwrap();
        // SAFETY: work-item i < 1008 touches x[i].
        let launched = unsafe { reqd.launch().arg(&x).range(1008) };
        want[..1008]
            .iter_mut()
            .for_each(|v| *v = v.wrapping_add(16));
        correct(&format!("{case}, `reqd16` range"), launched, &x, &want);

        // Halo reads of a declared Halo(1) input into an Auto output.
        let mut input = ColoredBuffer::with_access(&root, N, Access::Halo(1)).unwrap();
        input.write(&xs).unwrap();
        let y = common::colored(&root, &vec![0; N], local);
        let avg = p.kernel("avg3").unwrap();
        // SAFETY: work-item i < N reads x[i - 1 ..= i + 1] within 0..N and writes y[i].
        let launched = unsafe { avg.launch().arg(&input).arg(&y).arg(N as u32).range(N) };
        let sum: Vec<i32> = (0..N)
            .map(|i| xs[i.saturating_sub(1)] + xs[i] + xs[(i + 1).min(N - 1)])
            .collect();
        correct(&format!("{case}, `avg3` halo"), launched, &y, &sum);
        assert_eq!(
            input.read().unwrap(),
            xs,
            "{case}: the read-only input changed"
        );

        // A buffer declared read-only (Replicated) that the kernel writes: in strict mode,
        // refused before anything runs where the driver reports `const` (the declaration binds
        // whatever runs); shared placement ignores access kinds. Without strict mode the
        // gathered copy is written back (checked below).
        let mut lut = ColoredBuffer::with_access(&root, N, Access::Replicated).unwrap();
        lut.write(&xs).unwrap();
        let strict = root.clone().strict();
        let triple_strict = strict
            .program(MACRO_NAMED)
            .unwrap()
            .kernel("triple")
            .unwrap();
        // SAFETY: `triple` touches lut[get_global_id(0)] only, below N, its length.
        let launched = unsafe { triple_strict.launch().arg(&lut).range(N) };
        let knows_const = triple.kernels()[0].args()[0].is_const.is_some();
        let tripled: Vec<i32> = xs.iter().map(|v| v.wrapping_mul(3)).collect();
        let case = format!("{case}, written Replicated");
        match root.placement() {
            Placement::Partitioned if knows_const => {
                refused(&case, launched, &lut, &xs, "read-only")
            }
            _ => _ = correct(&case, launched, &lut, &tripled),
        }
        lut.write(&xs).unwrap();
        // SAFETY: as above.
        let launched = unsafe { triple.launch().arg(&lut).range(N) };
        _ = correct(&format!("{case}, not strict"), launched, &lut, &tripled);
        assert!(matches!(
            p.kernel("nothing"),
            Err(Error::NoSuchKernel { .. })
        ));
    }
}

const REQUIRED: &str = r#"
kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void req(global int *y, global const int *x) {
    size_t i = get_global_id(0);
    y[i] = x[i] + (int)get_local_size(0) + (int)get_global_size(0);
}
"#;

#[test]
fn required_work_group_sizes_are_kept_whole_on_every_device() {
    for root in common::roots("required_work_group_sizes") {
        let k = root.program(REQUIRED).unwrap().kernel("req").unwrap();
        // Global sizes: 64 work-groups (split in whole groups), and a prime (rounded to 1024
        // as a plain range; refused as an ND-range).
        for (n, how) in [
            (64 * 37, "auto"),
            (64 * 37, "exact"),
            (64 * 37, "range"),
            (1009, "range"),
        ] {
            let case = format!("reqd 64, {how} n={n} ({} placement)", root.placement());
            let xs = common::values(n, 4);
            let x = common::colored(&root, &xs, 64);
            let y = common::colored(&root, &vec![0; n], 64);
            let launch = k.launch().arg(&y).arg(&x);
            // SAFETY: `req` touches x and y at get_global_id(0) only, below n, their length.
            let launched = unsafe {
                match how {
                    "auto" => launch.nd_range(n, LocalSize::Auto),
                    "exact" => launch.nd_range(n, Range::d1(64)),
                    _ => launch.range(n),
                }
            };
            let want: Vec<i32> = xs.iter().map(|v| v + 64 + n as i32).collect();
            correct(&case, launched, &y, &want);
        }
        let case = format!("reqd 64 ({} placement)", root.placement());
        let xs = common::values(1009, 5);
        let x = common::colored(&root, &xs, 64);
        let y = common::colored(&root, &[7; 1009], 64);
        // SAFETY: as above.
        let launched = unsafe { k.launch().arg(&y).arg(&x).nd_range(1009, LocalSize::Tuned) };
        refused(
            &format!("{case}, ND-range 1009"),
            launched,
            &y,
            &[7; 1009],
            "reqd_work_group_size",
        );
        // SAFETY: as above.
        let launched = unsafe { k.launch().arg(&y).arg(&x).nd_range(1009, Range::d1(32)) };
        refused(
            &format!("{case}, local 32"),
            launched,
            &y,
            &[7; 1009],
            "reqd_work_group_size",
        );
    }
}
