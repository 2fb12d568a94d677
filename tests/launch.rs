//! ND-range launches: automatic local sizes never change the global range, tuned local sizes
//! divide it and respect the kernel's limits, exact/tuned/auto agree, and invalid launches are
//! errors before anything is enqueued.

mod common;

use common::Poison;

use clgroups::device::ShuffleBackend;
use clgroups::error::Unsupported;
use clgroups::launch::LocalSize;
use clgroups::plan::local_size;
use clgroups::{Buffer, Error, Kernel, Program, Queue, Range};

/// Per work-item: global size and local size of each dimension, then the sub-group size.
const RECORD: &str = r#"
#include <clgroups/subgroup.h>
kernel void record(global uint *o) {
    size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0)
             + get_global_id(0);
    global uint *r = o + i * 7;
    for (uint d = 0; d < 3; ++d) {
        r[d] = (uint)get_global_size(d);
        r[3 + d] = (uint)get_local_size(d);
    }
    r[6] = sg_get_local_range();
}
"#;

/// A sample kernel for comparing local-size choices, and kernels to misuse.
const SAMPLE: &str = r#"
kernel void saxpy(global float *y, global const float *x, float a, uint n) {
    size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0)
             + get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i] + (float)get_local_size(0);
}

kernel void fill(global int *o, uint v) {
    o[get_global_id(0)] = (int)v;
}
"#;

fn sizes() -> Vec<Range> {
    vec![
        Range::d1(7727),
        Range::d1(1000),
        Range::d1(4096),
        Range::d2(13, 7),
        Range::d2(64, 30),
        Range::d2(97, 89),
        Range::d3(5, 7, 3),
        Range::d3(8, 4, 6),
        Range::d3(17, 1, 13),
    ]
}

/// Runs `record` over `global` with `local`; returns the 7 values of every work-item, or `None`
/// where no work-group of whole warps fits and the device is NVIDIA (sub-group kernels there
/// need whole warps: the launch must then fail with a clear error, before anything runs).
fn record(q: &Queue, k: &Kernel, global: Range, local: LocalSize) -> Option<Vec<[u32; 7]>> {
    let mut o = Buffer::<u32>::new(q.context(), global.len() * 7).unwrap();
    o.fill(q, 0xdead_beef).unwrap();
    // SAFETY: `record` writes o[7i..7i + 7] for the linear id i < global.len(); `o` has 7 per id.
    match unsafe { k.launch().arg(&o).nd_range(global, local) } {
        Ok(ev) => ev.wait().unwrap(),
        Err(e) => panic!("{global:?} {local:?}: {e}"),
    }
    Some(
        o.read(q)
            .unwrap()
            .chunks(7)
            .map(|c| c.try_into().unwrap())
            .collect(),
    )
}

/// Checks what each work-item recorded: the requested global range, one local range for all
/// that divides it within the kernel's limits, and a sub-group of 1 to `|local|` work-items.
fn check_record(k: &Kernel, global: Range, rec: &[[u32; 7]]) -> Range {
    let g = global.padded().map(|v| v as u32);
    let l = [rec[0][3], rec[0][4], rec[0][5]];
    let local = Range::new(&l.map(|v| v as usize)[..global.rank()]).unwrap();
    assert!(local.padded().iter().skip(global.rank()).all(|&v| v == 1));
    for (i, r) in rec.iter().enumerate() {
        assert_eq!(r[..3], g, "work-item {i} of {global:?}: global size");
        assert_eq!(r[3..6], l, "work-item {i} of {global:?}: local size");
        let local_len = local.len() as u32;
        assert!(
            (1..=local_len).contains(&r[6]),
            "work-item {i}: sub-group of {} in a work-group of {local_len}",
            r[6]
        );
    }
    assert_eq!(
        local_size::validate(global, local, k.limits()),
        Ok(()),
        "{global:?} local {local:?}"
    );
    local
}

#[test]
fn auto_keeps_the_global_range() {
    let q = common::queue();
    let p = Program::from_source(&q, RECORD).unwrap();
    let k = p.kernel("record").unwrap();
    for g in sizes() {
        let Some(rec) = record(&q, &k, g, LocalSize::Auto) else {
            continue;
        };
        let local = check_record(&k, g, &rec);
        eprintln!(
            "auto: global {g:?} -> local {local:?}, sub-group {}",
            rec[0][6]
        );
    }
}

#[test]
fn tuned_divides_and_respects_limits() {
    let q = common::queue();
    let p = Program::from_source(&q, RECORD).unwrap();
    let k = p.kernel("record").unwrap();
    let warps = q.device().sub_groups().effective.shuffle_backend == ShuffleBackend::NvidiaPtx;
    for g in sizes() {
        let Some(rec) = record(&q, &k, g, LocalSize::Tuned) else {
            continue;
        };
        let local = check_record(&k, g, &rec);
        // Whole warps where a size of whole warps divides the range (sub-group kernels on NVIDIA).
        let want = match warps
            .then(|| local_size::tuned_whole(g, k.limits(), 32))
            .flatten()
        {
            Some(whole) => whole,
            None => local_size::tuned(g, k.limits()),
        };
        assert_eq!(local, want, "{g:?}");
        assert!(local.len() <= k.limits().max_work_group_size);
    }
    // A composite size gets more than one work-item per group.
    let rec = record(&q, &k, Range::d1(4096), LocalSize::Tuned).unwrap();
    assert!(rec[0][3] > 1, "{:?}", rec[0]);
}

#[test]
fn exact_tuned_and_auto_agree() {
    let q = common::queue();
    let p = Program::from_source(&q, SAMPLE).unwrap();
    let k = p.kernel("saxpy").unwrap();
    let cases = [
        (Range::d1(3000), Range::d1(40)),
        (Range::d2(48, 20), Range::d2(16, 4)),
        (Range::d3(12, 10, 6), Range::d3(4, 5, 2)),
    ];
    for (g, exact) in cases {
        let n = g.len();
        let x: Vec<f32> = (0..n).map(|i| (i % 251) as f32 * 0.5 + 1.0).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.5).collect();
        let xb = Buffer::from_slice(&q, &x).unwrap();
        let mut results = Vec::new();
        for local in [LocalSize::Exact(exact), LocalSize::Tuned, LocalSize::Auto] {
            let yb = Buffer::from_slice(&q, &y0).unwrap();
            let launch = k.launch().arg(&yb).arg(&xb).arg(2.5f32).arg(n as u32);
            // SAFETY: `saxpy` touches x[i] and y[i] only for i < n, their length.
            let ev = unsafe { launch.nd_range(g, local) }.unwrap();
            ev.wait().unwrap();
            let y = yb.read(&q).unwrap();
            // The kernel adds get_local_size(0): strip it to compare the arithmetic.
            let l0 = y[0] - (2.5 * x[0] + y0[0]);
            for i in 0..n {
                assert_eq!(y[i], 2.5 * x[i] + y0[i] + l0, "{g:?} {local:?} [{i}]");
            }
            results.push(y.iter().map(|v| v - l0).collect::<Vec<f32>>());
        }
        assert_eq!(results[0], results[1], "{g:?}: exact vs tuned");
        assert_eq!(results[0], results[2], "{g:?}: exact vs auto");
    }
}

/// A poisoned output for `fill`, and a check that it is still poisoned.
struct Guarded {
    q: Queue,
    k: Kernel,
    out: Buffer<i32>,
}

impl Guarded {
    fn new() -> Self {
        let q = common::queue();
        let k = Program::from_source(&q, SAMPLE)
            .unwrap()
            .kernel("fill")
            .unwrap();
        let mut out = Buffer::new(q.context(), 8192).unwrap();
        out.fill(&q, i32::POISON).unwrap();
        Guarded { q, k, out }
    }

    fn untouched(&self) {
        self.q.finish().unwrap();
        let v = self.out.read(&self.q).unwrap();
        assert!(v.iter().all(|&x| x == i32::POISON), "a failed launch ran");
    }
}

/// Asserts `e` is an InvalidLaunch of `fill` whose message names the kernel, the sizes and
/// `why`.
fn invalid_launch(e: Error, global: &[usize], local: &[usize], why: &str) {
    let msg = e.to_string();
    let Error::InvalidLaunch {
        kernel,
        global: g,
        local: l,
        reason,
        ..
    } = e
    else {
        panic!("want InvalidLaunch, got {msg}")
    };
    assert_eq!(kernel, "fill", "{msg}");
    assert_eq!(g, global, "{msg}");
    assert_eq!(l, local, "{msg}");
    assert!(reason.to_string().contains(why), "{msg}");
    assert!(
        msg.contains("`fill`") && msg.contains(&format!("{global:?}")),
        "{msg}"
    );
}

#[test]
fn invalid_ranges_are_rejected_before_enqueue() {
    let t = Guarded::new();
    let lim = t.k.limits().clone();
    let launch = || t.k.launch().arg(&t.out).arg(7u32);
    // SAFETY: every launch here is refused before enqueueing (`untouched` checks it); `fill`
    // writes o[get_global_id(0)] and `out` has 8192 elements, more than any valid range here.
    unsafe {
        let e = launch()
            .nd_range(Range::d2(0, 4), LocalSize::Auto)
            .unwrap_err();
        invalid_launch(e, &[0, 4], &[], "zero");
        let e = launch().range(0).unwrap_err();
        invalid_launch(e, &[0], &[], "zero");
        let e = launch()
            .nd_range(64, LocalSize::Exact(Range::d1(0)))
            .unwrap_err();
        invalid_launch(e, &[64], &[0], "local size of dimension 0 is 0");
        let e = launch()
            .nd_range(100, LocalSize::Exact(Range::d1(8)))
            .unwrap_err();
        invalid_launch(e, &[100], &[8], "8 does not divide global size 100");
        let big = lim.max_work_item_sizes[0] * 2;
        let e = launch()
            .nd_range(big, LocalSize::Exact(Range::d1(big)))
            .unwrap_err();
        invalid_launch(e, &[big], &[big], "exceeds the maximum work-item size");
        // Each dimension within its limit, the total above the work-group maximum.
        let x = lim.max_work_item_sizes[0].min(lim.max_work_group_size);
        let y = lim.max_work_group_size / x + 1;
        let e = launch()
            .nd_range(Range::d2(x, y), LocalSize::Exact(Range::d2(x, y)))
            .unwrap_err();
        invalid_launch(e, &[x, y], &[x, y], "exceeds the maximum work-group size");
        let e = launch()
            .nd_range(Range::d2(64, 2), LocalSize::Exact(Range::d1(64)))
            .unwrap_err();
        invalid_launch(e, &[64, 2], &[64], "has 2 dimensions but local range");
        let e = launch()
            .offset(Range::d2(1, 1))
            .nd_range(64, LocalSize::Auto)
            .unwrap_err();
        invalid_launch(e, &[64], &[], "another rank");
    }
    let e = Range::new(&[1, 2, 3, 4]).unwrap_err();
    assert!(matches!(e, Error::InvalidInput { .. }), "{e:?}");
    assert!(e.to_string().contains('4'), "{e}");
    t.untouched();
}

/// Asserts `e` is an InvalidArgument of `kernel` at `index` whose reason contains `why`.
fn invalid_argument(e: Error, kernel_name: &str, at: usize, why: &str) {
    let msg = e.to_string();
    let Error::InvalidArgument {
        kernel,
        index,
        reason,
    } = e
    else {
        panic!("want InvalidArgument, got {msg}")
    };
    assert_eq!((kernel.as_str(), index), (kernel_name, at), "{msg}");
    assert!(reason.to_string().contains(why), "{msg}");
    assert!(msg.contains(&format!("`{kernel_name}`")), "{msg}");
}

#[test]
fn invalid_arguments_are_rejected_before_enqueue() {
    let t = Guarded::new();
    let floats = Buffer::<f32>::new(t.q.context(), 64).unwrap();
    let l = LocalSize::Exact(Range::d1(64));
    // SAFETY: every launch here is refused before enqueueing (`untouched` checks it).
    unsafe {
        // Missing argument, with ND-range and plain range.
        let e = t.k.launch().arg(&t.out).nd_range(64, l).unwrap_err();
        invalid_argument(e, "fill", 1, "takes 2 argument(s), 1 given");
        let e = t.k.launch().arg(&t.out).range(64).unwrap_err();
        invalid_argument(e, "fill", 1, "takes 2 argument(s), 1 given");
        // One too many.
        let e =
            t.k.launch()
                .arg(&t.out)
                .arg(1u32)
                .arg(2u32)
                .nd_range(64, l)
                .unwrap_err();
        invalid_argument(e, "fill", 2, "takes 2 argument(s), 3 given");
        // A float buffer for an int pointer.
        let e = t.k.launch().arg(&floats).arg(1u32).range(64).unwrap_err();
        invalid_argument(e, "fill", 0, "got a Buffer<float>");
        // An int for a uint.
        let e = t.k.launch().arg(&t.out).arg(1i32).range(64).unwrap_err();
        invalid_argument(e, "fill", 1, "is a uint, got a int value");
        // A scalar for the buffer.
        let e = t.k.launch().arg(5i32).arg(1u32).range(64).unwrap_err();
        invalid_argument(e, "fill", 0, "is a global int* pointer");
    }
    t.untouched();
}

#[test]
fn offsets_shift_nd_ranges() {
    let t = Guarded::new();
    for local in [
        LocalSize::Auto,
        LocalSize::Tuned,
        LocalSize::Exact(Range::d1(16)),
    ] {
        let mut out = Buffer::new(t.q.context(), 512).unwrap();
        out.fill(&t.q, i32::POISON).unwrap();
        let launch = t.k.launch().arg(&out).arg(9u32).offset(Range::d1(100));
        // SAFETY: `fill` writes o[i] for ids 100 <= i < 356; `out` has 512 elements.
        let ev = unsafe { launch.nd_range(256, local) }.unwrap();
        ev.wait().unwrap();
        let v = out.read(&t.q).unwrap();
        for (i, &x) in v.iter().enumerate() {
            let want = if (100..356).contains(&i) {
                9
            } else {
                i32::POISON
            };
            assert_eq!(x, want, "{local:?} [{i}]");
        }
    }
}

#[test]
fn events_know_their_device_time_on_profiling_queues_only() {
    let t = Guarded::new();
    let launch = t.k.launch().arg(&t.out).arg(3u32);
    // SAFETY: `fill` writes o[i] for i < 8192, the length of `out`.
    let ev = unsafe { launch.nd_range(8192, LocalSize::Tuned) }.unwrap();
    assert!(!t.q.profiling());
    let Err(
        e @ Error::Unsupported {
            what: Unsupported::DeviceTime { .. },
            ..
        },
    ) = ev.duration()
    else {
        panic!("a queue without profiling gave a device time");
    };
    assert!(e.to_string().contains("Queue::with_profiling"), "{e}");
    assert!(t.out.read(&t.q).unwrap().iter().all(|&v| v == 3));

    let q = Queue::with_profiling(&common::device()).unwrap();
    let p = Program::from_source(
        &q,
        "kernel void one(global int *o) { o[get_global_id(0)] = 1; }",
    )
    .unwrap();
    let out = Buffer::<i32>::new(&q, 8192).unwrap();
    let k = p.kernel("one").unwrap();
    // SAFETY: `one` writes o[i] for i < 8192, the length of `out`.
    let ev = unsafe { k.launch().arg(&out).nd_range(8192, LocalSize::Tuned) }.unwrap();
    assert!(ev.duration().unwrap().as_nanos() > 0);
}
