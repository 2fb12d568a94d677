//! An ordinary `cl_khr_subgroups` kernel, written as it would be for Intel, AMD or PoCL (no
//! clgroups include, no change), run unchanged on every OpenCL device present: clgroups uses the
//! driver's built-ins where it has them and provides the rest (see `clgroups::program::polyfill`).
//! Prints each device's backend and where its built-ins come from, and checks the sum.
//!
//! `cargo run --example khr_portable -- [--n N] [--all-backends]`

use clap::Parser;
use clgroups::launch::{Local, LocalSize};
use clgroups::{Buffer, Device, Program, Queue, Range};

/// A two-level sum: a grid-stride loop, `sub_group_reduce_add`, then work-item 0 adds the
/// sub-group sums of its work-group.
const KERNEL: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

__kernel void sum_floats(__global const float *in, __global float *partials, const uint n,
                         __local float *sg_sums)
{
    float acc = 0.0f;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        acc += in[i];
    float s = sub_group_reduce_add(acc);
    if (get_sub_group_local_id() == 0)
        sg_sums[get_sub_group_id()] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        float t = 0.0f;
        for (uint j = 0; j < get_num_sub_groups(); ++j)
            t += sg_sums[j];
        partials[get_group_id(0)] = t;
    }
}
"#;

#[derive(Parser)]
struct Args {
    /// Number of floats.
    #[arg(long, default_value_t = (1 << 20) + 13)]
    n: usize,
    /// Also run each device on every other backend it can take (e.g. `emulated`).
    #[arg(long)]
    all_backends: bool,
}

const LOCAL: usize = 256;
const GROUPS: usize = 64;

fn run(device: &Device, data: &[f32], want: f64) -> clgroups::Result<bool> {
    let q = Queue::new(device)?;
    let provided: Vec<&str> = clgroups::program::polyfill::extensions(&q)
        .into_iter()
        .filter(|(_, how)| *how == clgroups::device::Provision::Provided)
        .map(|(e, _)| e)
        .collect();
    let program = Program::from_source(&q, KERNEL)?;
    let input = Buffer::from_slice(&q, data)?;
    let partials = Buffer::from_slice(&q, &[0f32; GROUPS])?;
    // SAFETY: `sum_floats` reads in[i] for i < n = data.len(), writes partials[group] for GROUPS groups, and one local slot per sub-group (LOCAL slots).
    unsafe {
        program
            .kernel("sum_floats")?
            .launch()
            .arg(&input)
            .arg(&partials)
            .arg(data.len() as u32)
            .arg(Local::<f32>::new(LOCAL))
            .nd_range(
                Range::d1(LOCAL * GROUPS),
                LocalSize::Exact(Range::d1(LOCAL)),
            )
    }?
    .wait()?;
    let got: f64 = partials.read(&q)?.iter().map(|&p| p as f64).sum();
    let ok = got == want;
    println!(
        "{device}\n  backend {}, provided by clgroups: {}\n  sum {got} (host {want}): {}",
        device.sub_groups().effective.shuffle_backend,
        if provided.is_empty() {
            "nothing".into()
        } else {
            provided.join(", ")
        },
        if ok { "ok" } else { "WRONG" }
    );
    Ok(ok)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    // Small integers: every partial sum is exact in f32 (|sum| < 2^24), whatever the order.
    let data: Vec<f32> = (0..args.n).map(|i| (i % 17) as f32 - 7.0).collect();
    let want: f64 = data.iter().map(|&v| v as f64).sum();
    let mut wrong = 0;
    for device in clgroups::devices()? {
        let own = device.sub_groups().effective.shuffle_backend;
        let mut targets = vec![device.clone()];
        if args.all_backends {
            use clgroups::device::ShuffleBackend::*;
            targets.extend(
                [Khr, Intel, NvidiaPtx, Emulated]
                    .into_iter()
                    .filter(|&b| b != own)
                    .filter_map(|b| device.with_backend(b).ok()),
            );
        }
        for d in targets {
            if !run(&d, &data, want)? {
                wrong += 1;
            }
        }
    }
    if wrong > 0 {
        return Err(format!("{wrong} device(s) computed a wrong sum").into());
    }
    Ok(())
}
