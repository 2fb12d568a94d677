//! Throughput ratios measured in one run, on the default device (or `CLGROUPS_DEVICE`):
//! sub-group reduce (clgroups), the local-memory tree reduce, `clEnqueueCopyBuffer` of the same
//! size (GB/s count read + write), the `emulated` backend (on native devices), and the launch
//! overhead of a clgroups launch vs the same launch through raw opencl3.
//!
//! Device times come from profiling events (median of many runs after warm-up); launch
//! overhead is the wall time of enqueue + wait (median of `--launches` launches per path, in
//! alternating blocks). Prints a table and writes CSV (`--out x.csv`) or JSON (`--out x.json`).
//!
//! `cargo run --release --example bench_reduce -- [--max-log2 K] [--out FILE]`
//! (sizes 2^16 .. 2^K floats; K defaults to 25 on CPUs, 28 on GPUs).

#[path = "common/raw_cl.rs"]
mod raw_cl;
#[path = "common/tree.rs"]
mod tree;

use clap::Parser;
use clgroups::algorithms::{ReduceOp, Reduction};
use clgroups::device::ShuffleBackend;
use clgroups::launch::{Event, LocalSize};
use clgroups::plan::local_size::DeviceKind;
use clgroups::{Buffer, Program, Queue, Range};
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Largest size, as a power of two (default 25 on CPUs, 28 on GPUs).
    #[arg(long)]
    max_log2: Option<u32>,
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 16)]
    min_log2: u32,
    /// Tiny launches per path for the overhead comparison (at least 1000).
    #[arg(long, default_value_t = 2000)]
    launches: usize,
    /// Output file: `.json` for JSON, anything else for CSV.
    #[arg(long)]
    out: Option<String>,
}

/// One measurement: implementation, elements, median seconds, GB/s.
struct Row {
    implementation: &'static str,
    n: usize,
    seconds: f64,
    gbs: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let max_log2 = args.max_log2.unwrap_or(match device.kind() {
        DeviceKind::Gpu => 28,
        _ => 25,
    });
    let queue = Queue::new(&device)?;
    let emulated = if device.sub_groups().driver.native() {
        Some(Queue::new(&device.with_backend(ShuffleBackend::Emulated)?)?)
    } else {
        None
    };
    println!(
        "device: {device}\nbackend: {} (sub-group size {})",
        device.sub_groups().effective.shuffle_backend,
        device.sub_groups().effective.primary_sub_group_size
    );
    let mut rows = Vec::new();
    for log2 in args.min_log2..=max_log2 {
        rows.extend(measure_size(&queue, emulated.as_ref(), 1 << log2)?);
    }
    rows.extend(launch_overhead(&queue, args.launches.max(1000))?);
    print_table(&rows);
    if let Some(path) = &args.out {
        std::fs::write(path, render(&rows, path.ends_with(".json")))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// Timed runs for `n` elements: many for small inputs, at least 10.
fn runs_for(n: usize) -> usize {
    ((1usize << 30) / n).clamp(10, 200)
}

/// Median device time of `run` (events summed per run) after 3 warm-up runs.
fn median_device_time(
    runs: usize,
    mut run: impl FnMut() -> clgroups::Result<Vec<Event>>,
) -> clgroups::Result<f64> {
    for _ in 0..3 {
        for e in run()? {
            e.wait()?;
        }
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut t = Duration::ZERO;
        for e in run()? {
            t += e.duration()?;
        }
        times.push(t.as_secs_f64());
    }
    Ok(median(&mut times))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn row(implementation: &'static str, n: usize, seconds: f64, bytes: usize) -> Row {
    Row {
        implementation,
        n,
        seconds,
        gbs: bytes as f64 / seconds / 1e9,
    }
}

fn measure_size(queue: &Queue, emulated: Option<&Queue>, n: usize) -> clgroups::Result<Vec<Row>> {
    let data: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.5 + 1.0).collect();
    let exact: f64 = data.iter().map(|&v| v as f64).sum();
    let input = Buffer::from_slice(queue, &data)?;
    let runs = runs_for(n);
    let bytes = n * 4;
    let mut rows = Vec::new();

    let mut ours = Reduction::<f32>::new(queue, ReduceOp::Sum)?;
    let t = median_device_time(runs, || ours.enqueue(&input))?;
    check("subgroup", ours.result()?, exact)?;
    rows.push(row("subgroup", n, t, bytes));

    let mut tree = tree::TreeReduce::new(queue, prev_power_of_two(ours.plan(n).local))?;
    let t = median_device_time(runs, || tree.enqueue(&input))?;
    check("tree", tree.result(queue)?, exact)?;
    rows.push(row("tree", n, t, bytes));

    let mut copy = Buffer::<f32>::new(queue.context(), n)?;
    let t = median_device_time(runs, || Ok(vec![input.copy_to(queue, &mut copy)?]))?;
    rows.push(row("copy", n, t, 2 * bytes));

    if let Some(eq) = emulated {
        let einput = Buffer::from_slice(eq, &data)?;
        let mut emu = Reduction::<f32>::new(eq, ReduceOp::Sum)?;
        let t = median_device_time(runs, || emu.enqueue(&einput))?;
        check("emulated", emu.result()?, exact)?;
        rows.push(row("emulated", n, t, bytes));
    }
    Ok(rows)
}

fn prev_power_of_two(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

/// Errors if a device sum is off by more than 1e-5 relative (all inputs are positive).
fn check(what: &str, got: f32, exact: f64) -> clgroups::Result<()> {
    let rel = (got as f64 - exact).abs() / exact;
    if rel > 1e-5 {
        return Err(clgroups::Error::InvalidInput {
            reason: format!("{what}: sum {got} differs from {exact} by {rel:.1e}"),
        });
    }
    Ok(())
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
        row("launch_clgroups", 0, median(&mut a), 0),
        row("launch_raw_opencl3", 0, median(&mut b), 0),
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
    println!(
        "{:>10} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "n", "subgroup", "tree", "copy", "emulated", "sg/tree", "sg/copy"
    );
    let sizes: Vec<usize> = rows.iter().filter(|r| r.n > 0).map(|r| r.n).collect();
    let mut sizes = sizes;
    sizes.dedup();
    let gbs = |imp: &str, n: usize| {
        rows.iter()
            .find(|r| r.implementation == imp && r.n == n)
            .map(|r| r.gbs)
    };
    let cell = |v: Option<f64>| v.map_or("-".to_string(), |g| format!("{g:.2} GB/s"));
    for n in sizes {
        let (sg, tr, cp) = (gbs("subgroup", n), gbs("tree", n), gbs("copy", n));
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", a / b),
            _ => "-".into(),
        };
        println!(
            "{n:>10} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
            cell(sg),
            cell(tr),
            cell(cp),
            cell(gbs("emulated", n)),
            ratio(sg, tr),
            ratio(sg, cp)
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

fn render(rows: &[Row], json: bool) -> String {
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({"impl": r.implementation, "n": r.n,
                                   "median_s": r.seconds, "gbs": r.gbs})
            })
            .collect();
        serde_json::to_string_pretty(&items).unwrap_or_default()
    } else {
        let mut s = String::from("impl,n,median_s,gbs\n");
        for r in rows {
            s.push_str(&format!(
                "{},{},{:e},{}\n",
                r.implementation, r.n, r.seconds, r.gbs
            ));
        }
        s
    }
}
