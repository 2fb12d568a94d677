// Scratch (not committed): root launches + wait in a loop, for perf.
const SRC: &str = "kernel void saxpy(global const float *x, global float *y, float a, uint n) { size_t i = get_global_id(0); if (i < n) y[i] += a * x[i]; }";
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1usize << 12;
    let which = std::env::args().nth(1).unwrap_or_default();
    let root = clgroups::RootDevice::from_env()?;
    let k = root.program(SRC)?.kernel("saxpy")?;
    let (rx, ry) = (
        clgroups::ColoredBuffer::from_slice(&root, &vec![1.0f32; n])?,
        clgroups::ColoredBuffer::from_slice(&root, &vec![0.0f32; n])?,
    );
    let q = clgroups::Queue::new(&root.devices()[0])?;
    let k1 = clgroups::Program::from_source(&q, SRC)?.kernel("saxpy")?;
    let (x, y) = (
        clgroups::Buffer::from_slice(&q, &vec![1.0f32; n])?,
        clgroups::Buffer::from_slice(&q, &vec![0.0f32; n])?,
    );
    let t = std::time::Instant::now();
    for _ in 0..30000 {
        if which == "one" {
            unsafe {
                k1.launch()
                    .arg(&x)
                    .arg(&y)
                    .arg(1.0f32)
                    .arg(n as u32)
                    .range(n)
            }?
            .wait()?;
        } else {
            unsafe {
                k.launch()
                    .arg(&rx)
                    .arg(&ry)
                    .arg(1.0f32)
                    .arg(n as u32)
                    .range(n)
            }?
            .wait()?;
        }
    }
    println!(
        "{which}: {:.2} us per launch",
        t.elapsed().as_secs_f64() / 30000.0 * 1e6
    );
    Ok(())
}
