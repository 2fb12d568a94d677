//! `pocl_dlcache`: the smallest launch that made PoCL before 6 abort, run until it would.
//!
//! One kernel, one local size, on two devices at once: device 0 runs work-items `0..k`
//! (global offset 0), device 1 runs `k..2k` (offset `k`), both in flight, `--rounds` times.
//! PoCL before 6.0 releases the wrong entry of its process-wide cache of loaded kernels when
//! the two finish, and aborts where asserts are on (`pocl_release_dlhandle_cache: Assertion
//! 'found->ref_count > 0' failed`, Ubuntu 24.04's PoCL 5.0). clgroups builds a program of its
//! own on each such device (`RUST_LOG=debug` says so), so the default run passes; `--raw`
//! builds and launches through opencl3 alone, as before the workaround, and aborts there.
//!
//! ```text
//! POCL_DEVICES="cpu cpu" RUST_LOG=debug cargo run --release --example pocl_dlcache
//! POCL_DEVICES="cpu cpu" cargo run --release --example pocl_dlcache -- --raw   # aborts on PoCL 5.0
//! ```

use clap::Parser;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Range, RootDevice};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
use opencl3::types::CL_BLOCKING;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Each part's last work-group spins `spin` steps, so that one device's part is still running
/// when the other device's starts (the spin converges to 2: x[i] = i + 2).
const SOURCE: &str = "kernel void spin(global float *x, int spin) {
    size_t i = get_global_id(0);
    int steps = get_group_id(0) + 1 == get_num_groups(0) ? spin : 64;
    float s = 0.0f;
    for (int j = 0; j < steps; j++) s = 0.5f * s + 1.0f;
    x[i] = (float)i + s;
}";

#[derive(Parser)]
#[command(about = "One kernel on two devices at once, offsets 0 and k (PoCL < 6 aborted)")]
struct Args {
    /// Rounds of the two launches.
    #[arg(long, default_value_t = 100)]
    rounds: usize,
    /// Steps of each part's last work-group.
    #[arg(long, default_value_t = 1 << 18)]
    spin: i32,
    /// Work-items per device (k).
    #[arg(long, default_value_t = 1 << 16)]
    k: usize,
    /// Local size (one for both devices).
    #[arg(long, default_value_t = 64)]
    local: usize,
    /// Build and launch through opencl3 alone (no workaround).
    #[arg(long)]
    raw: bool,
}

fn expected(i: usize) -> f32 {
    i as f32 + 2.0
}

/// The rounds through clgroups: a program per device, as a root device builds them.
fn through_clgroups(root: &RootDevice, args: &Args) -> Result<()> {
    let n = 2 * args.k;
    let parts = root.queues()[..2].iter().map(|q| {
        let spin = Program::from_source(q, SOURCE)?.kernel("spin")?;
        Ok((spin, Buffer::<f32>::new(q, n)?))
    });
    let parts = parts.collect::<Result<Vec<_>>>()?;
    for _ in 0..args.rounds {
        let events = (parts.iter().enumerate()).map(|(d, (spin, x))| {
            let launch = spin
                .launch()
                .arg(x)
                .arg(args.spin)
                .offset(Range::d1(d * args.k));
            let local = LocalSize::Exact(Range::d1(args.local));
            // SAFETY: work-items d*k..(d+1)*k write x[i] for i < 2k = x.len(), nothing else.
            Ok(unsafe { launch.nd_range(Range::d1(args.k), local)? })
        });
        for event in events.collect::<Result<Vec<_>>>()? {
            event.wait()?;
        }
    }
    for (d, (spin, x)) in parts.iter().enumerate() {
        let got = x.read(spin.program().queue())?;
        let part = d * args.k..(d + 1) * args.k;
        if let Some(i) = part.clone().find(|&i| got[i] != expected(i)) {
            return Err(format!("device {d}: x[{i}] = {}, not {}", got[i], expected(i)).into());
        }
    }
    Ok(())
}

/// The same rounds through opencl3: one program built for both devices, as before.
fn through_opencl3(root: &RootDevice, args: &Args) -> Result<()> {
    let devices: Vec<_> = root.devices()[..2].iter().map(|d| d.id()).collect();
    let context = Context::from_devices(&devices, &[], None, std::ptr::null_mut())?;
    let program = opencl3::program::Program::create_and_build_from_source(&context, SOURCE, "")?;
    let mut parts = Vec::new();
    for &device in &devices {
        // SAFETY: `device` is a device of `context`; no properties are given.
        let queue = unsafe { CommandQueue::create_with_properties(&context, device, 0, 0)? };
        // SAFETY: no host pointer is given; 2k floats are allocated.
        let x = unsafe {
            ClBuffer::<f32>::create(
                &context,
                CL_MEM_READ_WRITE,
                2 * args.k,
                std::ptr::null_mut(),
            )?
        };
        parts.push((queue, Kernel::create(&program, "spin")?, x));
    }
    for _ in 0..args.rounds {
        let mut events = Vec::new();
        for (d, (queue, spin, x)) in parts.iter().enumerate() {
            // SAFETY: `spin` takes (global float *, int), given a live buffer of 2k floats of
            // its context; work-items d*k..(d+1)*k write x[i], i < 2k.
            let event = unsafe {
                ExecuteKernel::new(spin)
                    .set_arg(x)
                    .set_arg(&args.spin)
                    .set_global_work_offset(d * args.k)
                    .set_global_work_size(args.k)
                    .set_local_work_size(args.local)
                    .enqueue_nd_range(queue)?
            };
            queue.flush()?;
            events.push(event);
        }
        events.iter().try_for_each(|e| e.wait())?;
    }
    for (d, (queue, _, x)) in parts.iter().enumerate() {
        let mut got = vec![0f32; 2 * args.k];
        // SAFETY: `got` holds 2k floats, the buffer's size; the read blocks.
        unsafe { queue.enqueue_read_buffer(x, CL_BLOCKING, 0, &mut got, &[])? };
        let part = d * args.k..(d + 1) * args.k;
        if let Some(i) = part.clone().find(|&i| got[i] != expected(i)) {
            return Err(format!("device {d}: x[{i}] = {}, not {}", got[i], expected(i)).into());
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    env_logger::init();
    let args = Args::parse();
    let root = RootDevice::from_env()?;
    if root.len() < 2 {
        return Err(format!(
            "needs two devices (POCL_DEVICES=\"cpu cpu\"), found {}",
            root.len()
        )
        .into());
    }
    for d in &root.devices()[..2] {
        println!("{d}");
    }
    match args.raw {
        true => through_opencl3(&root, &args)?,
        false => through_clgroups(&root, &args)?,
    }
    let how = if args.raw { "opencl3" } else { "clgroups" };
    println!(
        "{} rounds through {how}: both parts right every round",
        args.rounds
    );
    Ok(())
}
