//! Task 2 with clgroups: c = a + b over a prime n; a plain range launch rounds the range and
//! picks the local size.

use clgroups::prelude::*;

const N: usize = 1_000_003;
const SRC: &str =
    "kernel void vadd(global const float *a, global const float *b, global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}";

fn main() -> Result<()> {
    let queue = Queue::new(&default_device()?)?;
    let vadd = Program::from_source(&queue, SRC)?.kernel("vadd")?;
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| (N - i) as f32 * 0.5).collect();
    let a_buf = Buffer::from_slice(&queue, &a)?;
    let b_buf = Buffer::from_slice(&queue, &b)?;
    let c_buf = Buffer::<f32>::new(&queue, N)?;
    // SAFETY: each work-item touches a, b and c at its global id, below N = their length.
    unsafe { vadd.launch().arg(&a_buf).arg(&b_buf).arg(&c_buf).range(N) }?.wait()?;
    let c = c_buf.read(&queue)?;
    assert!((0..N).all(|i| c[i] == a[i] + b[i]), "wrong sum");
    println!("vadd of {N} elements on {}: ok", queue.device());
    Ok(())
}
