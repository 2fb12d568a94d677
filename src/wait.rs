//! Bounded waits: every wait clgroups makes on a device ends within [`limit`], or returns
//! [`Error::Timeout`] naming the command, so a stuck device or a lost connection (a remote device
//! through PoCL-R, say) reaches the caller as an error rather than a hang.
//!
//! The limit is `CLGROUPS_TIMEOUT` seconds (default 600). OpenCL cannot cancel a command, so one
//! that timed out may still be running: a read that timed out leaves its destination to the
//! device (owned memory, leaked). Blocking reads of up to 64 KiB, and every blocking read and
//! write on a remote device (PoCL-R), are one non-blocking transfer through owned memory and
//! one bounded wait; larger blocking transfers on local devices first wait (bounded) for the
//! commands before them, so only the transfer itself is unbounded there.

use crate::error::{Error, Result};
use crate::ffi;
use opencl3::command_queue::CommandQueue;
use opencl3::event::{Event, CL_COMPLETE, CL_RUNNING};
use opencl3::types::cl_int;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long clgroups waits for one command: `CLGROUPS_TIMEOUT` seconds, else 600 s
/// ([`crate::config::timeout`]; read once, a bad value is an error at the first wait).
pub(crate) fn limit() -> Result<Duration> {
    crate::config::timeout()
}

/// How long a wait spins on the event's status, on devices other than CPUs, before it polls
/// between short sleeps ([`NAP`]). One `spin_loop` hint between polls: a `pause` costs ~140
/// cycles on recent x86 cores, and 64 of them between polls made a launch's wait on the H100
/// ~1.5 µs slower than `clWaitForEvents` (bench_launch: 1.08-1.18x raw opencl3 with 64, 1.01-1.08x
/// with one). NVIDIA's driver calls completion callbacks from its own thread:
/// on the H100 polling returned about 40 µs sooner per wait (`examples/bench_wait.rs`), and on
/// two H200s a 3.6 ms kernel waited through a callback took 15 ms. On a CPU device a spin would
/// take a core from the device's own threads: there the wait polls yielding the core for
/// [`CPU_SPIN`], then sleeps on a callback.
pub(crate) const SPIN: Duration = Duration::from_millis(2);

/// How long a wait on a CPU device polls (yielding the core to the device's threads between
/// polls) before it sleeps on a completion callback: PoCL 3.1's callback costs tens of µs, so
/// a blocking reduce of 2^16 floats took 40–64 µs through it and about 23 µs polled.
const CPU_SPIN: Duration = Duration::from_micros(500);

/// The longest sleep between two polls after [`SPIN`] (sleeps start at a tenth of it).
const NAP: Duration = Duration::from_micros(200);

/// Waits until `event` completes, at most [`limit`]. `what` names the command in errors.
pub(crate) fn event(event: &Event, what: impl Fn() -> String) -> Result<()> {
    let on_cpu = event
        .command_queue()
        .is_ok_and(|q| !q.is_null() && ffi::queue_on_cpu(q));
    event_on(event, on_cpu, what)
}

/// [`event`], for an event of a device whose kind the caller knows (`on_cpu`): the hot path of
/// a launch's wait, with no query but the event's queue (to flush it) and its status.
pub(crate) fn event_on(event: &Event, on_cpu: bool, what: impl Fn() -> String) -> Result<()> {
    let limit = limit()?;
    let status = || {
        event
            .command_execution_status()
            .map(|s| s.0)
            .map_err(|e| Error::cl("clGetEventInfo", e.0, what()))
    };
    flush_queue_of(event, &what)?;
    let s = status()?;
    if s == CL_COMPLETE || s < 0 {
        return finished(s, what);
    }
    // Poll: on a CPU device yielding the core, for CPU_SPIN, then sleep on a callback below;
    // elsewhere spinning for SPIN, then between naps, up to the limit.
    let window = if on_cpu { CPU_SPIN.min(limit) } else { limit };
    let (start, mut nap) = (Instant::now(), NAP / 10);
    while start.elapsed() < window {
        if on_cpu {
            std::thread::yield_now();
        } else if start.elapsed() < SPIN {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(nap);
            nap = (nap * 2).min(NAP);
        }
        let s = status()?;
        if s == CL_COMPLETE || s < 0 {
            return finished(s, what);
        }
    }
    if !on_cpu {
        return Err(Error::Timeout {
            command: what(),
            waited: limit,
        });
    }
    let done = Arc::new((Mutex::new(None::<cl_int>), Condvar::new()));
    let signal = Arc::clone(&done);
    ffi::on_complete(
        event,
        Box::new(move |status| {
            let (slot, cv) = &*signal;
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
            cv.notify_all();
        }),
    )
    .map_err(|e| Error::cl("clSetEventCallback", e.0, what()))?;
    let (slot, cv) = &*done;
    let guard = slot.lock().unwrap_or_else(PoisonError::into_inner);
    let (guard, _) = cv
        .wait_timeout_while(guard, limit, |s| s.is_none())
        .unwrap_or_else(PoisonError::into_inner);
    match *guard {
        // The callback's status is not to be trusted: PoCL (3.1 to 7.2) passes `CL_COMPLETE`
        // to a `CL_COMPLETE` callback also when the command failed (a kernel in flight on a
        // lost PoCL-R server read as a success): the event's own status says which.
        Some(reported) if reported >= 0 => finished(reported.min(status()?), what),
        Some(reported) => finished(reported, what),
        None => Err(Error::Timeout {
            command: what(),
            waited: limit,
        }),
    }
}

/// Waits until `event`'s command has started or ended (its status `CL_RUNNING` or lower: a
/// failure too), at most [`limit`]; `false` past it. PoCL marks a kernel command running once
/// its work-group function is compiled (`kernel::first_run`'s first runs wait for that). The
/// queue is flushed first; polls yield the core for [`CPU_SPIN`], then sleep between them.
pub(crate) fn started(event: &Event, what: impl Fn() -> String) -> Result<bool> {
    let limit = limit()?;
    flush_queue_of(event, &what)?;
    let (start, mut nap) = (Instant::now(), NAP / 10);
    loop {
        let s = (event.command_execution_status())
            .map_err(|e| Error::cl("clGetEventInfo", e.0, what()))?;
        if s.0 <= CL_RUNNING {
            return Ok(true);
        }
        if start.elapsed() >= limit {
            return Ok(false);
        }
        if start.elapsed() < CPU_SPIN {
            std::thread::yield_now();
        } else {
            std::thread::sleep(nap);
            nap = (nap * 2).min(NAP);
        }
    }
}

/// Flushes `event`'s queue: nothing guarantees that a queued command is ever submitted until
/// its queue is flushed (clWaitForEvents flushes implicitly; a callback or a status poll does
/// not).
fn flush_queue_of(event: &Event, what: impl Fn() -> String) -> Result<()> {
    let queue = event
        .command_queue()
        .map_err(|e| Error::cl("clGetEventInfo", e.0, what()))?;
    if !queue.is_null() {
        opencl3::command_queue::flush(queue).map_err(|e| Error::cl("clFlush", e, what()))?;
    }
    Ok(())
}

/// Waits until every command enqueued on `queue` so far completes, at most [`limit`] (a marker
/// and [`event`]).
pub(crate) fn queue(queue: &CommandQueue, what: impl Fn() -> String) -> Result<()> {
    let marker =
        ffi::marker(queue).map_err(|e| Error::cl("clEnqueueMarkerWithWaitList", e.0, what()))?;
    event(&marker, what)
}

/// The outcome of a command whose execution status is final (`CL_COMPLETE` or an error code).
fn finished(status: cl_int, what: impl Fn() -> String) -> Result<()> {
    if status < 0 {
        return Err(Error::cl("clWaitForEvents", status, what()));
    }
    Ok(())
}
