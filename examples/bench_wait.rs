//! How a blocking reduce should wait for its one-element result: host wall time of
//! `enqueue_reduce` + the read of the result, per way of waiting, in one run (median of
//! interleaved blocks). The ways:
//! * `finish+read`: marker, callback + Condvar wait, then a blocking `clEnqueueReadBuffer`
//!   (clgroups before issue 12: two round trips);
//! * `blocking-read`: a blocking read alone (the driver's own wait; unbounded);
//! * `nb+spin`: non-blocking read into pageable memory, flush, poll
//!   `CL_EVENT_COMMAND_EXECUTION_STATUS`;
//! * `pinned+spin`, `pinned+clWait`: the same into pinned memory (a mapped
//!   `CL_MEM_ALLOC_HOST_PTR` buffer), polled or `clWaitForEvents`;
//! * `kspin+read`: poll the kernel's event, then a blocking read;
//! * `clFinish+read`: `clFinish`, then a blocking read;
//! * `reduce_sum`: the library call as users make it.
//!
//! Then the same for a scan's wait: `Event::wait` (the library's), `clFinish`, a blocking
//! read of the last element, and `inclusive_scan_sum`.
//!
//! `cargo run --release --example bench_wait -- [--runs N] [--log2 16,20,24]`

use clap::Parser;
use clgroups::algorithms::{self, ReduceOp, ScanKind};
use clgroups::{Buffer, Queue};
use opencl3::command_queue as cq;
use opencl3::error_codes::ClError;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::memory::ClMem;
use opencl3::types::{cl_event, cl_int, CL_BLOCKING, CL_NON_BLOCKING};
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

#[derive(Parser)]
struct Args {
    /// Timed calls per way and size (in blocks of 50, interleaved).
    #[arg(long, default_value_t = 500)]
    runs: usize,
    /// Input sizes, as powers of two.
    #[arg(long, value_delimiter = ',', default_value = "10,16,20,24")]
    log2: Vec<u32>,
}

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

const WAYS: [&str; 8] = [
    "finish+read",
    "blocking-read",
    "nb+spin",
    "pinned+spin",
    "pinned+clWait",
    "kspin+read",
    "clFinish+read",
    "reduce_sum",
];

const SCAN_WAYS: [&str; 4] = ["Event::wait", "clFinish", "read-last", "scan_sum"];

fn main() -> AnyResult<()> {
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let queue = Queue::new(&device)?;
    let pinned = Pinned::new(&queue)?;
    println!("device: {device}");
    println!(
        "{:>10} {}",
        "reduce n",
        WAYS.map(|w| format!("{w:>14}")).join("")
    );
    for &log2 in &args.log2 {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1f32; n])?;
        let result = Buffer::<f32>::new(queue.context(), 1)?;
        let times = interleaved(WAYS.len(), args.runs, |way| {
            let got = match way {
                7 => algorithms::reduce_sum(&queue, &x)?,
                _ => {
                    let ev = algorithms::enqueue_reduce(&queue, &x, ReduceOp::Sum, &result)?;
                    read(&queue, &result, &pinned, &ev, way)?
                }
            };
            check(got == n as f32, WAYS[way], got)
        })?;
        println!("{n:>10} {}", times);
    }
    println!(
        "{:>10} {}",
        "scan n",
        SCAN_WAYS.map(|w| format!("{w:>14}")).join("")
    );
    for &log2 in &args.log2 {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1f32; n])?;
        let mut y = Buffer::<f32>::new(queue.context(), n)?;
        let q = queue.as_opencl3().get();
        let times = interleaved(SCAN_WAYS.len(), args.runs, |way| {
            if way == 3 {
                return algorithms::inclusive_scan_sum(&queue, &x, &mut y).map_err(Into::into);
            }
            let ev = algorithms::enqueue_scan_sum(&queue, &x, &mut y, ScanKind::Inclusive)?;
            match way {
                0 => ev.wait()?,
                1 => cq::finish(q).map_err(ClError)?,
                _ => {
                    let mut last = [0f32];
                    y.read_into(&queue, n - 1, &mut last)?;
                    check(last[0] == n as f32, "read-last", last[0])?;
                }
            }
            Ok(())
        })?;
        println!("{n:>10} {}", times);
        check(y.read(&queue)?[n - 1] == n as f32, "scan", 0.0)?;
    }
    Ok(())
}

fn check(ok: bool, what: &str, got: f32) -> AnyResult<()> {
    ok.then_some(())
        .ok_or_else(|| format!("{what}: wrong result {got}").into())
}

/// Medians of `runs` timed calls of `call(way)` per way, in interleaved blocks of 50 (each
/// after 5 warm-up calls), formatted.
fn interleaved(
    ways: usize,
    runs: usize,
    mut call: impl FnMut(usize) -> AnyResult<()>,
) -> AnyResult<String> {
    let mut times = vec![Vec::new(); ways];
    for _ in 0..runs.div_ceil(50) {
        for (way, t) in times.iter_mut().enumerate() {
            for i in 0..55 {
                let start = Instant::now();
                call(way)?;
                if i >= 5 {
                    t.push(start.elapsed().as_secs_f64());
                }
            }
        }
    }
    Ok(times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            format!("{:>11.1} µs", t[t.len() / 2] * 1e6)
        })
        .collect())
}

/// Pinned host memory: a `CL_MEM_ALLOC_HOST_PTR` buffer, mapped once for the whole run.
struct Pinned {
    ptr: *mut f32,
    _mem: opencl3::memory::Buffer<f32>,
}

impl Pinned {
    fn new(queue: &Queue) -> AnyResult<Self> {
        use opencl3::memory::{
            Buffer as ClBuffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
        };
        let raw_ctx = queue.as_opencl3().context()?;
        // SAFETY: no host pointer is passed; 1024 floats.
        let mem = unsafe {
            ClBuffer::<f32>::new(
                opencl3::memory::create_buffer(
                    raw_ctx,
                    CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                    4096,
                    std::ptr::null_mut(),
                )
                .map_err(ClError)?,
            )
        };
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole live buffer; it stays mapped while `mem` lives.
        let ev = unsafe {
            cq::enqueue_map_buffer(
                queue.as_opencl3().get(),
                mem.get(),
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                4096,
                &mut ptr,
                0,
                std::ptr::null(),
            )
        }
        .map_err(ClError)?;
        drop(Event::new(ev));
        Ok(Pinned {
            ptr: ptr.cast(),
            _mem: mem,
        })
    }
}

/// Reads `result[0]` after the reduce (`kernel`), the way `way` says.
fn read(
    queue: &Queue,
    result: &Buffer<f32>,
    pinned: &Pinned,
    kernel: &clgroups::launch::Event,
    way: usize,
) -> AnyResult<f32> {
    let q = queue.as_opencl3().get();
    let mut v = 0f32;
    match way {
        0 => {
            // SAFETY: an empty wait list; the marker's event is released by `Event`.
            let marker = Event::new(
                unsafe { cq::enqueue_marker_with_wait_list(q, 0, std::ptr::null()) }
                    .map_err(ClError)?,
            );
            callback_wait(&marker)?;
        }
        5 => kernel.wait()?,
        6 => cq::finish(q).map_err(ClError)?,
        _ => {}
    }
    let blocking = [0, 1, 5, 6].contains(&way);
    let dst = if way == 3 || way == 4 {
        pinned.ptr
    } else {
        &mut v as *mut f32
    };
    // SAFETY: `dst` outlives the read: every way below waits for the read's event before
    // returning (a blocking read returns when the data is there).
    let ev = Event::new(
        unsafe {
            cq::enqueue_read_buffer(
                q,
                result.as_raw(),
                if blocking {
                    CL_BLOCKING
                } else {
                    CL_NON_BLOCKING
                },
                0,
                4,
                dst.cast::<c_void>(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(ClError)?,
    );
    match way {
        2 | 3 => {
            cq::flush(q).map_err(ClError)?;
            while ev.command_execution_status()?.0 != CL_COMPLETE {
                std::hint::spin_loop();
            }
        }
        4 => ev.wait()?,
        _ => {}
    }
    if way == 3 || way == 4 {
        // SAFETY: the read into the pinned memory has completed.
        v = unsafe { pinned.ptr.read_volatile() };
    }
    Ok(v)
}

/// Sleeps on a Condvar until `ev`'s completion callback fires (flushes first).
fn callback_wait(ev: &Event) -> AnyResult<()> {
    extern "C" fn notify(_: cl_event, _: cl_int, user: *mut c_void) {
        // SAFETY: `user` is the `Arc` leaked below, reclaimed exactly once here.
        let done = unsafe { Arc::from_raw(user.cast::<(Mutex<bool>, Condvar)>()) };
        *done.0.lock().unwrap() = true;
        done.1.notify_all();
    }
    cq::flush(ev.command_queue()?).map_err(ClError)?;
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let user = Arc::into_raw(Arc::clone(&done)).cast_mut().cast::<c_void>();
    ev.set_callback(CL_COMPLETE, notify, user)?;
    let mut d = done.0.lock().unwrap();
    while !*d {
        d = done.1.wait(d).unwrap();
    }
    Ok(())
}
