//! Implicit scaling: print a partition or a coloring plan, or measure `y = a*x + y` over every
//! device of `RootDevice::from_env()` against device 0 alone.
//!
//! ```text
//! cargo run --example implicit_scaling -- --plan --stacks 2 --global 512,512,19 --local 16,1,1
//! partition: dim=1 chunks=256,256
//! cargo run --example implicit_scaling -- --color 196608 --page 65536 --stacks 2
//! color: 131072,65536
//! POCL_DEVICES="pthread pthread" cargo run --release --example implicit_scaling
//! ```
//!
//! Ranges are OpenCL order (x first); partition chunks count work-groups. `CLGROUPS_DEVICES`
//! (e.g. `0:0,0:1`) picks the devices of the measurement; `RUST_LOG=debug` shows the plans.
//! The placement of the colored buffers is the root device's (`shared` on host-unified
//! memory, else `partitioned`; `CLGROUPS_PLACEMENT=shared|partitioned` overrides it).

use clap::Parser;
use clgroups::launch::LocalSize;
use clgroups::plan::coloring::{color, DEFAULT_PAGE_SIZE};
use clgroups::plan::local_size::DeviceKind;
use clgroups::plan::partition::partition;
use clgroups::scaling::{ColoredBuffer, Placement, RootDevice};
use clgroups::{Buffer, Program, Queue, Range};
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
    /// Elements of the measurement (default 2^26 on GPUs, 2^24 otherwise).
    #[arg(long)]
    n: Option<usize>,
    /// Timed runs per configuration (the median is reported; at least 15).
    #[arg(long, default_value_t = 15)]
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

/// Median of the device durations and of the host wall times of `runs` runs of `launch`
/// (after two warm-up runs).
fn time(
    runs: usize,
    mut launch: impl FnMut() -> clgroups::Result<Duration>,
) -> clgroups::Result<(Duration, Duration)> {
    for _ in 0..2 {
        launch()?;
    }
    let (mut dev, mut wall) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        dev.push(launch()?);
        wall.push(t.elapsed());
    }
    dev.sort();
    wall.sort();
    Ok((dev[runs / 2], wall[runs / 2]))
}

fn gbs(n: usize, d: Duration) -> f64 {
    12.0 * n as f64 / d.as_secs_f64() / 1e9
}

fn measure(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let runs = args.runs.max(15);
    let root = RootDevice::from_env()?;
    let gpu = root.devices()[0].kind() == DeviceKind::Gpu;
    let n = args.n.unwrap_or(if gpu { 1 << 26 } else { 1 << 24 });
    let local = Range::d1(gcd(n, 256));
    for (i, d) in root.devices().iter().enumerate() {
        println!("device {i}: {d}");
    }
    let (x, y0) = inputs(n);

    // Device 0 alone, in its own context.
    let q = Queue::new(&root.devices()[0])?;
    let k1 = Program::from_source(&q, SAXPY)?.kernel("saxpy")?;
    let xb = Buffer::from_slice(&q, &x)?;
    let mut yb = Buffer::from_slice(&q, &y0)?;
    let one = |y: &Buffer<f32>| {
        let launch = k1.launch().arg(y).arg(&xb).arg(A);
        // SAFETY: `saxpy` touches element get_global_id(0) < n of `x` and `y` (n elements).
        unsafe { launch.nd_range(Range::d1(n), LocalSize::Exact(local)) }?.duration()
    };
    let (single, single_wall) = time(runs, || one(&yb))?;
    yb.write(&q, &y0)?;
    one(&yb)?;
    if let Some((i, got, want)) = first_wrong(&yb.read(&q)?, &x, &y0) {
        return Err(format!("device 0 alone: y[{i}] = {got}, expected {want}").into());
    }
    drop((xb, yb));

    // Every device of the root device, on colored buffers.
    let kn = root.program(SAXPY)?.kernel("saxpy")?;
    let xc = colored(&root, &x, local)?;
    let mut yc = colored(&root, &y0, local)?;
    println!("placement: {}", root.placement());
    println!("colored chunks (elements): {}", join(yc.chunks()));
    let all = |y: &ColoredBuffer<f32>| {
        // SAFETY: as above, with one writer per element across devices.
        let ev = unsafe { kn.launch().arg(y).arg(&xc).arg(A).nd_range(n, local) }?;
        ev.duration()
    };
    let (multi, multi_wall) = time(runs, || all(&yc))?;
    yc.write(&y0)?;
    // SAFETY: as above.
    let ev = unsafe { kn.launch().arg(&yc).arg(&xc).arg(A).nd_range(n, local) }?;
    println!("partition: {:?}", ev.partition());
    let per_device: Vec<String> = ev
        .device_durations()?
        .iter()
        .map(|d| d.map_or("-".into(), |d| format!("{:.3} ms", ms(d))))
        .collect();
    if let Some((i, got, want)) = first_wrong(&yc.read()?, &x, &y0) {
        return Err(format!("all devices: y[{i}] = {got}, expected {want}").into());
    }
    println!("verified: {n} elements on device 0 alone and on all devices");
    println!(
        "per-device kernel time (checked run): {}",
        per_device.join(", ")
    );
    report("device 0 alone", n, single, single_wall);
    report(&format!("{} devices", root.len()), n, multi, multi_wall);
    println!(
        "speedup: {:.2}x (device time), {:.2}x (host wall time)",
        single.as_secs_f64() / multi.as_secs_f64(),
        single_wall.as_secs_f64() / multi_wall.as_secs_f64()
    );
    Ok(())
}

/// `data` colored over `root`; in partitioned placement in pages of one work-group of `local`,
/// so that the chunks match the launch's partition for any `n`.
fn colored(root: &RootDevice, data: &[f32], local: Range) -> clgroups::Result<ColoredBuffer<f32>> {
    let mut buf = match root.placement() {
        Placement::Partitioned => ColoredBuffer::with_page(root, data.len(), local.get(0) * 4)?,
        Placement::Shared => ColoredBuffer::new(root, data.len())?,
    };
    buf.write(data)?;
    Ok(buf)
}

fn report(what: &str, n: usize, dev: Duration, wall: Duration) {
    println!(
        "{what}: {:.2} GB/s ({:.3} ms median device time; {:.2} GB/s, {:.3} ms host wall)",
        gbs(n, dev),
        ms(dev),
        gbs(n, wall),
        ms(wall)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
