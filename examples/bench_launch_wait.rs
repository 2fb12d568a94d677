//! How a user's launch could learn that it has ended, on NVIDIA's OpenCL (issue 25: a launch +
//! wait at torch's cost): host wall time of SAXPY (`y[i] += a * x[i]`, work-groups of 256)
//! launched through raw OpenCL and waited for each way, in one run, paths alternating every 5
//! launches after warm-up, medians. The ways:
//! * `ev+clWait`: with an event, `clWaitForEvents` (raw OpenCL's usual wait);
//! * `clFinish`: without an event, `clFinish` (unbounded: no command to poll);
//! * `ev+clFinish`: with an event, `clFinish` (what the event alone costs);
//! * `ev+spin`: with an event, flush, poll its status (clgroups' bounded wait);
//! * `post-kernel`: without an event, then a one-work-item kernel that writes a number into
//!   pinned host memory (as `algorithms::post` does after a scan), spun on;
//! * `posted`: SAXPY with an epilogue: each work-group counts itself out on a device counter and
//!   the last one writes the number into pinned host memory, spun on.
//!
//! The last two use inline PTX (`membar`): NVIDIA only.
//! `cargo run --release --example bench_launch_wait -- [--runs N]`

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_ALLOC_HOST_PTR, CL_MEM_COPY_HOST_PTR};
use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_event, CL_BLOCKING};
use std::ptr;
use std::time::Instant;
use timing::median;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
struct Args {
    /// Timed launches per way and size (in blocks of 5, alternating between ways).
    #[arg(long, default_value_t = 401)]
    runs: usize,
}

const SOURCE: &str = r#"
kernel void saxpy(global const float *x, global float *y, float a, uint n) {
    size_t i = get_global_id(0);
    if (i < n) y[i] += a * x[i];
}
kernel void post(ulong at, uint seq) {
    asm volatile("membar.sys;");
    *(volatile global uint *)at = seq;
}
kernel void saxpy_posted(global const float *x, global float *y, float a, uint n,
                         global uint *count, ulong at, uint seq) {
    size_t i = get_global_id(0);
    if (i < n) y[i] += a * x[i];
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        asm volatile("membar.gl;");
        if (atomic_inc(count) == get_num_groups(0) - 1) {
            *count = 0;
            asm volatile("membar.sys;");
            *(volatile global uint *)at = seq;
        }
    }
}
"#;

const WAYS: [&str; 6] = [
    "ev+clWait",
    "clFinish",
    "ev+clFinish",
    "ev+spin",
    "post-kernel",
    "posted",
];
const LOCAL: usize = 256;
const CL_EVENT_COMMAND_EXECUTION_STATUS: u32 = 0x11D3;

fn main() -> AnyResult<()> {
    let args = Args::parse();
    let rt = cl3::load_library().as_ref().map_err(|e| e.to_string())?;
    let device = clgroups::default_device()?;
    println!("device: {device}");
    let ctx = Context::from_device(&Device::new(device.id()))?;
    let q = CommandQueue::create_default_with_properties(&ctx, 0, 0)?;
    let program = Program::create_and_build_from_source(&ctx, SOURCE, "")?;
    let (saxpy, post, posted) = (
        Kernel::create(&program, "saxpy")?,
        Kernel::create(&program, "post")?,
        Kernel::create(&program, "saxpy_posted")?,
    );
    // SAFETY: no host pointer; 4 words.
    let mailbox = unsafe {
        Buffer::<u32>::create(
            &ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            4,
            ptr::null_mut(),
        )
    }?;
    let mut at: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: a blocking map of the whole live buffer, never unmapped (it lives to the end).
    let map = unsafe {
        opencl3::command_queue::enqueue_map_buffer(
            q.get(),
            mailbox.get(),
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            16,
            &mut at,
            0,
            ptr::null(),
        )
    }
    .map_err(|e| format!("clEnqueueMapBuffer: {e}"))?;
    rt.clReleaseEvent(map);
    let number = at.cast::<u32>();
    // SAFETY: `number` points into the mapped 16 bytes.
    unsafe { number.write_volatile(0) };
    let mut seq = 0u32;
    println!("{:>10} {}", "n", WAYS.map(|w| format!("{w:>13}")).join(""));
    for log2 in [10u32, 14, 16, 18, 20, 21, 22, 23, 24] {
        let n = 1usize << log2;
        let flags = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
        let (mut ones, mut zeros, mut zero) = (vec![1f32; n], vec![0f32; n], [0u32]);
        // SAFETY: each host pointer points at as many live elements as the buffer holds.
        let (x, y, count) = unsafe {
            (
                Buffer::<f32>::create(&ctx, flags, n, ones.as_mut_ptr().cast())?,
                Buffer::<f32>::create(&ctx, flags, n, zeros.as_mut_ptr().cast())?,
                Buffer::<u32>::create(&ctx, flags, 1, zero.as_mut_ptr().cast())?,
            )
        };
        // SAFETY: the arguments match the kernels' parameters (live buffers of `n` floats and
        // one counter, a float, a uint, the mailbox's host address, which the device reaches
        // on NVIDIA: unified addressing; `post` and `posted` write 4 bytes there).
        unsafe {
            for k in [&saxpy, &posted] {
                k.set_arg(0, &x)?;
                k.set_arg(1, &y)?;
                k.set_arg(2, &1f32)?;
                k.set_arg(3, &(n as u32))?;
            }
            posted.set_arg(4, &count)?;
            posted.set_arg(5, &(number as u64))?;
            post.set_arg(0, &(number as u64))?;
        }
        let global = [n.div_ceil(LOCAL) * LOCAL];
        let enqueue = |k: &Kernel, g: &[usize], l: &[usize], event: bool| -> AnyResult<cl_event> {
            let mut ev: cl_event = ptr::null_mut();
            let out = if event {
                &mut ev as *mut _
            } else {
                ptr::null_mut()
            };
            // A live queue and kernel with every argument set, one dimension.
            let status = rt.clEnqueueNDRangeKernel(
                q.get(),
                k.get(),
                1,
                ptr::null(),
                g.as_ptr(),
                l.as_ptr(),
                0,
                ptr::null(),
                out,
            );
            match status {
                Some(0) => Ok(ev),
                other => Err(format!("clEnqueueNDRangeKernel: {other:?}").into()),
            }
        };
        let spin_on = |want: u32| {
            rt.clFlush(q.get());
            // SAFETY: the mapped number, written by the device (volatile reads).
            while unsafe { number.read_volatile() } != want {
                std::hint::spin_loop();
            }
        };
        let mut way = |w: usize| -> AnyResult<()> {
            let (g, l) = (&global[..], &[LOCAL][..]);
            match w {
                0 => {
                    let ev = enqueue(&saxpy, g, l, true)?;
                    rt.clWaitForEvents(1, &ev);
                    rt.clReleaseEvent(ev);
                }
                1 => {
                    enqueue(&saxpy, g, l, false)?;
                    rt.clFinish(q.get());
                }
                2 => {
                    let ev = enqueue(&saxpy, g, l, true)?;
                    rt.clFinish(q.get());
                    rt.clReleaseEvent(ev);
                }
                3 => {
                    let ev = enqueue(&saxpy, g, l, true)?;
                    rt.clFlush(q.get());
                    let mut status = 1i32;
                    while status > 0 {
                        rt.clGetEventInfo(
                            ev,
                            CL_EVENT_COMMAND_EXECUTION_STATUS,
                            4,
                            (&mut status as *mut i32).cast(),
                            ptr::null_mut(),
                        );
                        std::hint::spin_loop();
                    }
                    rt.clReleaseEvent(ev);
                }
                _ => {
                    seq += 1;
                    let k = if w == 4 { &post } else { &posted };
                    // SAFETY: the number the kernel posts (a uint).
                    unsafe { k.set_arg(if w == 4 { 1 } else { 6 }, &seq)? };
                    if w == 4 {
                        enqueue(&saxpy, g, l, false)?;
                        enqueue(&post, &[1], &[1], false)?;
                    } else {
                        enqueue(&posted, g, l, false)?;
                    }
                    spin_on(seq);
                }
            }
            Ok(())
        };
        let mut times = vec![Vec::new(); WAYS.len()];
        let (start, mut launches) = (Instant::now(), 0);
        while launches < 20 || start.elapsed().as_millis() < 50 {
            launches += 1;
            (0..WAYS.len()).try_for_each(&mut way)?;
        }
        for _ in 0..args.runs.div_ceil(5) {
            for (w, t) in times.iter_mut().enumerate() {
                for _ in 0..5 {
                    let t0 = Instant::now();
                    way(w)?;
                    t.push(t0.elapsed().as_secs_f64() * 1e6);
                }
            }
            launches += 5;
        }
        rt.clFinish(q.get());
        let mut out = vec![0f32; n];
        // SAFETY: `out` holds `n` floats; the read blocks.
        unsafe { q.enqueue_read_buffer(&y, CL_BLOCKING, 0, &mut out, &[])? };
        let want = (launches * WAYS.len()) as f32;
        if let Some(i) = out.iter().position(|&v| v != want) {
            return Err(format!("n = {n}: y[{i}] = {}, want {want}", out[i]).into());
        }
        let medians = times.iter_mut().map(|t| format!("{:>13.2}", median(t)));
        println!("{n:>10} {}", medians.collect::<String>());
    }
    Ok(())
}
