//! Task 3 with opencl3: the sum of each group of 32 work-items. PoCL 3.1 has no sub-groups
//! (no cl_khr_subgroups), nor does NVIDIA's OpenCL, so the portable kernel reduces each run of
//! 32 lanes in local memory with work-group barriers.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
use opencl3::program::Program;
use opencl3::types::{cl_float, CL_BLOCKING};
use std::ffi::c_void;
use std::ptr;

const N: usize = 1 << 20;
const LOCAL: usize = 256;
const SRC: &str = "kernel void sums(global const float *x, global float *out, local float *tmp) {
    size_t l = get_local_id(0);
    tmp[l] = x[get_global_id(0)];
    for (uint s = 16; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l % 32 < s) tmp[l] += tmp[l + s];
    }
    if (l % 32 == 0) out[get_global_id(0) / 32] = tmp[l];
}";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let id = *get_all_devices(CL_DEVICE_TYPE_ALL)?
        .first()
        .ok_or("no OpenCL device")?;
    let device = Device::new(id);
    let context = Context::from_device(&device)?;
    let queue = CommandQueue::create_default_with_properties(&context, 0, 0)?;
    let program = Program::create_and_build_from_source(&context, SRC, "")?;
    let kernel = Kernel::create(&program, "sums")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 10) as f32).collect();
    let input = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    // SAFETY (each buffer): the host pointer holds N floats, or is null.
    let x_buf =
        unsafe { Buffer::<cl_float>::create(&context, input, N, x.as_ptr() as *mut c_void)? };
    let out_buf = unsafe {
        Buffer::<cl_float>::create(&context, CL_MEM_WRITE_ONLY, N / 32, ptr::null_mut())?
    };
    let mut out = vec![0.0f32; N / 32];
    // SAFETY: the arguments match the kernel's parameters; N work-items read x[0..N] and
    // write out[0..N/32]; the local buffer holds LOCAL floats.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&x_buf)
            .set_arg(&out_buf)
            .set_arg_local_buffer(LOCAL * size_of::<f32>())
            .set_global_work_size(N)
            .set_local_work_size(LOCAL)
            .enqueue_nd_range(&queue)?
    };
    // SAFETY: out holds N / 32 floats, as does out_buf.
    unsafe { queue.enqueue_read_buffer(&out_buf, CL_BLOCKING, 0, &mut out, &[])? };
    let ok = x
        .chunks(32)
        .zip(&out)
        .all(|(c, s)| c.iter().sum::<f32>() == *s);
    assert!(ok, "wrong group sum");
    println!("{} group sums on {}: ok", N / 32, device.name()?);
    Ok(())
}
