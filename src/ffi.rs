//! The only place with `unsafe`: thin, safe wrappers over the opencl3 calls that take raw
//! pointers or handles. Each wrapper states why its call is sound.

use crate::buffer::Scalar;
use crate::device::Device;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::event::CL_COMPLETE;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
use opencl3::types::{cl_event, cl_int, cl_kernel_sub_group_info, cl_mem, CL_BLOCKING};
use std::ffi::c_void;
use std::ptr;

type ClResult<T> = std::result::Result<T, ClError>;

/// An in-order queue with profiling on `device`.
pub fn create_queue(ctx: &ClContext, device: &Device, properties: u64) -> ClResult<CommandQueue> {
    // SAFETY: `device.id()` is a live device id (the `Device` owns it or it is a root device),
    // and `ctx` is a live context that contains it (checked by the caller).
    unsafe { CommandQueue::create_with_properties(ctx, device.id(), properties, 0) }
}

/// An uninitialised device buffer of `len` elements (`len` ≥ 1).
pub fn create_buffer<T: Scalar>(ctx: &ClContext, len: usize) -> ClResult<ClBuffer<T>> {
    // SAFETY: no host pointer is passed, so OpenCL reads no host memory; the size is
    // `len * size_of::<T>()` bytes, computed by opencl3.
    unsafe { ClBuffer::create(ctx, CL_MEM_READ_WRITE, len, ptr::null_mut()) }
}

/// A sub-buffer of `parent` covering elements `[origin, origin + count)`.
pub fn create_sub_buffer<T: Scalar>(
    parent: &ClBuffer<T>,
    origin: usize,
    count: usize,
) -> ClResult<ClBuffer<T>> {
    // SAFETY: opencl3 builds the region struct on its stack for the call; OpenCL checks that
    // the region lies inside `parent` and is aligned, and reports an error otherwise.
    unsafe { parent.create_sub_buffer(CL_MEM_READ_WRITE, origin, count) }
}

/// Blocking write of `data` into `buf` at element `offset`.
pub fn write<T: Scalar>(
    q: &CommandQueue,
    buf: &mut ClBuffer<T>,
    offset: usize,
    data: &[T],
) -> ClResult<Event> {
    // SAFETY: the write is blocking, so `data` is not read after the call returns; the caller
    // checked that `offset + data.len()` fits in `buf`. `T: Scalar` has no padding.
    unsafe { q.enqueue_write_buffer(buf, CL_BLOCKING, offset * size_of::<T>(), data, &[]) }
}

/// Blocking read of `out.len()` elements of `buf` from element `offset`.
pub fn read<T: Scalar>(
    q: &CommandQueue,
    buf: &ClBuffer<T>,
    offset: usize,
    out: &mut [T],
) -> ClResult<Event> {
    // SAFETY: the read is blocking, so `out` is fully written before the call returns and not
    // touched afterwards; the caller checked the bounds. Every bit pattern is a valid `T`.
    unsafe { q.enqueue_read_buffer(buf, CL_BLOCKING, offset * size_of::<T>(), out, &[]) }
}

/// Fills `len` elements of `buf` with `value`.
pub fn fill<T: Scalar>(
    q: &CommandQueue,
    buf: &mut ClBuffer<T>,
    value: T,
    len: usize,
) -> ClResult<Event> {
    // SAFETY: the pattern is copied by OpenCL at enqueue time; `len` is within `buf`.
    unsafe { q.enqueue_fill_buffer(buf, &[value], 0, len * size_of::<T>(), &[]) }
}

/// Copies `bytes` bytes from `src` to `dst`.
pub fn copy<T: Scalar>(
    q: &CommandQueue,
    src: &ClBuffer<T>,
    dst: &mut ClBuffer<T>,
    bytes: usize,
) -> ClResult<Event> {
    // SAFETY: both buffers are live memory objects; OpenCL checks the sizes.
    unsafe { q.enqueue_copy_buffer(src, dst, 0, 0, bytes, &[]) }
}

/// Migrates memory objects to the queue's device.
pub fn migrate(q: &CommandQueue, mems: &[cl_mem]) -> ClResult<Event> {
    // SAFETY: `mems` holds live memory objects for the duration of the call.
    unsafe { q.enqueue_migrate_mem_object(mems.len() as u32, mems.as_ptr(), 0, &[]) }
}

/// A marker that completes when every command enqueued on `q` before it has completed.
pub fn marker(q: &CommandQueue) -> ClResult<Event> {
    // SAFETY: the wait list is empty, so no event handle is read.
    unsafe { q.enqueue_marker_with_wait_list(&[]) }
}

/// What [`on_complete`] calls: once, with the event's final status (`CL_COMPLETE` or an error).
pub type Completion = Box<dyn FnOnce(cl_int) + Send>;

/// Calls `done` once `event` has completed or failed (on a driver thread).
pub fn on_complete(event: &Event, done: Completion) -> ClResult<()> {
    extern "C" fn notify(_event: cl_event, status: cl_int, user: *mut c_void) {
        // SAFETY: `user` is the `Box<Completion>` leaked below, and OpenCL calls a registered
        // callback exactly once, so ownership comes back here exactly once.
        let done = unsafe { Box::from_raw(user.cast::<Completion>()) };
        done(status);
    }
    let user = Box::into_raw(Box::new(done)).cast::<c_void>();
    event
        .set_callback(CL_COMPLETE, notify, user)
        .inspect_err(|_| {
            // SAFETY: registration failed, so OpenCL never calls `notify`: the box is still ours.
            drop(unsafe { Box::from_raw(user.cast::<Completion>()) });
        })
}

/// A kernel argument, already checked against the kernel's signature.
pub enum RawArg<'a> {
    /// A memory object.
    Mem(cl_mem),
    /// A scalar's bytes.
    Bytes(&'a [u8]),
    /// A `__local` buffer of this many bytes.
    Local(usize),
}

/// Sets argument `index` of `kernel`.
pub fn set_arg(kernel: &ClKernel, index: u32, arg: &RawArg<'_>) -> ClResult<()> {
    match arg {
        // SAFETY: a `cl_mem` argument is passed by pointer to the handle, which lives across
        // the call; OpenCL copies it.
        RawArg::Mem(mem) => unsafe { kernel.set_arg(index, mem) },
        // SAFETY: the bytes are a plain scalar whose size the caller checked against the
        // kernel's argument; OpenCL copies them.
        RawArg::Bytes(bytes) => unsafe {
            opencl3::kernel::set_kernel_arg(
                kernel.get(),
                index,
                bytes.len(),
                bytes.as_ptr().cast::<c_void>(),
            )
            .map_err(ClError)
        },
        // SAFETY: a local-memory argument passes only a size and a null pointer.
        RawArg::Local(bytes) => unsafe { kernel.set_arg_local_buffer(index, *bytes) },
    }
}

/// Enqueues `kernel` over `global` (with `offset`, and `local` or NULL).
pub fn enqueue_kernel(
    q: &CommandQueue,
    kernel: &ClKernel,
    offset: Option<&[usize]>,
    global: &[usize],
    local: Option<&[usize]>,
    wait: &[cl_event],
) -> ClResult<Event> {
    debug_assert!(offset.is_none_or(|o| o.len() == global.len()));
    debug_assert!(local.is_none_or(|l| l.len() == global.len()));
    // SAFETY: every argument of `kernel` was set (the launch checks the count first); the
    // offset/global/local arrays have `global.len()` elements and outlive the call; buffers
    // bound as arguments are kept alive by the launch until the event completes.
    unsafe {
        q.enqueue_nd_range_kernel(
            kernel.get(),
            global.len() as u32,
            offset.map_or(ptr::null(), <[usize]>::as_ptr),
            global.as_ptr(),
            local.map_or(ptr::null(), <[usize]>::as_ptr),
            wait,
        )
    }
}

/// `clGetKernelSubGroupInfo` with a `size_t[]` input and a `size_t` or `size_t[]` output.
pub fn kernel_sub_group_info(
    kernel: &ClKernel,
    device: &Device,
    param: cl_kernel_sub_group_info,
    input: &[usize],
) -> ClResult<Vec<usize>> {
    let info = opencl3::kernel::get_kernel_sub_group_info(
        kernel.get(),
        device.id(),
        param,
        std::mem::size_of_val(input),
        input.as_ptr().cast::<c_void>(),
    )
    .map_err(ClError)?;
    Ok(match info {
        cl3::info_type::InfoType::Size(s) => vec![s],
        cl3::info_type::InfoType::VecSize(v) => v,
        cl3::info_type::InfoType::VecUchar(b) => b
            .chunks_exact(size_of::<usize>())
            .map(|c| usize::from_ne_bytes(c.try_into().expect("full chunk")))
            .collect(),
        other => vec![usize::from(other)],
    })
}
