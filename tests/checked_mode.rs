//! Checked mode (`CLGROUPS_CHECKED=1`): out-of-bounds accesses of single-device launches are
//! errors naming the kernel, argument, index and work-item, however far out (instrumented
//! kernels) or however hidden (guard regions), and correct kernels give the same results checked
//! and unchecked. Each test runs in a child process with its own `CLGROUPS_CHECKED`.

mod common;

use clgroups::launch::{Local, LocalSize};
use clgroups::{Buffer, Error, Program, Range};

const SRC: &str = include_str!("cl/fill.cl");

/// Checked mode reports a write past the end of a buffer as an error naming the kernel,
/// the argument and the element, and the buffer stays usable.
#[test]
fn checked_mode_reports_out_of_bounds_writes() {
    common::in_child_with(
        "checked_mode_reports_out_of_bounds_writes",
        &[("CLGROUPS_CHECKED", "1")],
        || {
            assert!(clgroups::launch::checked::enabled());
            let q = common::queue();
            let p = Program::from_source(&q, SRC).unwrap();
            let fill = p.kernel("fill").unwrap();
            let out = common::poisoned(&q, 100);
            // SAFETY: 100 writes past the end: checked mode redirects them (or its guard
            // absorbs them).
            let r = unsafe { fill.launch().arg(&out).arg(1).range(200) };
            match r {
                Err(Error::OutOfBounds {
                    kernel,
                    argument: 0,
                    index,
                    len: 100,
                    ..
                }) => assert!(kernel == "fill" && (100..200).contains(&index)),
                other => panic!("want OutOfBounds, got {:?}", other.map(|_| ())),
            }
            let mixed = p.kernel("mixed").unwrap();
            let (f, i) = (
                Buffer::<f32>::new(q.context(), 100).unwrap(),
                Buffer::<i32>::from_slice(&q, &[2; 200]).unwrap(),
            );
            let l = LocalSize::Exact(Range::d1(64));
            // SAFETY: `mixed` writes f[gid] for gid < 150 (50 in the guard of `f`).
            let r = unsafe {
                mixed
                    .launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(150u32)
                    .arg(1f32)
                    .nd_range(192, l)
            };
            match r {
                Err(
                    e @ Error::OutOfBounds {
                        argument: 0,
                        index: 100..=149,
                        ..
                    },
                ) => println!("{e}"),
                other => panic!("want OutOfBounds, got {:?}", other.map(|_| ())),
            }
            // In bounds now: no error, and the guard was restored.
            // SAFETY: `mixed` writes f[gid] for gid < 100, the length of `f`.
            let ev = unsafe {
                mixed
                    .launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(100u32)
                    .arg(1f32)
                    .nd_range(192, l)
            };
            ev.unwrap().wait().unwrap();
            assert_eq!(f.read(&q).unwrap(), vec![3.0; 100]);
            // SAFETY: `fill` writes o[gid] for 100 ids.
            unsafe { fill.launch().arg(&out).arg(7).range(100) }.unwrap();
            assert_eq!(out.read(&q).unwrap(), vec![7; 100]);
            #[cfg(feature = "algorithms")]
            {
                let x = Buffer::from_slice(&q, &(1..=1000).collect::<Vec<i32>>()).unwrap();
                assert_eq!(clgroups::algorithms::reduce_sum(&q, &x).unwrap(), 500500);
            }
        },
    );
}

const CHECKED_SRC: &str = r#"
kernel void fill(global int *o, int v) { o[get_global_id(0)] = v; }
kernel void shifted(global int *o, global const int *x, int by) {
    o[get_global_id(0)] = x[(long)get_global_id(0) + by];
}
kernel void via_pointer(global int *o) { *(o + get_global_id(0)) = 1; }
void put(global int *p, size_t i) { p[i] = 1; }
kernel void via_helper(global int *o) { put(o, get_global_id(0)); }
kernel void at_helper(global int *o, int at) { put(o, (size_t)(long)at); }
kernel void vectors(global int *o, global const int *x, int by) {
    vstore4(vload4(get_global_id(0), x) + 1, get_global_id(0) + by, o);
}
kernel void behind(global int *o, global const int *x, int by) { *(o - by) = *x + *(x + 1); }
#define MAKE(name) kernel void name(global int *o) { o[get_global_id(0)] = 1; }
MAKE(made_by_macro)
"#;

/// The first out-of-bounds access of a launch, printed; panics unless it is one.
fn out_of_bounds(r: clgroups::Result<clgroups::launch::Event>) -> (usize, String, i64, u64) {
    match r {
        Err(e @ Error::OutOfBounds { .. }) => {
            println!("{e}");
            let Error::OutOfBounds {
                argument,
                name,
                index,
                len,
                global_id,
                ..
            } = e
            else {
                unreachable!()
            };
            assert!(global_id.is_some(), "seen by the checked variant");
            (argument, name, index, len)
        }
        other => panic!("want OutOfBounds, got {:?}", other.map(|_| ())),
    }
}

/// Checked mode runs instrumented kernels: the issue's case (`range(100_000)` on 100
/// elements, far past any guard), an out-of-bounds read and a negative index are errors naming
/// the argument, and nothing outside the buffers is touched.
#[test]
fn checked_mode_catches_far_writes_reads_and_negative_indices() {
    common::in_child_with(
        "checked_mode_catches_far_writes_reads_and_negative_indices",
        &[("CLGROUPS_CHECKED", "1")],
        || {
            let q = common::queue();
            let p = Program::from_source(&q, CHECKED_SRC).unwrap();
            let (fill, shifted) = (p.kernel("fill").unwrap(), p.kernel("shifted").unwrap());
            let out = common::poisoned(&q, 100);
            let next = common::poisoned(&q, 100);
            // SAFETY: not in bounds (99 900 stray writes, 390 KiB past the end): checked mode
            // redirects every one of them into the guard.
            let r = unsafe { fill.launch().arg(&out).arg(1).range(100_000) };
            let (arg, name, index, len) = out_of_bounds(r);
            assert_eq!((arg, name.as_str(), len), (0, "o", 100));
            assert!((100..100_000).contains(&index), "{index}");
            assert_eq!(out.read(&q).unwrap(), vec![1; 100]);
            common::untouched(&q, &next);
            // The same through an ND-range.
            // SAFETY: as above.
            let r = unsafe {
                fill.launch()
                    .arg(&out)
                    .arg(2)
                    .nd_range(100_000, LocalSize::Auto)
            };
            assert_eq!(out_of_bounds(r).0, 0);
            // A read one past the end: the error names `x`; the read gave the guard's canary.
            let x = Buffer::from_slice(&q, &(0..100).collect::<Vec<i32>>()).unwrap();
            // SAFETY: reads x[100]: redirected by checked mode.
            let r = unsafe { shifted.launch().arg(&out).arg(&x).arg(1).range(100) };
            assert_eq!(out_of_bounds(r), (1, "x".into(), 100, 100));
            let got = out.read(&q).unwrap();
            assert_eq!(got[..99], (1..100).collect::<Vec<i32>>()[..]);
            assert_eq!(got[99], i32::from_ne_bytes([0xA5; 4]));
            // A negative index.
            // SAFETY: reads x[-1]: redirected by checked mode.
            let r = unsafe { shifted.launch().arg(&out).arg(&x).arg(-1).range(100) };
            assert_eq!(out_of_bounds(r), (1, "x".into(), -1, 100));
            // A dereference of pointer arithmetic is instrumented too.
            let via = p.kernel("via_pointer").unwrap();
            let w = common::poisoned(&q, 100);
            // SAFETY: 50 writes past the end: redirected by checked mode.
            let r = unsafe { via.launch().arg(&w).range(150) };
            let (arg, name, index, len) = out_of_bounds(r);
            assert!((arg, name.as_str(), len) == (0, "o", 100) && (100..150).contains(&index));
            common::untouched(&q, &next);
            // vload4 / vstore4 count 4 elements per offset: o[100..104] is out of bounds.
            let vectors = p.kernel("vectors").unwrap();
            let v = common::poisoned(&q, 100);
            // SAFETY: writes o[4*(gid+1)..] up to element 103: redirected by checked mode.
            let r = unsafe { vectors.launch().arg(&v).arg(&x).arg(1).range(25) };
            assert_eq!(out_of_bounds(r), (0, "o".into(), 100, 100));
            assert_eq!(v.read(&q).unwrap()[4..8], [1, 2, 3, 4]);
            // SAFETY: reads x[100..104] (x holds 100): redirected by checked mode.
            let r = unsafe { vectors.launch().arg(&v).arg(&x).arg(0).range(26) };
            assert_eq!(out_of_bounds(r), (1, "x".into(), 100, 100));
            // *p and *(p - e): before the start of `o`.
            let behind = p.kernel("behind").unwrap();
            // SAFETY: writes o[-3]: redirected by checked mode.
            let r = unsafe { behind.launch().arg(&v).arg(&x).arg(3).range(1) };
            assert_eq!(out_of_bounds(r), (0, "o".into(), -3, 100));
            // SAFETY: in bounds.
            unsafe { behind.launch().arg(&v).arg(&x).arg(0).range(1) }.unwrap();
            assert_eq!(v.read(&q).unwrap()[0], 1);
            // A pointer passed to a helper function is not instrumented (RUST_LOG=debug says
            // so): the guard region sees the write.
            let via = p.kernel("via_helper").unwrap();
            // SAFETY: 50 writes past the end, inside the guard (64 KiB).
            match unsafe { via.launch().arg(&w).range(150) } {
                Err(
                    e @ Error::OutOfBounds {
                        argument: 0,
                        index: 100..=149,
                        global_id: None,
                        ..
                    },
                ) => println!("{e}"),
                other => panic!(
                    "want OutOfBounds from the guard, got {:?}",
                    other.map(|_| ())
                ),
            }
            // Before the start, through the helper: the guard before the buffer sees it.
            let at = p.kernel("at_helper").unwrap();
            // SAFETY: writes o[-5], inside the front guard (64 KiB).
            match unsafe { at.launch().arg(&w).arg(-5).range(1) } {
                Err(
                    e @ Error::OutOfBounds {
                        argument: 0,
                        index: -5,
                        global_id: None,
                        ..
                    },
                ) => {
                    println!("{e}")
                }
                // A device with its own memory may keep a sub-buffer apart from its parent
                // (NVIDIA): guards are a host-memory device's net (see launch::checked).
                Ok(_) if !q.device().limits().host_unified_memory => {
                    println!(
                        "o[-5] through a helper: not seen on {} (no host memory)",
                        q.device()
                    )
                }
                other => panic!("want OutOfBounds at -5, got {:?}", other.map(|_| ())),
            }
            // So is a kernel the scanner cannot rewrite (made by a macro): no checked variant.
            let made = p.kernel("made_by_macro").unwrap();
            // SAFETY: 50 writes past the end, inside the guard (64 KiB).
            match unsafe { made.launch().arg(&w).range(150) } {
                Err(Error::OutOfBounds {
                    index: 100..=149,
                    global_id: None,
                    ..
                }) => {}
                other => panic!(
                    "want OutOfBounds from the guard, got {:?}",
                    other.map(|_| ())
                ),
            }
            // Everything still works, in bounds, with no error.
            // SAFETY: in bounds.
            unsafe { shifted.launch().arg(&out).arg(&x).arg(0).range(100) }.unwrap();
            assert_eq!(out.read(&q).unwrap(), (0..100).collect::<Vec<i32>>());
            common::untouched(&q, &next);
        },
    );
}

const CORRECT_SRC: &str = r#"
#include <clgroups/subgroup.h>
kernel void saxpy(global float *y, constant float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
kernel void twice4(global float4 *v) { v[get_global_id(0)] *= 2.0f; }
kernel void vectors(global float *v) {
    size_t i = get_global_id(0);
    vstore4(vload4(i, v) + 1.0f, i, v);
    *(v + 4 * i) *= 3.0f;
    if (i == 0) *v += 0.5f;
}
kernel void tile(global int *o, global const int *x, local int *t) {
    t[get_local_id(0)] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(0)] = t[get_local_size(0) - 1 - get_local_id(0)];
}
kernel void sums(global int *o, global const int *x) {
    o[get_global_id(0)] = sg_reduce_add(x[get_global_id(0)]);
}
"#;

/// Runs correct kernels (rounded plain ranges, a constant pointer, a vector view of a scalar
/// buffer, vload/vstore and dereferences, local memory, the sub-group layer) and prints a digest of their results.
fn correct_kernels() {
    let _ = env_logger::builder().is_test(true).try_init();
    let q = common::queue();
    let p = Program::from_source(&q, CORRECT_SRC).unwrap();
    let k = |n: &str| p.kernel(n).unwrap();
    let n = 7727;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (mut y, x) = (
        Buffer::from_slice(&q, &vec![1f32; n]).unwrap(),
        Buffer::from_slice(&q, &xs).unwrap(),
    );
    let v = Buffer::from_slice(&q, &xs[..400]).unwrap();
    let ints = Buffer::from_slice(&q, &common::values(256, 7)).unwrap();
    let (o1, o2) = (common::poisoned(&q, 256), common::poisoned(&q, 256));
    let l = LocalSize::Exact(Range::d1(64));
    // SAFETY: every kernel indexes its buffers by global id inside their lengths (`v` holds
    // 100 float4), and `tile` reads its 64 local ints.
    unsafe {
        k("saxpy")
            .launch()
            .arg(&mut y)
            .arg(&x)
            .arg(2f32)
            .range(n)
            .unwrap();
        k("twice4").launch().arg(&v).range(100).unwrap();
        k("vectors").launch().arg(&v).range(100).unwrap();
        let tile = k("tile");
        let tile = tile.launch().arg(&o1).arg(&ints).arg(Local::<i32>::new(64));
        tile.nd_range(256, l).unwrap();
        k("sums")
            .launch()
            .arg(&o2)
            .arg(&ints)
            .nd_range(256, l)
            .unwrap();
    }
    let weighted = |v: Vec<i32>| -> i64 { v.iter().zip(1..).map(|(&a, w)| a as i64 * w).sum() };
    let digest = format!(
        "{:?} {:?} {} {}",
        y.read(&q).unwrap().iter().map(|v| *v as f64).sum::<f64>(),
        v.read(&q).unwrap().iter().map(|v| *v as f64).sum::<f64>(),
        weighted(o1.read(&q).unwrap()),
        weighted(o2.read(&q).unwrap())
    );
    println!("DIGEST {digest}");
}

fn digest(out: &str) -> &str {
    let at = out.find("DIGEST ").expect("a digest");
    out[at..].lines().next().unwrap_or_default()
}

/// Correct kernels give the same results with and without checked mode.
#[test]
fn checked_mode_keeps_correct_results() {
    let name = "checked_mode_keeps_correct_results";
    let checked = common::in_child_with(name, &[("CLGROUPS_CHECKED", "1")], correct_kernels);
    let plain = common::in_child_with(name, &[("CLGROUPS_CHECKED", "0")], correct_kernels);
    assert_eq!(digest(&checked), digest(&plain));
}
