//! [`Buffer`]: a typed device buffer of plain numbers.

use crate::error::{Error, Result};
use crate::ffi;
use crate::queue::{Context, Queue};
use opencl3::memory::{Buffer as ClBuffer, ClMem};
use opencl3::types::cl_mem;
use std::fmt;

mod sealed {
    pub trait Sealed {}
}

/// Element types a [`Buffer`] or a scalar kernel argument may hold: plain numbers, for which
/// every bit pattern is valid. `CL_NAME` is the OpenCL C type name.
pub trait Scalar: sealed::Sealed + Copy + Default + Send + Sync + fmt::Debug + 'static {
    /// The OpenCL C name of the type (`int`, `float`, ...).
    const CL_NAME: &'static str;
    /// The value's bytes, native order.
    fn to_bytes(self) -> Vec<u8>;
}

macro_rules! scalar {
    ($($t:ty => $name:literal),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const CL_NAME: &'static str = $name;
            fn to_bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}

scalar! {
    i8 => "char", u8 => "uchar", i16 => "short", u16 => "ushort",
    i32 => "int", u32 => "uint", i64 => "long", u64 => "ulong",
    f32 => "float", f64 => "double",
}

/// A device buffer of `len` elements of `T`, in one [`Context`]. `Send + Sync`.
///
/// ```no_run
/// use clgroups::{Buffer, Queue};
/// let q = Queue::new(&clgroups::default_device()?)?;
/// let buf = Buffer::from_slice(&q, &[1.0f32, 2.0, 3.0])?;
/// assert_eq!(buf.read(&q)?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct Buffer<T: Scalar> {
    raw: ClBuffer<T>,
    len: usize,
    context: Context,
}

impl<T: Scalar> Buffer<T> {
    /// An uninitialised buffer of `len` (≥ 1) elements.
    pub fn new(context: &Context, len: usize) -> Result<Self> {
        if len == 0 {
            return Err(Error::input("a buffer needs at least one element"));
        }
        let raw = ffi::create_buffer::<T>(context.raw(), len).map_err(|e| {
            Error::cl(
                "clCreateBuffer",
                e.0,
                format!("{len} x {} ({} bytes)", T::CL_NAME, len * size_of::<T>()),
            )
        })?;
        Ok(Buffer {
            raw,
            len,
            context: context.clone(),
        })
    }

    /// A buffer holding a copy of `data` (non-empty), written through `queue`.
    pub fn from_slice(queue: &Queue, data: &[T]) -> Result<Self> {
        let mut buf = Buffer::new(queue.context(), data.len())?;
        buf.write(queue, data)?;
        Ok(buf)
    }

    /// A sub-buffer viewing elements `[origin, origin + len)` of `self` (same memory).
    pub(crate) fn sub_buffer(&self, origin: usize, len: usize) -> Result<Self> {
        let raw = ffi::create_sub_buffer(&self.raw, origin, len).map_err(|e| {
            Error::cl(
                "clCreateSubBuffer",
                e.0,
                format!("elements {origin}..{} of {}", origin + len, self.len),
            )
        })?;
        Ok(Buffer {
            raw,
            len,
            context: self.context.clone(),
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers have at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The buffer's context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Writes `data` at the start of the buffer (blocking).
    pub fn write(&mut self, queue: &Queue, data: &[T]) -> Result<()> {
        self.write_at(queue, 0, data)
    }

    /// Writes `data` starting at element `offset` (blocking).
    pub fn write_at(&mut self, queue: &Queue, offset: usize, data: &[T]) -> Result<()> {
        self.check(queue, offset, data.len(), "write")?;
        // Bounded wait for the commands before the write: only the transfer itself blocks.
        queue.finish()?;
        ffi::write(queue.raw(), &mut self.raw, offset, data)
            .map_err(|e| Error::cl("clEnqueueWriteBuffer", e.0, queue.device().to_string()))?;
        Ok(())
    }

    /// Reads the whole buffer (blocking).
    pub fn read(&self, queue: &Queue) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len];
        self.read_into(queue, 0, &mut out)?;
        Ok(out)
    }

    /// Reads `out.len()` elements starting at element `offset` (blocking).
    pub fn read_into(&self, queue: &Queue, offset: usize, out: &mut [T]) -> Result<()> {
        self.check(queue, offset, out.len(), "read")?;
        // Bounded wait for the commands before the read: only the transfer itself blocks.
        queue.finish()?;
        ffi::read(queue.raw(), &self.raw, offset, out)
            .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0, queue.device().to_string()))?;
        Ok(())
    }

    /// Sets every element to `value` and waits.
    pub fn fill(&mut self, queue: &Queue, value: T) -> Result<()> {
        self.check(queue, 0, self.len, "fill")?;
        let ev = ffi::fill(queue.raw(), &mut self.raw, value, self.len)
            .map_err(|e| Error::cl("clEnqueueFillBuffer", e.0, queue.device().to_string()))?;
        crate::wait::event(&ev, || {
            format!("fill of {} elements on {}", self.len, queue.device())
        })
    }

    /// Copies all of `self` into `dst` (same length) on `queue`; returns the profiled event.
    pub fn copy_to(&self, queue: &Queue, dst: &mut Buffer<T>) -> Result<crate::launch::Event> {
        if dst.len != self.len {
            return Err(Error::input(format!(
                "copy between buffers of {} and {} elements",
                self.len, dst.len
            )));
        }
        self.check(queue, 0, self.len, "copy")?;
        let ev = ffi::copy(
            queue.raw(),
            &self.raw,
            &mut dst.raw,
            self.len * size_of::<T>(),
        )
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0, queue.device().to_string()))?;
        Ok(crate::launch::Event::new(ev, queue.device().clone(), None))
    }

    /// The raw memory object (valid while `self` lives).
    pub fn as_raw(&self) -> cl_mem {
        self.raw.get()
    }

    fn check(&self, queue: &Queue, offset: usize, n: usize, what: &str) -> Result<()> {
        if queue.context().key() != self.context.key() {
            return Err(Error::input(format!(
                "{what}: the queue on {} belongs to another context than the buffer",
                queue.device()
            )));
        }
        if offset.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(Error::input(format!(
                "{what} of {n} elements at offset {offset} exceeds the buffer's {} elements",
                self.len
            )));
        }
        Ok(())
    }
}

impl<T: Scalar> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer<{}>[{}]", T::CL_NAME, self.len)
    }
}
