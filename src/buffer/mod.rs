//! [`Buffer`]: a typed device buffer of any [`Pod`] element type: numbers, OpenCL vectors
//! (`[f32; 4]` for `float4`), `#[repr(C)]` structs, `half::f16`.

use crate::checked as guard;
use crate::error::{Error, InputFault, Result};
use crate::event::Event;
use crate::ffi;
use crate::queue::{Context, InContext, Queue};
use opencl3::memory::{Buffer as ClBuffer, ClMem};
use opencl3::types::cl_mem;
use std::fmt;

mod element;
mod pending;

pub use bytemuck::Pod;
pub(crate) use element::builtin;
pub use element::ElemType;
pub use pending::{HostData, PendingRead};

mod sealed {
    pub trait Sealed {}
}

/// OpenCL C's built-in scalar types, each with its OpenCL C name: what the algorithms and
/// [`ColoredBuffer`](crate::ColoredBuffer) hold. [`Buffer`]s and kernel values take any [`Pod`].
///
/// ```
/// use clgroups::buffer::Scalar;
/// assert_eq!(<f32 as Scalar>::CL_NAME, "float");
/// assert_eq!(<u64 as Scalar>::CL_NAME, "ulong");
/// assert_eq!(<half::f16 as Scalar>::CL_NAME, "half");
/// ```
pub trait Scalar: sealed::Sealed + Pod + Default + Send + Sync + fmt::Debug {
    /// The OpenCL C name of the type (`int`, `float`, ...).
    const CL_NAME: &'static str;
}

macro_rules! scalar {
    ($($t:ty => $name:literal),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const CL_NAME: &'static str = $name;
        }
    )*};
}

scalar! {
    i8 => "char", u8 => "uchar", i16 => "short", u16 => "ushort",
    i32 => "int", u32 => "uint", i64 => "long", u64 => "ulong",
    half::f16 => "half", f32 => "float", f64 => "double",
}

/// Reads up to this many bytes go through owned memory (a [`PendingRead`]): one round trip
/// instead of a wait and a blocking read.
const STAGED_READ_MAX: usize = 64 << 10;

/// A device buffer of `len` elements of `T`, in one [`Context`]. `Send + Sync` (for `T: Send + Sync`).
///
/// `T` is any [`Pod`] type: a number, an array standing for an OpenCL vector (`[f32; 4]` for
/// `float4`), `half::f16`, or your own `#[repr(C)]` struct deriving `bytemuck::Pod` laid out as
/// the kernel's struct. Launches check element types against the kernel's where its type is
/// built-in, sizes otherwise ([`ElemType`]).
///
/// ```
/// use clgroups::{Buffer, Queue};
/// let q = Queue::new(&clgroups::default_device()?)?;
/// let buf = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(buf.read(&q)?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct Buffer<T: Pod> {
    raw: crate::ffi::Owned<ClBuffer<T>>,
    len: usize,
    /// Elements of the checked-mode guard region after `len` (0 outside checked mode).
    guard: usize,
    /// In checked mode, the whole allocation: a guard of [`guard::FRONT_GUARD_BYTES`], then
    /// `raw` (a sub-buffer of it).
    whole: Option<crate::ffi::Owned<ClBuffer<T>>>,
    context: Context,
}

impl<T: Pod> Buffer<T> {
    /// An uninitialised buffer of `len` (≥ 1) elements in the context of `at`: a [`Queue`]
    /// (the usual form, the same handle as for transfers) or a [`Context`]. In
    /// [checked mode](crate::launch::checked) it has guard regions before and after its elements.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// let queue = Queue::new(&default_device()?)?;
    /// let mut buf = Buffer::<f32>::new(&queue, 1000)?;
    /// buf.fill(&queue, 0.5)?; // the contents are undefined until written
    /// assert_eq!(buf.len(), 1000);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(at: &impl InContext, len: usize) -> Result<Self> {
        let context = at.in_context();
        if len == 0 {
            return Err(Error::input(InputFault::EmptyBuffer { colored: false }));
        }
        guard::single_device()?; // an invalid CLGROUPS_CHECKED is an error here
        let guard = guard::guard_len(len, size_of::<T>());
        let front = match guard {
            0 => 0,
            _ => guard::front_len(size_of::<T>()),
        };
        let total = len
            .checked_add(guard + front)
            .filter(|n| n.checked_mul(size_of::<T>()).is_some())
            .ok_or_else(|| {
                Error::input(InputFault::BufferOverflow {
                    len,
                    elem: ElemType::of::<T>().to_string(),
                })
            })?;
        let raw = match guard {
            0 => ffi::create_buffer::<T>(context.raw(), total),
            _ => ffi::create_buffer_filled::<T>(context.raw(), total, guard::CANARY),
        }
        .map_err(|e| {
            Error::cl(
                "clCreateBuffer",
                e.0,
                format!(
                    "{total} x {} ({} bytes)",
                    ElemType::of::<T>(),
                    total * size_of::<T>()
                ),
            )
        })?;
        let (raw, whole) = match front {
            0 => (raw, None),
            _ => {
                let view = ffi::create_sub_buffer(&raw, front, len + guard).map_err(|e| {
                    Error::cl(
                        "clCreateSubBuffer",
                        e.0,
                        "checked mode: a buffer after its front guard",
                    )
                })?;
                (view, Some(raw))
            }
        };
        Ok(Buffer {
            raw,
            len,
            guard,
            whole,
            context: context.clone(),
        })
    }

    /// A buffer holding a copy of `data` (non-empty), written through `queue`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let buf = Buffer::from_slice(&queue, &[1u8, 2, 3])?;
    /// assert_eq!(buf.read(&queue)?, [1, 2, 3]);
    /// assert!(Buffer::<u8>::from_slice(&queue, &[]).is_err()); // buffers are never empty
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_slice(queue: &Queue, data: &[T]) -> Result<Self> {
        let mut buf = Buffer::new(queue, data.len())?;
        buf.write(queue, data)?;
        Ok(buf)
    }

    /// A buffer of `len` elements on the memory object `raw` (a view of this one's memory, in
    /// its context, without a guard).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    fn view<U: Pod>(&self, raw: crate::ffi::Owned<ClBuffer<U>>, len: usize) -> Buffer<U> {
        Buffer {
            raw,
            len,
            guard: 0,
            whole: None,
            context: self.context.clone(),
        }
    }

    /// A sub-buffer viewing elements `[origin, origin + len)` of `self` (same memory).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn sub_buffer(&self, origin: usize, len: usize) -> Result<Self> {
        // (A sub-buffer of a sub-buffer is not allowed: in checked mode `raw` is one.)
        let raw = match &self.whole {
            Some(whole) => ffi::create_sub_buffer(whole, origin + self.front_len(), len),
            None => ffi::create_sub_buffer(&self.raw, origin, len),
        }
        .map_err(|e| {
            Error::cl(
                "clCreateSubBuffer",
                e.0,
                format!("elements {origin}..{} of {}", origin + len, self.len),
            )
        })?;
        Ok(self.view(raw, len))
    }

    /// Number of elements.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// assert_eq!(Buffer::from_slice(&queue, &[0i64; 5])?.len(), 5);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers have at least one element.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// assert!(!Buffer::from_slice(&queue, &[0i64])?.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The buffer's context.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let a = Buffer::from_slice(&queue, &[1i32])?;
    /// let b = Buffer::<i32>::new(a.context(), 1)?; // same context as `a`
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Writes `data` at the start of the buffer (blocking).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut buf = Buffer::from_slice(&queue, &[0u32; 4])?;
    /// buf.write(&queue, &[1, 2])?;
    /// assert_eq!(buf.read(&queue)?, [1, 2, 0, 0]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn write(&mut self, queue: &Queue, data: &[T]) -> Result<()> {
        self.write_at(queue, 0, data)
    }

    /// Writes `data` starting at element `offset` (blocking).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut buf = Buffer::from_slice(&queue, &[0u32; 4])?;
    /// buf.write_at(&queue, 2, &[7, 8])?;
    /// assert_eq!(buf.read(&queue)?, [0, 0, 7, 8]);
    /// assert!(buf.write_at(&queue, 3, &[1, 2]).is_err()); // past the end: an error, not a write
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn write_at(&mut self, queue: &Queue, offset: usize, data: &[T]) -> Result<()> {
        self.check(queue, offset, data.len(), "write")?;
        if queue.device().identity().remote {
            // Through PoCL-R the transfer itself is bounded too: a server that stops answering
            // gives `Error::Timeout`, not a hang (a copy of `data`, leaked then).
            return self.write_bounded(queue, offset, data);
        }
        // Bounded wait for the commands before the write: only the transfer itself blocks.
        queue.finish()?;
        ffi::write(queue.raw(), &mut self.raw, offset, data)
            .map_err(|e| Error::cl("clEnqueueWriteBuffer", e.0, queue.device().to_string()))?;
        Ok(())
    }

    /// Reads the whole buffer (blocking).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let buf = Buffer::from_slice(&queue, &[1.5f64, 2.5])?;
    /// let v: Vec<f64> = buf.read(&queue)?;
    /// assert_eq!(v, [1.5, 2.5]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn read(&self, queue: &Queue) -> Result<Vec<T>> {
        if self.staged_read(queue, self.len) {
            // The non-blocking read's own destination is the answer: no copy.
            self.check(queue, 0, self.len, "read")?;
            return self.read_pending(queue, 0, self.len)?.wait();
        }
        let mut out = vec![T::zeroed(); self.len];
        self.read_into(queue, 0, &mut out)?;
        Ok(out)
    }

    /// Whether a read of `len` elements is a non-blocking read into owned memory and one
    /// bounded wait: small reads (one round trip), and every read through PoCL-R (a server that
    /// stops answering gives `Error::Timeout`, not a hang; the memory is leaked then).
    fn staged_read(&self, queue: &Queue, len: usize) -> bool {
        len * size_of::<T>() <= STAGED_READ_MAX || queue.device().identity().remote
    }

    /// Reads `out.len()` elements starting at element `offset` (blocking).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let buf = Buffer::from_slice(&queue, &[1, 2, 3, 4, 5])?;
    /// let mut out = [0; 2];
    /// buf.read_into(&queue, 3, &mut out)?;
    /// assert_eq!(out, [4, 5]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn read_into(&self, queue: &Queue, offset: usize, out: &mut [T]) -> Result<()> {
        self.check(queue, offset, out.len(), "read")?;
        if self.staged_read(queue, out.len()) {
            // A non-blocking read into owned memory, one bounded wait, then a copy.
            let data = self.read_pending(queue, offset, out.len())?.wait()?;
            out.copy_from_slice(&data);
            return Ok(());
        }
        // Bounded wait for the commands before the read: only the transfer itself blocks.
        queue.finish()?;
        ffi::read(queue.raw(), &self.raw, offset, out)
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0, queue.device().to_string()))?;
        Ok(())
    }

    /// Sets every element to `value` and waits.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let mut buf = Buffer::<i16>::new(&queue, 3)?;
    /// buf.fill(&queue, -1)?;
    /// assert_eq!(buf.read(&queue)?, [-1, -1, -1]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn fill(&mut self, queue: &Queue, value: T) -> Result<()> {
        self.check(queue, 0, self.len, "fill")?;
        if !pending::fill_pattern::<T>() {
            return self.write(queue, &vec![value; self.len]);
        }
        let ev = ffi::fill(queue.raw(), &mut self.raw, value, self.len)
            .map_err(|e| Error::cl("clEnqueueFillBuffer", e.0, queue.device().to_string()))?;
        crate::wait::event(&ev, || {
            format!("fill of {} elements on {}", self.len, queue.device())
        })
    }

    /// Copies all of `self` into `dst` (same length) on `queue`; returns the profiled event.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let src = Buffer::from_slice(&queue, &[1u32, 2, 3])?;
    /// let mut dst = Buffer::<u32>::new(&queue, 3)?;
    /// src.copy_to(&queue, &mut dst)?.wait()?;
    /// assert_eq!(dst.read(&queue)?, [1, 2, 3]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn copy_to(&self, queue: &Queue, dst: &mut Buffer<T>) -> Result<Event> {
        if dst.len != self.len {
            return Err(Error::input(InputFault::CopyLengths {
                from: self.len,
                to: dst.len,
            }));
        }
        self.check(queue, 0, self.len, "copy")?;
        let ev = ffi::copy(
            queue.raw(),
            &self.raw,
            &mut dst.raw,
            self.len * size_of::<T>(),
        )
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0, queue.device().to_string()))?;
        Ok(Event::new(ev, queue.device().clone(), None))
    }

    /// Elements of the checked-mode guard region after the buffer's own.
    pub(crate) fn guard_len(&self) -> usize {
        self.guard
    }

    /// Elements of the checked-mode guard region before the buffer's own (0 without one).
    pub(crate) fn front_len(&self) -> usize {
        match self.whole {
            Some(_) => guard::front_len(size_of::<T>()),
            None => 0,
        }
    }

    /// The whole allocation in checked mode (front guard, elements, guard).
    pub(crate) fn whole_raw(&self) -> Option<cl_mem> {
        self.whole.as_ref().map(|w| w.get())
    }

    /// The raw memory object (valid while `self` lives).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let buf = Buffer::from_slice(&queue, &[1u32])?;
    /// let mem: opencl3::types::cl_mem = buf.as_raw(); // for calls clgroups does not wrap
    /// assert!(!mem.is_null());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn as_raw(&self) -> cl_mem {
        self.raw.get()
    }

    fn check(&self, queue: &Queue, offset: usize, n: usize, what: &'static str) -> Result<()> {
        if queue.context().key() != self.context.key() {
            return Err(Error::input(InputFault::QueueContext {
                what,
                device: queue.device().to_string(),
            }));
        }
        if offset.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(Error::input(InputFault::Exceeds {
                what,
                n,
                offset,
                len: self.len,
            }));
        }
        Ok(())
    }
}

impl Buffer<u8> {
    /// A typed sub-buffer of this byte buffer: `len` elements of `U` from byte `origin` (which
    /// OpenCL wants aligned to the devices' base address alignment).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn sub_buffer_as<U: Pod>(&self, origin: usize, len: usize) -> Result<Buffer<U>> {
        let raw = match &self.whole {
            Some(whole) => ffi::create_sub_buffer_as::<U>(whole, origin + self.front_len(), len),
            None => ffi::create_sub_buffer_as::<U>(&self.raw, origin, len),
        }
        .map_err(|e| {
            Error::cl(
                "clCreateSubBuffer",
                e.0,
                format!("{len} elements from byte {origin} of {}", self.len),
            )
        })?;
        Ok(self.view(raw, len))
    }

    /// This byte buffer's first `len` elements of `U` (at most its bytes), the same memory
    /// object under a second reference: a sub-buffer's creation and release cost a launch on
    /// one GPU more than the launch.
    #[cfg(all(feature = "scaling", feature = "algorithms"))]
    pub(crate) fn view_as<U: Pod>(&self, len: usize) -> Result<Buffer<U>> {
        if len * size_of::<U>() > self.len {
            return self.sub_buffer_as(0, len);
        }
        let raw = ffi::retained_as::<U>(&self.raw).map_err(|e| {
            Error::cl(
                "clRetainMemObject",
                e.0,
                format!("{len} elements of {}", self.len),
            )
        })?;
        Ok(self.view(raw, len))
    }
}

impl<T: Pod> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer<{}>[{}]", ElemType::of::<T>(), self.len)
    }
}
