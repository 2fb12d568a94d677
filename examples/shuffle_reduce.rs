//! Reduces a large float array with sub-group shuffles on the default device (or
//! `CLGROUPS_DEVICE`), checks the result against an f64 host sum, and prints the device time
//! and bandwidth (median of the profiled runs).
//!
//! `cargo run --release --example shuffle_reduce -- [--n N] [--runs R]`
//! (default N: 2^24 on CPUs, 2^28 on GPUs).

use clap::Parser;
use clgroups::algorithms::{ReduceOp, Reduction};
use clgroups::device::DeviceKind;
use clgroups::{Buffer, Queue};

#[derive(Parser)]
struct Args {
    /// Number of floats (default: 2^24 on CPUs, 2^28 on GPUs).
    #[arg(long)]
    n: Option<usize>,
    /// Timed runs (after one warm-up).
    #[arg(long, default_value_t = 20)]
    runs: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let n = args.n.unwrap_or(match device.kind() {
        DeviceKind::Gpu => 1 << 28,
        _ => 1 << 24,
    });
    let queue = Queue::with_profiling(&device)?;
    let data: Vec<f32> = (0..n)
        .map(|i| ((i % 1013) as f32 - 506.0) / 64.0 + 0.25)
        .collect();
    let input = Buffer::from_slice(&queue, &data)?;
    let mut sum = Reduction::<f32>::new(&queue, ReduceOp::Sum)?;
    let plan = sum.plan(n);
    println!(
        "device: {device}\nbackend: {} (sub-group size {}), {} groups of {}",
        device.sub_groups().effective.shuffle_backend,
        device.sub_groups().effective.primary_sub_group_size,
        plan.groups,
        plan.local
    );
    let got = sum.run(&input)?;
    let exact: f64 = data.iter().map(|&v| v as f64).sum();
    let abs: f64 = data.iter().map(|&v| v.abs() as f64).sum();
    let rel = (got as f64 - exact).abs() / abs;
    println!("sum = {got} (host f64 {exact}; error {rel:.2e} of Σ|x|)");
    if rel > 1e-5 {
        return Err(format!("the device sum is off by {rel:.2e} of Σ|x|").into());
    }
    let mut times = Vec::with_capacity(args.runs);
    for _ in 0..args.runs.max(1) {
        times.push(sum.enqueue(&input)?.duration()?);
    }
    times.sort();
    let median = times[times.len() / 2];
    let gbs = (n * 4) as f64 / median.as_secs_f64() / 1e9;
    println!(
        "n = {n}: median {:.1} µs over {} runs, {gbs:.1} GB/s",
        median.as_secs_f64() * 1e6,
        times.len()
    );
    Ok(())
}
