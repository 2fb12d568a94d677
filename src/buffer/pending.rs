//! Non-blocking transfers: [`Buffer::enqueue_write`] owns its host data until the write has
//! completed, [`Buffer::enqueue_read`] returns a [`PendingRead`] that owns the destination, and
//! [`Buffer::enqueue_fill`] needs no host memory after it is enqueued.

use super::{Buffer, ElemType, Pod};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;
use crate::queue::Queue;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// Host data a non-blocking write takes over: a `Vec<T>`, `Box<[T]>` or `Arc<[T]>`. Sealed,
/// so that the memory the device reads is owned and cannot change or go away while it does.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let mut x = Buffer::<u32>::new(&queue, 3)?;
/// let shared: std::sync::Arc<[u32]> = vec![1, 2, 3].into();
/// x.enqueue_write(&queue, shared.clone())?; // the write holds a reference until it is done
/// assert_eq!(x.read(&queue)?, *shared);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub trait HostData<T>: sealed::Sealed + Send + Sync + 'static {
    /// The elements.
    ///
    /// ```
    /// use clgroups::buffer::HostData;
    /// assert_eq!(vec![1u8, 2].elements(), [1, 2]);
    /// ```
    fn elements(&self) -> &[T];
}

impl<T: Pod + Send + Sync> sealed::Sealed for Vec<T> {}
impl<T: Pod + Send + Sync> sealed::Sealed for Box<[T]> {}
impl<T: Pod + Send + Sync> sealed::Sealed for Arc<[T]> {}

impl<T: Pod + Send + Sync> HostData<T> for Vec<T> {
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T: Pod + Send + Sync> HostData<T> for Box<[T]> {
    fn elements(&self) -> &[T] {
        self
    }
}

impl<T: Pod + Send + Sync> HostData<T> for Arc<[T]> {
    fn elements(&self) -> &[T] {
        self
    }
}

/// The non-blocking forms need `Send + Sync` elements (every number, array and plain struct):
/// the memory they own is released on a driver thread.
impl<T: Pod + Send + Sync> Buffer<T> {
    /// Enqueues a write of `data` at the start of the buffer and returns at once. The command
    /// owns `data` until it has completed (then drops it, even if the returned [`Event`] was
    /// dropped first), so the host memory outlives the write without blocking. Later commands
    /// on `queue` run after it; commands of other queues must wait for it
    /// ([`Launch::wait_for`](crate::launch::Launch::wait_for), [`Event::wait`]), or they may see
    /// the buffer's old contents or part of the new.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut x = Buffer::<f32>::new(&queue, 1 << 20)?;
    /// let written = x.enqueue_write(&queue, vec![0.5f32; 1 << 20])?; // returns at once
    /// // ... more work for the host or the queue ...
    /// written.wait()?;
    /// assert_eq!(x.read(&queue)?[12345], 0.5);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn enqueue_write(&mut self, queue: &Queue, data: impl HostData<T>) -> Result<Event> {
        self.enqueue_write_at(queue, 0, data)
    }

    /// [`enqueue_write`](Buffer::enqueue_write) starting at element `offset`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut x = Buffer::from_slice(&queue, &[0u8; 4])?;
    /// x.enqueue_write_at(&queue, 2, vec![7, 8])?;
    /// assert_eq!(x.read(&queue)?, [0, 0, 7, 8]); // in order after the write
    /// assert!(x.enqueue_write_at(&queue, 3, vec![1, 2]).is_err()); // past the end: nothing enqueued
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn enqueue_write_at(
        &mut self,
        queue: &Queue,
        offset: usize,
        data: impl HostData<T>,
    ) -> Result<Event> {
        let len = data.elements().len();
        self.check(queue, offset, len, "write")?;
        if len == 0 {
            // Nothing to write (OpenCL refuses empty writes): an event for "after the commands
            // enqueued so far", as the write's would be.
            let raw = ffi::marker(queue.raw()).map_err(|e| {
                Error::cl(
                    "clEnqueueMarkerWithWaitList",
                    e.0,
                    queue.device().to_string(),
                )
            })?;
            return Ok(Event::new(raw, queue.device().clone(), None));
        }
        let data = Arc::new(data);
        let ptr = data.elements().as_ptr();
        // SAFETY: `data` is owned here and its elements never change (sealed `HostData`
        // types give out no mutable access); the completion callback below (or, where it cannot
        // be registered, the bounded wait) keeps it alive until the command has completed.
        let raw = unsafe { ffi::write_async(queue.raw(), &mut self.raw, offset, ptr, len) }
            .map_err(|e| Error::cl("clEnqueueWriteBuffer", e.0, queue.device().to_string()))?;
        let keep = Arc::clone(&data);
        if let Err(e) = ffi::on_complete(&raw, Box::new(move |_| drop(keep))) {
            let what = || format!("write of {len} elements on {}", queue.device());
            if crate::wait::event(&raw, what).is_err() {
                // Still in flight, or in an unknown state: the memory must stay valid.
                std::mem::forget(data);
            }
            return Err(Error::cl(
                "clSetEventCallback",
                e.0,
                queue.device().to_string(),
            ));
        }
        Ok(Event::new(
            crate::ffi::Owned::new(raw),
            queue.device().clone(),
            None,
        ))
    }

    /// Enqueues setting every element to `value` and returns at once (the blocking form is
    /// [`fill`](Buffer::fill)); OpenCL copies `value` when it enqueues.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut x = Buffer::<[u16; 2]>::new(&queue, 100)?;
    /// let filled = x.enqueue_fill(&queue, [1, 2])?;
    /// assert_eq!(x.enqueue_read(&queue)?.wait()?, [[1, 2]; 100]); // in order after the fill
    /// filled.wait()?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn enqueue_fill(&mut self, queue: &Queue, value: T) -> Result<Event> {
        self.check(queue, 0, self.len, "fill")?;
        if !fill_pattern::<T>() {
            return self.enqueue_write(queue, vec![value; self.len]);
        }
        let raw = ffi::fill(queue.raw(), &mut self.raw, value, self.len)
            .map_err(|e| Error::cl("clEnqueueFillBuffer", e.0, queue.device().to_string()))?;
        Ok(Event::new(raw, queue.device().clone(), None))
    }

    /// Enqueues a read of the whole buffer and returns at once: [`PendingRead::wait`] gives
    /// the elements. Commands enqueued before it on `queue` finish first (in order).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let x = Buffer::from_slice(&queue, &[1i32, 2, 3])?;
    /// let pending = x.enqueue_read(&queue)?;
    /// // ... the host works meanwhile ...
    /// assert_eq!(pending.wait()?, [1, 2, 3]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn enqueue_read(&self, queue: &Queue) -> Result<PendingRead<T>> {
        self.check(queue, 0, self.len, "read")?;
        self.read_pending(queue, 0, self.len)
    }
}

impl<T: Pod> Buffer<T> {
    /// Writes a copy of `data` at element `offset` (the caller checked the bounds) and waits
    /// for it at most [`crate::config::timeout`]: a blocking write waits without bound, and
    /// through PoCL-R on a server that stopped answering that is forever. The copy is freed once
    /// the write has completed, and leaked if the wait fails (the device may still read it).
    pub(crate) fn write_bounded(&mut self, queue: &Queue, offset: usize, data: &[T]) -> Result<()> {
        let copy = NonNull::from(Box::leak(data.to_vec().into_boxed_slice()));
        let len = data.len();
        // SAFETY: `copy` holds `len` initialised elements that nothing else references; it is
        // freed below only after the write has completed, and leaked otherwise.
        let raw = unsafe {
            ffi::write_async(
                queue.raw(),
                &mut self.raw,
                offset,
                copy.as_ptr().cast(),
                len,
            )
        };
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                // SAFETY: nothing was enqueued, so `copy` (from `Box::leak`) is ours again.
                drop(unsafe { Box::from_raw(copy.as_ptr()) });
                let device = queue.device().to_string();
                return Err(Error::cl("clEnqueueWriteBuffer", e.0, device));
            }
        };
        let what = || format!("write of {len} elements on {}", queue.device());
        crate::wait::event(&raw, what)?;
        // SAFETY: the write has completed, so the device no longer reads `copy`, which came
        // from `Box::leak` and is referenced nowhere else.
        drop(unsafe { Box::from_raw(copy.as_ptr()) });
        Ok(())
    }

    /// Enqueues a read of `len` elements from element `offset` (the caller checked the bounds)
    /// into memory the returned [`PendingRead`] owns.
    pub(crate) fn read_pending(
        &self,
        queue: &Queue,
        offset: usize,
        len: usize,
    ) -> Result<PendingRead<T>> {
        let out = NonNull::from(Box::leak(vec![T::zeroed(); len].into_boxed_slice()));
        // SAFETY: `out` is `len` elements that only the returned `PendingRead` owns, and it
        // touches them only after the command has completed (or leaks them).
        let raw = unsafe {
            ffi::read_async(
                queue.raw(),
                &self.raw,
                offset,
                out.as_ptr().cast::<T>(),
                len,
            )
        };
        let raw = match raw {
            Ok(raw) => raw,
            Err(e) => {
                // SAFETY: nothing was enqueued, so the allocation is ours again.
                drop(unsafe { Box::from_raw(out.as_ptr()) });
                return Err(Error::cl(
                    "clEnqueueReadBuffer",
                    e.0,
                    queue.device().to_string(),
                ));
            }
        };
        Ok(PendingRead {
            out: Some(out),
            event: Event::new(crate::ffi::Owned::new(raw), queue.device().clone(), None),
        })
    }
}

/// Whether OpenCL can fill with a `T` pattern: `clEnqueueFillBuffer` takes patterns of 1, 2, 4,
/// ..., 128 bytes only (others, such as a 12-byte `[f32; 3]`, are written from the host).
pub(super) fn fill_pattern<T>() -> bool {
    size_of::<T>().is_power_of_two() && size_of::<T>() <= 128
}

/// A read in flight ([`Buffer::enqueue_read`]): it owns the host memory the device writes.
/// [`wait`](PendingRead::wait) gives the elements; dropping it waits too (at most
/// [`crate::config::timeout`]), and never panics: memory the device may still write is leaked
/// rather than freed.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::with_profiling(&default_device()?)?;
/// let x = Buffer::from_slice(&queue, &[[1.0f32, 2.0]; 8])?;
/// let pending: clgroups::buffer::PendingRead<[f32; 2]> = x.enqueue_read(&queue)?;
/// println!("read of {} bytes: {:?}", 8 * 8, pending.event().duration()?);
/// assert_eq!(pending.wait()?[7], [1.0, 2.0]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct PendingRead<T: Pod> {
    /// The destination, from `Box::leak`; `None` once taken back or leaked.
    out: Option<NonNull<[T]>>,
    event: Event,
}

// SAFETY: `out` is uniquely owned (like a `Box<[T]>`), so the value may move between threads
// when `T` may.
unsafe impl<T: Pod + Send> Send for PendingRead<T> {}

impl<T: Pod> PendingRead<T> {
    /// Waits for the read (at most [`crate::config::timeout`]) and returns the elements.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let x = Buffer::from_slice(&queue, &[9u64; 4])?;
    /// let v: Vec<u64> = x.enqueue_read(&queue)?.wait()?;
    /// assert_eq!(v, [9; 4]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn wait(mut self) -> Result<Vec<T>> {
        self.take()
            .expect("the destination is taken only by wait or drop, once")
    }

    /// The read's event (profiling times; [`Launch::wait_for`](crate::launch::Launch::wait_for)).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let pending = Buffer::from_slice(&queue, &[1u8; 64])?.enqueue_read(&queue)?;
    /// pending.event().wait()?;
    /// assert_eq!(pending.wait()?.len(), 64);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Waits for the read and takes the destination back (`None` if already taken). If the
    /// wait fails, the memory is leaked: nothing may free what the device may still write.
    fn take(&mut self) -> Option<Result<Vec<T>>> {
        let out = self.out.take()?;
        Some(match self.event.wait() {
            // SAFETY: the read has completed, so the device no longer writes `out`, which came
            // from `Box::leak` and was owned by `self` alone.
            Ok(()) => Ok(unsafe { Box::from_raw(out.as_ptr()) }.into_vec()),
            Err(e) => {
                log::warn!(
                    "a read of {} elements did not finish ({e}); its {} bytes are leaked",
                    out.len(),
                    out.len() * size_of::<T>()
                );
                Err(e)
            }
        })
    }
}

impl<T: Pod> Drop for PendingRead<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<T: Pod> fmt::Debug for PendingRead<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.out.map_or(0, |o| o.len());
        write!(f, "PendingRead<{}>[{len}]", ElemType::of::<T>())
    }
}
