//! Criterion benchmark (wall time) on the default device: `inclusive_scan_sum/N`, the blocking
//! `algorithms::inclusive_scan_sum` of N ints (exact at every size; floats take the same
//! kernels), N = 2^16, 2^18, …, 2^28 (largest:
//! `CLGROUPS_BENCH_MAX_LOG2`). `cargo bench --bench scan` (short runs: 10 samples, 1 s each;
//! criterion's flags override); ratios from one run: `examples/bench_reduce.rs`.

use clgroups::{algorithms, Buffer, Queue};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::time::Duration;

fn main() {
    let max_log2 = std::env::var("CLGROUPS_BENCH_MAX_LOG2")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(28);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let queue = Queue::new(&clgroups::default_device().expect("device")).expect("queue");
    let mut g = c.benchmark_group("inclusive_scan_sum");
    for log2 in (16..=max_log2).step_by(2) {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1i32; n]).expect("input");
        let mut y = Buffer::<i32>::new(queue.context(), n).expect("output");
        algorithms::inclusive_scan_sum(&queue, &x, &mut y).expect("scan");
        let mut last = [0];
        y.read_into(&queue, n - 1, &mut last).expect("read");
        assert_eq!(last[0], n as i32, "scan of {n} ones");
        // Read + write.
        g.throughput(Throughput::Bytes((n * 8) as u64));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| algorithms::inclusive_scan_sum(&queue, &x, &mut y).expect("scan"))
        });
    }
    g.finish();
    c.final_summary();
}
