//! Task 4 with opencl3: the sum of 2^20 floats, in two passes of one local-memory tree kernel
//! (64 work-groups of 256 write partial sums; one work-group adds them).

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_float, cl_uint, CL_BLOCKING};
use std::ffi::c_void;
use std::ptr;

const N: usize = 1 << 20;
const LOCAL: usize = 256;
const GROUPS: usize = 64;
const SRC: &str = "kernel void partial_sums(global const float *x, uint n, global float *out,
                           local float *tmp) {
    size_t l = get_local_id(0);
    float sum = 0.0f;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) sum += x[i];
    tmp[l] = sum;
    for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < s) tmp[l] += tmp[l + s];
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
}";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let id = *get_all_devices(CL_DEVICE_TYPE_ALL)?
        .first()
        .ok_or("no OpenCL device")?;
    let device = Device::new(id);
    let context = Context::from_device(&device)?;
    let queue = CommandQueue::create_default_with_properties(&context, 0, 0)?;
    let program = Program::create_and_build_from_source(&context, SRC, "")?;
    let kernel = Kernel::create(&program, "partial_sums")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    let input = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    // SAFETY (each buffer): the host pointer holds N floats, or is null.
    let x_buf =
        unsafe { Buffer::<cl_float>::create(&context, input, N, x.as_ptr() as *mut c_void)? };
    let partial_buf = unsafe {
        Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, GROUPS, ptr::null_mut())?
    };
    let sum_buf =
        unsafe { Buffer::<cl_float>::create(&context, CL_MEM_READ_WRITE, 1, ptr::null_mut())? };
    // Pass 1: GROUPS partial sums; pass 2: their sum.
    for (input, n, output, groups) in [
        (&x_buf, N, &partial_buf, GROUPS),
        (&partial_buf, GROUPS, &sum_buf, 1),
    ] {
        let n = n as cl_uint;
        // SAFETY: the arguments match the kernel's parameters; the kernel reads input[0..n] and
        // writes output[0..groups]; the local buffer holds LOCAL floats.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(input)
                .set_arg(&n)
                .set_arg(output)
                .set_arg_local_buffer(LOCAL * size_of::<f32>())
                .set_global_work_size(groups * LOCAL)
                .set_local_work_size(LOCAL)
                .enqueue_nd_range(&queue)?
        };
    }
    let mut sum = [0.0f32];
    // SAFETY: one float, as sum_buf holds.
    unsafe { queue.enqueue_read_buffer(&sum_buf, CL_BLOCKING, 0, &mut sum, &[])? };
    let expected: usize = (0..N).map(|i| i % 7).sum();
    assert_eq!(sum[0], expected as f32);
    println!("sum of {N} floats on {}: {} ok", device.name()?, sum[0]);
    Ok(())
}
