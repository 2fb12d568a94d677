//! Implicit scaling: print a partition or a coloring plan, or measure SAXPY (`y = a*x + y`) at
//! a power of two and at the prime just below it, and a reduce, over every device of
//! `RootDevice::from_env()` against device 0 alone.
//!
//! ```text
//! cargo run --example implicit_scaling -- --plan --stacks 2 --global 512,512,19 --local 16,1,1
//! partition: dim=1 chunks=256,256
//! cargo run --example implicit_scaling -- --color 196608 --page 65536 --stacks 2
//! color: 131072,65536
//! POCL_DEVICES="pthread pthread" cargo run --release --example implicit_scaling
//! ```
//!
//! Every launch is a plain range (`.range(n)`, rounded where n is awkward); times are host
//! wall times (launch to completion), the median of `--runs` (at least 21) runs after two
//! warm-ups; every element of every SAXPY result and every reduce result is checked.
//! Ranges are OpenCL order (x first); partition chunks count work-groups. `CLGROUPS_DEVICES`
//! (e.g. `0:0,0:1`) picks the devices of the measurement; `RUST_LOG=debug` shows the plans.
//! The placement of the colored buffers is the root device's (`shared` on host-unified
//! memory, else `partitioned`; `CLGROUPS_PLACEMENT=shared|partitioned` overrides it).

use clap::Parser;
use clgroups::plan::coloring::{color, DEFAULT_PAGE_SIZE};
use clgroups::plan::local_size::DeviceKind;
use clgroups::plan::partition::partition;
use clgroups::scaling::{self, ColoredBuffer, Placement, RootDevice};
use clgroups::{algorithms, Buffer, Program, Queue, Range};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "Implicit scaling over several OpenCL devices: plans and a SAXPY measurement")]
struct Args {
    /// Print the partition of --global/--local over --stacks devices.
    #[arg(long)]
    plan: bool,
    /// Print the coloring of an allocation of this many bytes over --stacks devices.
    #[arg(long, value_name = "BYTES")]
    color: Option<usize>,
    /// Number of devices ("stacks") for --plan and --color.
    #[arg(long, default_value_t = 2)]
    stacks: usize,
    /// Global range X[,Y[,Z]] for --plan.
    #[arg(long, default_value = "1024")]
    global: Range,
    /// Local range X[,Y[,Z]] for --plan.
    #[arg(long, default_value = "64")]
    local: Range,
    /// Coloring page in bytes for --color.
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE)]
    page: usize,
    /// Elements of the measurement, a power of two (default 2^26 on GPUs, 2^24 otherwise);
    /// SAXPY also runs at the largest prime below it.
    #[arg(long)]
    n: Option<usize>,
    /// Timed runs per configuration (the median is reported; at least 21).
    #[arg(long, default_value_t = 21)]
    runs: usize,
}

const SAXPY: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}";

const A: f32 = 3.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    if args.plan {
        let p = partition(args.global, args.local, args.stacks)?;
        println!("partition: dim={} chunks={}", p.dim, join(&p.chunks));
    } else if let Some(bytes) = args.color {
        println!("color: {}", join(&color(bytes, args.page, args.stacks)?));
    } else {
        measure(&args)?;
    }
    Ok(())
}

fn join(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// `x[i]` and the initial `y[i]`: small integers, so `a*x + y` is exact with or without FMA.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 1021 + 1) as f32).collect();
    let y = (0..n).map(|i| (i % 977) as f32 - 400.0).collect();
    (x, y)
}

/// Index and values of the first element where `y != a*x + y0`.
fn first_wrong(y: &[f32], x: &[f32], y0: &[f32]) -> Option<(usize, f32, f32)> {
    (0..y.len())
        .map(|i| (i, y[i], A * x[i] + y0[i]))
        .find(|(_, got, want)| got.to_bits() != want.to_bits())
}

/// Median host wall time of `runs` runs of `run` (after two warm-up runs).
fn time(runs: usize, mut run: impl FnMut() -> clgroups::Result<()>) -> clgroups::Result<Duration> {
    for _ in 0..2 {
        run()?;
    }
    let mut wall = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        run()?;
        wall.push(t.elapsed());
    }
    wall.sort();
    Ok(wall[runs / 2])
}

/// The largest prime below `n` (n ≥ 3).
fn prime_below(n: usize) -> usize {
    let is_prime = |p: usize| p >= 2 && (2..).take_while(|d| d * d <= p).all(|d| p % d != 0);
    (2..n).rev().find(|&p| is_prime(p)).unwrap_or(2)
}

/// SAXPY moves 12 bytes per element (read x and y, write y); reduce 4.
fn gbs(bytes: f64, d: Duration) -> f64 {
    bytes / d.as_secs_f64() / 1e9
}

struct Saxpy {
    single: Duration,
    multi: Duration,
}

fn measure(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let runs = args.runs.max(21);
    let root = RootDevice::from_env()?;
    let gpu = root.devices()[0].kind() == DeviceKind::Gpu;
    let pow2 = args.n.unwrap_or(if gpu { 1 << 26 } else { 1 << 24 });
    for (i, d) in root.devices().iter().enumerate() {
        println!("device {i}: {d}");
    }
    println!("placement: {}, {runs} runs per median", root.placement());
    let q = Queue::new(&root.devices()[0])?;
    let k1 = Program::from_source(&q, SAXPY)?.kernel("saxpy")?;
    let kn = root.program(SAXPY)?.kernel("saxpy")?;
    let mut results = Vec::new();
    for n in [pow2, prime_below(pow2)] {
        let r = saxpy(&root, &q, &k1, &kn, n, runs)?;
        let bytes = 12.0 * n as f64;
        println!(
            "saxpy n={n}: device 0 alone {:.2} GB/s ({:.3} ms), {} devices {:.2} GB/s ({:.3} ms): {:.2}x",
            gbs(bytes, r.single),
            ms(r.single),
            root.len(),
            gbs(bytes, r.multi),
            ms(r.multi),
            r.single.as_secs_f64() / r.multi.as_secs_f64()
        );
        results.push((n, r));
    }
    let per_elem = |(n, r): &(usize, Saxpy)| r.multi.as_secs_f64() / *n as f64;
    println!(
        "saxpy prime/power-of-two throughput over {} devices: {:.3}",
        root.len(),
        per_elem(&results[0]) / per_elem(&results[1])
    );
    reduce(&root, &q, pow2, runs)?;
    Ok(())
}

/// SAXPY of `n` elements on device 0 alone (`k1`) and over the root device (`kn`), timed and
/// checked.
fn saxpy(
    root: &RootDevice,
    q: &Queue,
    k1: &clgroups::Kernel,
    kn: &clgroups::scaling::RootKernel,
    n: usize,
    runs: usize,
) -> Result<Saxpy, Box<dyn std::error::Error>> {
    let (x, y0) = inputs(n);
    let xb = Buffer::from_slice(q, &x)?;
    let mut yb = Buffer::from_slice(q, &y0)?;
    let one = |y: &Buffer<f32>| k1.launch().arg(y).arg(&xb).arg(A).range(n)?.wait();
    let single = time(runs, || one(&yb))?;
    yb.write(q, &y0)?;
    one(&yb)?;
    if let Some((i, got, want)) = first_wrong(&yb.read(q)?, &x, &y0) {
        return Err(format!("n={n}, device 0 alone: y[{i}] = {got}, expected {want}").into());
    }
    drop((xb, yb));
    let (launch, local) = kn.range_plan(Range::d1(n));
    let xc = colored(root, &x, local)?;
    let mut yc = colored(root, &y0, local)?;
    let all = |y: &ColoredBuffer<f32>| kn.launch().arg(y).arg(&xc).arg(A).range(n)?.wait();
    let multi = time(runs, || all(&yc))?;
    yc.write(&y0)?;
    let ev = kn.launch().arg(&yc).arg(&xc).arg(A).range(n)?;
    ev.wait()?;
    if let Some((i, got, want)) = first_wrong(&yc.read()?, &x, &y0) {
        return Err(format!("n={n}, all devices: y[{i}] = {got}, expected {want}").into());
    }
    println!(
        "saxpy n={n}: launched {launch:?} in work-groups of {local:?}, partition {:?}, chunks {}; \
         all {n} elements verified",
        ev.partition(),
        join(yc.chunks())
    );
    Ok(Saxpy { single, multi })
}

/// Reduce-sum of `n` floats on device 0 alone and over the root device, timed and checked.
fn reduce(
    root: &RootDevice,
    q: &Queue,
    n: usize,
    runs: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let x: Vec<f32> = (0..n).map(|i| (i % 1021) as f32 * 0.5).collect();
    let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let check = |what: &str, got: f32| -> Result<(), String> {
        let err = (f64::from(got) - want).abs();
        match err <= 1e-5 * want {
            true => Ok(()),
            false => Err(format!("reduce {what}: {got}, expected {want}")),
        }
    };
    let xb = Buffer::from_slice(q, &x)?;
    check("device 0 alone", algorithms::reduce_sum(q, &xb)?)?;
    let single = time(runs, || algorithms::reduce_sum(q, &xb).map(|_| ()))?;
    drop(xb);
    let xc = ColoredBuffer::from_slice(root, &x)?;
    check("all devices", scaling::algorithms::reduce_sum(root, &xc)?)?;
    let multi = time(runs, || {
        scaling::algorithms::reduce_sum(root, &xc).map(|_| ())
    })?;
    let bytes = 4.0 * n as f64;
    println!(
        "reduce-sum n={n} floats (chunks {}): device 0 alone {:.2} GB/s ({:.3} ms), {} devices {:.2} GB/s ({:.3} ms): {:.2}x; results checked",
        join(xc.chunks()),
        gbs(bytes, single),
        ms(single),
        root.len(),
        gbs(bytes, multi),
        ms(multi),
        single.as_secs_f64() / multi.as_secs_f64()
    );
    Ok(())
}

/// `data` colored over `root`; in partitioned placement in pages of one work-group of `local`,
/// so that the chunks match the launch's partition for any `n`.
fn colored(root: &RootDevice, data: &[f32], local: Range) -> clgroups::Result<ColoredBuffer<f32>> {
    let mut buf = match root.placement() {
        Placement::Partitioned => ColoredBuffer::with_page(root, data.len(), local.len() * 4)?,
        Placement::Shared => ColoredBuffer::new(root, data.len())?,
    };
    buf.write(data)?;
    Ok(buf)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
