//! The types a program shares between threads stay `Send + Sync`: this file does not compile
//! if one of them loses either (a `RootKernel` once did, through its cache of launch
//! decisions). At run time, one `RootKernel` launched from two threads at once, each with its
//! own colored buffers and scalar, writes what each thread asked for (a device kernel's
//! arguments are set and enqueued under its lock; colored buffers are made on both threads at
//! once: NVIDIA's OpenCL crashed migrating them over two GPUs, and no longer migrates them).

mod common;

use clgroups::scaling::{
    ColoredBuffer, MultiEvent, RootDevice, RootKernel, RootProgram, SpreadPolicy,
};
use clgroups::{Buffer, Device, Event, Kernel, Program, Queue, Range};

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
    // A kernel's first run on a device compiles it there; PoCL before 4 must not compile on
    // two devices at once, which a launch orders for its own parts but not for another
    // thread's: the first runs happen here, before the threads.
    let mut warm = ColoredBuffer::<u32>::new(&root, n).unwrap();
    // SAFETY: work-item i writes warm[i], i < n = warm.len().
    let ev = unsafe {
        k.launch()
            .arg(&mut warm)
            .arg(0u32)
            .nd_range(n, Range::d1(64))
    };
    ev.unwrap().wait().unwrap();
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
    // Each kernel's first runs before the threads (as above).
    let mut warm = ColoredBuffer::<i32>::new(&root, n).unwrap();
    for k in [&split, &one] {
        // SAFETY: work-item i reads x[i] and writes warm[i], i < n = x.len() = warm.len().
        let ev = unsafe { k.launch().arg(&x).arg(&mut warm).arg(0).range(n) };
        ev.unwrap().wait().unwrap();
    }
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
