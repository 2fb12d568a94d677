//! Reads into pinned host memory, mapped once and reused ([`Pinned`]), that the reads own
//! until they complete; [`map_host_memory`], which [`super::Relay`] shares.
#![cfg_attr(not(feature = "algorithms"), allow(dead_code))] // `Pinned` is the algorithms'

use super::{ClResult, Owned};
use bytemuck::Pod;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::error_codes::ClError;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::cl_mem;
use std::ptr;

/// Pinned host memory for small results: a `CL_MEM_ALLOC_HOST_PTR` buffer mapped once, so a
/// read into it is a direct transfer (NVIDIA: no staging copy on a driver thread). One command
/// at a time, its event in [`Pinned::pending`]: the map (non-blocking, so that callers wait
/// for it within their bound), then reads: [`Pinned::read`] enqueues one once the last command
/// has completed, [`Pinned::take`] hands the data out once the read has. Dropped while a
/// command may still be pending, the memory is leaked rather than freed under the device.
pub struct Pinned<T: Pod> {
    mem: Option<ClBuffer<T>>,
    ptr: *mut T,
    len: usize,
    pending: Option<Owned<Event>>,
}

// SAFETY: `ptr` points into the mapped memory of `mem`, which the value owns; it is only
// dereferenced through `&mut self`.
unsafe impl<T: Pod> Send for Pinned<T> {}
// SAFETY: no `&self` method touches the memory behind `ptr`.
unsafe impl<T: Pod> Sync for Pinned<T> {}

impl<T: Pod> Pinned<T> {
    /// `len` (≥ 1) elements, mapped through `q`: usable once [`Pinned::pending`] completes.
    pub fn new(ctx: &ClContext, q: &CommandQueue, len: usize) -> ClResult<Self> {
        let (mem, ptr, map) = map_host_memory(ctx, q, len, opencl3::memory::CL_MAP_READ)?;
        Ok(Pinned {
            mem: Some(mem),
            ptr,
            len,
            pending: Some(map),
        })
    }

    /// The event of the last command on the memory (the map, or the last read), if any.
    pub fn pending(&self) -> Option<&Event> {
        self.pending.as_deref()
    }

    /// Enqueues a non-blocking read of the value's `len` elements of `src` from element
    /// `offset` (the caller checked the bounds); returns its event.
    pub fn read(&mut self, q: &CommandQueue, src: cl_mem, offset: usize) -> ClResult<&Event> {
        if let Some(ev) = &self.pending {
            if ev.command_execution_status()?.0 != CL_COMPLETE {
                return Err(ClError(opencl3::error_codes::CL_INVALID_OPERATION));
            }
        }
        // SAFETY: the device writes `len` elements at `ptr` (mapped memory this value owns)
        // until the event completes; nothing reads them before `take` has seen it complete,
        // and the memory is leaked, not freed, if that never happens.
        let ev = unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                q.get(),
                src,
                opencl3::types::CL_NON_BLOCKING,
                offset * size_of::<T>(),
                self.len * size_of::<T>(),
                self.ptr.cast(),
                0,
                ptr::null(),
            )
        }
        .map_err(ClError)?;
        Ok(&**self.pending.insert(Owned::new(Event::new(ev))))
    }

    /// Copies the last read's data into `out` (`len` elements) if it has completed; false
    /// otherwise (the read stays pending).
    pub fn take(&mut self, out: &mut [T]) -> ClResult<bool> {
        let Some(ev) = &self.pending else {
            return Ok(false);
        };
        if ev.command_execution_status()?.0 != CL_COMPLETE {
            return Ok(false);
        }
        self.pending = None;
        // SAFETY: the read has completed, so the device no longer writes the `len` elements
        // at `ptr`; every bit pattern is a valid `T`.
        let data = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        out.copy_from_slice(data);
        Ok(true)
    }
}

/// A `CL_MEM_ALLOC_HOST_PTR` buffer of `len` (≥ 1) elements and its host pointer, mapped once
/// (non-blocking, `map` flags) through `q`: the pointer is usable once the event completes, and
/// stays valid while the buffer lives (it is never unmapped).
pub(super) fn map_host_memory<T: Pod>(
    ctx: &ClContext,
    q: &CommandQueue,
    len: usize,
    map: u64,
) -> ClResult<(ClBuffer<T>, *mut T, Owned<Event>)> {
    use opencl3::memory::CL_MEM_ALLOC_HOST_PTR;
    // SAFETY: no host pointer is passed; `len * size_of::<T>()` is a few bytes.
    let mem = unsafe {
        ClBuffer::<T>::create(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            len,
            ptr::null_mut(),
        )?
    };
    let mut ptr = ptr::null_mut();
    // SAFETY: a map of the whole live buffer, with an empty wait list; callers use the pointer
    // only once the map has completed, and never unmap.
    let ev = unsafe {
        opencl3::command_queue::enqueue_map_buffer(
            q.get(),
            mem.get(),
            opencl3::types::CL_NON_BLOCKING,
            map,
            0,
            len * size_of::<T>(),
            &mut ptr,
            0,
            ptr::null(),
        )
    }
    .map_err(ClError)?;
    Ok((mem, ptr.cast(), Owned::new(Event::new(ev))))
}

impl<T: Pod> Drop for Pinned<T> {
    fn drop(&mut self) {
        if self.pending.is_some() {
            // A read may still write the mapped memory: never free it.
            std::mem::forget(self.mem.take());
        }
    }
}
