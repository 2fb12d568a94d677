//! The inclusive scan against a device copy, as callers see them, in one run on the default
//! device (or `CLGROUPS_DEVICE`): host wall time of the blocking `inclusive_scan_sum(&q, &x,
//! &mut y)` and of a blocking `x.copy_to(&q, &mut y)?.wait()`, for `float` and `int` at every
//! power of two from 2^K to 2^M; medians of `--runs` calls after 3 warm-up calls, the copy
//! measured before and after the scan (the table's copy is the faster of the two medians).
//! Every scan output is poisoned (`clEnqueueFillBuffer` with a value no prefix sum takes)
//! before each call and checked on the device after it (every element against the answer), the
//! last one on the host too; every copy is checked on the device too. GB/s count 8 bytes per
//! element (read + write).
//!
//! `cargo run --release --example bench_scan -- [--min-log2 K] [--max-log2 M] [--runs N]`

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::algorithms::{self, Element};
use clgroups::{Buffer, Kernel, Program, Queue};
use std::time::Instant;
use timing::median_of;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
struct Args {
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 26)]
    min_log2: u32,
    /// Largest size, as a power of two.
    #[arg(long, default_value_t = 28)]
    max_log2: u32,
    /// Timed calls per median.
    #[arg(long, default_value_t = 51)]
    runs: usize,
}

/// The element types measured: the input and the poison value of the output.
trait Item: Element + PartialEq + std::fmt::Debug {
    fn value(i: usize) -> Self;
    fn add(a: Self, b: Self) -> Self;
    const POISON: Self;
}

impl Item for f32 {
    /// 0s and 1s (one in 16 on average): every prefix sum below 2^24, exact in float.
    fn value(i: usize) -> f32 {
        f32::from(u8::from((i as u32).wrapping_mul(2654435761) >> 28 == 0))
    }
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    const POISON: f32 = f32::NAN;
}

impl Item for i32 {
    /// -7 ..= 8 by a hash of the index.
    fn value(i: usize) -> i32 {
        ((i as u32).wrapping_mul(2654435761) >> 28) as i32 - 7
    }
    fn add(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    const POISON: i32 = i32::MIN;
}

/// Counts on the device the elements of an output that differ from the answer.
struct DeviceCheck<T: Item> {
    kernel: Kernel,
    bad: Buffer<u32>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Item> DeviceCheck<T> {
    fn new(queue: &Queue) -> AnyResult<Self> {
        let src = format!(
            "kernel void mismatches(global const {t} *y, global const {t} *want, global uint *bad) {{
                size_t i = get_global_id(0);
                if (!(y[i] == want[i]))
                    atomic_inc(bad);
            }}",
            t = T::CL_NAME
        );
        Ok(DeviceCheck {
            kernel: Program::from_source(queue, &src)?.kernel("mismatches")?,
            bad: Buffer::from_slice(queue, &[0u32])?,
            _t: std::marker::PhantomData,
        })
    }

    fn check(
        &mut self,
        queue: &Queue,
        y: &Buffer<T>,
        want: &Buffer<T>,
        what: &str,
    ) -> AnyResult<()> {
        self.bad.fill(queue, 0)?;
        let launch = self.kernel.launch().arg(y).arg(want).arg(&self.bad);
        // SAFETY: work-item i < n reads y[i] and want[i] (both n long) and counts into bad[0].
        unsafe { launch.range(want.len()) }?;
        match self.bad.read(queue)?[0] {
            0 => Ok(()),
            k => Err(format!("{what} of {} {}: {k} elements wrong", y.len(), T::CL_NAME).into()),
        }
    }
}

struct Row {
    n: usize,
    ty: &'static str,
    scan: f64,
    copy: (f64, f64),
}

fn measure<T: Item>(queue: &Queue, n: usize, runs: usize) -> AnyResult<Row> {
    let data: Vec<T> = (0..n).map(T::value).collect();
    let prefix: Vec<T> = data
        .iter()
        .scan(None, |run: &mut Option<T>, &v| {
            let s = run.map_or(v, |r| T::add(r, v));
            *run = Some(s);
            Some(s)
        })
        .collect();
    let x = Buffer::from_slice(queue, &data)?;
    let want = Buffer::from_slice(queue, &prefix)?;
    let mut y = Buffer::<T>::new(queue, n)?;
    let mut check = DeviceCheck::<T>::new(queue)?;
    let copy = |y: &mut Buffer<T>, check: &mut DeviceCheck<T>| {
        median_of(runs, || {
            y.fill(queue, T::POISON)?;
            queue.finish()?;
            let start = Instant::now();
            x.copy_to(queue, y)?.wait()?;
            let t = start.elapsed().as_secs_f64();
            check.check(queue, y, &x, "copy")?;
            Ok(t)
        })
    };
    let before = copy(&mut y, &mut check)?;
    let scan = median_of(runs, || {
        y.fill(queue, T::POISON)?;
        queue.finish()?;
        let start = Instant::now();
        algorithms::inclusive_scan_sum(queue, &x, &mut y)?;
        let t = start.elapsed().as_secs_f64();
        check.check(queue, &y, &want, "scan")?;
        Ok(t)
    })?;
    let got = y.read(queue)?;
    if let Some(i) = (0..n).find(|&i| got[i] != prefix[i]) {
        return Err(format!("scan of {n}: [{i}] = {:?} not {:?}", got[i], prefix[i]).into());
    }
    let after = copy(&mut y, &mut check)?;
    Ok(Row {
        n,
        ty: T::CL_NAME,
        scan,
        copy: (before, after),
    })
}

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let queue = Queue::new(&device)?;
    println!("device: {device}");
    let mut rows = Vec::new();
    for log2 in args.min_log2..=args.max_log2 {
        rows.push(measure::<f32>(&queue, 1 << log2, args.runs)?);
        rows.push(measure::<i32>(&queue, 1 << log2, args.runs)?);
    }
    let gbs = |n: usize, s: f64| 8.0 * n as f64 / s / 1e9;
    println!(
        "| n | type | `inclusive_scan_sum` | `copy_to` + wait (before / after) | scan / copy |"
    );
    println!("|---|---|---|---|---|");
    for r in &rows {
        let copy = r.copy.0.min(r.copy.1);
        println!(
            "| 2^{} | {} | {:.1} µs ({:.0} GB/s) | {:.1} / {:.1} µs ({:.0} GB/s) | **{:.3}** |",
            r.n.trailing_zeros(),
            r.ty,
            r.scan * 1e6,
            gbs(r.n, r.scan),
            r.copy.0 * 1e6,
            r.copy.1 * 1e6,
            gbs(r.n, copy),
            copy / r.scan,
        );
    }
    match clgroups::algorithms::look_back_wait_ns(&device) {
        Some(w) => println!(
            "large scans on this device (measured): {:?}; the look-back wait of their tiles: {w} ns",
            clgroups::algorithms::scan_form(&device, 1 << 28).expect("measured with the wait")
        ),
        None => println!("look-back wait: not measured on this device"),
    }
    Ok(())
}
