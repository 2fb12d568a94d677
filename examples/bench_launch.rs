//! What a user's own kernel costs per launch, as the user sees it: host wall time of
//! `k.launch().arg(..)...nd_range(..)?.wait()` against the same SAXPY (`y[i] += a * x[i]`,
//! work-groups of 256) launched through raw opencl3 on a queue without profiling, waited for
//! through its event (`clWaitForEvents`) and through `clFinish`; and of a blocking
//! `Buffer::copy_to` + wait against raw `clEnqueueCopyBuffer` + wait. Sizes 2^10 .. 2^K
//! floats, one run: each path in alternating blocks of launches (after warm-up), medians, and
//! every output checked at the end (each path's `y` is exactly its launch count: `x` is 1s,
//! `a` is 1).
//!
//! `cargo run --release --example bench_launch -- [--max-log2 K] [--runs N] [--out FILE]`

#[path = "common/raw_saxpy.rs"]
mod raw_saxpy;

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use raw_saxpy::{RawSaxpy, SAXPY_SOURCE};
use std::time::Instant;
use timing::median;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
struct Args {
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 10)]
    min_log2: u32,
    /// Largest size, as a power of two.
    #[arg(long, default_value_t = 24)]
    max_log2: u32,
    /// Timed launches per path and size (in blocks of `--block`, alternating between paths).
    #[arg(long, default_value_t = 201)]
    runs: usize,
    /// Launches per block: paths alternate every block, so that a slow phase of the machine
    /// (clocks, another process) falls on every path alike.
    #[arg(long, default_value_t = 5)]
    block: usize,
    /// Write the table as CSV here too.
    #[arg(long)]
    out: Option<String>,
}

const LOCAL: usize = 256;

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    let block = args.block.max(1);
    let device = clgroups::default_device()?;
    println!("device: {device}");
    let queue = Queue::new(&device)?;
    let program = Program::from_source(&queue, SAXPY_SOURCE)?;
    let saxpy = program.kernel("saxpy")?;
    let mut csv =
        String::from("what,n,clgroups_us,raw_event_us,raw_finish_us,ratio_event,ratio_finish\n");
    println!(
        "{:<8} {:>10} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "what", "n", "clgroups µs", "raw+event µs", "raw+finish µs", "÷event", "÷finish"
    );
    for log2 in args.min_log2..=args.max_log2 {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1.0f32; n])?;
        let mut y = Buffer::from_slice(&queue, &vec![0.0f32; n])?;
        let mut raw = RawSaxpy::new(device.id(), n)?;
        let global = n.div_ceil(LOCAL) * LOCAL;
        let ours = |y: &Buffer<f32>| -> AnyResult<()> {
            let launch = saxpy.launch().arg(&x).arg(y).arg(1.0f32).arg(n as u32);
            // SAFETY: work-item i < n touches x[i] and y[i] (both n floats); the others return.
            unsafe { launch.nd_range(Range::d1(global), LocalSize::Exact(Range::d1(LOCAL))) }?
                .wait()?;
            Ok(())
        };
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        // Warm-up: at least 20 rounds and 50 ms, so that the first size does not pay for the
        // process's cold start (clocks, caches) on one path more than on another.
        let (mut warm, start) = (0, Instant::now());
        while warm < 20 || start.elapsed().as_millis() < 50 {
            warm += 1;
            ours(&y)?;
            raw.launch(global, LOCAL, false)?;
            raw.launch(global, LOCAL, true)?;
        }
        for _ in 0..args.runs.div_ceil(block) {
            timed(block, &mut a, || ours(&y))?;
            timed(block, &mut b, || {
                raw.launch(global, LOCAL, false).map_err(Into::into)
            })?;
            timed(block, &mut c, || {
                raw.launch(global, LOCAL, true).map_err(Into::into)
            })?;
        }
        // Every path's y is exactly its launch count.
        let launches = (warm + args.runs.div_ceil(block) * block) as f32;
        check("clgroups", &y.read(&queue)?, launches)?;
        check("raw", &raw.read_y()?, 2.0 * launches)?;
        let rows = [("saxpy", median(&mut a), median(&mut b), median(&mut c))];
        // Blocking copies: clgroups' copy_to + wait against clEnqueueCopyBuffer + wait.
        let (mut d, mut e) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            x.copy_to(&queue, &mut y)?.wait()?;
            raw.copy()?;
        }
        for _ in 0..args.runs.div_ceil(block) {
            timed(block, &mut d, || Ok(x.copy_to(&queue, &mut y)?.wait()?))?;
            timed(block, &mut e, || raw.copy().map_err(Into::into))?;
        }
        check("clgroups copy", &y.read(&queue)?, 1.0)?;
        check("raw copy", &raw.read_y()?, 1.0)?;
        let copy = ("copy", median(&mut d), median(&mut e), f64::NAN);
        for (what, ours, event, finish) in rows.into_iter().chain([copy]) {
            let (re, rf) = (ours / event, ours / finish);
            println!(
                "{what:<8} {n:>10} {ours:>12.1} {event:>12.1} {finish:>12.1} {re:>9.3} {rf:>9.3}"
            );
            csv.push_str(&format!(
                "{what},{n},{ours:.2},{event:.2},{finish:.2},{re:.4},{rf:.4}\n"
            ));
        }
    }
    if let Some(path) = args.out {
        std::fs::write(path, csv)?;
    }
    Ok(())
}

/// Times `block` calls of `f` one by one, in µs, into `out`.
fn timed(block: usize, out: &mut Vec<f64>, mut f: impl FnMut() -> AnyResult<()>) -> AnyResult<()> {
    for _ in 0..block {
        let t = Instant::now();
        f()?;
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(())
}

fn check(what: &str, y: &[f32], want: f32) -> AnyResult<()> {
    match y.iter().position(|&v| v != want) {
        Some(i) => Err(format!("{what}: y[{i}] = {}, want {want}", y[i]).into()),
        None => Ok(()),
    }
}
