//! What users see and what the hardware does, measured in one run on the default device (or
//! `CLGROUPS_DEVICE`), for float sums and inclusive scans at every power of two:
//! * `wall`: host wall time of the blocking call (`reduce_sum`, `inclusive_scan_sum`; for
//!   `copy`, `clEnqueueCopyBuffer` + wait), median of at least 21 calls after 3 warm-up calls;
//! * `device`: device time of the same work from profiling events (the enqueue forms).
//!
//! Every output is poisoned (NaN) before each call and every result is checked against the
//! exact answer (the input is 0s and 1s, so every prefix sum is exact in float): a scan's
//! output on the device after each call, as torch's `torch.equal` does (a check on the host
//! would idle the device between calls), and the last one on the host too. GB/s: reduce counts 4 bytes per element, scan and copy 8 (read + write). Also: the local-memory
//! tree reduce (device time) and the launch overhead of clgroups vs raw opencl3. Prints a table
//! and writes CSV (`--out x.csv`; `scripts/bench_reduce.py` compares it with NumPy, PyOpenCL or
//! torch and plots it).
//!
//! `cargo run --release --example bench_reduce -- [--min-log2 K] [--max-log2 K] [--runs N]
//! [--scan-only | --reduce-only] [--gap-us N] [--poison-kernel] [--launches N]
//! [--out FILE]`
//! (sizes 2^16 .. 2^K floats; K defaults to 25 on CPUs, 28 on GPUs).

#[path = "common/raw_cl.rs"]
mod raw_cl;
#[path = "common/tree.rs"]
mod tree;

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::algorithms::{self, ReduceOp, ScanKind};
use clgroups::device::DeviceKind;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use std::time::Instant;
use timing::median;
use timing::median_of;

#[derive(Parser)]
struct Args {
    /// Largest size, as a power of two (default 25 on CPUs, 28 on GPUs).
    #[arg(long)]
    max_log2: Option<u32>,
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 16)]
    min_log2: u32,
    /// Tiny launches per path for the overhead comparison (at least 1000; 0 skips it).
    #[arg(long, default_value_t = 2000)]
    launches: usize,
    /// Measure only the scan and the copy (for tuning `CLGROUPS_SCAN_TILE`).
    #[arg(long)]
    scan_only: bool,
    /// Timed calls per measurement (default: at least 21, more for small inputs).
    #[arg(long)]
    runs: Option<usize>,
    /// Scans: sleep this many µs between the poisoning and the timed call (an idle device).
    #[arg(long, default_value_t = 0)]
    gap_us: u64,
    /// Scans: poison the output with a kernel (as torch's `y.fill_`) rather than
    /// `clEnqueueFillBuffer`; either way completed before the timed call.
    #[arg(long)]
    poison_kernel: bool,
    /// Measure only the reduce (blocking call and device time).
    #[arg(long)]
    reduce_only: bool,
    /// Output file (CSV).
    #[arg(long)]
    out: Option<String>,
}

/// One measurement: implementation, metric (`wall` or `device`), elements, median seconds,
/// GB/s.
struct Row {
    implementation: &'static str,
    metric: &'static str,
    n: usize,
    seconds: f64,
    gbs: f64,
}

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let max_log2 = args.max_log2.unwrap_or(match device.kind() {
        DeviceKind::Gpu => 28,
        _ => 25,
    });
    let queue = Queue::new(&device)?;
    println!(
        "device: {device}\nbackend: {} (sub-group size {})",
        device.sub_groups().effective.shuffle_backend,
        device.sub_groups().effective.primary_sub_group_size
    );
    let mut rows = Vec::new();
    for log2 in args.min_log2..=max_log2 {
        // Progress on stderr: a failure names the size it happened at (the table comes last).
        eprintln!("bench_reduce: 2^{log2} elements");
        rows.extend(measure_size(&queue, 1 << log2, &args)?);
    }
    if args.launches > 0 {
        rows.extend(launch_overhead(&queue, args.launches.max(1000))?);
    }
    print_table(&rows);
    if let Some(path) = &args.out {
        std::fs::write(path, render(&rows))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// Timed calls for `n` elements: at least 21, more for small inputs.
fn runs_for(n: usize) -> usize {
    ((1usize << 30) / n).clamp(21, 201)
}

/// Seconds of `f` on the host clock.
fn wall<R>(f: impl FnOnce() -> clgroups::Result<R>) -> AnyResult<(f64, R)> {
    let start = Instant::now();
    let r = f()?;
    Ok((start.elapsed().as_secs_f64(), r))
}

fn row(implementation: &'static str, metric: &'static str, n: usize, s: f64, bytes: usize) -> Row {
    Row {
        implementation,
        metric,
        n,
        seconds: s,
        gbs: bytes as f64 / s / 1e9,
    }
}

/// 0s and 1s (one in 16 on average, by a hash of the index): every prefix sum of up to 2^28
/// elements is an integer below 2^24, exact in float.
fn input(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| f32::from(u8::from((i as u32).wrapping_mul(2654435761) >> 28 == 0)))
        .collect()
}

fn fail(what: &str, n: usize, detail: String) -> Box<dyn std::error::Error> {
    format!("{what} of {n} elements: wrong result: {detail}").into()
}

fn check_scan(out: &Buffer<f32>, queue: &Queue, want: &[f32]) -> AnyResult<()> {
    let got = out.read(queue)?;
    match (0..want.len()).find(|&i| got[i] != want[i]) {
        None => Ok(()),
        Some(i) => Err(fail(
            "scan",
            want.len(),
            format!("[{i}] = {} not {}", got[i], want[i]),
        )),
    }
}

/// Counts on the device the elements of a scan's output that differ from the answer.
struct DeviceCheck {
    kernel: clgroups::Kernel,
    want: Buffer<f32>,
    bad: Buffer<u32>,
}

impl DeviceCheck {
    fn new(queue: &Queue, want: &[f32]) -> AnyResult<Self> {
        Ok(DeviceCheck {
            kernel: Program::from_source(queue, MISMATCHES)?.kernel("mismatches")?,
            want: Buffer::from_slice(queue, want)?,
            bad: Buffer::from_slice(queue, &[0u32])?,
        })
    }

    fn check(&mut self, queue: &Queue, y: &Buffer<f32>) -> AnyResult<()> {
        self.bad.fill(queue, 0)?;
        let launch = self.kernel.launch().arg(y).arg(&self.want).arg(&self.bad);
        // SAFETY: work-item i < n reads y[i] and want[i] (both n long) and counts into bad[0].
        unsafe { launch.range(self.want.len()) }?;
        match self.bad.read(queue)?[0] {
            0 => Ok(()),
            k => Err(fail("scan", y.len(), format!("{k} elements differ"))),
        }
    }
}

fn measure_size(queue: &Queue, n: usize, args: &Args) -> AnyResult<Vec<Row>> {
    // Device times come from a profiling queue of the same context (the host-wall rows use
    // `queue`, without profiling, as users' calls do).
    let timed = &Queue::profiled_on(queue.context(), queue.device())?;
    let (scan_only, runs) = (args.scan_only, args.runs);
    let poison = Program::from_source(queue, POISON)?.kernel("poison")?;
    let data = input(n);
    let mut prefix = Vec::with_capacity(n);
    let mut acc = 0f32;
    for &v in &data {
        acc += v;
        prefix.push(acc);
    }
    let x = Buffer::from_slice(queue, &data)?;
    let mut y = Buffer::<f32>::new(&queue, n)?;
    let mut one = Buffer::<f32>::new(&queue, 1)?;
    let runs = runs.unwrap_or_else(|| runs_for(n));
    let (b, mut rows) = (4 * n, Vec::new());
    let poison_y = |y: &mut Buffer<f32>| -> AnyResult<()> {
        if !args.poison_kernel {
            return Ok(y.fill(queue, f32::NAN)?);
        }
        // SAFETY: `poison` writes y[i] for i < n; `y` holds n.
        unsafe { poison.launch().arg(&*y).arg(f32::NAN).range(n) }?.wait()?;
        Ok(())
    };
    let check_sum = |got: f32| {
        (got == acc)
            .then_some(())
            .ok_or_else(|| fail("reduce", n, format!("{got} not {acc}")))
    };

    if !args.reduce_only {
        let mut on_device = DeviceCheck::new(queue, &prefix)?;
        let t = median_of(runs, || {
            poison_y(&mut y)?;
            std::thread::sleep(std::time::Duration::from_micros(args.gap_us));
            let (t, ()) = wall(|| algorithms::inclusive_scan_sum(queue, &x, &mut y))?;
            on_device.check(queue, &y)?;
            Ok(t)
        })?;
        check_scan(&y, queue, &prefix)?;
        rows.push(row("scan", "wall", n, t, 2 * b));
        let t = median_of(runs, || {
            poison_y(&mut y)?;
            let ev = algorithms::enqueue_scan_sum(timed, &x, &mut y, ScanKind::Inclusive)?;
            let t = ev.duration()?;
            check_scan(&y, queue, &prefix)?;
            Ok(t.as_secs_f64())
        })?;
        rows.push(row("scan", "device", n, t, 2 * b));
        let t = median_of(runs, || {
            Ok(x.copy_to(timed, &mut y)?.duration()?.as_secs_f64())
        })?;
        rows.push(row("copy", "device", n, t, 2 * b));
    }
    if scan_only {
        return Ok(rows);
    }
    let t = median_of(runs, || {
        let (t, got) = wall(|| algorithms::reduce_sum(queue, &x))?;
        check_sum(got)?;
        Ok(t)
    })?;
    rows.push(row("reduce", "wall", n, t, b));
    let t = median_of(runs, || {
        one.fill(queue, f32::NAN)?;
        let t = algorithms::enqueue_reduce(timed, &x, ReduceOp::Sum, &one)?.duration()?;
        check_sum(one.read(queue)?[0])?;
        Ok(t.as_secs_f64())
    })?;
    rows.push(row("reduce", "device", n, t, b));
    if args.reduce_only {
        return Ok(rows);
    }

    let t = median_of(runs, || Ok(wall(|| x.copy_to(queue, &mut y)?.wait())?.0))?;
    rows.push(row("copy", "wall", n, t, 2 * b));
    check_scan(&y, queue, &data)?;

    let local = algorithms::Reduction::<f32>::new(queue, ReduceOp::Sum)?
        .plan(n)
        .local;
    let mut tree = tree::TreeReduce::new(timed, prev_power_of_two(local.max(64)))?;
    let t = median_of(runs, || {
        let events = tree.enqueue(&x)?;
        let (first, last) = (events[0].span()?.0, events[events.len() - 1].span()?.1);
        check_sum(tree.result(timed)?)?;
        Ok((last - first) as f64 * 1e-9)
    })?;
    rows.push(row("tree", "device", n, t, b));
    Ok(rows)
}

/// Writes `v` to every element (the output's poison, as a kernel).
const POISON: &str = "kernel void poison(global float *y, float v) { y[get_global_id(0)] = v; }";

/// Counts the elements where `y` differs from `want` (NaN differs from everything).
const MISMATCHES: &str = r#"
kernel void mismatches(global const float *y, global const float *want, global uint *bad) {
    size_t i = get_global_id(0);
    if (!(y[i] == want[i]))
        atomic_inc(bad);
}
"#;

fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Median wall time of enqueue + wait of the tiny kernel, clgroups vs raw opencl3, in
/// alternating blocks of 500 launches per path (each block after 50 warm-up launches).
/// Blocks, not single alternating launches: alternating launch by launch, PoCL measured the
/// clgroups path 2.2x slower (pinned to one core), although each path alone measures the same.
fn launch_overhead(queue: &Queue, launches: usize) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let program = Program::from_source(queue, raw_cl::TINY_SOURCE)?;
    let kernel = program.kernel("tiny")?;
    let buf = Buffer::from_slice(queue, &[1i32])?;
    let local = kernel.limits().preferred_multiple.clamp(1, 64);
    let ours = || -> Result<(), Box<dyn std::error::Error>> {
        let launch = kernel.launch().arg(&buf);
        // SAFETY: `tiny` writes x[0] only; `buf` has one element.
        unsafe { launch.nd_range(Range::d1(local), LocalSize::Exact(Range::d1(local))) }?.wait()?;
        Ok(())
    };
    let raw = raw_cl::RawLauncher::new(queue.device().id())?;
    let raw_launch = || raw.launch(local, local).map_err(Into::into);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..launches.div_ceil(500) {
        block(&mut a, &ours)?;
        block(&mut b, &raw_launch)?;
    }
    Ok(vec![
        row("launch_clgroups", "wall", 0, median(&mut a), 0),
        row("launch_raw_opencl3", "wall", 0, median(&mut b), 0),
    ])
}

/// 50 warm-up launches, then 500 timed ones appended to `out`.
fn block(
    out: &mut Vec<f64>,
    launch: &dyn Fn() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<(), Box<dyn std::error::Error>> {
    for i in 0..550 {
        let start = Instant::now();
        launch()?;
        if i >= 50 {
            out.push(start.elapsed().as_secs_f64());
        }
    }
    Ok(())
}

fn print_table(rows: &[Row]) {
    let get = |imp: &str, metric: &str, n: usize| {
        rows.iter()
            .find(|r| r.implementation == imp && r.metric == metric && r.n == n)
            .map(|r| r.gbs)
    };
    let mut sizes: Vec<usize> = rows.iter().filter(|r| r.n > 0).map(|r| r.n).collect();
    sizes.dedup();
    println!("GB/s (reduce: 4 B/element; scan, copy: 8 B/element); wall = blocking call");
    println!(
        "{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "n",
        "red wall",
        "red dev",
        "scan wal",
        "scan dev",
        "copy wal",
        "copy dev",
        "tree dev",
        "scan/copy",
        "red/copy"
    );
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |g| format!("{g:.1}"));
    for n in sizes {
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.3}", a / b),
            _ => "-".into(),
        };
        println!(
            "{n:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
            cell(get("reduce", "wall", n)),
            cell(get("reduce", "device", n)),
            cell(get("scan", "wall", n)),
            cell(get("scan", "device", n)),
            cell(get("copy", "wall", n)),
            cell(get("copy", "device", n)),
            cell(get("tree", "device", n)),
            ratio(get("scan", "device", n), get("copy", "device", n)),
            ratio(
                get("reduce", "device", n).map(|g| 2.0 * g),
                get("copy", "device", n)
            ),
        );
    }
    let launch = |imp: &str| {
        rows.iter()
            .find(|r| r.implementation == imp)
            .map(|r| r.seconds)
    };
    if let (Some(a), Some(b)) = (launch("launch_clgroups"), launch("launch_raw_opencl3")) {
        println!(
            "launch overhead (enqueue + wait, median): clgroups {:.1} µs, raw opencl3 {:.1} µs, \
             ratio {:.3}",
            a * 1e6,
            b * 1e6,
            a / b
        );
    }
}

fn render(rows: &[Row]) -> String {
    let mut s = String::from("impl,metric,n,median_s,gbs\n");
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{:e},{}\n",
            r.implementation, r.metric, r.n, r.seconds, r.gbs
        ));
    }
    s
}
