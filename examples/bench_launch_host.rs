//! The host side of a launch, without a GPU: what clgroups adds to each launch of a user's
//! kernel beyond the driver's own work. The SAXPY of `bench_launch` (work-groups of 256),
//! repeated: nanoseconds and heap allocations per launch of the preparation (the launch
//! built with its four arguments, planned and checked; no argument set, nothing enqueued:
//! the hidden `Launch::prepare_only`), as an ND-range and as a plain range, then heap
//! allocations per whole launch + wait, through clgroups and through raw opencl3 (the
//! driver's own allocations are not Rust's, so they are not counted), and a plain range + wait
//! on one device against the same over a root device (`RootDevice::from_env`). Medians of
//! `--blocks` blocks of `--iters` launches each.
//!
//! `cargo run --release --example bench_launch_host -- [--log2 K] [--iters N] [--blocks B]`

#[path = "common/raw_saxpy.rs"]
mod raw_saxpy;

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use raw_saxpy::{RawSaxpy, SAXPY_SOURCE};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use timing::median;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// One launch (or its preparation).
type Call<'a> = dyn Fn() -> AnyResult<()> + 'a;

/// The system allocator, counting allocations (and reallocations).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counter is only a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc`, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Clone, Copy, Parser)]
struct Args {
    /// The SAXPY's size, as a power of two.
    #[arg(long, default_value_t = 16)]
    log2: u32,
    /// Launches per block.
    #[arg(long, default_value_t = 2000)]
    iters: usize,
    /// Blocks (the median block is reported).
    #[arg(long, default_value_t = 31)]
    blocks: usize,
}

const LOCAL: usize = 256;

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    println!("device: {device}");
    let queue = Queue::new(&device)?;
    let saxpy = Program::from_source(&queue, SAXPY_SOURCE)?.kernel("saxpy")?;
    let n = 1usize << args.log2;
    let x = Buffer::from_slice(&queue, &vec![1.0f32; n])?;
    let y = Buffer::from_slice(&queue, &vec![0.0f32; n])?;
    let global = n.div_ceil(LOCAL) * LOCAL;
    let launch = || saxpy.launch().arg(&x).arg(&y).arg(1.0f32).arg(n as u32);
    let nd = Some(LocalSize::Exact(Range::d1(LOCAL)));
    let prepare_nd = || -> AnyResult<()> {
        launch().prepare_only(Range::d1(global), nd)?;
        Ok(())
    };
    let prepare_plain = || -> AnyResult<()> {
        launch().prepare_only(Range::d1(n), None)?;
        Ok(())
    };
    let whole = || -> AnyResult<()> {
        let (global, local) = (Range::d1(global), LocalSize::Exact(Range::d1(LOCAL)));
        // SAFETY: work-item i < n touches x[i] and y[i] (both n floats); the others return.
        unsafe { launch().nd_range(global, local) }?.wait()?;
        Ok(())
    };
    let plain = || -> AnyResult<()> {
        // SAFETY: as above.
        unsafe { launch().range(n) }?.wait()?;
        Ok(())
    };
    // The same launch over a root device of every device (CLGROUPS_DEVICES, ...), on colored
    // buffers: once the cost model has chosen, what a root launch adds to a plain one.
    let root = clgroups::RootDevice::from_env()?;
    let root_saxpy = root.program(SAXPY_SOURCE)?.kernel("saxpy")?;
    let (rx, ry) = (
        clgroups::ColoredBuffer::from_slice(&root, &vec![1.0f32; n])?,
        clgroups::ColoredBuffer::from_slice(&root, &vec![0.0f32; n])?,
    );
    let root_range = || -> AnyResult<()> {
        let l = root_saxpy
            .launch()
            .arg(&rx)
            .arg(&ry)
            .arg(1.0f32)
            .arg(n as u32);
        // SAFETY: work-item i < n touches x[i] and y[i] (both n floats).
        unsafe { l.range(n) }?.wait()?;
        Ok(())
    };
    let raw = RawSaxpy::new(device.id(), n)?;
    let raw_launch = || -> AnyResult<()> { Ok(raw.launch(global, LOCAL, false)?) };
    // Whole launches take the driver's time too: fewer of them per block.
    let few = Args {
        iters: args.iters.div_ceil(20),
        ..args
    };
    let rows: [(&str, &Call, &Args); 6] = [
        ("prepare nd_range", &prepare_nd, &args),
        ("prepare range", &prepare_plain, &args),
        ("nd_range + wait", &whole, &few),
        ("range + wait", &plain, &few),
        ("root range + wait", &root_range, &few),
        ("raw opencl3 + wait", &raw_launch, &few),
    ];
    println!(
        "{:<24} {:>12} {:>16}",
        "per launch", "host ns", "allocations"
    );
    for (what, f, args) in rows {
        let (ns, allocs) = measure(args, f)?;
        println!("{what:<24} {ns:>12.0} {allocs:>16.2}");
    }
    Ok(())
}

/// Median ns per call of `f` over blocks, and allocations per call (the fewest of a block:
/// the driver's threads allocate too, now and then).
fn measure(args: &Args, f: &Call) -> AnyResult<(f64, f64)> {
    for _ in 0..args.iters.min(200) {
        f()?;
    }
    let (mut ns, mut allocs) = (Vec::new(), Vec::new());
    for _ in 0..args.blocks.max(1) {
        let (t, a) = (Instant::now(), ALLOCATIONS.load(Ordering::Relaxed));
        for _ in 0..args.iters.max(1) {
            f()?;
        }
        let count = ALLOCATIONS.load(Ordering::Relaxed) - a;
        ns.push(t.elapsed().as_secs_f64() * 1e9 / args.iters.max(1) as f64);
        allocs.push(count as f64 / args.iters.max(1) as f64);
    }
    let fewest = allocs.iter().copied().fold(f64::INFINITY, f64::min);
    Ok((median(&mut ns), fewest))
}
