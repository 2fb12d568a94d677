//! Task 5 with ocl: y = a*x + y split over every device of the first platform with two or
//! more (POCL_DEVICES="pthread pthread": two): one context, a queue and a chunk of x and y
//! per device, all launches enqueued before the first read.

use ocl::{Buffer, Context, Device, Kernel, Platform, Program, Queue};

const N: usize = 1 << 22;
const A: f32 = 3.0;
const SRC: &str = "kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (platform, devices) = Platform::list()
        .into_iter()
        .filter_map(|p| Some((p, Device::list_all(p).ok()?)))
        .find(|(_, d)| d.len() >= 2)
        .ok_or("needs a platform with two devices")?;
    let context = Context::builder()
        .platform(platform)
        .devices(&devices)
        .build()?;
    let program = Program::builder()
        .src(SRC)
        .devices(&devices)
        .build(&context)?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 777) as f32).collect();
    let chunk = N.div_ceil(devices.len());
    let mut parts = Vec::new();
    for (&device, (xs, ys)) in devices.iter().zip(x.chunks(chunk).zip(y.chunks(chunk))) {
        let queue = Queue::new(&context, device, None)?;
        let buffer = |data: &[f32]| {
            Buffer::builder()
                .queue(queue.clone())
                .len(data.len())
                .copy_host_slice(data)
                .build()
        };
        let (x_buf, y_buf) = (buffer(xs)?, buffer(ys)?);
        let saxpy = Kernel::builder()
            .program(&program)
            .name("saxpy")
            .queue(queue.clone())
            .global_work_size(xs.len())
            .arg(&y_buf)
            .arg(&x_buf)
            .arg(A)
            .build()?;
        // SAFETY: one work-item per element of the chunk.
        unsafe { saxpy.enq()? };
        parts.push((x_buf, y_buf));
    }
    let mut out = vec![0.0f32; N];
    for ((_, y_buf), out) in parts.iter().zip(out.chunks_mut(chunk)) {
        y_buf.read(out).enq()?;
    }
    assert!((0..N).all(|i| out[i] == A * x[i] + y[i]), "wrong saxpy");
    println!("saxpy of {N} elements on {} devices: ok", devices.len());
    Ok(())
}
