//! Issue 20, item 2: a kernel's own `intel_reqd_sub_group_size` behind a macro
//! (`#define REQD __attribute__((intel_reqd_sub_group_size(16)))`, or the size itself a macro,
//! `intel_reqd_sub_group_size(SIMD_SIZE)`) runs with the size it asks for, or is refused naming
//! the attribute; never with a guessed size. On the emulated backend (PoCL 3.1) the emulated
//! sub-groups used to be 8 wide (every shuffle wrong) or the build failed; on native drivers
//! (PoCL 6.0) the driver applies the attribute itself. A size macro defined in `#if` branches
//! takes the branch the build's macros select; one chosen by a macro clgroups cannot tell, or a
//! function-like macro's parameter, is the size the driver tells (or refused naming the
//! attribute where it tells none) where clgroups sets the size.

mod common;

use clgroups::device::ShuffleBackend;
use clgroups::scaling::{ColoredBuffer, Placement, RootDevice};
use clgroups::{Buffer, Error, LocalSize, Program, Range};

const SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REQD __attribute__((intel_reqd_sub_group_size(16)))
#define SIMD_SIZE 16
#define F(n) __attribute__((intel_reqd_sub_group_size(n)))
#ifdef NOT_DEFINED_ANYWHERE
#define WIDTH 8
#else
#define WIDTH 16
#endif
#ifdef __NV_CL_C_VERSION
#define VENDOR_WIDTH 8
#else
#define VENDOR_WIDTH 16
#endif

/* Each work-item: its sub-group's size, and the value of the lane mirrored in its sub-group. */
#define BODY \
    size_t i = get_global_id(0); \
    uint lane = get_sub_group_local_id(); \
    y[2 * i] = (int)get_max_sub_group_size(); \
    y[2 * i + 1] = sub_group_shuffle(x[i], get_max_sub_group_size() - 1 - lane);

REQD kernel void via_macro(global const int *x, global int *y) { BODY }
kernel __attribute__((intel_reqd_sub_group_size(SIMD_SIZE))) void via_arg(global const int *x, global int *y) { BODY }
F(16) kernel void function_like(global const int *x, global int *y) { BODY }
kernel __attribute__((intel_reqd_sub_group_size(WIDTH))) void two_definitions(global const int *x, global int *y) { BODY }
kernel __attribute__((intel_reqd_sub_group_size(VENDOR_WIDTH))) void vendor_width(global const int *x, global int *y) { BODY }
F(16) kernel void no_sub_groups(global const int *x, global int *y) { y[get_global_id(0)] = x[0]; }
"#;

/// What a kernel of `SRC` must write with sub-groups of 16 over work-groups of 64.
fn want16(x: &[i32]) -> Vec<i32> {
    want(x, 16)
}

/// What a kernel of `SRC` must write with sub-groups of `w` over work-groups of 64.
fn want(x: &[i32], w: usize) -> Vec<i32> {
    (0..x.len())
        .flat_map(|i| [w as i32, x[i / w * w + w - 1 - i % w]])
        .collect()
}

fn run(p: &Program, name: &str, x: &Buffer<i32>) -> clgroups::Result<Vec<i32>> {
    let q = p.queue();
    let y = Buffer::from_slice(q, &vec![0i32; 2 * x.len()])?;
    let k = p.kernel(name)?;
    // SAFETY: work-item i reads x[i] (x.len() items) and writes y[2i], y[2i + 1] (twice as long).
    unsafe {
        k.launch()
            .arg(x)
            .arg(&y)
            .nd_range(Range::d1(x.len()), LocalSize::Exact(Range::d1(64)))
    }?
    .wait()?;
    y.read(q)
}

#[test]
fn macro_sizes_run_with_the_size_they_ask_for() {
    let q = common::queue();
    let d = q.device().clone();
    let p = Program::from_source(&q, SRC).unwrap();
    let xs = common::values(128, 5);
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let offered = d.sub_groups().effective.sub_group_sizes.contains(&16);
    // `two_definitions`: WIDTH is 16 in the `#ifdef` branch the build compiles.
    for name in ["via_macro", "via_arg", "two_definitions"] {
        match run(&p, name, &x) {
            Ok(got) => {
                assert!(offered, "{d} does not offer 16 but {name} ran");
                assert_eq!(got, want16(&xs), "{name} on {d}");
                println!("{name}: sub-groups of 16 on {d}");
            }
            Err(Error::FeatureNotSupported { requested: 16, .. }) if !offered => {
                println!("{name}: 16 refused on {d}, which does not offer it");
            }
            Err(e) => panic!("{name} on {d}: {e}"),
        }
    }
}

/// What the scanner cannot tell (a function-like macro's parameter, a size chosen by a
/// compiler's own macro): run at the size the driver applies, where clgroups sets the size too
/// (emulated, NVIDIA: the driver tells it, `program/probe.rs`; before, refused), and by the
/// driver where it applies the attribute itself (native). Never at a guessed size: where the
/// driver could not tell it (a driver that rejects the probe build), refused naming the
/// attribute. A kernel that uses no sub-group is never refused for it.
#[test]
fn sizes_the_scanner_cannot_read_run_with_the_size_the_driver_tells() {
    let q = common::queue();
    let d = q.device().clone();
    let p = Program::from_source(&q, SRC).unwrap();
    let xs = common::values(128, 9);
    let x = Buffer::from_slice(&q, &xs).unwrap();
    let provided = matches!(
        d.sub_groups().effective.shuffle_backend,
        ShuffleBackend::Emulated | ShuffleBackend::NvidiaPtx
    );
    let pocl = d.identity().implementation == clgroups::device::Implementation::Pocl;
    let offered = d.sub_groups().effective.sub_group_sizes.contains(&16);
    // `vendor_width` asks for 8 where NVIDIA's compiler defines `__NV_CL_C_VERSION`, else 16.
    let nvidia = d.identity().implementation == clgroups::device::Implementation::Nvidia;
    for (name, w) in [
        ("function_like", 16),
        ("vendor_width", if nvidia { 8 } else { 16 }),
    ] {
        match run(&p, name, &x) {
            Ok(got) => {
                // The size the preprocessor decides.
                assert_eq!(got, want(&xs, w), "{name} on {d}");
                println!("{name} on {d}: sub-groups of {w}");
            }
            Err(Error::FeatureNotSupported { requested: 16, .. }) if !offered => {
                println!("{name}: 16 refused on {d}, which does not offer it");
            }
            // PoCL answers the probe (tested here); another driver might reject it.
            Err(e @ Error::Unsupported { .. }) if provided && !pocl => {
                let text = e.to_string();
                assert!(text.contains("intel_reqd_sub_group_size"), "{text}");
                println!("{name} on {d}: refused: {text}");
            }
            r => panic!("{name} on {d}: {:?}", r.map(|_| ())),
        }
    }
    let y = run(&p, "no_sub_groups", &x).unwrap();
    assert!(y[..128].iter().all(|&v| v == xs[0]));
}

/// A kernel's own `intel_reqd_sub_group_size` (a literal or a macro, the oneDNN/OpenCV style) is
/// what runs, alone, in its rounded variant and over a RootDevice in both placements; clgroups
/// pins nothing on kernels that do not use its layer.
#[test]
fn own_sub_group_size_attributes_are_kept() {
    let q = common::queue();
    let d = q.device().clone();
    if !common::native_or_skip(&d, "own_sub_group_size_attributes_are_kept") {
        return;
    }
    if !d.sub_groups().driver.sub_group_sizes.contains(&16) {
        eprintln!("own_sub_group_size_attributes_are_kept: not run: {d} does not offer size 16");
        return;
    }
    // 16 where the largest sub-group is min(16, work-group size) (OpenCL and SYCL: never above
    // the work-group, e.g. in the tail launch of a plain range), 0 otherwise.
    let src = "#define SIMD 16\n\
        #define SEEN (get_max_sub_group_size() == min(16u, (uint)get_local_size(0)) ? 16u : 0u)\n\
        __attribute__((intel_reqd_sub_group_size(16))) kernel void lit(global uint *o) \
        { o[get_global_id(0)] = SEEN; }\n\
        kernel __attribute__((intel_reqd_sub_group_size(SIMD))) void mac(global uint *o) \
        { o[get_global_id(0)] = SEEN; }\n\
        kernel void free_size(global uint *o) { o[get_global_id(0)] = 16; }\n";
    let p = Program::from_source(&q, src).unwrap();
    for name in ["lit", "mac"] {
        let o = Buffer::<u32>::new(q.context(), 4099).unwrap();
        let k = p.kernel(name).unwrap();
        // SAFETY: work-item i writes o[i], i < 4099 = o's length (also below, for 4096).
        unsafe { k.launch().arg(&o).range(4099) }
            .unwrap()
            .wait()
            .unwrap();
        assert!(
            o.read(&q).unwrap().iter().all(|&v| v == 16),
            "{name} plain range"
        );
        // SAFETY: work-item i writes o[i], i < 4096 < o's length.
        unsafe {
            k.launch()
                .arg(&o)
                .nd_range(Range::d1(4096), LocalSize::Auto)
        }
        .unwrap()
        .wait()
        .unwrap();
        assert!(
            o.read(&q).unwrap()[..4096].iter().all(|&v| v == 16),
            "{name} ND-range"
        );
    }
    let Ok(root) = RootDevice::from_env() else {
        return;
    };
    if root.len() < 2 {
        return;
    }
    for placement in [Placement::Shared, Placement::Partitioned] {
        let root = RootDevice::from_env().unwrap().with_placement(placement);
        let rp = root.program(src).unwrap();
        for name in ["lit", "mac"] {
            let out = ColoredBuffer::<u32>::with_page(&root, 256, 64 * 4).unwrap();
            let k = rp.kernel(name).unwrap();
            // SAFETY: work-item i writes out[i], i < 256 = out's length.
            let ev = unsafe { k.launch().arg(&out).nd_range(Range::d1(256), Range::d1(64)) };
            match ev {
                Ok(ev) => {
                    ev.wait().unwrap();
                    let got = out.read().unwrap();
                    assert!(
                        got.iter().all(|&v| v == 16),
                        "{name} {placement:?}: {got:?}"
                    );
                }
                Err(e) => eprintln!("{name} {placement:?}: refused: {e}"),
            }
        }
    }
}
