//! Element types beyond numbers: OpenCL vectors as Rust arrays (`[f32; 4]` for `float4`), a
//! `#[repr(C)]` struct laid out as the kernel's struct, and `half::f16`, in buffers and as
//! values; wrong ones are typed errors before anything is enqueued (the buffers keep their
//! poison).

mod common;

use common::Poison;

use bytemuck::{Pod, Zeroable};
use clgroups::launch::Launch;
use clgroups::prelude::*;
use half::f16;

const SOURCE: &str = r#"
typedef struct { float2 pos; float mass; uint id; } particle;

kernel void scale4(global float4 *v, float4 s) {
    size_t i = get_global_id(0);
    v[i] = v[i] * s + (float4)((float)i);
}

kernel void advance(global particle *p, particle delta, global uint *size) {
    size_t i = get_global_id(0);
    p[i].pos += delta.pos * p[i].mass;
    p[i].mass += delta.mass;
    p[i].id = p[i].id * 2u + delta.id;
    if (i == 0) size[0] = (uint)sizeof(particle);
}

kernel void widen(global const half *x, global float *y, global half *z) {
    size_t i = get_global_id(0);
    float v = vload_half(i, x);
    y[i] = v;
    vstore_half(v * 3.0f, i, z);
}

kernel void take3(global float3 *v) { v[get_global_id(0)] = (float3)(1.0f); }
"#;

/// Only where the device has `cl_khr_fp16`: `half` values and arithmetic.
const HALF_MATH: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void axpy_h(global half *y, global const half2 *x, half a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i].x + x[i].y + y[i];
}
"#;

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Particle {
    pos: [f32; 2],
    mass: f32,
    id: u32,
}

fn program(queue: &Queue) -> Program {
    Program::from_source(queue, SOURCE).expect("the element kernels build")
}

#[test]
fn float4_as_f32_arrays() {
    let queue = common::queue();
    let p = program(&queue);
    let n = 1000;
    let data: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, -(i as f32), 0.5, 2.0]).collect();
    let v = Buffer::from_slice(&queue, &data).unwrap();
    let s = [2.0f32, 3.0, -1.0, 0.25];
    let k = p.kernel("scale4").unwrap();
    // SAFETY: work-item i < n touches v[i] only, and v has n elements.
    unsafe { k.launch().arg(&v).arg(s).nd_range(n, LocalSize::Auto) }
        .unwrap()
        .wait()
        .unwrap();
    let got = v.read(&queue).unwrap();
    for (i, (g, d)) in got.iter().zip(&data).enumerate() {
        let want: [f32; 4] = std::array::from_fn(|c| d[c] * s[c] + i as f32);
        assert_eq!(*g, want, "element {i}");
    }
    println!("float4: {n} elements as [f32; 4] on {}", queue.device());
}

#[test]
fn repr_c_struct_matches_the_kernel_struct() {
    let queue = common::queue();
    let p = program(&queue);
    let n = 257;
    let data: Vec<Particle> = (0..n)
        .map(|i| Particle {
            pos: [i as f32, 1.0],
            mass: 0.5 + i as f32,
            id: i as u32,
        })
        .collect();
    let particles = Buffer::from_slice(&queue, &data).unwrap();
    let size = Buffer::from_slice(&queue, &[0u32]).unwrap();
    let delta = Particle {
        pos: [2.0, -1.0],
        mass: 0.25,
        id: 7,
    };
    let k = p.kernel("advance").unwrap();
    // SAFETY: work-item i < n touches particles[i] (n elements) and item 0 writes size[0].
    unsafe {
        k.launch()
            .arg(&particles)
            .arg(delta)
            .arg(&size)
            .nd_range(n, LocalSize::Auto)
    }
    .unwrap()
    .wait()
    .unwrap();
    assert_eq!(
        size.read(&queue).unwrap()[0] as usize,
        size_of::<Particle>(),
        "sizeof(particle) on the device vs size_of::<Particle>()"
    );
    for (i, (g, d)) in particles
        .read(&queue)
        .unwrap()
        .iter()
        .zip(&data)
        .enumerate()
    {
        let want = Particle {
            pos: [d.pos[0] + 2.0 * d.mass, d.pos[1] - d.mass],
            mass: d.mass + 0.25,
            id: d.id * 2 + 7,
        };
        assert_eq!(*g, want, "particle {i}");
    }
}

#[test]
fn half_storage_on_every_device() {
    let queue = common::queue();
    let p = program(&queue);
    let n = 512;
    let x: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(i as f32 * 0.5 - 64.0))
        .collect();
    let xs = Buffer::from_slice(&queue, &x).unwrap();
    let y = Buffer::from_slice(&queue, &vec![f32::POISON; n]).unwrap();
    let z = Buffer::from_slice(&queue, &vec![f16::NAN; n]).unwrap();
    let k = p.kernel("widen").unwrap();
    // SAFETY: work-item i < n touches x[i], y[i], z[i]; each buffer has n elements.
    unsafe {
        k.launch()
            .arg(&xs)
            .arg(&y)
            .arg(&z)
            .nd_range(n, LocalSize::Auto)
    }
    .unwrap()
    .wait()
    .unwrap();
    let (y, z) = (y.read(&queue).unwrap(), z.read(&queue).unwrap());
    for i in 0..n {
        assert_eq!(y[i], x[i].to_f32(), "vload_half, element {i}");
        assert_eq!(
            z[i],
            f16::from_f32(x[i].to_f32() * 3.0),
            "vstore_half, element {i}"
        );
    }
}

#[test]
fn half_values_where_the_device_has_fp16() {
    let queue = common::queue();
    let exts = opencl3::device::Device::new(queue.device().id())
        .extensions()
        .unwrap_or_default();
    if !exts.split_whitespace().any(|e| e == "cl_khr_fp16") {
        eprintln!(
            "half values: not run: {} lacks cl_khr_fp16 (half is a storage type only there; \
             half_storage_on_every_device covers it)",
            queue.device()
        );
        return;
    }
    let p = Program::from_source(&queue, HALF_MATH).unwrap();
    let n = 300;
    let x: Vec<[f16; 2]> = (0..n)
        .map(|i| [f16::from_f32(i as f32), f16::from_f32(1.0)])
        .collect();
    let xs = Buffer::from_slice(&queue, &x).unwrap();
    let y = Buffer::from_slice(&queue, &vec![f16::from_f32(0.5); n]).unwrap();
    let k = p.kernel("axpy_h").unwrap();
    // SAFETY: work-item i < n touches y[i] and x[i]; both have n elements.
    unsafe {
        k.launch()
            .arg(&y)
            .arg(&xs)
            .arg(f16::from_f32(2.0))
            .nd_range(n, LocalSize::Auto)
    }
    .unwrap()
    .wait()
    .unwrap();
    for (i, g) in y.read(&queue).unwrap().iter().enumerate() {
        assert_eq!(g.to_f32(), 2.0 * i as f32 + 1.5, "element {i}");
    }
    // A half parameter takes f16, not f32.
    // SAFETY: refused before enqueue; had it run, it would touch y[i] and x[i], i < n.
    let bad = unsafe {
        k.launch()
            .arg(&y)
            .arg(&xs)
            .arg(2.0f32)
            .nd_range(n, LocalSize::Auto)
    };
    assert!(
        matches!(bad, Err(Error::InvalidArgument { index: 2, .. })),
        "{bad:?}"
    );
}

#[test]
fn wrong_element_types_are_errors_before_enqueue() {
    let queue = common::queue();
    let p = program(&queue);
    let n = 64;
    let poisoned = |len| Buffer::from_slice(&queue, &vec![[f32::POISON; 4]; len]).unwrap();
    let k = p.kernel("scale4").unwrap();
    let v = poisoned(n);
    let launch = |s: &dyn Fn(Launch<'_>) -> Launch<'_>| {
        // SAFETY: had it run, work-item i < n would touch v[i] of n elements (these launches
        // are refused before enqueue).
        unsafe { s(k.launch().arg(&v)).nd_range(n, LocalSize::Auto) }
    };
    let wrong = [
        launch(&|l| l.arg(2.0f32)),
        launch(&|l| l.arg([2i32; 4])),
        launch(&|l| l.arg([2.0f32; 3])),
    ];
    for (i, r) in wrong.into_iter().enumerate() {
        match r {
            Err(Error::InvalidArgument {
                index: 1, reason, ..
            }) => println!("case {i}: {reason}"),
            other => panic!("case {i}: expected an argument error, got {other:?}"),
        }
    }
    let ints = Buffer::from_slice(&queue, &vec![[7i32; 4]; n]).unwrap();
    // SAFETY: refused before enqueue (int4 elements for a float4 pointer).
    let r = unsafe {
        k.launch()
            .arg(&ints)
            .arg([1.0f32; 4])
            .nd_range(n, LocalSize::Auto)
    };
    assert!(
        matches!(r, Err(Error::InvalidArgument { index: 0, .. })),
        "{r:?}"
    );

    // float3 takes 16 bytes: a buffer of [f32; 3] (12) would be overrun.
    let packed = Buffer::from_slice(&queue, &vec![[f32::POISON; 3]; n]).unwrap();
    let k3 = p.kernel("take3").unwrap();
    // SAFETY: refused before enqueue (12-byte elements for a 16-byte pointee).
    let r = unsafe { k3.launch().arg(&packed).nd_range(n, LocalSize::Auto) };
    match r {
        Err(Error::InvalidArgument {
            index: 0, reason, ..
        }) => {
            assert!(reason.to_string().contains("16-byte"), "{reason}");
            println!("float3: {reason}");
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
    queue.finish().unwrap();
    assert_eq!(
        v.read(&queue).unwrap(),
        vec![[f32::POISON; 4]; n],
        "nothing ran"
    );
    assert_eq!(
        packed.read(&queue).unwrap(),
        vec![[f32::POISON; 3]; n],
        "nothing ran"
    );
}

#[test]
fn fills_of_any_element_size() {
    let queue = common::queue();
    let n = 100;
    // 12 bytes: not a pattern size OpenCL fills with (written from the host instead).
    let mut packed = Buffer::<[f32; 3]>::new(&queue, n).unwrap();
    packed.fill(&queue, [1.0, 2.0, 3.0]).unwrap();
    assert_eq!(packed.read(&queue).unwrap(), vec![[1.0, 2.0, 3.0]; n]);
    packed.enqueue_fill(&queue, [4.0, 5.0, 6.0]).unwrap();
    assert_eq!(packed.read(&queue).unwrap(), vec![[4.0, 5.0, 6.0]; n]);
    // 16 bytes: filled by OpenCL.
    let mut particles = Buffer::<Particle>::new(&queue, n).unwrap();
    let p = Particle {
        pos: [1.0, -1.0],
        mass: 3.0,
        id: 9,
    };
    particles.enqueue_fill(&queue, p).unwrap();
    assert_eq!(
        particles.enqueue_read(&queue).unwrap().wait().unwrap(),
        vec![p; n]
    );
    // 2 bytes: half.
    let mut h = Buffer::<f16>::new(&queue, n).unwrap();
    h.fill(&queue, f16::from_f32(0.5)).unwrap();
    assert_eq!(h.read(&queue).unwrap(), vec![f16::from_f32(0.5); n]);
}

/// Colored buffers take the same element types: `[f32; 4]` for `float4` over a root device,
/// in each placement, element by element against the host.
#[cfg(feature = "scaling")]
#[test]
fn float4_in_colored_buffers() {
    use clgroups::scaling::{ColoredBuffer, Placement};
    for root in common::roots("float4_in_colored_buffers") {
        let k = root.program(SOURCE).unwrap().kernel("scale4").unwrap();
        let n = 1000;
        let local = k.range_plan(Range::d1(n)).unwrap().1.len();
        let data: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 1.0, -0.5, 4.0]).collect();
        let mut v = match root.placement() {
            // One work-group slab (16 bytes an element) per page: each device holds its part.
            Placement::Partitioned => ColoredBuffer::with_page(&root, n, local * 16),
            Placement::Shared => ColoredBuffer::new(&root, n),
        }
        .unwrap();
        v.write(&data).unwrap();
        let s = [0.5f32, 2.0, 4.0, -1.0];
        // SAFETY: work-item i < n touches v[i] only, and v has n elements.
        unsafe { k.launch().arg(&mut v).arg(s).range(n) }
            .unwrap()
            .wait()
            .unwrap();
        for (i, (g, d)) in v.read().unwrap().iter().zip(&data).enumerate() {
            let want: [f32; 4] = std::array::from_fn(|c| d[c] * s[c] + i as f32);
            assert_eq!(*g, want, "element {i}, {:?} placement", root.placement());
        }
        println!("float4 colored over {root:?}: {n} elements");
    }
}
