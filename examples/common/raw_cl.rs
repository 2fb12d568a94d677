//! The baseline of the launch-overhead comparison: a tiny kernel launched through raw opencl3
//! (set the argument, enqueue, wait), as a hand-written host program would. Shared by
//! `examples/bench_reduce.rs` and `benches/reduce.rs`. Raw OpenCL calls are `unsafe` in
//! opencl3; each use says why it is sound.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::cl_device_id;

/// The tiny kernel both launch paths run.
pub const TINY_SOURCE: &str =
    "kernel void tiny(global int *x) { if (get_global_id(0) == 0) x[0] += 1; }";

/// A context, queue (no profiling, as clgroups' own), built tiny kernel and a one-int buffer, all through opencl3.
pub struct RawLauncher {
    queue: CommandQueue,
    kernel: Kernel,
    buffer: Buffer<i32>,
    _context: Context,
}

impl RawLauncher {
    /// Sets everything up on `device`.
    pub fn new(device: cl_device_id) -> Result<Self, String> {
        let context = Context::from_device(&Device::new(device)).map_err(|e| e.to_string())?;
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0)
            .map_err(|e| e.to_string())?;
        let program = Program::create_and_build_from_source(&context, TINY_SOURCE, "")?;
        let kernel = Kernel::create(&program, "tiny").map_err(|e| e.to_string())?;
        // SAFETY: no host pointer is given, so OpenCL reads no host memory; one int is allocated.
        let buffer =
            unsafe { Buffer::<i32>::create(&context, CL_MEM_READ_WRITE, 1, std::ptr::null_mut()) }
                .map_err(|e| e.to_string())?;
        Ok(RawLauncher {
            queue,
            kernel,
            buffer,
            _context: context,
        })
    }

    /// One launch of `global` work-items in groups of `local`: set the argument, enqueue, wait.
    pub fn launch(&self, global: usize, local: usize) -> Result<(), String> {
        // SAFETY: the kernel's only argument is a `global int *`, given a live one-int buffer
        // of the kernel's context; only work-item 0 writes, to element 0.
        let event = unsafe {
            ExecuteKernel::new(&self.kernel)
                .set_arg(&self.buffer)
                .set_global_work_size(global)
                .set_local_work_size(local)
                .enqueue_nd_range(&self.queue)
        }
        .map_err(|e| e.to_string())?;
        event.wait().map_err(|e| e.to_string())
    }
}
