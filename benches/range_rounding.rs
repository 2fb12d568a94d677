//! Vector addition on the default device at a power of two `N`, at the largest prime below it
//! with a NULL local size, and at that prime with range rounding; device time from profiling
//! events. `cargo bench --bench range_rounding`.
// criterion_group! defines an undocumented public `benches` function.
#![allow(missing_docs)]

use clgroups::launch::{Event, LocalSize};
use clgroups::{Buffer, Kernel, Program, Queue, Result};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const VADD: &str = "kernel void vadd(global const float *a, global const float *b, \
                    global float *c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }";

/// 2^20 elements, and 1,048,573, the largest prime below it.
const POW2: usize = 1 << 20;
const PRIME: usize = 1_048_573;

struct Setup {
    kernel: Kernel,
    a: Buffer<f32>,
    b: Buffer<f32>,
    c: Buffer<f32>,
}

fn setup() -> Result<Setup> {
    let q = Queue::with_profiling(&clgroups::default_device()?)?;
    let kernel = Program::from_source(&q, VADD)?.kernel("vadd")?;
    let a: Vec<f32> = (0..POW2).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..POW2).map(|i| (i % 7) as f32).collect();
    Ok(Setup {
        kernel,
        a: Buffer::from_slice(&q, &a)?,
        b: Buffer::from_slice(&q, &b)?,
        c: Buffer::new(q.context(), POW2)?,
    })
}

/// One launch over `n` items: plain range (rounded when it helps) or NULL local size.
fn launch(s: &Setup, n: usize, rounded: bool) -> Result<Event> {
    assert!(n <= POW2, "{n} items over buffers of {POW2}");
    let l = s.kernel.launch().arg(&s.a).arg(&s.b).arg(&s.c);
    // SAFETY: `vadd` touches element get_global_id(0) < n <= POW2 of each buffer.
    unsafe {
        if rounded {
            l.range(n)
        } else {
            l.nd_range(n, LocalSize::Auto)
        }
    }
}

fn bench(c: &mut Criterion) {
    let s = setup().expect("an OpenCL device and the vector-add kernel");
    let mut g = c.benchmark_group("vadd");
    for (name, n, rounded) in [
        ("pow2", POW2, true),
        ("prime_null", PRIME, false),
        ("prime_rounded", PRIME, true),
    ] {
        g.throughput(Throughput::Bytes(12 * n as u64));
        g.bench_function(name, |bch| {
            bch.iter_custom(|iters| {
                (0..iters)
                    .map(|_| launch(&s, n, rounded).and_then(|e| e.duration()))
                    .sum::<Result<Duration>>()
                    .expect("launch")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
