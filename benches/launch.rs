//! Criterion benchmarks (host wall time) of what a user's own kernel costs per launch on the
//! default device: SAXPY over 2^16 floats (work-groups of 256) through clgroups
//! (`launch()…nd_range(..)?.wait()`) vs raw opencl3 on a queue without profiling (event wait,
//! and event-less enqueue + `clFinish`), and a blocking 2^16-float copy both ways.
//!
//! `cargo bench --bench launch`; ratios over every size in one run:
//! `cargo run --release --example bench_launch`.

#[path = "../examples/common/raw_saxpy.rs"]
mod raw_saxpy;

use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use criterion::Criterion;
use raw_saxpy::{RawSaxpy, SAXPY_SOURCE};
use std::time::Duration;

const N: usize = 1 << 16;
const LOCAL: usize = 256;

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let device = clgroups::default_device().expect("device");
    let queue = Queue::new(&device).expect("queue");
    let saxpy = Program::from_source(&queue, SAXPY_SOURCE)
        .and_then(|p| p.kernel("saxpy"))
        .expect("saxpy");
    let x = Buffer::from_slice(&queue, &vec![1.0f32; N]).expect("x");
    let mut y = Buffer::from_slice(&queue, &vec![0.0f32; N]).expect("y");
    let mut raw = RawSaxpy::new(device.id(), N).expect("raw opencl3");
    let mut g = c.benchmark_group("launch_saxpy_2^16");
    g.bench_function("clgroups", |b| {
        b.iter(|| {
            let launch = saxpy.launch().arg(&x).arg(&y).arg(1.0f32).arg(N as u32);
            // SAFETY: work-item i < N touches x[i] and y[i] (both N floats).
            unsafe { launch.nd_range(Range::d1(N), LocalSize::Exact(Range::d1(LOCAL))) }
                .and_then(|e| e.wait())
                .expect("launch")
        })
    });
    g.bench_function("raw_event", |b| {
        b.iter(|| raw.launch(N, LOCAL, false).expect("launch"))
    });
    g.bench_function("raw_finish", |b| {
        b.iter(|| raw.launch(N, LOCAL, true).expect("launch"))
    });
    g.finish();
    let mut g = c.benchmark_group("copy_2^16");
    g.bench_function("clgroups", |b| {
        b.iter(|| {
            x.copy_to(&queue, &mut y)
                .and_then(|e| e.wait())
                .expect("copy")
        })
    });
    g.bench_function("raw", |b| b.iter(|| raw.copy().expect("copy")));
    g.finish();
    // Both copies ran last: each y is x again.
    assert!(raw.read_y().expect("raw y").iter().all(|&v| v == 1.0));
    assert!(y.read(&queue).expect("y").iter().all(|&v| v == 1.0));
    c.final_summary();
}
