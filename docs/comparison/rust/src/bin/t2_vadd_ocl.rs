//! Task 2 with ocl: c = a + b over a prime n; the global size is padded to a multiple of the
//! local size and the kernel guards the extra work-items.

use ocl::{Buffer, ProQue};

const N: usize = 1_000_003;
const LOCAL: usize = 256;
const SRC: &str = "kernel void vadd(global const float *a, global const float *b, global float *c,
                   uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}";

fn main() -> ocl::Result<()> {
    let pro_que = ProQue::builder()
        .src(SRC)
        .dims(N.div_ceil(LOCAL) * LOCAL)
        .build()?;
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| (N - i) as f32 * 0.5).collect();
    let a_buf = pro_que
        .buffer_builder()
        .len(N)
        .copy_host_slice(&a)
        .build()?;
    let b_buf = pro_que
        .buffer_builder()
        .len(N)
        .copy_host_slice(&b)
        .build()?;
    let c_buf: Buffer<f32> = pro_que.buffer_builder().len(N).build()?;
    let vadd = pro_que
        .kernel_builder("vadd")
        .arg(&a_buf)
        .arg(&b_buf)
        .arg(&c_buf)
        .arg(N as u32)
        .local_work_size(LOCAL)
        .build()?;
    // SAFETY: the kernel touches index i < n only, and every buffer holds n floats.
    unsafe { vadd.enq()? };
    let mut c = vec![0.0f32; N];
    c_buf.read(&mut c).enq()?;
    assert!((0..N).all(|i| c[i] == a[i] + b[i]), "wrong sum");
    println!("vadd of {N} elements on {}: ok", pro_que.device().name()?);
    Ok(())
}
