//! Bytes moved between two devices through pinned host memory ([`Relay`]).

use super::{ClResult, Owned};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::error_codes::ClError;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::memory::{Buffer as ClBuffer, CL_MAP_READ, CL_MAP_WRITE};
use opencl3::types::{cl_event, cl_mem, CL_NON_BLOCKING};

/// Pinned host memory (a `CL_MEM_ALLOC_HOST_PTR` buffer mapped once) through which
/// [`Relay::relay`] moves bytes from one device's buffer to another's: a non-blocking read on
/// the sender's queue, then a non-blocking write on the receiver's that waits for it. Both are
/// plain transfers to and from pinned memory, so the host goes on at once; NVIDIA's driver
/// runs a copy between buffers of two GPUs on the host instead, returning only when it is done
/// (about 280 us a halo on two H200s, docs/scaling.md). Each read also waits for the last
/// write out of the memory, so a relay is never overwritten before it is read. Dropped while
/// a transfer may still be pending, the memory is leaked rather than freed under the device.
pub struct Relay {
    mem: Option<ClBuffer<u8>>,
    ptr: *mut u8,
    len: usize,
    /// The last command on the memory (a read until its write is enqueued, then the write).
    last: Option<Owned<Event>>,
}

// SAFETY: `ptr` points into the mapped memory of `mem`, which the value owns; the host never
// reads or writes it (only the devices do, ordered by `last`).
unsafe impl Send for Relay {}
// SAFETY: as above; no `&self` method touches the memory.
unsafe impl Sync for Relay {}

impl Relay {
    /// `len` (≥ 1) bytes of pinned memory in `ctx`, mapped through `q` (waited for).
    pub fn new(ctx: &ClContext, q: &CommandQueue, len: usize) -> ClResult<Self> {
        let (mem, ptr, map) =
            super::pinned::map_host_memory::<u8>(ctx, q, len, CL_MAP_READ | CL_MAP_WRITE)?;
        map.wait()?;
        Ok(Relay {
            mem: Some(mem),
            ptr,
            len,
            last: None,
        })
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Enqueues the move of [`Relay::len`] bytes from byte `from` of `src` (on `sender`, after
    /// `waits` and the last write out of the relay) to byte `to` of `dst` (on `receiver`,
    /// after that read); returns the read's and the write's events.
    ///
    /// # Safety
    ///
    /// `src` and `dst` are live buffers of the relay's context holding those byte ranges;
    /// `waits` are events of that context.
    pub unsafe fn relay(
        &mut self,
        (sender, src, from): (&CommandQueue, cl_mem, usize),
        (receiver, dst, to): (&CommandQueue, cl_mem, usize),
        waits: &[cl_event],
    ) -> ClResult<[Owned<Event>; 2]> {
        let waits: Vec<cl_event> = (waits.iter().copied())
            .chain(self.last.as_ref().map(|e| e.get()))
            .collect();
        // SAFETY: the device writes `len` bytes at `ptr` (mapped memory this value owns, not
        // freed while the read may be pending: `last`) after the last write out of it; the
        // caller vouches for `src`, the range and `waits`, which outlives the call.
        let read = unsafe {
            cl3::command_queue::enqueue_read_buffer(
                sender.get(),
                src,
                CL_NON_BLOCKING,
                from,
                self.len,
                self.ptr.cast(),
                waits.len() as u32,
                super::wait_list(&waits),
            )
        }
        .map_err(ClError)?;
        let read = Owned::new(Event::new(read));
        self.last = Some(retained(&read)?);
        let after = [read.get()];
        // SAFETY: the device reads the `len` bytes at `ptr` once the read has written them;
        // the caller vouches for `dst` and the range.
        let write = unsafe {
            cl3::command_queue::enqueue_write_buffer(
                receiver.get(),
                dst,
                CL_NON_BLOCKING,
                to,
                self.len,
                self.ptr.cast_const().cast(),
                1,
                after.as_ptr(),
            )
        }
        .map_err(ClError)?;
        let write = Owned::new(Event::new(write));
        self.last = Some(retained(&write)?);
        Ok([read, write])
    }
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes of pinned host memory", self.len)
    }
}

/// A second reference to `ev`.
pub fn retained(ev: &Event) -> ClResult<Owned<Event>> {
    // SAFETY: `ev` is a live event; the new reference is released by the `Owned` returned.
    unsafe { cl3::event::retain_event(ev.get()) }.map_err(ClError)?;
    Ok(Owned::new(Event::new(ev.get())))
}

impl Drop for Relay {
    fn drop(&mut self) {
        let done = (self.last.as_ref()).is_none_or(|e| {
            e.command_execution_status()
                .is_ok_and(|s| s.0 == CL_COMPLETE)
        });
        if !done {
            // A transfer may still use the mapped memory: never free it.
            std::mem::forget(self.mem.take());
        }
    }
}
