//! Task 4 with ocl: the sum of 2^20 floats, in two passes of one local-memory tree kernel
//! (64 work-groups of 256 write partial sums; one work-group adds them).

use ocl::{Buffer, ProQue};

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

fn main() -> ocl::Result<()> {
    let pro_que = ProQue::builder().src(SRC).dims(GROUPS * LOCAL).build()?;
    let x: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    let x_buf = pro_que
        .buffer_builder()
        .len(N)
        .copy_host_slice(&x)
        .build()?;
    let partial_buf: Buffer<f32> = pro_que.buffer_builder().len(GROUPS).build()?;
    let sum_buf: Buffer<f32> = pro_que.buffer_builder().len(1).build()?;
    // Pass 1: GROUPS partial sums; pass 2: their sum.
    for (input, n, output, groups) in [
        (&x_buf, N, &partial_buf, GROUPS),
        (&partial_buf, GROUPS, &sum_buf, 1),
    ] {
        let pass = pro_que
            .kernel_builder("partial_sums")
            .arg(input)
            .arg(n as u32)
            .arg(output)
            .arg_local::<f32>(LOCAL)
            .global_work_size(groups * LOCAL)
            .local_work_size(LOCAL)
            .build()?;
        // SAFETY: the kernel reads input[0..n] and writes output[0..groups]; the local buffer
        // holds LOCAL floats.
        unsafe { pass.enq()? };
    }
    let mut sum = [0.0f32];
    sum_buf.read(&mut sum[..]).enq()?;
    let expected: usize = (0..N).map(|i| i % 7).sum();
    assert_eq!(sum[0], expected as f32);
    println!(
        "sum of {N} floats on {}: {} ok",
        pro_que.device().name()?,
        sum[0]
    );
    Ok(())
}
