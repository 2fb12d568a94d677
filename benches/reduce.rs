//! Criterion benchmarks (wall time) on the default device:
//! * `reduce_sum/N`: the blocking `algorithms::reduce_sum` of N floats, N = 2^16, 2^18, …, 2^28
//!   (largest: `CLGROUPS_BENCH_MAX_LOG2`);
//! * `reduce/*`: the sub-group reduce vs the local-memory tree reduce of 2^22 floats;
//! * `backend/*`: the same reduce through the native backend vs `emulated` (native devices);
//! * `launch/*`: a tiny kernel launched through clgroups vs through raw opencl3.
//!
//! `cargo bench --bench reduce` (short runs: 10 samples, 1 s each; criterion's flags override);
//! ratios from one run: `examples/bench_reduce.rs`. Scans: `benches/scan.rs`.

#[path = "../examples/common/raw_cl.rs"]
mod raw_cl;
#[path = "../examples/common/tree.rs"]
mod tree;

use clgroups::algorithms::{self, ReduceOp, Reduction};
use clgroups::device::ShuffleBackend;
use clgroups::launch::{Event, LocalSize};
use clgroups::{Buffer, Program, Queue, Range};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::time::Duration;

const N: usize = 1 << 22;

fn wait_all(events: clgroups::Result<Vec<Event>>) {
    for e in events.expect("launch") {
        e.wait().expect("wait");
    }
}

/// The largest size, as a power of two: `CLGROUPS_BENCH_MAX_LOG2`, else 28.
fn max_log2() -> u32 {
    std::env::var("CLGROUPS_BENCH_MAX_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(28)
}

/// Short runs unless criterion's flags say otherwise.
fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args()
}

fn reduce_sizes(c: &mut Criterion) {
    let queue = Queue::new(&clgroups::default_device().expect("device")).expect("queue");
    let mut g = c.benchmark_group("reduce_sum");
    for log2 in (16..=max_log2()).step_by(2) {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1.0f32; n]).expect("input");
        assert_eq!(algorithms::reduce_sum(&queue, &x).expect("sum"), n as f32);
        g.throughput(Throughput::Bytes((n * 4) as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &x, |b, x| {
            b.iter(|| algorithms::reduce_sum(&queue, x).expect("sum"))
        });
    }
    g.finish();
}

fn input(queue: &Queue) -> Buffer<f32> {
    let data: Vec<f32> = (0..N).map(|i| (i % 97) as f32 + 1.0).collect();
    Buffer::from_slice(queue, &data).expect("buffer")
}

fn reduce(c: &mut Criterion) {
    let queue = Queue::new(&clgroups::default_device().expect("device")).expect("queue");
    let x = input(&queue);
    let mut ours = Reduction::<f32>::new(&queue, ReduceOp::Sum).expect("reduction");
    let local = ours.plan(N).local;
    let mut tree = tree::TreeReduce::new(&queue, 1 << local.ilog2()).expect("tree");
    // Both compute the same exact sum (integer-valued floats) before anything is timed.
    ours.enqueue(&x).and_then(|e| e.wait()).expect("reduce");
    wait_all(tree.enqueue(&x));
    assert_eq!(
        ours.result().expect("sub-group sum"),
        tree.result(&queue).expect("tree sum")
    );
    let mut g = c.benchmark_group("reduce");
    g.throughput(Throughput::Bytes((N * 4) as u64));
    g.bench_function("subgroup", |b| {
        b.iter(|| ours.enqueue(&x).and_then(|e| e.wait()).expect("reduce"))
    });
    g.bench_function("tree", |b| b.iter(|| wait_all(tree.enqueue(&x))));
    g.finish();
}

fn backend(c: &mut Criterion) {
    let device = clgroups::default_device().expect("device");
    if !device.sub_groups().driver.native() {
        eprintln!("backend/*: not run: {device} has no native sub-groups");
        return;
    }
    let mut g = c.benchmark_group("backend");
    g.throughput(Throughput::Bytes((N * 4) as u64));
    for backend in [
        device.sub_groups().effective.shuffle_backend,
        ShuffleBackend::Emulated,
    ] {
        let queue = Queue::new(&device.with_backend(backend).expect("backend")).expect("queue");
        let x = input(&queue);
        let mut r = Reduction::<f32>::new(&queue, ReduceOp::Sum).expect("reduction");
        g.bench_function(backend.name(), |b| {
            b.iter(|| r.enqueue(&x).and_then(|e| e.wait()).expect("reduce"))
        });
    }
    g.finish();
}

fn launch(c: &mut Criterion) {
    let queue = Queue::new(&clgroups::default_device().expect("device")).expect("queue");
    let kernel = Program::from_source(&queue, raw_cl::TINY_SOURCE)
        .and_then(|p| p.kernel("tiny"))
        .expect("tiny kernel");
    let buf = Buffer::from_slice(&queue, &[1i32]).expect("buffer");
    let local = kernel.limits().preferred_multiple.clamp(1, 64);
    let raw = raw_cl::RawLauncher::new(queue.device().id()).expect("raw opencl3");
    let mut g = c.benchmark_group("launch");
    g.bench_function("clgroups", |b| {
        b.iter(|| {
            let launch = kernel.launch().arg(&buf);
            // SAFETY: `tiny` writes x[0] only; `buf` has one element.
            unsafe { launch.nd_range(Range::d1(local), LocalSize::Exact(Range::d1(local))) }
                .and_then(|e| e.wait())
                .expect("launch")
        })
    });
    g.bench_function("raw_opencl3", |b| {
        b.iter(|| raw.launch(local, local).expect("launch"))
    });
    g.finish();
}

/// Runs the four groups with criterion's command-line settings.
fn main() {
    let mut c = criterion();
    reduce_sizes(&mut c);
    reduce(&mut c);
    backend(&mut c);
    launch(&mut c);
    c.final_summary();
}
