//! What a blocking call costs where every command crosses a network (PoCL-R), against PoCL-R's
//! own floor: host wall time, medians, of
//! * `floor`: a tiny kernel (SAXPY of 1024 floats) through raw opencl3 + `clFinish`;
//! * `raw+event`: the same + `clWaitForEvents`;
//! * `launch`: the same kernel through clgroups + `wait()`;
//! * `copy`: `Buffer::copy_to` of 2^16 floats + `wait()`; `raw copy`: `clEnqueueCopyBuffer` +
//!   `clWaitForEvents`;
//! * `reduce`: a blocking `reduce_sum` of 2^16 floats; `raw+read`: the tiny kernel through raw
//!   opencl3, then a blocking read of one float (a blocking reduce's two commands);
//! * `read`: `Buffer::read_into` of one float; `raw read`: a blocking `clEnqueueReadBuffer` of
//!   one float (PoCL-R's floor for a read);
//! * `copy+read`: `copy_to` of 2^16 floats, not waited for, then `read_into` of one float of
//!   its output (the read follows the copy on the in-order queue);
//!
//! all in one run, in alternating blocks of calls after warm-up, results checked. With
//! `--trace`, each row's calls run once more between `@@ ROW` / `@@ end` lines on stderr, so
//! that the driver's log (`POCL_DEBUG=remote`: one `WRITING MSG` line per message sent to a
//! server) counts the round trips per call (scripts/gpu-remote does).
//!
//! `cargo run --release --example bench_remote -- [--runs N] [--trace K]`

#[path = "common/raw_saxpy.rs"]
mod raw_saxpy;

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::algorithms::reduce_sum;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use raw_saxpy::{RawSaxpy, SAXPY_SOURCE};
use std::time::Instant;
use timing::median;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
struct Args {
    /// Timed calls per row (in blocks of 25, alternating between rows).
    #[arg(long, default_value_t = 201)]
    runs: usize,
    /// Calls per row between `@@` marks on stderr (0: no marks).
    #[arg(long, default_value_t = 0)]
    trace: usize,
}

const TINY: usize = 1024;
const LOCAL: usize = 256;
const N: usize = 1 << 16;
const BLOCK: usize = 25;
const ROWS: [&str; 10] = [
    "floor",
    "raw+event",
    "launch",
    "raw+read",
    "copy",
    "raw copy",
    "reduce",
    "read",
    "raw read",
    "copy+read",
];

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    println!("device: {device} ({:?})", device.identity());
    let queue = Queue::new(&device)?;
    let saxpy = Program::from_source(&queue, SAXPY_SOURCE)?.kernel("saxpy")?;
    // The raw SAXPY's kernel touches its first TINY floats; its copy copies all N.
    let mut raw = RawSaxpy::new(device.id(), N)?;
    let x = Buffer::from_slice(&queue, &vec![1.0f32; N])?;
    let mut y = Buffer::from_slice(&queue, &vec![0.0f32; N])?;
    let z = Buffer::from_slice(&queue, &vec![0.0f32; TINY])?;
    let mut launches = 0usize;
    let mut call = |row: &str| -> AnyResult<()> {
        match row {
            "floor" => raw.launch(TINY, LOCAL, true)?,
            "raw+event" => raw.launch(TINY, LOCAL, false)?,
            "launch" => {
                let l = saxpy.launch().arg(&x).arg(&z).arg(1.0f32).arg(TINY as u32);
                // SAFETY: work-item i < TINY touches x[i] and z[i] (N and TINY floats).
                unsafe { l.nd_range(Range::d1(TINY), LocalSize::Exact(Range::d1(LOCAL))) }?
                    .wait()?;
                launches += 1;
            }
            "copy" => x.copy_to(&queue, &mut y)?.wait()?,
            "raw copy" => raw.copy()?,
            "raw+read" => {
                raw.launch_read(TINY, LOCAL)?;
            }
            "reduce" => {
                let s = reduce_sum(&queue, &x)?;
                if s != N as f32 {
                    return Err(format!("reduce_sum = {s}, want {N}").into());
                }
            }
            "read" => {
                let mut one = [0.0f32];
                y.read_into(&queue, 0, &mut one)?;
                if one[0] != 1.0 {
                    return Err(format!("y[0] = {}, want 1", one[0]).into());
                }
            }
            "raw read" => {
                raw.read_one()?;
            }
            "copy+read" => {
                x.copy_to(&queue, &mut y)?;
                let mut one = [0.0f32];
                y.read_into(&queue, 0, &mut one)?;
                if one[0] != 1.0 {
                    return Err(format!("y[0] = {} after a copy, want 1", one[0]).into());
                }
            }
            other => return Err(format!("no row {other}").into()),
        }
        Ok(())
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); ROWS.len()];
    for row in ROWS {
        for _ in 0..20 {
            call(row)?;
        }
    }
    for _ in 0..args.runs.div_ceil(BLOCK) {
        for (row, t) in ROWS.iter().zip(&mut times) {
            for _ in 0..BLOCK {
                let start = Instant::now();
                call(row)?;
                t.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
    }
    if args.trace > 0 {
        for row in ROWS {
            eprintln!("@@ {row}");
            for _ in 0..args.trace {
                call(row)?;
            }
            eprintln!("@@ end");
        }
    }
    // Both y are copies of x (1s: each copy follows the launches before it); z counts its
    // launches.
    let z = z.read(&queue)?;
    if let Some(i) = z.iter().position(|&v| v != launches as f32) {
        return Err(format!("z[{i}] = {} after {launches} launches", z[i]).into());
    }
    let got = y.read(&queue)?;
    if let Some(i) = got.iter().position(|&v| v != 1.0) {
        return Err(format!("y[{i}] = {} after the copies, want 1", got[i]).into());
    }
    if let Some(i) = raw.read_y()?.iter().position(|&v| v != 1.0) {
        return Err(format!("raw y[{i}] after the raw copies, want 1").into());
    }
    let floor = median(&mut times[0].clone());
    println!("{:<10} {:>10} {:>9}", "call", "median µs", "÷floor");
    for (row, t) in ROWS.iter().zip(&mut times) {
        let m = median(t);
        println!("{row:<10} {m:>10.1} {:>9.2}", m / floor);
    }
    Ok(())
}
