//! The types a program shares between threads stay `Send + Sync`: this file does not compile
//! if one of them loses either (a `RootKernel` once did, through its cache of launch
//! decisions). At run time, one `RootKernel` launched from two threads at once, each with its
//! own colored buffers and scalar, writes what each thread asked for (a device kernel's
//! arguments are set and enqueued under its lock; colored buffers are made on both threads at
//! once: NVIDIA's OpenCL crashed migrating them over two GPUs, and no longer migrates them).
//! Kernels run first from two threads at once, on two devices of one context, without a
//! warm-up: PoCL before 4 compiles at a first run and must not compile twice at once, which
//! every launch orders for the whole process (`launch::first_run`).

mod common;

use clgroups::scaling::{
    ColoredBuffer, MultiEvent, RootDevice, RootKernel, RootProgram, SpreadPolicy,
};
use clgroups::{Buffer, Device, Event, Kernel, LocalSize, Program, Queue, Range};

const fn send_sync<T: Send + Sync>() {}

const _: () = {
    send_sync::<Device>();
    send_sync::<Queue>();
    send_sync::<Program>();
    send_sync::<Kernel>();
    send_sync::<Buffer<f32>>();
    send_sync::<Event>();
    send_sync::<RootDevice>();
    send_sync::<RootProgram>();
    send_sync::<RootKernel>();
    send_sync::<ColoredBuffer<f32>>();
    send_sync::<ColoredBuffer<[u32; 4]>>();
    send_sync::<MultiEvent>();
};

/// The root device under test, or `None` after printing why not (no OpenCL device at all, or
/// a single one that cannot be split).
fn root(test: &str) -> Option<RootDevice> {
    let why = match clgroups::devices() {
        Ok(d) if !d.is_empty() => return common::root_device(test),
        Ok(_) => "no device".to_string(),
        Err(e) => e.to_string(),
    };
    assert!(
        !common::multi_required(),
        "CLGROUPS_REQUIRE_MULTI_DEVICE=1 but {why}"
    );
    eprintln!("{test}: not run: no OpenCL device ({why})");
    None
}

#[test]
fn one_root_kernel_launched_from_two_threads() {
    let Some(root) = root("one_root_kernel_launched_from_two_threads") else {
        return;
    };
    let src =
        "kernel void put(global uint *x, uint v) { size_t i = get_global_id(0); x[i] = v + i; }";
    let k = root.program(src).unwrap().kernel("put").unwrap();
    let n = 64 * 4 * root.len();
    // No warm-up: the kernel's first runs on each device (which PoCL before 4 compiles, and
    // must not compile on two devices at once) are the threads' own, at once.
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..2u32)
            .map(|t| {
                let (k, root) = (&k, &root);
                s.spawn(move || {
                    // Colored buffers made on both threads at once (migrated ahead of use,
                    // they crashed NVIDIA's OpenCL over two GPUs).
                    for j in 0..8 {
                        match j % 2 {
                            0 => ColoredBuffer::<u32>::new(root, n).unwrap(),
                            _ => ColoredBuffer::from_slice(root, &vec![j; n]).unwrap(),
                        };
                    }
                    let mut x = ColoredBuffer::<u32>::new(root, n).unwrap();
                    let mut last = None;
                    for r in 0..40 {
                        let v = 1_000_000 * (t + 1) + 1000 * r;
                        // SAFETY: work-item i writes x[i], i < n = x.len().
                        let ev =
                            unsafe { k.launch().arg(&mut x).arg(v).nd_range(n, Range::d1(64)) };
                        let ev = ev.unwrap();
                        let want: Vec<u32> = (0..n as u32).map(|i| v + i).collect();
                        assert_eq!(x.read().unwrap(), want, "thread {t}, launch {r}");
                        last = Some(ev);
                    }
                    last.unwrap()
                })
            })
            .collect();
        // The events come back to this thread, which waits for them.
        for run in runs {
            let ev: MultiEvent = run.join().unwrap();
            ev.wait().unwrap();
        }
    });
}

#[test]
fn one_input_shared_by_threads_that_split_and_stay() {
    let Some(root) = root("one_input_shared_by_threads_that_split_and_stay") else {
        return;
    };
    if root.len() < 2 {
        eprintln!("one_input_shared_by_threads_that_split_and_stay: not run: one device");
        return;
    }
    let src = r#"
        kernel void scaled(global const int *x, global int *y, int a) {
            size_t i = get_global_id(0);
            y[i] = a * x[i] + (int)i;
        }"#;
    // One input read by both threads at once: one thread's launches split over the devices
    // (each reads its part of `x`), the other's run on device 0 (moving `x` whole there), so
    // `x` moves between its parts and device 0 while the other thread reads it.
    let kernel = |policy| {
        let root = root.clone().with_spread(policy);
        root.program(src).unwrap().kernel("scaled").unwrap()
    };
    let (split, one) = (kernel(SpreadPolicy::Split), kernel(SpreadPolicy::OneDevice));
    let n = 64 * 64 * root.len();
    let host: Vec<i32> = (0..n as i32).map(|i| (i * 7) % 1001 - 500).collect();
    let x = ColoredBuffer::from_slice(&root, &host).unwrap();
    // Each kernel's first runs are the threads' own, at once (as above).
    std::thread::scope(|s| {
        for (t, k) in [&split, &one].into_iter().enumerate() {
            let (x, root, host) = (&x, &root, &host);
            s.spawn(move || {
                let mut y = ColoredBuffer::<i32>::new(root, n).unwrap();
                for r in 0..30 {
                    let a = r % 7 - 3;
                    // SAFETY: work-item i reads x[i] and writes y[i], i < n = x.len() = y.len().
                    let ev = unsafe { k.launch().arg(x).arg(&mut y).arg(a).range(n) };
                    let spread = ev.unwrap().spread().clone();
                    let want: Vec<i32> = (host.iter().enumerate())
                        .map(|(i, &v)| a * v + i as i32)
                        .collect();
                    assert_eq!(
                        y.read().unwrap(),
                        want,
                        "thread {t}, launch {r}: {spread:?}"
                    );
                }
            });
        }
    });
    assert_eq!(x.read().unwrap(), host);
}

/// Kernels each thread of [`first_runs_of_fresh_kernels_on_two_devices_at_once`] builds.
const FRESH_KERNELS: u32 = 12;

#[test]
fn first_runs_of_fresh_kernels_on_two_devices_at_once() {
    let test = "first_runs_of_fresh_kernels_on_two_devices_at_once";
    let Some(root) = root(test) else {
        return;
    };
    if root.len() < 2 {
        eprintln!("{test}: not run: one device");
        return;
    }
    // PoCL before 4 compiles a kernel's work-group function at its first run for a local size
    // (and range); two such compilations at once on two devices of one context aborted it or
    // crashed LLVM. Every source here is new to the process and to PoCL's kernel cache (the
    // salt), so every launch below is a first run, from two threads at once.
    let salt = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    let queues = &root.queues()[..2];
    std::thread::scope(|s| {
        for (t, q) in queues.iter().enumerate() {
            s.spawn(move || {
                for i in 0..FRESH_KERNELS {
                    let (name, c) = (format!("fresh_{t}_{i}"), i as i32 + 7 * t as i32);
                    // Every other kernel calls the sub-group layer (on PoCL 3.1 its emulation:
                    // functions inlined into the kernel, more for PoCL's compiler to do); its
                    // term is 0 (a sub-group's sum of ones is its size).
                    let layer = match i % 2 {
                        0 => "",
                        _ => "+ sg_reduce_add(1) - (int)sg_get_local_range()",
                    };
                    let src = format!(
                        "#include <clgroups/subgroup.h>\n\
                         kernel void {name}(global int *x, int a) {{\n\
                             int g = (int)get_global_id(0), salt = (int)({salt}UL & 0UL);\n\
                             x[g] = a * g + {c} + salt {layer};\n\
                         }}"
                    );
                    let k = Program::from_source(q, &src)
                        .unwrap()
                        .kernel(&name)
                        .unwrap();
                    // A plain range, then two local sizes (each a work-group function of its
                    // own), over sizes that differ by kernel.
                    let n = 256 + 64 * (i as usize % 4);
                    let x = Buffer::<i32>::new(q, n).unwrap();
                    for (r, local) in [None, Some(4 << (i % 3)), Some(64)].into_iter().enumerate() {
                        let a = 3 * r as i32 + 1;
                        // SAFETY: work-item g < n writes x[g], inside x (n elements).
                        let ev = unsafe {
                            let l = k.launch().arg(&x).arg(a);
                            match local {
                                None => l.range(n),
                                Some(l1) => l.nd_range(n, LocalSize::Exact(Range::d1(l1))),
                            }
                        };
                        ev.unwrap().wait().unwrap();
                        let want: Vec<i32> = (0..n as i32).map(|g| a * g + c).collect();
                        assert_eq!(
                            x.read(q).unwrap(),
                            want,
                            "{name} on {}, {local:?}",
                            q.device()
                        );
                    }
                }
            });
        }
    });
}
