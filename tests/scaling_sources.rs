//! Sources as people write them over a root device, in both placements: build options, an
//! `#ifdef` whose branches each open the kernel, a kernel named by a macro, and a kernel with
//! `reqd_work_group_size`. Every launch is correct against a host reference or refused with a
//! typed error that says why, before anything is enqueued; every source builds.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use clgroups::launch::LocalSize;
use clgroups::scaling::{ColoredBuffer, MultiEvent};
use clgroups::{Error, Program, Range};

/// Asserts that `launched` ran and `x` now holds `want`.
fn correct(
    case: &str,
    launched: clgroups::Result<MultiEvent>,
    x: &ColoredBuffer<i32>,
    want: &[i32],
) {
    launched.unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(x.read().unwrap(), want, "{case}");
    eprintln!("{case}: correct");
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
fn ifdef_branches_opening_a_kernel_build_and_are_refused_with_the_reason() {
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
            let xs = common::values(N, 2);
            let x = common::colored(&root, &xs, 64);
            // SAFETY: `k` touches x[get_global_id(0)] only, below N, x's length.
            let launched = unsafe { k.launch().arg(&x).range(N) };
            refused(&case, launched, &x, &xs, "partitioned variant");
            // SAFETY: as above.
            let launched = unsafe { k.launch().arg(&x).nd_range(N, LocalSize::Tuned) };
            refused(&case, launched, &x, &xs, "partitioned variant");
            // The kernel as written runs on one device of the root device.
            let q = &root.queues()[0];
            let one = Program::builder(IFDEF).options(options).build(q).unwrap();
            let b = clgroups::Buffer::from_slice(q, &xs).unwrap();
            // SAFETY: as above, for the N-element `b`.
            unsafe { one.kernel("k").unwrap().launch().arg(&b).range(N) }
                .unwrap()
                .wait()
                .unwrap();
            let f = if options.is_empty() { 3 } else { 2 };
            let want: Vec<i32> = xs.iter().map(|v| v.wrapping_mul(f)).collect();
            assert_eq!(b.read(q).unwrap(), want, "{case}: on one device");
        }
    }
}

/// A kernel named by a macro beside one the scanner reads.
const MACRO_NAMED: &str = r#"
kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }

#define MAKE(NAME, F) kernel void NAME(global int *p) { p[get_global_id(0)] *= F; }
MAKE(triple, 3)
"#;

#[test]
fn macro_named_kernels_are_refused_with_the_reason_others_run() {
    const N: usize = 1009;
    for root in common::roots("macro_named_kernels") {
        let case = format!("macro-named kernel ({} placement)", root.placement());
        let p = root.program(MACRO_NAMED).unwrap();
        let twice = p.kernel("twice").unwrap();
        let local = twice.range_plan(Range::d1(N)).unwrap().1.len();
        let xs = common::values(N, 3);
        let x = common::colored(&root, &xs, local);
        let triple = p.kernel("triple").unwrap();
        let why = triple
            .rewrite_obstacle()
            .unwrap_or_else(|| panic!("{case}: rewritten"));
        assert!(why.contains("macro"), "{case}: {why}");
        // SAFETY: both kernels touch x[get_global_id(0)] only, below N, x's length.
        let launched = unsafe { triple.launch().arg(&x).range(N) };
        refused(&case, launched, &x, &xs, "partitioned variant");
        // SAFETY: as above.
        let launched = unsafe { twice.launch().arg(&x).range(N) };
        let want: Vec<i32> = xs.iter().map(|v| v.wrapping_mul(2)).collect();
        correct(&format!("{case}, `twice`"), launched, &x, &want);
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
