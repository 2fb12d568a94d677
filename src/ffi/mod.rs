//! The only place that calls OpenCL's `unsafe` entry points: thin wrappers over the opencl3
//! calls that take raw pointers or handles. Each safe wrapper states why its call is sound;
//! [`enqueue_kernel`] cannot be made safe (the kernel is user code) and stays `unsafe`.
//!
//! The bottom of the crate: it knows only opencl3's types and [`bytemuck::Pod`], never clgroups' own
//! (callers convert).

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::Device;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::event::CL_COMPLETE;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::types::{
    cl_command_queue, cl_device_id, cl_event, cl_int, cl_kernel_sub_group_info, cl_mem,
    CL_BLOCKING, CL_NON_BLOCKING,
};
// Element types: no padding, every bit pattern valid, no pointers.
use bytemuck::Pod;
use std::ffi::c_void;
use std::ptr;

#[cfg(feature = "algorithms")]
mod mailbox;
mod owned;
#[cfg(any(feature = "algorithms", feature = "scaling"))]
mod pinned;
#[cfg(feature = "scaling")]
mod relay;

#[cfg(feature = "algorithms")]
pub use mailbox::Mailbox;
pub use owned::{ClProgram, Owned};
#[cfg(feature = "algorithms")]
pub use pinned::Pinned;
#[cfg(feature = "scaling")]
pub use relay::{retained, Relay};

type ClResult<T> = std::result::Result<T, ClError>;

/// An in-order queue with profiling on `device`.
pub fn create_queue(
    ctx: &ClContext,
    device: &Device,
    properties: u64,
) -> ClResult<Owned<CommandQueue>> {
    // SAFETY: `device.id()` is a live device id (the caller's device owns it or it is a root
    // device), and `ctx` is a live context that contains it (checked by the caller).
    unsafe { CommandQueue::create_with_properties(ctx, device.id(), properties, 0) }.map(Owned::new)
}

/// An uninitialised device buffer of `len` elements (`len` ≥ 1, `len * size_of::<T>()`
/// without overflow).
pub fn create_buffer<T: Pod>(ctx: &ClContext, len: usize) -> ClResult<Owned<ClBuffer<T>>> {
    // SAFETY: no host pointer is passed, so OpenCL reads no host memory; opencl3 computes the
    // size as `len * size_of::<T>()` bytes, which the caller checked does not overflow.
    unsafe { ClBuffer::create(ctx, CL_MEM_READ_WRITE, len, ptr::null_mut()) }.map(Owned::new)
}

/// A device buffer of `len` elements (`len` ≥ 1, `len * size_of::<T>()` without overflow)
/// whose every byte starts as `byte` (checked mode's canary).
pub fn create_buffer_filled<T: Pod>(
    ctx: &ClContext,
    len: usize,
    byte: u8,
) -> ClResult<Owned<ClBuffer<T>>> {
    let init = vec![byte; len * size_of::<T>()];
    // SAFETY: with CL_MEM_COPY_HOST_PTR OpenCL copies `len * size_of::<T>()` bytes from the
    // host pointer during the call, and `init` holds exactly that many; it is not used after.
    unsafe {
        ClBuffer::create(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
            len,
            init.as_ptr().cast_mut().cast::<c_void>(),
        )
    }
    .map(Owned::new)
}

/// A sub-buffer of `parent` covering elements `[origin, origin + count)`.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
pub fn create_sub_buffer<T: Pod>(
    parent: &ClBuffer<T>,
    origin: usize,
    count: usize,
) -> ClResult<Owned<ClBuffer<T>>> {
    // SAFETY: opencl3 builds the region struct on its stack for the call; OpenCL checks that
    // the region lies inside `parent` and is aligned, and reports an error otherwise.
    unsafe { parent.create_sub_buffer(CL_MEM_READ_WRITE, origin, count) }.map(Owned::new)
}

/// A sub-buffer of the byte buffer `parent` from byte `origin`, holding `count` elements of
/// `U` (the typed view of a device's part inside a larger allocation).
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
pub fn create_sub_buffer_as<U: Pod>(
    parent: &ClBuffer<u8>,
    origin: usize,
    count: usize,
) -> ClResult<Owned<ClBuffer<U>>> {
    let bytes = count * size_of::<U>();
    // SAFETY: as in `create_sub_buffer`; OpenCL checks the region and its alignment.
    let sub = unsafe { parent.create_sub_buffer(CL_MEM_READ_WRITE, origin, bytes) }?;
    // The handle moves to the typed wrapper, which releases it once; the untyped one never does.
    let sub = std::mem::ManuallyDrop::new(sub);
    Ok(Owned::new(ClBuffer::new(sub.get())))
}

/// `parent`'s memory seen as elements of `U` (a second reference to the same memory object:
/// no sub-buffer to create).
#[cfg(all(feature = "scaling", feature = "algorithms"))]
pub fn retained_as<U: Pod>(parent: &ClBuffer<u8>) -> ClResult<Owned<ClBuffer<U>>> {
    // SAFETY: `parent` is a live memory object; the new reference is released once, by the
    // typed wrapper returned.
    unsafe { cl3::memory::retain_mem_object(parent.get()) }.map_err(ClError)?;
    Ok(Owned::new(ClBuffer::new(parent.get())))
}

/// After a blocking transfer, its command's outcome: a blocking call's return code does not
/// carry it (PoCL returns `CL_SUCCESS` from a blocking read whose command failed, its
/// destination unwritten; through PoCL-R, a server that failed the read or was lost).
fn settled(ev: Event) -> ClResult<Owned<Event>> {
    match ev.command_execution_status() {
        Ok(s) if s.0 < 0 => Err(ClError(s.0)),
        Ok(_) => Ok(Owned::new(ev)),
        Err(e) => Err(e),
    }
}

/// Blocking write of `data` into `buf` at element `offset`.
pub fn write<T: Pod>(
    q: &CommandQueue,
    buf: &mut ClBuffer<T>,
    offset: usize,
    data: &[T],
) -> ClResult<Owned<Event>> {
    // SAFETY: the write is blocking, so `data` is not read after the call returns; the caller
    // checked that `offset + data.len()` fits in `buf`. `T: Pod` has no padding.
    unsafe { q.enqueue_write_buffer(buf, CL_BLOCKING, offset * size_of::<T>(), data, &[]) }
        .and_then(settled)
}

/// Blocking read of `out.len()` elements of `buf` from element `offset`.
pub fn read<T: Pod>(
    q: &CommandQueue,
    buf: &ClBuffer<T>,
    offset: usize,
    out: &mut [T],
) -> ClResult<Owned<Event>> {
    // SAFETY: the read is blocking, so `out` is fully written before the call returns and not
    // touched afterwards; the caller checked the bounds. Every bit pattern is a valid `T`.
    unsafe { q.enqueue_read_buffer(buf, CL_BLOCKING, offset * size_of::<T>(), out, &[]) }
        .and_then(settled)
}

/// Non-blocking write of `len` elements from `data` into `buf` at element `offset`.
///
/// # Safety
///
/// `data` points to `len` initialised elements that stay allocated and unmodified until the
/// returned event has completed; `offset + len` fits in `buf`.
pub unsafe fn write_async<T: Pod>(
    q: &CommandQueue,
    buf: &mut ClBuffer<T>,
    offset: usize,
    data: *const T,
    len: usize,
) -> ClResult<Event> {
    // SAFETY: the caller keeps `data` valid until the command completes and checked the
    // bounds; `T: Pod` has no padding; the event returned is released by `Event`.
    let ev = unsafe {
        cl3::command_queue::enqueue_write_buffer(
            q.get(),
            buf.get(),
            CL_NON_BLOCKING,
            offset * size_of::<T>(),
            len * size_of::<T>(),
            data.cast::<c_void>(),
            0,
            ptr::null(),
        )
    };
    ev.map(Event::new).map_err(ClError)
}

/// Non-blocking read of `len` elements of `buf` from element `offset` into `out`.
///
/// # Safety
///
/// `out` is valid for writes of `len` elements, and nothing reads, writes or frees that memory
/// until the returned event has completed; `offset + len` fits in `buf`.
pub unsafe fn read_async<T: Pod>(
    q: &CommandQueue,
    buf: &ClBuffer<T>,
    offset: usize,
    out: *mut T,
    len: usize,
) -> ClResult<Event> {
    // SAFETY: the caller reserves `out` for the command until it completes and checked the
    // bounds; every bit pattern is a valid `T`; the event returned is released by `Event`.
    let ev = unsafe {
        cl3::command_queue::enqueue_read_buffer(
            q.get(),
            buf.get(),
            CL_NON_BLOCKING,
            offset * size_of::<T>(),
            len * size_of::<T>(),
            out.cast::<c_void>(),
            0,
            ptr::null(),
        )
    };
    ev.map(Event::new).map_err(ClError)
}

/// Fills `len` elements of `buf` with `value`.
pub fn fill<T: Pod>(
    q: &CommandQueue,
    buf: &mut ClBuffer<T>,
    value: T,
    len: usize,
) -> ClResult<Owned<Event>> {
    // SAFETY: the pattern is copied by OpenCL at enqueue time; `len` is within `buf`.
    unsafe { q.enqueue_fill_buffer(buf, &[value], 0, len * size_of::<T>(), &[]) }.map(Owned::new)
}

/// Copies `bytes` bytes from `src` to `dst`.
pub fn copy<T: Pod>(
    q: &CommandQueue,
    src: &ClBuffer<T>,
    dst: &mut ClBuffer<T>,
    bytes: usize,
) -> ClResult<Owned<Event>> {
    // SAFETY: both buffers are live memory objects; OpenCL checks the sizes.
    unsafe { q.enqueue_copy_buffer(src, dst, 0, 0, bytes, &[]) }.map(Owned::new)
}

/// Copies `bytes` bytes from byte `from` of `src` to byte `to` of `dst` on `q`, after
/// `waits` (events of the queue's context).
///
/// # Safety
///
/// `src` and `dst` are live buffers holding those byte ranges.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
pub unsafe fn copy_bytes(
    q: &CommandQueue,
    (src, from): (cl_mem, usize),
    (dst, to): (cl_mem, usize),
    bytes: usize,
    waits: &[cl_event],
) -> ClResult<Owned<Event>> {
    // SAFETY: the caller vouches for the buffers and ranges; `waits` outlives the call.
    let ev = unsafe {
        cl3::command_queue::enqueue_copy_buffer(
            q.get(),
            src,
            dst,
            from,
            to,
            bytes,
            waits.len() as u32,
            wait_list(waits),
        )
    };
    ev.map(|e| Owned::new(Event::new(e))).map_err(ClError)
}

/// `waits` as OpenCL takes a wait list: a null pointer when it is empty.
fn wait_list(waits: &[cl_event]) -> *const cl_event {
    match waits {
        [] => ptr::null(),
        _ => waits.as_ptr(),
    }
}

/// Blocking read of `out.len()` bytes of memory object `mem` from byte `offset`.
///
/// # Safety
///
/// `mem` is a live buffer of at least `offset + out.len()` bytes.
pub unsafe fn read_bytes(
    q: &CommandQueue,
    mem: cl_mem,
    offset: usize,
    out: &mut [u8],
) -> ClResult<()> {
    // SAFETY: blocking, so `out` is written before the call returns and not afterwards; the
    // caller vouches for `mem` and the range; the event returned is released by `Event`.
    let ev = unsafe {
        cl3::command_queue::enqueue_read_buffer(
            q.get(),
            mem,
            CL_BLOCKING,
            offset,
            out.len(),
            out.as_mut_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    };
    ev.map_err(ClError)
        .and_then(|e| settled(Event::new(e)))
        .map(drop)
}

/// Blocking write of `data` into memory object `mem` at byte `offset`.
///
/// # Safety
///
/// `mem` is a live buffer of at least `offset + data.len()` bytes.
pub unsafe fn write_bytes(
    q: &CommandQueue,
    mem: cl_mem,
    offset: usize,
    data: &[u8],
) -> ClResult<()> {
    // SAFETY: blocking, so `data` is not read after the call returns; the caller vouches for
    // `mem` and the range; the event returned is released by `Event`.
    let ev = unsafe {
        cl3::command_queue::enqueue_write_buffer(
            q.get(),
            mem,
            CL_BLOCKING,
            offset,
            data.len(),
            data.as_ptr().cast::<c_void>(),
            0,
            ptr::null(),
        )
    };
    ev.map_err(ClError)
        .and_then(|e| settled(Event::new(e)))
        .map(drop)
}

/// Migrates memory objects to the queue's device.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
pub fn migrate(q: &CommandQueue, mems: &[cl_mem]) -> ClResult<Owned<Event>> {
    // SAFETY: `mems` holds live memory objects for the duration of the call.
    unsafe { q.enqueue_migrate_mem_object(mems.len() as u32, mems.as_ptr(), 0, &[]) }
        .map(Owned::new)
}

/// A marker that completes when every command enqueued on `q` before it has completed.
pub fn marker(q: &CommandQueue) -> ClResult<Owned<Event>> {
    // SAFETY: the wait list is empty, so no event handle is read.
    unsafe { q.enqueue_marker_with_wait_list(&[]) }.map(Owned::new)
}

/// Whether `queue`'s device is a CPU (false where the queries fail).
pub fn queue_on_cpu(queue: cl_command_queue) -> bool {
    use opencl3::command_queue::{get_command_queue_info, CL_QUEUE_DEVICE};
    use opencl3::device::{get_device_info, CL_DEVICE_TYPE, CL_DEVICE_TYPE_CPU};
    // Both calls only read information OpenCL keeps for the live queue and its device.
    let Ok(device) = get_command_queue_info(queue, CL_QUEUE_DEVICE) else {
        return false;
    };
    let device = isize::from(device) as cl_device_id;
    get_device_info(device, CL_DEVICE_TYPE).is_ok_and(|t| u64::from(t) & CL_DEVICE_TYPE_CPU != 0)
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
        // the call; OpenCL copies the handle (the launch borrows the buffer, so it is live).
        RawArg::Mem(mem) => unsafe { kernel.set_arg(index, mem) },
        // SAFETY: OpenCL reads `bytes.len()` bytes from the live slice during the call (it
        // refuses a size that differs from the parameter's: CL_INVALID_ARG_SIZE) and copies
        // them; nothing is read afterwards.
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
///
/// # Safety
///
/// Every argument of `kernel` is set, and the kernel's accesses for this range stay inside its
/// arguments (the contract of clgroups' raw launches, `Launch::nd_range`).
pub unsafe fn enqueue_kernel(
    q: &CommandQueue,
    kernel: &ClKernel,
    offset: Option<&[usize]>,
    global: &[usize],
    local: Option<&[usize]>,
    wait: &[cl_event],
) -> ClResult<Owned<Event>> {
    debug_assert!(offset.is_none_or(|o| o.len() == global.len()));
    debug_assert!(local.is_none_or(|l| l.len() == global.len()));
    // SAFETY: the caller set every argument and vouches for the kernel's accesses; the
    // offset/global/local arrays have `global.len()` elements and outlive the call (OpenCL
    // copies them, and captures argument values at enqueue); a memory object released before
    // the command finishes is deleted only after the commands using it have finished
    // (clReleaseMemObject in the OpenCL 3.0 API spec), so dropping a buffer early is sound.
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
    .map(Owned::new)
}

/// [`enqueue_kernel`] without an event: nothing to create, nothing to release. NVIDIA's driver
/// takes about 12 µs of host time for a launch with an event on a profiling queue and 5 µs
/// without one (H100, `clEnqueueNDRangeKernel` alone). Completion is then seen only through
/// the queue (later commands, a marker) or what the kernel itself writes. Without the
/// `dynamic` feature (opencl3 offers no event-less launch) the event is made and released.
///
/// # Safety
///
/// As [`enqueue_kernel`].
pub unsafe fn enqueue_kernel_detached(
    q: &CommandQueue,
    kernel: &ClKernel,
    offset: Option<&[usize]>,
    global: &[usize],
    local: Option<&[usize]>,
) -> ClResult<()> {
    #[cfg(feature = "dynamic")]
    {
        let rt = cl3::load_library()
            .as_ref()
            .map_err(|_| ClError(cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED))?;
        let status = rt.clEnqueueNDRangeKernel(
            q.get(),
            kernel.get(),
            global.len() as u32,
            offset.map_or(ptr::null(), <[usize]>::as_ptr),
            global.as_ptr(),
            local.map_or(ptr::null(), <[usize]>::as_ptr),
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        match status {
            Some(0) => Ok(()),
            Some(e) => Err(ClError(e)),
            None => Err(ClError(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)),
        }
    }
    #[cfg(not(feature = "dynamic"))]
    // SAFETY: the caller's contract, as for `enqueue_kernel`.
    unsafe {
        enqueue_kernel(q, kernel, offset, global, local, &[]).map(drop)
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
