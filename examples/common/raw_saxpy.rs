//! The baseline of `bench_launch`: SAXPY launched and copied through raw opencl3 on a queue
//! without profiling, as a hand-written host program would. Raw OpenCL calls are `unsafe` in
//! opencl3; each use says why it is sound.
#![allow(dead_code)] // each user takes part of it

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::cl_device_id;

/// SAXPY over `n` floats (`y[i] += a * x[i]` for `i < n`): what `bench_launch` runs.
pub const SAXPY_SOURCE: &str = "kernel void saxpy(global const float *x, global float *y, \
    float a, uint n) { size_t i = get_global_id(0); if (i < n) y[i] += a * x[i]; }";

/// SAXPY through raw opencl3 on a queue without profiling, as a hand-written host program
/// would launch it: `x` is 1s, `y` starts at 0s.
pub struct RawSaxpy {
    queue: CommandQueue,
    kernel: Kernel,
    x: Buffer<f32>,
    y: Buffer<f32>,
    n: usize,
    _context: Context,
}

impl RawSaxpy {
    /// Sets everything up on `device` for `n` floats.
    pub fn new(device: cl_device_id, n: usize) -> Result<Self, String> {
        let context = Context::from_device(&Device::new(device)).map_err(|e| e.to_string())?;
        let queue = CommandQueue::create_default_with_properties(&context, 0, 0)
            .map_err(|e| e.to_string())?;
        let program = Program::create_and_build_from_source(&context, SAXPY_SOURCE, "")?;
        let kernel = Kernel::create(&program, "saxpy").map_err(|e| e.to_string())?;
        let (mut ones, mut zeros) = (vec![1.0f32; n], vec![0.0f32; n]);
        let flags = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
        // SAFETY: each host pointer points at `n` live floats, copied at creation.
        let x = unsafe { Buffer::<f32>::create(&context, flags, n, ones.as_mut_ptr().cast()) }
            .map_err(|e| e.to_string())?;
        // SAFETY: as above.
        let y = unsafe { Buffer::<f32>::create(&context, flags, n, zeros.as_mut_ptr().cast()) }
            .map_err(|e| e.to_string())?;
        Ok(RawSaxpy {
            queue,
            kernel,
            x,
            y,
            n,
            _context: context,
        })
    }

    /// One launch: set the arguments, enqueue, then wait through the event, or (`finish`)
    /// enqueue without an event and `clFinish`.
    pub fn launch(&self, global: usize, local: usize, finish: bool) -> Result<(), String> {
        let (a, n) = (1.0f32, self.n as u32);
        if !finish {
            // SAFETY: the arguments match the kernel's signature (two live float buffers of
            // `n` elements, a float, a uint); work-items at or past `n` return at once.
            let event = unsafe {
                ExecuteKernel::new(&self.kernel)
                    .set_arg(&self.x)
                    .set_arg(&self.y)
                    .set_arg(&a)
                    .set_arg(&n)
                    .set_global_work_size(global)
                    .set_local_work_size(local)
                    .enqueue_nd_range(&self.queue)
            }
            .map_err(|e| e.to_string())?;
            return event.wait().map_err(|e| e.to_string());
        }
        // SAFETY: as above, for each argument index and value.
        unsafe {
            self.kernel.set_arg(0, &self.x).map_err(|e| e.to_string())?;
            self.kernel.set_arg(1, &self.y).map_err(|e| e.to_string())?;
            self.kernel.set_arg(2, &a).map_err(|e| e.to_string())?;
            self.kernel.set_arg(3, &n).map_err(|e| e.to_string())?;
        }
        let rt = cl3::load_library().as_ref().map_err(|e| e.to_string())?;
        let (g, l) = ([global], [local]);
        // A live queue and kernel with every argument set; one dimension; no events.
        let status = rt.clEnqueueNDRangeKernel(
            self.queue.get(),
            self.kernel.get(),
            1,
            std::ptr::null(),
            g.as_ptr(),
            l.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        match status {
            Some(0) => self.queue.finish().map_err(|e| e.to_string()),
            other => Err(format!("clEnqueueNDRangeKernel: {other:?}")),
        }
    }

    /// One launch without an event, then a blocking read of `y[0]` (what a blocking reduce
    /// does: the read follows the kernel on the in-order queue). Only `bench_remote` uses it.
    #[allow(dead_code)]
    pub fn launch_read(&self, global: usize, local: usize) -> Result<f32, String> {
        let (a, n) = (1.0f32, self.n as u32);
        // SAFETY: as in `launch`: the arguments match the kernel's signature, and work-items
        // at or past `n` return at once; `out` holds the one float the read writes.
        unsafe {
            ExecuteKernel::new(&self.kernel)
                .set_arg(&self.x)
                .set_arg(&self.y)
                .set_arg(&a)
                .set_arg(&n)
                .set_global_work_size(global)
                .set_local_work_size(local)
                .enqueue_nd_range(&self.queue)
                .map_err(|e| e.to_string())?;
            let mut out = [0.0f32];
            self.queue
                .enqueue_read_buffer(&self.y, opencl3::types::CL_BLOCKING, 0, &mut out, &[])
                .map_err(|e| e.to_string())?;
            Ok(out[0])
        }
    }

    /// `clEnqueueCopyBuffer` of `x` into `y`, then a wait on its event.
    pub fn copy(&mut self) -> Result<(), String> {
        let bytes = self.n * std::mem::size_of::<f32>();
        // SAFETY: both buffers hold `n` floats of this queue's context.
        let event = unsafe {
            self.queue
                .enqueue_copy_buffer(&self.x, &mut self.y, 0, 0, bytes, &[])
        }
        .map_err(|e| e.to_string())?;
        event.wait().map_err(|e| e.to_string())
    }

    /// `y`, read back (blocking).
    pub fn read_y(&self) -> Result<Vec<f32>, String> {
        let mut out = vec![0.0f32; self.n];
        // SAFETY: `out` holds `n` floats, the buffer's size; the read blocks.
        unsafe {
            self.queue
                .enqueue_read_buffer(&self.y, opencl3::types::CL_BLOCKING, 0, &mut out, &[])
        }
        .map_err(|e| e.to_string())?;
        Ok(out)
    }
}
