//! How a blocking reduce should wait for its one-element result: host wall time of
//! `enqueue_reduce` + the read of the result, per way of waiting, in one run (median of
//! interleaved blocks). The ways:
//! * `finish+read`: marker, callback + Condvar wait, then a blocking `clEnqueueReadBuffer`
//!   (clgroups before issue 12: two round trips);
//! * `blocking-read`: a blocking read alone (the driver's own wait; unbounded);
//! * `nb+callback`: non-blocking read, flush, callback + Condvar wait;
//! * `nb+spin`: non-blocking read, flush, poll `CL_EVENT_COMMAND_EXECUTION_STATUS`;
//! * `nb+clWait`: non-blocking read, `clWaitForEvents` (unbounded);
//! * `reduce_sum`: the library call as users make it.
//!
//! `cargo run --release --example bench_wait -- [--runs N] [--log2 16,20,24]`

use clap::Parser;
use clgroups::algorithms::{self, ReduceOp};
use clgroups::{Buffer, Queue};
use opencl3::command_queue as cq;
use opencl3::error_codes::ClError;
use opencl3::event::{Event, CL_COMPLETE};
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

const WAYS: [&str; 6] = [
    "finish+read",
    "blocking-read",
    "nb+callback",
    "nb+spin",
    "nb+clWait",
    "reduce_sum",
];

fn main() -> AnyResult<()> {
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let queue = Queue::new(&device)?;
    println!("device: {device}");
    println!("{:>10} {}", "n", WAYS.map(|w| format!("{w:>14}")).join(""));
    for log2 in args.log2 {
        let n = 1usize << log2;
        let x = Buffer::from_slice(&queue, &vec![1f32; n])?;
        let result = Buffer::<f32>::new(queue.context(), 1)?;
        let mut times = vec![Vec::new(); WAYS.len()];
        for _ in 0..args.runs.div_ceil(50) {
            for (way, t) in times.iter_mut().enumerate() {
                for i in 0..55 {
                    let start = Instant::now();
                    let got = match way {
                        5 => algorithms::reduce_sum(&queue, &x)?,
                        _ => {
                            algorithms::enqueue_reduce(&queue, &x, ReduceOp::Sum, &result)?;
                            read(&queue, &result, way)?
                        }
                    };
                    let elapsed = start.elapsed().as_secs_f64();
                    if got != n as f32 {
                        return Err(format!("{}: {got} not {n}", WAYS[way]).into());
                    }
                    if i >= 5 {
                        t.push(elapsed);
                    }
                }
            }
        }
        let medians = times.iter_mut().map(|t| {
            t.sort_by(f64::total_cmp);
            format!("{:>11.1} µs", t[t.len() / 2] * 1e6)
        });
        println!("{n:>10} {}", medians.collect::<String>());
    }
    Ok(())
}

/// Reads `result[0]` after the reduce, the way `way` says.
fn read(queue: &Queue, result: &Buffer<f32>, way: usize) -> AnyResult<f32> {
    let q = queue.as_opencl3().get();
    let mut v = 0f32;
    let ptr = (&mut v as *mut f32).cast::<c_void>();
    let blocking = if way <= 1 {
        CL_BLOCKING
    } else {
        CL_NON_BLOCKING
    };
    if way == 0 {
        // SAFETY: an empty wait list; the marker's event is released by `Event`.
        let marker = Event::new(
            unsafe { cq::enqueue_marker_with_wait_list(q, 0, std::ptr::null()) }
                .map_err(ClError)?,
        );
        callback_wait(&marker)?;
    }
    // SAFETY: `v` outlives the read: every way below waits for the read's event before
    // returning (a blocking read returns when the data is there).
    let ev = Event::new(
        unsafe {
            cq::enqueue_read_buffer(q, result.as_raw(), blocking, 0, 4, ptr, 0, std::ptr::null())
        }
        .map_err(ClError)?,
    );
    match way {
        0 | 1 => {}
        2 => {
            cq::flush(q).map_err(ClError)?;
            callback_wait(&ev)?;
        }
        3 => {
            cq::flush(q).map_err(ClError)?;
            while ev.command_execution_status()?.0 != CL_COMPLETE {
                std::hint::spin_loop();
            }
        }
        _ => ev.wait()?,
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
