//! The blocking reduce's mailbox: host-visible memory (`CL_MEM_ALLOC_HOST_PTR` buffers, mapped
//! once) that the reduce kernel writes its result into and then, after a system-scope fence, the
//! call's sequence number (`clg_post` in `cl/algorithms/reduce.cl`). Where the device writes
//! such memory directly (pinned host memory over the bus), the host polls the number and reads
//! the result without waiting for the launch's event: the event is only released (the in-order
//! queue keeps later commands after the launch).
//!
//! OpenCL does not promise this (a driver may keep a device copy of mapped memory until it is
//! unmapped), so it is used only where it was seen to work: `CLGROUPS_REDUCE_RESULT` = `auto`
//! (default: on NVIDIA's PTX backend, the first blocking reduce of each state is a probe that
//! also reads the result the usual way and keeps the mailbox only if the number appeared with
//! the same result), `flag` (always, on any device; a call whose number has not appeared when
//! its launch completes reads the result the usual way) or `read` (never).

use super::Element;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::launch::Event;
use crate::queue::Queue;
use crate::{ffi, wait};
use opencl3::event::CL_COMPLETE;
use opencl3::memory::{Buffer as ClBuffer, CL_MAP_READ, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::atomic::{fence, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The environment variable that picks how the blocking reduce gets its result.
pub const RESULT_ENV: &str = "CLGROUPS_REDUCE_RESULT";

/// How the blocking reduce gets its result (`CLGROUPS_REDUCE_RESULT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The mailbox where a probe admits it (NVIDIA's PTX backend only), else a read.
    Auto,
    /// The mailbox on every device.
    Flag,
    /// A read of the result buffer.
    Read,
}

/// The mode from `CLGROUPS_REDUCE_RESULT`, read once; an unknown value warns and is `auto`.
pub(crate) fn mode() -> Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    *MODE.get_or_init(|| parse_mode(std::env::var(RESULT_ENV).ok().as_deref()))
}

fn parse_mode(value: Option<&str>) -> Mode {
    match value.map(str::trim) {
        None | Some("" | "auto") => Mode::Auto,
        Some("flag") => Mode::Flag,
        Some("read") => Mode::Read,
        Some(other) => {
            log::warn!("{RESULT_ENV}={other:?} is not auto, flag or read; using auto");
            Mode::Auto
        }
    }
}

/// Spins between two checks of the launch's status and the clock.
const CHECK_EVERY: u32 = 1024;

/// Host-visible result and sequence number of the blocking reduce on one queue.
pub(crate) struct Mailbox<T: Element> {
    /// Freed only once no launch may write them (else leaked): see `Drop`.
    result: ManuallyDrop<Buffer<T>>,
    done: ManuallyDrop<Buffer<u32>>,
    result_ptr: *const T,
    done_ptr: *const u32,
    /// The last sequence number posted (0: none; the kernel posts only non-zero ones).
    seq: u32,
    /// The last launch that posts here: the memory is freed only once it has completed.
    last: Option<Event>,
    /// Whether the next call is the probe (reads the result both ways).
    probing: bool,
    /// Whether the queue's device is a CPU (the host sleeps there rather than spin).
    on_cpu: bool,
}

// SAFETY: the pointers point into the mapped memory of `result` and `done`, which the value
// owns; they are only read, through `&mut self`.
unsafe impl<T: Element> Send for Mailbox<T> {}
// SAFETY: no `&self` method reads through the pointers.
unsafe impl<T: Element> Sync for Mailbox<T> {}

impl<T: Element> Mailbox<T> {
    /// The mailbox `mode` gives `queue` (`nvidia`: the device uses the PTX backend), or
    /// `None` (then the result is read as before).
    pub(crate) fn open(queue: &Queue, nvidia: bool, mode: Mode) -> Option<Self> {
        let on_cpu = ffi::queue_on_cpu(queue.raw().get());
        let probing = match mode {
            Mode::Read => return None,
            Mode::Auto if !nvidia || on_cpu => return None,
            Mode::Auto => true,
            Mode::Flag => false,
        };
        match Self::new(queue, probing, on_cpu) {
            Ok(m) => Some(m),
            Err(e) => {
                log::debug!("algorithms: no reduce mailbox on {}: {e}", queue.device());
                None
            }
        }
    }

    fn new(queue: &Queue, probing: bool, on_cpu: bool) -> Result<Self> {
        let result = host_buffer::<T>(queue)?;
        let mut done = host_buffer::<u32>(queue)?;
        done.fill(queue, 0)?;
        let result_ptr = map(queue, &result)?;
        let done_ptr = map(queue, &done)?;
        Ok(Mailbox {
            result: ManuallyDrop::new(result),
            done: ManuallyDrop::new(done),
            result_ptr,
            done_ptr,
            seq: 0,
            last: None,
            probing,
            on_cpu,
        })
    }

    /// The buffer the kernel writes the result into.
    pub(crate) fn result(&self) -> &Buffer<T> {
        &self.result
    }

    /// For the next call: the buffer the kernel writes the result into, and the buffer it
    /// then posts the call's number to, with the number.
    pub(crate) fn next(&mut self) -> (&Buffer<T>, (&Buffer<u32>, u32)) {
        self.seq = self.seq.wrapping_add(1).max(1);
        (&self.result, (&self.done, self.seq))
    }

    /// Whether the next call is the probe.
    pub(crate) fn probing(&self) -> bool {
        self.probing
    }

    /// Ends the probe: the mailbox is trusted from now on.
    pub(crate) fn admit(&mut self) {
        self.probing = false;
    }

    /// The result of `launch` (enqueued with the number of the last [`Mailbox::next`]): spins
    /// until the number appears, at most [`wait::limit`]; `None` if the launch completed
    /// without it appearing (read the result buffer instead). A failed launch is an error.
    pub(crate) fn collect(&mut self, queue: &Queue, launch: Event) -> Result<Option<T>> {
        let what = || format!("reduce result on {}", queue.device());
        let limit = wait::limit()?;
        opencl3::command_queue::flush(queue.raw().get())
            .map_err(|e| Error::cl("clFlush", e, what()))?;
        let seq = self.seq;
        let last = self.last.insert(launch);
        let start = Instant::now();
        loop {
            for _ in 0..CHECK_EVERY {
                if let Some(v) = posted(self.done_ptr, self.result_ptr, seq) {
                    return Ok(Some(v));
                }
                std::hint::spin_loop();
            }
            if completed(last, what)? {
                return Ok(posted(self.done_ptr, self.result_ptr, seq));
            }
            if self.on_cpu {
                // A spinning host would take a core from the device's own threads.
                last.wait()?;
                return Ok(posted(self.done_ptr, self.result_ptr, seq));
            }
            if start.elapsed() >= limit {
                return Err(Error::Timeout {
                    command: what(),
                    waited: limit,
                });
            }
        }
    }
}

impl<T: Element> Drop for Mailbox<T> {
    fn drop(&mut self) {
        let idle = |ev: &Event| completed(ev, String::new).unwrap_or(false);
        if self.last.as_ref().is_none_or(idle) {
            // SAFETY: dropped once, here, and no launch writes them any more. Otherwise a
            // launch may still write the mapped memory: it is leaked, never freed.
            unsafe {
                ManuallyDrop::drop(&mut self.result);
                ManuallyDrop::drop(&mut self.done);
            }
        }
    }
}

/// The result, if the number at `done` is `seq`.
fn posted<T: Element>(done: *const u32, result: *const T, seq: u32) -> Option<T> {
    // SAFETY: `done` points into mapped memory the mailbox owns (never freed while a launch
    // may write it); volatile: the device writes it behind the compiler's back.
    if unsafe { ptr::read_volatile(done) } != seq {
        return None;
    }
    // The kernel wrote the result before the number (a system-scope fence between them).
    fence(Ordering::Acquire);
    // SAFETY: as above; every bit pattern is a valid `T`.
    Some(unsafe { ptr::read_volatile(result) })
}

/// Whether every command of `ev` has completed; an error if one failed.
fn completed(ev: &Event, what: impl Fn() -> String) -> Result<bool> {
    let mut all = true;
    for e in &ev.raw {
        let s = e
            .command_execution_status()
            .map_err(|e| Error::cl("clGetEventInfo", e.0, what()))?
            .0;
        if s < 0 {
            return Err(Error::cl("reduce launch", s, what()));
        }
        all &= s == CL_COMPLETE;
    }
    Ok(all)
}

/// One element of host-visible memory (`CL_MEM_ALLOC_HOST_PTR`).
fn host_buffer<U: bytemuck::Pod>(queue: &Queue) -> Result<Buffer<U>> {
    // SAFETY: no host pointer is passed; one element.
    let raw = unsafe {
        ClBuffer::<U>::create(
            queue.context().raw(),
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            1,
            ptr::null_mut(),
        )
    }
    .map_err(|e| {
        Error::cl(
            "clCreateBuffer(ALLOC_HOST_PTR)",
            e.0,
            queue.device().to_string(),
        )
    })?;
    Ok(Buffer::from_raw(raw, 1, queue.context()))
}

/// Maps `buf` for reading (once, never unmapped) and waits (bounded) for the map.
fn map<U: bytemuck::Pod>(queue: &Queue, buf: &Buffer<U>) -> Result<*const U> {
    let what = || format!("map of the reduce mailbox on {}", queue.device());
    let mut p = ptr::null_mut();
    // SAFETY: a non-blocking map of the whole live one-element buffer, no wait list; the
    // pointer is used only after the map's event has completed, and stays valid while the
    // buffer lives.
    let ev = unsafe {
        opencl3::command_queue::enqueue_map_buffer(
            queue.raw().get(),
            buf.as_raw(),
            opencl3::types::CL_NON_BLOCKING,
            CL_MAP_READ,
            0,
            size_of::<U>(),
            &mut p,
            0,
            ptr::null(),
        )
    }
    .map_err(|e| Error::cl("clEnqueueMapBuffer", e, what()))?;
    wait::event(&opencl3::event::Event::new(ev), what)?;
    Ok(p.cast_const().cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_parses() {
        assert_eq!(parse_mode(None), Mode::Auto);
        assert_eq!(parse_mode(Some(" auto")), Mode::Auto);
        assert_eq!(parse_mode(Some("flag")), Mode::Flag);
        assert_eq!(parse_mode(Some("read")), Mode::Read);
        assert_eq!(parse_mode(Some("yes")), Mode::Auto);
    }
}
