//! Task 5 with clgroups: y = a*x + y as one launch over every device of the platform
//! (POCL_DEVICES="pthread pthread": two), on colored buffers.

use clgroups::prelude::*;

const N: usize = 1 << 22;
const A: f32 = 3.0;
const SRC: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}";

fn main() -> Result<()> {
    let root = RootDevice::from_env()?;
    assert!(root.len() >= 2, "needs two devices, found {}", root.len());
    let saxpy = root.program(SRC)?.kernel("saxpy")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 777) as f32).collect();
    let x_buf = ColoredBuffer::from_slice(&root, &x)?;
    let mut y_buf = ColoredBuffer::from_slice(&root, &y)?;
    // SAFETY: each work-item reads x and updates y at its own global id, below N = their length.
    unsafe {
        saxpy
            .launch()
            .arg(&mut y_buf)
            .arg(&x_buf)
            .arg(A)
            .nd_range(N, 256)
    }?
    .wait()?;
    let out = y_buf.read()?;
    assert!((0..N).all(|i| out[i] == A * x[i] + y[i]), "wrong saxpy");
    println!("saxpy of {N} elements on {} devices: ok", root.len());
    Ok(())
}
