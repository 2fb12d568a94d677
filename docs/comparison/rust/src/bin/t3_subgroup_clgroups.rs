//! Task 3 with clgroups: the sum of each sub-group of 32 work-items, through the portable
//! sub-group layer (native shuffles where the device has them, emulated on PoCL 3.1).

use clgroups::prelude::*;

const N: usize = 1 << 20;
const SRC: &str = "#include <clgroups/subgroup.h>
CLG_REQD_SUB_GROUP_SIZE(32)
kernel void sums(global const float *x, global float *out) {
    float s = sg_reduce_add(x[get_global_id(0)]);
    if (sg_get_local_id() == 0) out[get_global_id(0) / 32] = s;
}";

fn main() -> Result<()> {
    let queue = Queue::new(&default_device()?)?;
    let sums = Program::from_source(&queue, SRC)?.kernel("sums")?;
    let x: Vec<f32> = (0..N).map(|i| (i % 10) as f32).collect();
    let x_buf = Buffer::from_slice(&queue, &x)?;
    let out_buf = Buffer::<f32>::new(&queue, N / 32)?;
    // SAFETY: x is read at the global id (< N); out is written at global id / 32 (< N / 32).
    unsafe {
        sums.launch()
            .arg(&x_buf)
            .arg(&out_buf)
            .nd_range(N, LocalSize::Tuned)
    }?
    .wait()?;
    let out = out_buf.read(&queue)?;
    let ok = x
        .chunks(32)
        .zip(&out)
        .all(|(c, s)| c.iter().sum::<f32>() == *s);
    assert!(ok, "wrong sub-group sum");
    println!("{} sub-group sums on {}: ok", N / 32, queue.device());
    Ok(())
}
