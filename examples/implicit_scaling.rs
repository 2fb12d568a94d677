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

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::device::DeviceKind;
use clgroups::plan::coloring::{color, DEFAULT_PAGE_SIZE};
use clgroups::plan::partition::partition;
use clgroups::scaling::{self, ColoredBuffer, Placement, RootDevice};
use clgroups::{algorithms, Buffer, Program, Queue, Range};
use std::error::Error;
use std::time::Duration;
use timing::interleaved;

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

/// A timed configuration: its name, the bytes one run moves, and the run itself.
type Case<'a> = (
    String,
    f64,
    Box<dyn FnMut() -> Result<(), Box<dyn Error>> + 'a>,
);

/// The largest prime below `n` (n ≥ 3).
fn prime_below(n: usize) -> usize {
    let is_prime = |p: usize| p >= 2 && (2..).take_while(|d| d * d <= p).all(|d| p % d != 0);
    (2..n).rev().find(|&p| is_prime(p)).unwrap_or(2)
}

fn measure(args: &Args) -> Result<(), Box<dyn Error>> {
    let runs = args.runs.max(21);
    let root = RootDevice::from_env()?;
    let gpu = root.devices()[0].kind() == DeviceKind::Gpu;
    let pow2 = args.n.unwrap_or(if gpu { 1 << 26 } else { 1 << 24 });
    let sizes = [pow2, prime_below(pow2)];
    for (i, d) in root.devices().iter().enumerate() {
        println!("device {i}: {d}");
    }
    println!(
        "placement: {}; medians of {runs} interleaved runs",
        root.placement()
    );
    let q = Queue::new(&root.devices()[0])?;
    let k1 = Program::from_source(&q, SAXPY)?.kernel("saxpy")?;
    let kn = root.program(SAXPY)?.kernel("saxpy")?;
    // Buffers, each result checked once before the timing.
    let mut single = Vec::new();
    let mut multi = Vec::new();
    for n in sizes {
        let (x, y0) = inputs(n);
        let xb = Buffer::from_slice(&q, &x)?;
        let yb = Buffer::from_slice(&q, &y0)?;
        // SAFETY: `saxpy` reads x[i] and updates y[i] for global ids i < n, the length of both.
        unsafe { k1.launch().arg(&yb).arg(&xb).arg(A).range(n) }?.wait()?;
        if let Some((i, got, want)) = first_wrong(&yb.read(&q)?, &x, &y0) {
            return Err(format!("n={n}, device 0 alone: y[{i}] = {got}, expected {want}").into());
        }
        let (launch, local) = kn.range_plan(Range::d1(n))?;
        let xc = colored(&root, &x, local)?;
        let yc = colored(&root, &y0, local)?;
        // SAFETY: `saxpy` reads x[i] and updates y[i] for global ids i < n, the length of both.
        let ev = unsafe { kn.launch().arg(&yc).arg(&xc).arg(A).range(n) }?;
        ev.wait()?;
        if let Some((i, got, want)) = first_wrong(&yc.read()?, &x, &y0) {
            return Err(format!("n={n}, all devices: y[{i}] = {got}, expected {want}").into());
        }
        println!(
            "saxpy n={n}: {} devices launch {launch:?} in work-groups of {local:?}, partition \
             {:?}, chunks {}; every element verified on one and on all devices",
            root.len(),
            ev.partition(),
            join(yc.chunks())
        );
        single.push((n, xb, yb));
        multi.push((n, xc, yc));
    }
    let xr: Vec<f32> = (0..pow2).map(|i| (i % 1021) as f32 * 0.5).collect();
    let want: f64 = xr.iter().map(|&v| f64::from(v)).sum();
    let check = move |what: &str, got: f32| -> Result<(), Box<dyn Error>> {
        match (f64::from(got) - want).abs() <= 1e-5 * want {
            true => Ok(()),
            false => Err(format!("reduce {what}: {got}, expected {want}").into()),
        }
    };
    let rb = Buffer::from_slice(&q, &xr)?;
    let rc = ColoredBuffer::from_slice(&root, &xr)?;
    drop(xr);
    let devices = format!("{} devices", root.len());
    let mut cases: Vec<Case> = Vec::new();
    for ((n, xb, yb), (_, xc, yc)) in single.iter().zip(&multi) {
        let n = *n;
        let (k1, kn) = (&k1, &kn);
        cases.push((
            format!("saxpy n={n}, device 0 alone"),
            12.0 * n as f64,
            // SAFETY: `saxpy` reads x[i] and updates y[i] for global ids i < n, the length of both.
            Box::new(move || Ok(unsafe { k1.launch().arg(yb).arg(xb).arg(A).range(n) }?.wait()?)),
        ));
        cases.push((
            format!("saxpy n={n}, {devices}"),
            12.0 * n as f64,
            // SAFETY: `saxpy` reads x[i] and updates y[i] for global ids i < n, the length of both.
            Box::new(move || Ok(unsafe { kn.launch().arg(yc).arg(xc).arg(A).range(n) }?.wait()?)),
        ));
    }
    // Every reduce result is checked.
    let (q, root, rb, rc) = (&q, &root, &rb, &rc);
    cases.push((
        format!("reduce-sum n={pow2} floats, device 0 alone"),
        4.0 * pow2 as f64,
        Box::new(move || check("device 0 alone", algorithms::reduce_sum(q, rb)?)),
    ));
    cases.push((
        format!("reduce-sum n={pow2} floats, {devices}"),
        4.0 * pow2 as f64,
        Box::new(move || check("all devices", scaling::reduce_sum(root, rc)?)),
    ));
    let medians = interleaved(runs, &mut cases, |(_, _, run)| run())?;
    for ((name, bytes, _), d) in cases.iter().zip(&medians) {
        println!(
            "{name}: {:.3} ms, {:.2} GB/s",
            ms(*d),
            bytes / d.as_secs_f64() / 1e9
        );
    }
    let ratio = |a: usize, b: usize| medians[a].as_secs_f64() / medians[b].as_secs_f64();
    println!(
        "speedup over device 0 alone: saxpy n={} {:.2}x, saxpy n={} {:.2}x, reduce {:.2}x",
        sizes[0],
        ratio(0, 1),
        sizes[1],
        ratio(2, 3),
        ratio(4, 5)
    );
    // Throughput at the prime over throughput at the power of two.
    let per_elem = |i: usize, n: usize| medians[i].as_secs_f64() / n as f64;
    println!(
        "saxpy prime/power-of-two throughput: {:.3} ({devices}), {:.3} (device 0 alone)",
        per_elem(1, sizes[0]) / per_elem(3, sizes[1]),
        per_elem(0, sizes[0]) / per_elem(2, sizes[1])
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
