//! Task 3 with ocl: the sum of each group of 32 work-items. PoCL 3.1 has no sub-groups (no
//! cl_khr_subgroups), nor does NVIDIA's OpenCL, so the portable kernel reduces each run of 32
//! lanes in local memory with work-group barriers.

use ocl::{Buffer, ProQue};

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

fn main() -> ocl::Result<()> {
    let pro_que = ProQue::builder().src(SRC).dims(N).build()?;
    let x: Vec<f32> = (0..N).map(|i| (i % 10) as f32).collect();
    let x_buf = pro_que
        .buffer_builder()
        .len(N)
        .copy_host_slice(&x)
        .build()?;
    let out_buf: Buffer<f32> = pro_que.buffer_builder().len(N / 32).build()?;
    let sums = pro_que
        .kernel_builder("sums")
        .arg(&x_buf)
        .arg(&out_buf)
        .arg_local::<f32>(LOCAL)
        .local_work_size(LOCAL)
        .build()?;
    // SAFETY: N work-items read x[0..N] and write out[0..N/32]; the local buffer holds LOCAL
    // floats.
    unsafe { sums.enq()? };
    let mut out = vec![0.0f32; N / 32];
    out_buf.read(&mut out).enq()?;
    let ok = x
        .chunks(32)
        .zip(&out)
        .all(|(c, s)| c.iter().sum::<f32>() == *s);
    assert!(ok, "wrong group sum");
    println!("{} group sums on {}: ok", N / 32, pro_que.device().name()?);
    Ok(())
}
