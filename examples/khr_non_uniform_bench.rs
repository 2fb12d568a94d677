//! The cost of the non-uniform and clustered built-ins (issue 24), on the default device (or
//! `CLGROUPS_DEVICE`): device time (profiling), median of many interleaved runs after a warm-up,
//! every output checked against the host.
//!
//! * a float sum written with `sub_group_non_uniform_reduce_add` against the same kernel with
//!   `sub_group_reduce_add` (target on the H100: >= 0.95x);
//! * `out[i] = sub_group_clustered_reduce_add(in[i], 8)` against a copy `out[i] = in[i]`
//!   (target: >= 0.9x, memory speed).
//!
//! `cargo run --release --example khr_non_uniform_bench -- [--n N] [--runs R]`
//! (default N: 2^28 floats on GPUs, 2^22 elsewhere).

use clap::Parser;
use clgroups::device::DeviceKind;
use clgroups::launch::{Local, LocalSize};
use clgroups::{Buffer, Kernel, Program, Queue, Range};
use std::time::Duration;

const SUM: &str = r#"#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void sum_floats(__global const float4 *in, __global float *partials, const uint n4,
                         __local float *sg_sums)
{
    float acc = 0.0f;
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 v = in[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    float s = REDUCE(acc);
    if (get_sub_group_local_id() == 0)
        sg_sums[get_sub_group_id()] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        float t = 0.0f;
        for (uint j = 0; j < get_local_size(0) / get_max_sub_group_size(); ++j)
            t += sg_sums[j];
        partials[get_group_id(0)] = t;
    }
}
"#;

/// `n` is a multiple of the global size: every work-item runs the same trip count (a uniform
/// loop around the collective, which the emulated backend accepts).
const MAP: &str = r#"#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void map_floats(__global const float *in, __global float *out, const uint n)
{
    uint size = get_global_size(0);
    for (uint j = 0; j < n / size; ++j) {
        uint i = get_global_id(0) + j * size;
        out[i] = BODY;
    }
}
"#;

#[derive(Parser)]
struct Args {
    /// Number of floats (default 2^28 on GPUs, 2^22 elsewhere).
    #[arg(long)]
    n: Option<usize>,
    /// Timed runs of each kernel (after one warm-up each).
    #[arg(long, default_value_t = 51)]
    runs: usize,
}

const LOCAL: usize = 256;

/// One timed launch of `k` over `groups` work-groups.
fn launch(l: clgroups::launch::Launch<'_>, groups: usize) -> clgroups::Result<Duration> {
    // SAFETY: `sum_floats` reads in[i] for i < n4 (the input holds 4 * n4 floats), writes
    // partials[group] (one per launched group) and one local slot per sub-group (LOCAL slots);
    // `map_floats` reads in[i] and writes out[i] for i < n, both n floats long.
    let event = unsafe {
        l.nd_range(
            Range::d1(LOCAL * groups),
            LocalSize::Exact(Range::d1(LOCAL)),
        )
    }?;
    event.wait()?;
    event.duration()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger::init();
    let args = Args::parse();
    let device = clgroups::default_device()?;
    let gpu = device.kind() == DeviceKind::Gpu;
    let n = args.n.unwrap_or(if gpu { 1 << 28 } else { 1 << 22 }) / (1 << 16) * (1 << 16);
    let groups = if gpu { 4096 } else { 64 };
    let q = Queue::new(&device)?;
    // Small integers / 4: sums are exact.
    let data: Vec<f32> = (0..n).map(|i| ((i % 33) as f32 - 16.0) * 0.25).collect();
    let want: f64 = data.iter().map(|&v| v as f64).sum();
    let input = Buffer::from_slice(&q, &data)?;
    let partials = Buffer::from_slice(&q, &vec![0f32; groups])?;
    let out = Buffer::from_slice(&q, &vec![0f32; n])?;
    let sum = |f: &str| Program::from_source(&q, &SUM.replace("REDUCE", f))?.kernel("sum_floats");
    let map = |b: &str| Program::from_source(&q, &MAP.replace("BODY", b))?.kernel("map_floats");
    let kernels: [Kernel; 4] = [
        sum("sub_group_reduce_add")?,
        sum("sub_group_non_uniform_reduce_add")?,
        map("in[i]")?,
        map("sub_group_clustered_reduce_add(in[i], 8)")?,
    ];
    let names = [
        "sub_group_reduce_add",
        "sub_group_non_uniform_reduce_add",
        "copy",
        "sub_group_clustered_reduce_add(x, 8)",
    ];
    println!(
        "device: {device}\nbackend: {}, n = {n}, {groups} groups of {LOCAL}",
        device.sub_groups().effective.shuffle_backend
    );
    let mut times: [Vec<Duration>; 4] = Default::default();
    for round in 0..=args.runs {
        for (k, kernel) in kernels.iter().enumerate() {
            let d = if k < 2 {
                let l = kernel
                    .launch()
                    .arg(&input)
                    .arg(&partials)
                    .arg((n / 4) as u32);
                let d = launch(l.arg(Local::<f32>::new(LOCAL)), groups)?;
                let got: f64 = partials.read(&q)?.iter().map(|&p| p as f64).sum();
                if got != want {
                    return Err(format!("{}: sum {got} (host {want})", names[k]).into());
                }
                d
            } else {
                launch(kernel.launch().arg(&input).arg(&out).arg(n as u32), groups)?
            };
            if round > 0 {
                times[k].push(d);
            }
            // The mapped outputs, checked in full on the first and the last round.
            if k >= 2 && (round == 0 || round == args.runs) {
                let got = out.read(&q)?;
                for (i, &g) in got.iter().enumerate() {
                    let w = if k == 2 {
                        data[i]
                    } else {
                        data[i & !7..(i & !7) + 8].iter().sum()
                    };
                    if g != w {
                        return Err(format!("{}: out[{i}] = {g}, want {w}", names[k]).into());
                    }
                }
            }
        }
    }
    let med: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    for (k, name) in names.iter().enumerate() {
        let bytes = if k < 2 { 4 * n } else { 8 * n };
        let gbs = bytes as f64 / med[k].as_secs_f64() / 1e9;
        println!(
            "{name:<38} median {:9.1} µs ({gbs:.0} GB/s)",
            med[k].as_secs_f64() * 1e6
        );
    }
    let ratio = |a: usize, b: usize| med[b].as_secs_f64() / med[a].as_secs_f64();
    println!(
        "speed of sub_group_non_uniform_reduce_add relative to sub_group_reduce_add: {:.3}\n\
         speed of sub_group_clustered_reduce_add(x, 8) relative to a copy: {:.3} ({} runs each, outputs checked)",
        ratio(1, 0),
        ratio(3, 2),
        args.runs
    );
    Ok(())
}
