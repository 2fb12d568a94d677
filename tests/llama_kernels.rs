//! Issue 20, item 5: llama.cpp's OpenCL sub-group kernels (`ggml/src/ggml-opencl/kernels/`:
//! `norm.cl`, `rms_norm.cl`, `softmax_f32.cl`, `mul_mv_f32_f32.cl`) choose a sub-group size
//! through `cl_intel_required_subgroup_size` (or Qualcomm's `cl_qcom_reqd_sub_group_size`) and
//! otherwise stop at `#error "Selecting subgroup size is not supported on your device."`.
//! clgroups defines the extension where it can honour `intel_reqd_sub_group_size(N)` (emulated:
//! every size it offers; NVIDIA: the warp, 32; native drivers: their own list).
//!
//! The kernels below follow the preprocessor structure of those files (the extension tests,
//! `REQD_SUBGROUP_SIZE_*` macros, `#ifdef INTEL_GPU` / `ADRENO_GPU` in front of declarations,
//! llama.cpp's argument lists: byte offsets and strides); their bodies are trimmed rewrites,
//! written for this test (MIT-licensed originals: ggml-org/llama.cpp). llama.cpp's fp16
//! prologue (`#error` without `cl_khr_fp16`) is left out: neither PoCL offers `cl_khr_fp16`, and
//! these f32 kernels do not use `half`. Results are checked against the host.

mod common;

use clgroups::{Buffer, Error, Local, LocalSize, Program, Queue, Range};

/// The prologue of llama.cpp's sub-group kernels.
const PROLOGUE: &str = r#"
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#elif defined(cl_intel_subgroups)
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#else
#error "Subgroups not supported on your device."
#endif

#ifdef cl_intel_required_subgroup_size
#pragma OPENCL EXTENSION cl_intel_required_subgroup_size : enable
#define INTEL_GPU 1
#define REQD_SUBGROUP_SIZE_16 __attribute__((intel_reqd_sub_group_size(16)))
#define REQD_SUBGROUP_SIZE_32 __attribute__((intel_reqd_sub_group_size(32)))
#elif defined(cl_qcom_reqd_sub_group_size)
#pragma OPENCL EXTENSION cl_qcom_reqd_sub_group_size : enable
#define ADRENO_GPU 1
#define REQD_SUBGROUP_SIZE_64  __attribute__((qcom_reqd_sub_group_size("half")))
#define REQD_SUBGROUP_SIZE_128 __attribute__((qcom_reqd_sub_group_size("full")))
#else
#error "Selecting subgroup size is not supported on your device."
#endif
"#;

/// `norm.cl`'s shape: no sub-group operation, but the prologue's `#error` stops it too.
const NORM: &str = r#"
kernel void kernel_norm(
        global void * src0, ulong offset0, global float * dst, ulong offsetd,
        int ne00, int ne01, int ne02, int ne03, ulong nb01, ulong nb02, ulong nb03,
        float eps, local float * sum) {
    src0 = (global void *)((global char *)src0 + offset0);
    dst = (global float *)((global char *)dst + offsetd);
    int i03 = get_group_id(2), i02 = get_group_id(1), i01 = get_group_id(0);
    global float * x = (global float *)((global char *)src0 + i03*nb03 + i02*nb02 + i01*nb01);
    uint lid = get_local_id(0);
    sum[lid] = 0.0f;
    for (int i = lid; i < ne00; i += get_local_size(0)) sum[lid] += x[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s) sum[lid] += sum[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float mean = sum[0] / ne00;
    barrier(CLK_LOCAL_MEM_FENCE);
    global float * y = dst + i03*ne02*ne01*ne00 + i02*ne01*ne00 + i01*ne00;
    sum[lid] = 0.0f;
    for (int i = lid; i < ne00; i += get_local_size(0)) {
        y[i] = x[i] - mean;
        sum[lid] += y[i] * y[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s) sum[lid] += sum[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float scale = 1.0f / sqrt(sum[0] / ne00 + eps);
    for (int i = lid; i < ne00; i += get_local_size(0)) y[i] = y[i] * scale;
}
"#;

/// `rms_norm.cl`'s shape: sub-groups of 32 on `INTEL_GPU` (`REQD_SUBGROUP_SIZE_32` behind an
/// `#ifdef` in front of the declaration), one partial sum per sub-group in local memory.
const RMS_NORM: &str = r#"
#ifdef INTEL_GPU
REQD_SUBGROUP_SIZE_32
#elif defined (ADRENO_GPU)
REQD_SUBGROUP_SIZE_64
#endif
kernel void kernel_rms_norm(
        global void * src0, ulong offset0, global float * dst, ulong offsetd,
        int ne00, int ne01, int ne02, int ne03, ulong nb01, ulong nb02, ulong nb03,
        float eps, local float * sum) {
    src0 = (global void *)((global char *)src0 + offset0);
    dst = (global float *)((global char *)dst + offsetd);
    int i03 = get_group_id(2), i02 = get_group_id(1), i01 = get_group_id(0);
    global float4 * x = (global float4 *)((global char *)src0 + i03*nb03 + i02*nb02 + i01*nb01);
    global float * xs = (global float *)x;
    float4 acc = 0;
    for (int i = get_local_id(0); i < ne00/4; i += get_local_size(0)) acc += x[i] * x[i];
    float part = sub_group_reduce_add(acc.s0 + acc.s1 + acc.s2 + acc.s3);
    if (get_sub_group_local_id() == 0) sum[get_sub_group_id()] = part;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        float total = 0.0f;
        for (uint s = 0; s < get_num_sub_groups(); ++s) total += sum[s];
        for (int i = 4*(ne00/4); i < ne00; ++i) total += xs[i] * xs[i];
        sum[0] = total / ne00;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const float scale = 1.0f / sqrt(sum[0] + eps);
    global float4 * y = (global float4 *)(dst + i03*ne02*ne01*ne00 + i02*ne01*ne00 + i01*ne00);
    global float * ys = (global float *)y;
    for (int i = get_local_id(0); i < ne00/4; i += get_local_size(0)) y[i] = x[i] * scale;
    if (get_local_id(0) == 0) {
        for (int i = 4*(ne00/4); i < ne00; ++i) ys[i] = xs[i] * scale;
    }
}
"#;

/// `softmax_f32.cl`'s shape: one row per work-group of one sub-group (`sub_group_reduce_max`,
/// `sub_group_reduce_add` over the row), a size only on `ADRENO_GPU`.
const SOFT_MAX: &str = r#"
#ifdef ADRENO_GPU
REQD_SUBGROUP_SIZE_64
#endif
kernel void kernel_soft_max(
        global float * src0, ulong offset0, global float * dst, ulong offsetd,
        int ne00, int ne01, int ne02, float scale) {
    src0 = (global float *)((global char *)src0 + offset0);
    dst = (global float *)((global char *)dst + offsetd);
    int i02 = get_group_id(1), i01 = get_group_id(0);
    global float * p = src0 + i02*ne01*ne00 + i01*ne00;
    global float * q = dst + i02*ne01*ne00 + i01*ne00;
    float lmax = -INFINITY;
    for (int i = get_local_id(0); i < ne00; i += get_local_size(0)) lmax = fmax(lmax, p[i] * scale);
    float max = sub_group_reduce_max(lmax);
    float lsum = 0.0f;
    for (int i = get_local_id(0); i < ne00; i += get_local_size(0)) {
        float e = exp(p[i] * scale - max);
        lsum += e;
        q[i] = e;
    }
    const float sum = sub_group_reduce_add(lsum);
    for (int i = get_local_id(0); i < ne00; i += get_local_size(0)) q[i] /= sum;
}
"#;

/// `mul_mv_f32_f32.cl`'s shape: `N_F32_F32` rows of `src1` per work-group, a sub-group-strided
/// dot product (`get_max_sub_group_size()`), `sub_group_reduce_add`, lane 0 writes.
const MUL_MV: &str = r#"
#define N_F32_F32 4

#ifdef ADRENO_GPU
REQD_SUBGROUP_SIZE_64
#endif
kernel void kernel_mul_mat_f32_f32(
        global char * src0, ulong offset0, global char * src1, ulong offset1,
        global float * dst, ulong offsetd,
        int ne00, int ne01, ulong nb01, int ne11, ulong nb11, int ne0) {
    src0 = src0 + offset0;
    src1 = src1 + offset1;
    dst = (global float *)((global char *)dst + offsetd);
    int r0 = get_group_id(0);
    int rb = get_group_id(1) * N_F32_F32;
    global float * x = (global float *)(src0 + r0*nb01);
    for (int row = 0; row < N_F32_F32; ++row) {
        int r1 = rb + row;
        if (r1 >= ne11) {
            break;
        }
        global float * y = (global float *)(src1 + r1*nb11);
        float sumf = 0;
        for (int i = get_sub_group_local_id(); i < ne00; i += get_max_sub_group_size()) {
            sumf += x[i] * y[i];
        }
        float all_sum = sub_group_reduce_add(sumf);
        if (get_sub_group_local_id() == 0) {
            dst[r1*ne0 + r0] = all_sum;
        }
    }
}
"#;

fn program(q: &Queue, body: &str) -> Program {
    Program::from_source(q, &format!("{PROLOGUE}{body}")).unwrap_or_else(|e| {
        panic!(
            "llama.cpp-style kernel does not build on {}: {e}",
            q.device()
        )
    })
}

fn close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}: [{i}] {g} vs {w}"
        );
    }
}

/// `ne01` rows of `ne00` values.
fn rows(ne00: usize, ne01: usize) -> Vec<f32> {
    common::values(ne00 * ne01, 11)
        .iter()
        .map(|&v| v as f32 / 300.0)
        .collect()
}

/// Launches a norm kernel with llama.cpp's arguments: one work-group of `nth` per row of
/// `ne00` floats, `local float *sum` of one float per work-item.
fn launch_norm(
    k: &clgroups::Kernel,
    (src, dst): (&Buffer<f32>, &Buffer<f32>),
    (ne00, ne01, nth): (usize, usize, usize),
    eps: f32,
) -> clgroups::Result<()> {
    let nb01 = (ne00 * 4) as u64;
    // SAFETY: work-group r reads row r of src and writes row r of dst (ne00 floats each,
    // both ne00 * ne01 long); `sum` holds one float per work-item.
    unsafe {
        k.launch()
            .arg(src)
            .arg(0u64)
            .arg(dst)
            .arg(0u64)
            .arg(ne00 as i32)
            .arg(ne01 as i32)
            .arg(1i32)
            .arg(1i32)
            .arg(nb01)
            .arg(nb01 * ne01 as u64)
            .arg(nb01 * ne01 as u64)
            .arg(eps)
            .arg(Local::<f32>::new(nth))
            .nd_range(Range::d1(ne01 * nth), LocalSize::Exact(Range::d1(nth)))
    }?
    .wait()?;
    Ok(())
}

/// The host's `norm` (`kernel_norm`) or `rms_norm` of each row of `x`.
fn norm_rows(x: &[f32], ne00: usize, name: &str, eps: f32) -> Vec<f32> {
    x.chunks(ne00)
        .flat_map(|r| {
            let n = r.len() as f32;
            let (mean, ms) = match name {
                "kernel_norm" => {
                    let m = r.iter().sum::<f32>() / n;
                    (m, r.iter().map(|v| (v - m) * (v - m)).sum::<f32>() / n)
                }
                _ => (0.0, r.iter().map(|v| v * v).sum::<f32>() / n),
            };
            let scale = 1.0 / (ms + eps).sqrt();
            r.iter()
                .map(move |v| (v - mean) * scale)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `norm` and `rms_norm` over `ne01` rows, one work-group of 64 per row, as llama.cpp launches
/// them (`local float *sum` of one float per work-item).
#[test]
fn norm_and_rms_norm_run_unchanged() {
    let q = common::queue();
    // Rows of 100 floats: `float4` rows must stay 16-byte aligned (102 segfaults PoCL 3.1).
    let (ne00, ne01, nth) = (100usize, 6usize, 64usize);
    let x = rows(ne00, ne01);
    let src = Buffer::from_slice(&q, &x).unwrap();
    let eps = 1e-5f32;
    for (body, name) in [(NORM, "kernel_norm"), (RMS_NORM, "kernel_rms_norm")] {
        let p = program(&q, body);
        let k = p.kernel(name).unwrap();
        let dst = Buffer::from_slice(&q, &vec![f32::NAN; ne00 * ne01]).unwrap();
        launch_norm(&k, (&src, &dst), (ne00, ne01, nth), eps)
            .unwrap_or_else(|e| panic!("{name} on {}: {e}", q.device()));
        let want = norm_rows(&x, ne00, name, eps);
        close(&dst.read(&q).unwrap(), &want, name);
        if name == "kernel_rms_norm" {
            // INTEL_GPU was taken: the kernel runs with the sub-groups of 32 it asks for.
            assert_eq!(
                k.sub_groups().max_sub_group_size(Range::d1(nth)).unwrap(),
                32
            );
        }
        println!("{name}: right on {}", q.device());
    }
}

/// `rms_norm.cl` as llama.cpp writes it: the sub-group path under
/// `#ifndef GGML_OPENCL_NO_REQD_SUBGROUP_SIZE` (its size macros defined under the extension's
/// `#ifdef`, `REQD_SUBGROUP_SIZE_32` chosen by `#ifdef INTEL_GPU`), a local-memory fallback of
/// the same kernel under `#else`. clgroups evaluates the branches with the macros the build
/// defines: the kernel runs with the size the compiler's branch picks (a probe kernel of the
/// same program reports which), and with `-DGGML_OPENCL_NO_REQD_SUBGROUP_SIZE` the fallback runs.
#[test]
fn rms_norm_takes_the_size_its_if_branches_pick() {
    let q = common::queue();
    let d = q.device().clone();
    let fallback = NORM.replace("kernel_norm", "kernel_rms_norm");
    let src = format!(
        "#ifndef GGML_OPENCL_NO_REQD_SUBGROUP_SIZE\n\
         #pragma OPENCL EXTENSION cl_khr_subgroups : enable\n\
         #ifdef cl_intel_required_subgroup_size\n\
         #pragma OPENCL EXTENSION cl_intel_required_subgroup_size : enable\n\
         #define INTEL_GPU 1\n\
         #define REQD_SUBGROUP_SIZE_16 __attribute__((intel_reqd_sub_group_size(16)))\n\
         #define REQD_SUBGROUP_SIZE_32 __attribute__((intel_reqd_sub_group_size(32)))\n\
         #elif defined(cl_qcom_reqd_sub_group_size)\n\
         #define ADRENO_GPU 1\n\
         #define REQD_SUBGROUP_SIZE_64  __attribute__((qcom_reqd_sub_group_size(\"half\")))\n\
         #endif\n{RMS_NORM}\n#else // GGML_OPENCL_NO_REQD_SUBGROUP_SIZE\n{fallback}\n#endif\n\
         kernel void probe(global int *o) {{\n#ifdef INTEL_GPU\n o[0] = 1;\n#else\n o[0] = 0;\n#endif\n}}\n"
    );
    let (ne00, ne01, nth) = (100usize, 4usize, 64usize);
    let x = rows(ne00, ne01);
    let input = Buffer::from_slice(&q, &x).unwrap();
    for options in ["", "-DGGML_OPENCL_NO_REQD_SUBGROUP_SIZE"] {
        let p = Program::builder(src.as_str())
            .options(options)
            .build(&q)
            .unwrap_or_else(|e| panic!("{d} [{options}]: {e}"));
        let o = Buffer::from_slice(&q, &[-1i32]).unwrap();
        // SAFETY: one work-item writes o[0].
        unsafe {
            p.kernel("probe")
                .unwrap()
                .launch()
                .arg(&o)
                .nd_range(1, LocalSize::Auto)
        }
        .and_then(|ev| ev.wait())
        .unwrap();
        let intel = o.read(&q).unwrap()[0] == 1;
        let k = p.kernel("kernel_rms_norm").unwrap();
        let dst = Buffer::from_slice(&q, &vec![f32::NAN; ne00 * ne01]).unwrap();
        let ran = launch_norm(&k, (&input, &dst), (ne00, ne01, nth), 1e-5);
        let offered = d.sub_groups().effective.sub_group_sizes.contains(&32);
        match (options.is_empty() && intel, ran) {
            (true, Ok(())) => {
                let size = k.sub_groups().max_sub_group_size(Range::d1(nth)).unwrap();
                assert_eq!(size, 32, "{d}: INTEL_GPU picks 32");
            }
            (true, Err(e @ Error::FeatureNotSupported { .. })) if !offered => {
                println!("{d}: the #if picks 32, which the device does not offer: {e}");
                continue;
            }
            (false, Ok(())) => {}
            (_, Err(e)) => panic!("{d} [{options}] (INTEL_GPU: {intel}): {e}"),
        }
        // The fallback is llama.cpp's local-memory path, here `norm.cl`'s body under its name.
        let which = match options.is_empty() {
            true => "kernel_rms_norm",
            false => "kernel_norm",
        };
        close(
            &dst.read(&q).unwrap(),
            &norm_rows(&x, ne00, which, 1e-5),
            options,
        );
        println!("{d} [{options}]: INTEL_GPU {intel}: right");
    }
}

/// `soft_max` and `mul_mv` with work-groups of one sub-group, of the size clgroups reports for
/// the kernel (llama.cpp's hosts take it from the device the same way).
#[test]
fn soft_max_and_mul_mv_run_unchanged() {
    let q = common::queue();
    let (ne00, ne01) = (75usize, 5usize);
    let x = rows(ne00, ne01);
    let src = Buffer::from_slice(&q, &x).unwrap();
    // soft_max, scale 0.5.
    let p = program(&q, SOFT_MAX);
    let k = p.kernel("kernel_soft_max").unwrap();
    let sg = k.sub_groups().max_sub_group_size(Range::d1(32)).unwrap();
    let dst = Buffer::from_slice(&q, &vec![f32::NAN; ne00 * ne01]).unwrap();
    // SAFETY: work-group r reads and writes row r of src and dst (ne00 floats, both
    // ne00 * ne01 long).
    unsafe {
        k.launch()
            .arg(&src)
            .arg(0u64)
            .arg(&dst)
            .arg(0u64)
            .arg(ne00 as i32)
            .arg(ne01 as i32)
            .arg(1i32)
            .arg(0.5f32)
            .nd_range(Range::d1(ne01 * sg), LocalSize::Exact(Range::d1(sg)))
    }
    .and_then(|ev| ev.wait())
    .unwrap_or_else(|e| panic!("soft_max on {}: {e}", q.device()));
    let want: Vec<f32> = x
        .chunks(ne00)
        .flat_map(|r| {
            let m = r.iter().fold(f32::NEG_INFINITY, |a, &v| a.max(v * 0.5));
            let e: Vec<f32> = r.iter().map(|v| (v * 0.5 - m).exp()).collect();
            let s: f32 = e.iter().sum();
            e.into_iter().map(move |v| v / s)
        })
        .collect();
    close(&dst.read(&q).unwrap(), &want, "soft_max");
    println!(
        "kernel_soft_max: right on {} (sub-groups of {sg})",
        q.device()
    );

    // mul_mv: dst[r1][r0] = x row r0 . y row r1, ne11 = 6 rows of y (4 per work-group).
    let p = program(&q, MUL_MV);
    let k = p.kernel("kernel_mul_mat_f32_f32").unwrap();
    let sg = k.sub_groups().max_sub_group_size(Range::d1(32)).unwrap();
    let (got, want) = mul_mv(&p, &x, (ne00, ne01, 6), sg)
        .unwrap_or_else(|e| panic!("mul_mv on {}: {e}", q.device()));
    close(&got, &want, "mul_mv");
    println!(
        "kernel_mul_mat_f32_f32: right on {} (sub-groups of {sg})",
        q.device()
    );
}

/// `kernel_mul_mat_f32_f32` over `x` (`ne01` rows of `ne00`) and `ne11` rows of `y`, in
/// work-groups of `local` x 1: what it wrote, and the host's dot products.
fn mul_mv(
    p: &Program,
    x: &[f32],
    (ne00, ne01, ne11): (usize, usize, usize),
    local: usize,
) -> clgroups::Result<(Vec<f32>, Vec<f32>)> {
    let q = p.queue();
    let k = p.kernel("kernel_mul_mat_f32_f32").unwrap();
    let y = rows(ne00, ne11);
    let src = Buffer::from_slice(q, x).unwrap();
    let src1 = Buffer::from_slice(q, &y).unwrap();
    let dst = Buffer::from_slice(q, &vec![f32::NAN; ne01 * ne11]).unwrap();
    let nb = (ne00 * 4) as u64;
    let groups = Range::d2(ne01 * local, ne11.div_ceil(4));
    // SAFETY: work-group (r0, g) reads row r0 of src and rows 4g.. of src1 below ne11, and
    // writes dst[r1 * ne01 + r0], r1 < ne11, inside dst (ne01 * ne11).
    unsafe {
        k.launch()
            .arg(&src)
            .arg(0u64)
            .arg(&src1)
            .arg(0u64)
            .arg(&dst)
            .arg(0u64)
            .arg(ne00 as i32)
            .arg(ne01 as i32)
            .arg(nb)
            .arg(ne11 as i32)
            .arg(nb)
            .arg(ne01 as i32)
            .nd_range(groups, LocalSize::Exact(Range::d2(local, 1)))
    }
    .and_then(|ev| ev.wait())?;
    let want: Vec<f32> = (0..ne11)
        .flat_map(|r1| {
            let (x, y) = (&x, &y);
            (0..ne01).map(move |r0| {
                let a = &x[r0 * ne00..][..ne00];
                let b = &y[r1 * ne00..][..ne00];
                a.iter().zip(b).map(|(p, q)| p * q).sum::<f32>()
            })
        })
        .collect();
    Ok((dst.read(q)?, want))
}

/// Issue 32: `for (i = get_sub_group_local_id(); i < ne00; i += get_max_sub_group_size())` in
/// work-groups smaller than the device's sub-groups (16, and 1..7: one partial sub-group each)
/// covers every column: `get_max_sub_group_size()` never exceeds the work-group (on NVIDIA it
/// was 32 in work-groups of 16: 185 of 185 outputs wrong). Work-groups of one or two
/// work-items, where PoCL's native collectives abort, run the kernel's emulated build.
#[test]
fn mul_mv_in_small_work_groups() {
    let q = common::queue();
    let (ne00, ne01, ne11) = (75usize, 37usize, 5usize);
    let x = rows(ne00, ne01);
    let p = program(&q, MUL_MV);
    let k = p.kernel("kernel_mul_mat_f32_f32").unwrap();
    for local in [16usize, 1, 2, 3, 4, 5, 6, 7] {
        let max = k.sub_groups().max_sub_group_size(Range::d1(local)).unwrap();
        assert!(
            max <= local,
            "largest sub-group {max} in work-groups of {local}"
        );
        match mul_mv(&p, &x, (ne00, ne01, ne11), local) {
            Ok((got, want)) => close(&got, &want, &format!("mul_mv in work-groups of {local}")),
            Err(e) => panic!("mul_mv in work-groups of {local} on {}: {e}", q.device()),
        }
    }
    println!(
        "kernel_mul_mat_f32_f32 in work-groups of 16 and 1..7: right on {}",
        q.device()
    );
}

/// A required size the device cannot run is refused before anything is enqueued, naming the
/// size and the sizes the device offers; the extension macro is defined wherever clgroups or
/// the driver honours the attribute.
#[test]
fn sizes_a_device_cannot_run_are_refused() {
    let q = common::queue();
    let d = q.device().clone();
    let offered = d.sub_groups().effective.sub_group_sizes.clone();
    let odd = (1..)
        .map(|n| 24 * n)
        .find(|n| !offered.contains(n))
        .unwrap();
    let body = format!(
        "#ifdef INTEL_GPU\n#define REQD_ODD __attribute__((intel_reqd_sub_group_size({odd})))\n#endif\n\
         REQD_ODD kernel void odd(global float *y) {{ y[get_global_id(0)] = sub_group_reduce_add(1.0f); }}\n\
         REQD_SUBGROUP_SIZE_16 kernel void s16(global float *y) {{ y[get_global_id(0)] = sub_group_reduce_add(1.0f); }}\n"
    );
    let p = match Program::from_source(&q, &format!("{PROLOGUE}{body}")) {
        Ok(p) => p,
        // A driver that rejects the size at build names it in its log.
        Err(e @ Error::Build { .. }) => {
            assert!(e.to_string().contains(&odd.to_string()), "{e}");
            println!("{d}: size {odd}: the driver refuses the build: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let y = Buffer::from_slice(&q, &[0f32; 64]).unwrap();
    let k = p.kernel("odd").unwrap();
    // SAFETY: work-item i writes y[i], i < 64.
    let r = unsafe {
        k.launch()
            .arg(&y)
            .nd_range(Range::d1(64), LocalSize::Exact(Range::d1(64)))
    };
    match r {
        Err(e @ Error::FeatureNotSupported { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("size {odd}")) && text.contains(&format!("{offered:?}")),
                "{text}"
            );
            println!("{d}: size {odd} refused: {text}");
        }
        r => panic!(
            "{d}: size {odd}: want FeatureNotSupported, got {:?}",
            r.map(|_| ())
        ),
    }
    assert!(
        y.read(&q).unwrap().iter().all(|&v| v == 0.0),
        "a refused launch ran"
    );
    // 16, where offered, runs with sub-groups of 16.
    let k = p.kernel("s16").unwrap();
    // SAFETY: work-item i writes y[i], i < 64.
    let r = unsafe {
        k.launch()
            .arg(&y)
            .nd_range(Range::d1(64), LocalSize::Exact(Range::d1(64)))
    };
    if offered.contains(&16) {
        r.unwrap().wait().unwrap();
        assert!(y.read(&q).unwrap().iter().all(|&v| v == 16.0), "{d}");
    } else {
        assert!(
            matches!(r, Err(Error::FeatureNotSupported { requested: 16, .. })),
            "{d}"
        );
    }
}
