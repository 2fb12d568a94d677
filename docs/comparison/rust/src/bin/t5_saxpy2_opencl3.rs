//! Task 5 with opencl3: y = a*x + y split over every device of the first platform with two or
//! more (POCL_DEVICES="pthread pthread": two): one context, a queue and a chunk of x and y
//! per device, all launches enqueued before the first read.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::CL_DEVICE_TYPE_ALL;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_float, CL_BLOCKING};
use std::ffi::c_void;

const N: usize = 1 << 22;
const A: f32 = 3.0;
const SRC: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let devices = get_platforms()?
        .iter()
        .filter_map(|p| p.get_devices(CL_DEVICE_TYPE_ALL).ok())
        .find(|d| d.len() >= 2)
        .ok_or("needs a platform with two devices")?;
    let context = Context::from_devices(&devices, &[], None, std::ptr::null_mut())?;
    let program = Program::create_and_build_from_source(&context, SRC, "")?;
    let kernel = Kernel::create(&program, "saxpy")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 777) as f32).collect();
    let chunk = N.div_ceil(devices.len());
    let mut parts = Vec::new();
    for (&id, (xs, ys)) in devices.iter().zip(x.chunks(chunk).zip(y.chunks(chunk))) {
        // SAFETY: the device belongs to the context.
        let queue = unsafe { CommandQueue::create_with_properties(&context, id, 0, 0)? };
        // SAFETY (each buffer): the host pointer holds the chunk's floats.
        let x_buf = unsafe {
            Buffer::<cl_float>::create(
                &context,
                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                xs.len(),
                xs.as_ptr() as *mut c_void,
            )?
        };
        let y_buf = unsafe {
            Buffer::<cl_float>::create(
                &context,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                ys.len(),
                ys.as_ptr() as *mut c_void,
            )?
        };
        // SAFETY: the arguments match the kernel's parameters; one work-item per element.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&y_buf)
                .set_arg(&x_buf)
                .set_arg(&A)
                .set_global_work_size(xs.len())
                .enqueue_nd_range(&queue)?
        };
        parts.push((queue, x_buf, y_buf));
    }
    let mut out = vec![0.0f32; N];
    for ((queue, _, y_buf), out) in parts.iter().zip(out.chunks_mut(chunk)) {
        // SAFETY: out holds the chunk's floats, as does y_buf.
        unsafe { queue.enqueue_read_buffer(y_buf, CL_BLOCKING, 0, out, &[])? };
    }
    assert!((0..N).all(|i| out[i] == A * x[i] + y[i]), "wrong saxpy");
    println!("saxpy of {N} elements on {} devices: ok", devices.len());
    Ok(())
}
