//! What the standard built-ins' polyfill does to a build: nothing for programs that name no
//! sub-group built-in, and scratch threaded through helper functions that call built-ins on the
//! emulated backend. The built-ins themselves: `tests/khr_polyfill.rs`.

mod common;

use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Range};

#[test]
fn programs_without_sub_group_builtins_get_no_polyfill() {
    let q = common::queue();
    // Were the polyfill prepended, its layer's own `clg_lane` would clash with this one.
    let src = "int clg_lane(int x) { return x; }\n\
               kernel void k(global int *o) { o[get_global_id(0)] = clg_lane(3); }";
    let p = Program::from_source(&q, src).expect("builds");
    let out = Buffer::from_slice(&q, &[0i32; 8]).unwrap();
    // SAFETY: each checking kernel writes its outputs at the work-item's linear global id (or block offsets within the buffers), which the buffers are sized for.
    unsafe {
        p.kernel("k")
            .unwrap()
            .launch()
            .arg(&out)
            .range(Range::d1(8))
    }
    .and_then(|e| e.wait())
    .unwrap();
    assert_eq!(out.read(&q).unwrap(), vec![3; 8]);
    // A program that names a built-in the device lacks builds unchanged.
    let src = "kernel void k(global int *o) { o[get_global_id(0)] = sub_group_shuffle_up(1, 0u); }";
    Program::from_source(&q, src).expect("sub_group_shuffle_up builds everywhere");
}

/// Standard built-ins in helper functions need no plumbing on any backend: the build threads the
/// emulated scratch through the helpers that (transitively) call them.
#[test]
fn builtins_in_helper_functions() {
    let q = common::queue();
    let src = "float group_sum(float v) { return sub_group_reduce_add(v); }\n\
               float twice(float v) { return 2.0f * group_sum(v); }\n\
               kernel void k(global float *o) {\n\
                   float s = twice(1.0f);\n\
                   if (get_sub_group_local_id() == 0) o[get_global_id(0) / get_max_sub_group_size()] = s;\n\
               }\n";
    let p = Program::from_source(&q, src).expect("a helper calling sub_group_reduce_add builds");
    let k = p.kernel("k").unwrap();
    let out = Buffer::from_slice(&q, &[-1.0f32; 256]).unwrap();
    // SAFETY: work-item i writes o[i / sub-group size] only, below 256 = o's length.
    unsafe {
        k.launch()
            .arg(&out)
            .nd_range(Range::d1(256), LocalSize::Exact(Range::d1(64)))
    }
    .and_then(|e| e.wait())
    .unwrap();
    let got = out.read(&q).unwrap();
    let size = got[0] / 2.0;
    assert!(size >= 1.0, "{got:?}");
    let groups = (256.0 / size) as usize;
    assert!(
        got[..groups].iter().all(|&v| v == 2.0 * size),
        "{:?} ({} backend)",
        &got[..groups],
        q.device().sub_groups().effective.shuffle_backend
    );
}
