//! Task 2 with opencl3: c = a + b over a prime n; the global size is padded to a multiple of
//! the local size and the kernel guards the extra work-items.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
use opencl3::program::Program;
use opencl3::types::{cl_float, cl_uint, CL_BLOCKING};
use std::ffi::c_void;
use std::ptr;

const N: usize = 1_000_003;
const LOCAL: usize = 256;
const SRC: &str = "kernel void vadd(global const float *a, global const float *b, global float *c,
                   uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let id = *get_all_devices(CL_DEVICE_TYPE_ALL)?
        .first()
        .ok_or("no OpenCL device")?;
    let device = Device::new(id);
    let context = Context::from_device(&device)?;
    let queue = CommandQueue::create_default_with_properties(&context, 0, 0)?;
    let program = Program::create_and_build_from_source(&context, SRC, "")?;
    let kernel = Kernel::create(&program, "vadd")?;
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| (N - i) as f32 * 0.5).collect();
    let input = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    // SAFETY (each buffer): the host pointer holds N floats, or is null.
    let a_buf =
        unsafe { Buffer::<cl_float>::create(&context, input, N, a.as_ptr() as *mut c_void)? };
    let b_buf =
        unsafe { Buffer::<cl_float>::create(&context, input, N, b.as_ptr() as *mut c_void)? };
    let c_buf =
        unsafe { Buffer::<cl_float>::create(&context, CL_MEM_WRITE_ONLY, N, ptr::null_mut())? };
    let n = N as cl_uint;
    let mut c = vec![0.0f32; N];
    // SAFETY: the arguments match the kernel's parameters; the kernel touches index i < n
    // only, and every buffer holds n floats.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&a_buf)
            .set_arg(&b_buf)
            .set_arg(&c_buf)
            .set_arg(&n)
            .set_global_work_size(N.div_ceil(LOCAL) * LOCAL)
            .set_local_work_size(LOCAL)
            .enqueue_nd_range(&queue)?
    };
    // SAFETY: c holds N floats, as does c_buf.
    unsafe { queue.enqueue_read_buffer(&c_buf, CL_BLOCKING, 0, &mut c, &[])? };
    assert!((0..N).all(|i| c[i] == a[i] + b[i]), "wrong sum");
    println!("vadd of {N} elements on {}: ok", device.name()?);
    Ok(())
}
