//! Bad inputs through the API: each is a typed error before anything is enqueued (or, in
//! checked mode, after the launch), never a panic or a crashed process. Every case that
//! launches runs in a child process (this test binary again, with `CLGROUPS_SOUND_CHILD` set),
//! so a regression that aborts or corrupts the heap fails its test instead of killing the
//! harness. Also: caches keep memory flat, and build logs keep the user's line numbers.

mod common;

use clgroups::algorithms::{ReduceOp, Reduction};
use clgroups::launch::{Local, LocalSize};
use clgroups::queue::Context;
use clgroups::scaling::{ColoredBuffer, Placement, RootDevice};
use clgroups::{Buffer, Error, Program, Queue, Range};
use std::process::Command;

/// Marks elements no kernel should write.
const POISON: i32 = -0x5a5a5a5;

const SRC: &str = r#"
kernel void fill(global int *o, int v) { o[get_global_id(0)] = v; }
kernel void fill3(global int *o, int v) {
    o[get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2))] = v;
}
kernel void scratch(global int *o, local int *tmp) {
    tmp[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(0)] = tmp[0];
}
kernel void mixed(global float *f, global int *i, uint n, float a) { if (get_global_id(0) < n) f[get_global_id(0)] = a + i[get_global_id(0)]; }
"#;

/// Runs `body` in a child process (this test, alone) with `env`, and returns its stdout;
/// asserts that the child exited normally and printed `CHILD-OK`. In the child, runs `body`.
fn in_child(test: &str, env: &[(&str, &str)], body: impl FnOnce()) -> String {
    if std::env::var("CLGROUPS_SOUND_CHILD").is_ok() {
        body();
        println!("CHILD-OK");
        std::process::exit(0);
    }
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("CLGROUPS_SOUND_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("CHILD-OK"),
        "{test}: child {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    eprintln!("{stdout}");
    stdout
}

/// A poisoned output of `len` elements.
fn poisoned(q: &Queue, len: usize) -> Buffer<i32> {
    let mut b = Buffer::new(q.context(), len).unwrap();
    b.fill(q, POISON).unwrap();
    b
}

fn untouched(q: &Queue, b: &Buffer<i32>) {
    q.finish().unwrap();
    assert!(
        b.read(q).unwrap().iter().all(|&v| v == POISON),
        "a refused launch ran"
    );
}

fn expect_launch_error(what: &str, r: clgroups::Result<clgroups::launch::Event>, want: &str) {
    match r {
        Ok(_) => panic!("{what}: accepted"),
        Err(e @ Error::InvalidLaunch { .. }) => {
            assert!(e.to_string().contains(want), "{what}: {e}");
            println!("{what}: {e}");
        }
        Err(e) => panic!("{what}: want InvalidLaunch, got {e:?}"),
    }
}

#[test]
fn overflowing_ranges_and_offsets_are_errors() {
    in_child("overflowing_ranges_and_offsets_are_errors", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let (fill, fill3) = (p.kernel("fill").unwrap(), p.kernel("fill3").unwrap());
        let out = poisoned(&q, 64);
        let huge = Range::d3(1 << 22, 1 << 22, 1 << 22);
        let cases = [
            LocalSize::Auto,
            LocalSize::Tuned,
            LocalSize::Exact(Range::d3(1, 1, 1)),
        ];
        for local in cases {
            // SAFETY: refused before enqueueing (checked by `untouched`).
            let r = unsafe { fill3.launch().arg(&out).arg(1).nd_range(huge, local) };
            expect_launch_error(&format!("2^66 work-items, {local:?}"), r, "size_t");
        }
        // SAFETY: as above.
        let r = unsafe { fill3.launch().arg(&out).arg(1).range(huge) };
        expect_launch_error("2^66 work-items, plain range", r, "size_t");
        let max = Range::d1(usize::MAX - 1);
        // SAFETY: as above.
        let r = unsafe {
            fill.launch()
                .arg(&out)
                .arg(1)
                .nd_range(max, LocalSize::Auto)
        };
        expect_launch_error("usize::MAX - 1, auto", r, "work-groups");
        // SAFETY: as above.
        let r = unsafe { fill.launch().arg(&out).arg(1).range(max) };
        expect_launch_error("usize::MAX - 1, plain range", r, "work-groups");
        let far = Range::d1(usize::MAX - 4);
        // SAFETY: as above.
        let r = unsafe {
            let l = fill.launch().arg(&out).arg(1).offset(far);
            l.nd_range(64, LocalSize::Exact(Range::d1(8)))
        };
        expect_launch_error("overflowing offset, ND-range", r, "offset");
        // SAFETY: as above; 7727 is rounded into pieces, none may be enqueued.
        let r = unsafe { fill.launch().arg(&out).arg(1).offset(far).range(7727) };
        expect_launch_error("overflowing offset, plain range", r, "offset");
        let bits = q.device().limits().address_bits;
        if bits < 64 {
            // SAFETY: as above.
            let r = unsafe { fill.launch().arg(&out).arg(1).range(1usize << bits) };
            expect_launch_error("beyond the device's size_t", r, "size_t");
        }
        untouched(&q, &out);
    });
}

#[test]
fn local_memory_beyond_the_device_is_an_error() {
    in_child("local_memory_beyond_the_device_is_an_error", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("scratch").unwrap();
        let out = poisoned(&q, 64);
        let l = LocalSize::Exact(Range::d1(8));
        let huge = Local::<i32>::new(usize::MAX / 4);
        assert_eq!(huge.bytes(), usize::MAX - 3);
        // SAFETY: refused before enqueueing (checked by `untouched`).
        let r = unsafe { k.launch().arg(&out).arg(huge).nd_range(64, l) };
        expect_launch_error("usize::MAX / 4 ints", r, "local memory");
        let over = q.device().limits().local_mem_size as usize / 4 + 1;
        // SAFETY: as above.
        let r = unsafe {
            k.launch()
                .arg(&out)
                .arg(Local::<i32>::new(over))
                .nd_range(64, l)
        };
        expect_launch_error(
            "one int more than the device has",
            r,
            "CL_DEVICE_LOCAL_MEM_SIZE",
        );
        untouched(&q, &out);
        // SAFETY: `scratch` writes tmp[lid] (8 ints per group of 8) and o[gid] for 64 ids.
        let ev = unsafe {
            k.launch()
                .arg(&out)
                .arg(Local::<i32>::new(8))
                .nd_range(64, l)
        };
        ev.unwrap().wait().unwrap();
        assert_eq!(out.read(&q).unwrap(), vec![1; 64]);
    });
}

#[test]
fn buffers_of_another_context_are_refused() {
    in_child("buffers_of_another_context_are_refused", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("fill").unwrap();
        let other = Queue::on(&Context::new(&[q.device().clone()]).unwrap(), q.device()).unwrap();
        let foreign = poisoned(&other, 64);
        // SAFETY: refused before enqueueing (checked below).
        let r = unsafe { k.launch().arg(&foreign).arg(1).range(64) };
        match r {
            Err(e @ Error::InvalidArgument { index: 0, .. }) => {
                assert!(e.to_string().contains("another context"), "{e}")
            }
            other => panic!("want InvalidArgument, got {:?}", other.map(|_| ())),
        }
        untouched(&other, &foreign);
    });
}

#[test]
fn abusive_rounding_parameters_fall_back() {
    let cases: [(&[(&str, &str)], Range); 2] = [
        (
            &[("CLGROUPS_RANGE_ROUNDING_PARAMS", "3:1099511627776:1")],
            Range::d1(7),
        ),
        (
            &[
                ("CLGROUPS_RANGE_ROUNDING_PARAMS", "1:65536:1"),
                ("CLGROUPS_EXP_RANGE_ROUNDING", "1"),
            ],
            Range::d3(7, 5, 3),
        ),
    ];
    for (env, user) in cases {
        let t = std::time::Instant::now();
        in_child("abusive_rounding_parameters_fall_back", env, || {
            let q = common::queue();
            let p = Program::from_source(&q, SRC).unwrap();
            let k = p.kernel("fill3").unwrap();
            for user in [Range::d1(7), Range::d3(7, 5, 3)] {
                let out = poisoned(&q, 128);
                // SAFETY: `fill3` writes the linear id, below user.len() <= 105 < 128.
                let ev = unsafe { k.launch().arg(&out).arg(3).range(user) }.unwrap();
                ev.wait().unwrap();
                let v = out.read(&q).unwrap();
                let n = user.len();
                assert!(v[..n].iter().all(|&x| x == 3), "{user:?}: {v:?}");
                assert!(v[n..].iter().all(|&x| x == POISON), "{user:?}: {v:?}");
            }
        });
        assert!(
            t.elapsed().as_secs() < 60,
            "{env:?} {user:?}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn reduction_result_before_any_run_is_an_error() {
    in_child("reduction_result_before_any_run_is_an_error", &[], || {
        let q = common::queue();
        let mut r = Reduction::<i32>::new(&q, ReduceOp::Sum).unwrap();
        let e = r.result().unwrap_err();
        assert!(matches!(e, Error::InvalidInput { .. }), "{e:?}");
        let x = Buffer::from_slice(&q, &[1, 2, 3]).unwrap();
        assert_eq!(r.run(&x).unwrap(), 6);
        assert_eq!(r.result().unwrap(), 6);
    });
}

#[test]
fn argument_mismatches_are_errors_not_panics() {
    in_child("argument_mismatches_are_errors_not_panics", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("mixed").unwrap();
        let (f, i) = (
            Buffer::<f32>::new(q.context(), 64).unwrap(),
            Buffer::<i32>::new(q.context(), 64).unwrap(),
        );
        let u = Buffer::<u8>::new(q.context(), 64).unwrap();
        let l = LocalSize::Auto;
        // SAFETY: every launch here is refused before enqueueing.
        let results = unsafe {
            [
                k.launch()
                    .arg(&i)
                    .arg(&f)
                    .arg(64u32)
                    .arg(1f32)
                    .nd_range(64, l),
                k.launch()
                    .arg(&f)
                    .arg(&u)
                    .arg(64u32)
                    .arg(1f32)
                    .nd_range(64, l),
                k.launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(64u64)
                    .arg(1f32)
                    .nd_range(64, l),
                k.launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(64u32)
                    .arg(1f64)
                    .nd_range(64, l),
                k.launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(64u32)
                    .arg(&f)
                    .nd_range(64, l),
                k.launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(Local::<u32>::new(4))
                    .arg(1f32)
                    .range(64),
                k.launch()
                    .arg(Local::<f32>::new(4))
                    .arg(&i)
                    .arg(64u32)
                    .arg(1f32)
                    .range(64),
                k.launch().arg(&f).arg(&i).arg(64u32).range(64),
                k.launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(64u32)
                    .arg(1f32)
                    .arg(2f32)
                    .range(64),
                k.launch().range(64),
            ]
        };
        for (n, r) in results.into_iter().enumerate() {
            match r {
                Err(e @ Error::InvalidArgument { .. }) => println!("case {n}: {e}"),
                other => panic!(
                    "case {n}: want InvalidArgument, got {:?}",
                    other.map(|_| ())
                ),
            }
        }
    });
}

#[test]
fn forced_backend_the_device_cannot_run_is_a_precise_error() {
    let out = in_child(
        "forced_backend_the_device_cannot_run_is_a_precise_error",
        &[("CLGROUPS_SHUFFLE_BACKEND", "nvidia-ptx")],
        || match clgroups::default_device() {
            Ok(d) => println!("CHILD-DEVICE {d}"),
            Err(e) => println!("CHILD-ERROR {e:?}"),
        },
    );
    if out.contains("CHILD-DEVICE") {
        eprintln!("not run: a device here runs nvidia-ptx: {out}");
        return;
    }
    assert!(out.contains("CHILD-ERROR NoDevices"), "{out}");
    assert!(out.contains("CLGROUPS_SHUFFLE_BACKEND=nvidia-ptx"), "{out}");
}

/// Multi-device launches refuse the same bad inputs before any device enqueues.
#[test]
fn root_launches_refuse_overflows_in_both_placements() {
    in_child(
        "root_launches_refuse_overflows_in_both_placements",
        &[],
        || {
            let root = match RootDevice::from_env() {
                Ok(r) if r.len() >= 2 => r,
                _ => match RootDevice::split(&common::device(), 2) {
                    Ok(r) => r,
                    Err(e) => {
                        println!("not run: no two devices: {e}");
                        return;
                    }
                },
            };
            for placement in [Placement::Shared, Placement::Partitioned] {
                let root = RootDevice::new(root.devices())
                    .unwrap()
                    .with_placement(placement);
                let k = root.program(SRC).unwrap().kernel("fill").unwrap();
                let mut out = ColoredBuffer::<i32>::new(&root, 7727).unwrap();
                out.fill(POISON).unwrap();
                let far = Range::d1(usize::MAX - 64);
                for (global, local) in [
                    (Range::d1(7680), Range::d1(64)),
                    (Range::d1(128), Range::d1(64)),
                ] {
                    // SAFETY: refused before enqueueing (checked below).
                    let r = unsafe {
                        k.launch()
                            .arg(&out)
                            .arg(1)
                            .offset(far)
                            .nd_range(global, local)
                    };
                    match r {
                        Err(e @ Error::InvalidLaunch { .. }) => println!("{placement}: {e}"),
                        other => panic!(
                            "{placement}: want InvalidLaunch, got {:?}",
                            other.map(|_| ())
                        ),
                    }
                }
                let huge = Range::d3(1 << 22, 1 << 22, 1 << 22);
                let empty = (Range::d2(0, 64), Range::d2(1, 1));
                for (global, local) in [(huge, Range::d3(1, 1, 1)), empty] {
                    // SAFETY: as above.
                    let r = unsafe { k.launch().arg(&out).arg(1).nd_range(global, local) };
                    assert!(
                        matches!(r, Err(Error::InvalidLaunch { .. })),
                        "{placement} {global:?}: {:?}",
                        r.map(|_| ())
                    );
                }
                root.finish().unwrap();
                assert!(
                    out.read().unwrap().iter().all(|&v| v == POISON),
                    "{placement}: ran"
                );
            }
        },
    );
}

/// Resident set size of this process in KiB (Linux), or `None` elsewhere.
fn rss_kib() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// One new queue (and context), program, launch and reduction.
fn queue_program_launch() {
    let q = Queue::new(&common::device()).unwrap();
    let p = Program::from_source(&q, SRC).unwrap();
    let out = Buffer::<i32>::new(q.context(), 64).unwrap();
    let k = p.kernel("fill").unwrap();
    // SAFETY: `fill` writes o[gid] for 64 ids; `out` has 64 elements.
    unsafe { k.launch().arg(&out).arg(5).range(64) }
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(clgroups::algorithms::reduce_sum(&q, &out).unwrap(), 5 * 64);
}

/// Caches are tied to their context or bounded: memory stays flat over many short-lived
/// queues, and over many launches on one queue.
#[test]
fn memory_stays_flat() {
    in_child("memory_stays_flat", &[], || {
        let Some(_) = rss_kib() else {
            println!("not run: no /proc/self/status");
            return;
        };
        let (warm, runs) = (20, 40);
        for _ in 0..warm {
            queue_program_launch();
        }
        let before = rss_kib().unwrap();
        for _ in 0..runs {
            queue_program_launch();
        }
        let grown = rss_kib().unwrap().saturating_sub(before);
        println!("queue + program + launch: {grown} KiB over {runs} iterations");
        // The unbounded caches grew ~1.1 MB per iteration.
        assert!(grown < 200 * runs, "{grown} KiB over {runs} iterations");

        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("fill").unwrap();
        let out = Buffer::<i32>::new(q.context(), 64).unwrap();
        let launch = || {
            // SAFETY: as above.
            unsafe { k.launch().arg(&out).arg(5).nd_range(64, LocalSize::Auto) }.unwrap()
        };
        for _ in 0..1000 {
            launch();
        }
        q.finish().unwrap();
        let before = rss_kib().unwrap();
        let n = 100_000;
        for i in 0..n {
            let ev = launch();
            if i % 1000 == 999 {
                ev.wait().unwrap();
            }
        }
        q.finish().unwrap();
        let grown = rss_kib().unwrap().saturating_sub(before);
        println!("{n} launches on one queue: {grown} KiB");
        assert!(grown < 8 * 1024, "{grown} KiB over {n} launches");
    });
}

/// A build log names the user's line even when a roundable kernel (whose generated variants
/// carry `#line` directives) precedes an `#include` of the layer.
#[test]
fn build_log_lines_survive_variants_before_an_include() {
    let q = common::queue();
    let src = "kernel void a(global int *o) {\n  o[get_global_id(0)] = 1;\n}\n\
               #include <clgroups/subgroup.h>\nkernel void b(global int *o) {\n  int x = 1;\n  oops;\n}\n";
    let e = Program::from_source(&q, src).expect_err("a build error");
    let Error::Build { log, .. } = &e else {
        panic!("want Build, got {e:?}")
    };
    let named: Vec<&str> = log.lines().filter(|l| l.contains("oops")).collect();
    assert!(!named.is_empty(), "{log}");
    for l in named {
        assert!(l.contains("kernel.cl:7:"), "{l}\n{log}");
    }
}

/// Checked mode reports a write past the end of a buffer as an error naming the kernel,
/// the argument and the element, and the buffer stays usable.
#[test]
fn checked_mode_reports_out_of_bounds_writes() {
    in_child(
        "checked_mode_reports_out_of_bounds_writes",
        &[("CLGROUPS_CHECKED", "1")],
        || {
            assert!(clgroups::launch::checked::enabled());
            let q = common::queue();
            let p = Program::from_source(&q, SRC).unwrap();
            let fill = p.kernel("fill").unwrap();
            let out = poisoned(&q, 100);
            // SAFETY: 100 writes past the end, inside the checked-mode guard (64 KiB).
            let r = unsafe { fill.launch().arg(&out).arg(1).range(200) };
            match r {
                Err(Error::OutOfBounds {
                    kernel,
                    argument: 0,
                    index: 100,
                    len: 100,
                    ..
                }) => assert_eq!(kernel, "fill"),
                other => panic!("want OutOfBounds, got {:?}", other.map(|_| ())),
            }
            let mixed = p.kernel("mixed").unwrap();
            let (f, i) = (
                Buffer::<f32>::new(q.context(), 100).unwrap(),
                Buffer::<i32>::from_slice(&q, &[2; 200]).unwrap(),
            );
            let l = LocalSize::Exact(Range::d1(64));
            // SAFETY: `mixed` writes f[gid] for gid < 150 (50 in the guard of `f`).
            let r = unsafe {
                mixed
                    .launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(150u32)
                    .arg(1f32)
                    .nd_range(192, l)
            };
            match r {
                Err(
                    e @ Error::OutOfBounds {
                        argument: 0,
                        index: 100,
                        ..
                    },
                ) => println!("{e}"),
                other => panic!("want OutOfBounds, got {:?}", other.map(|_| ())),
            }
            // In bounds now: no error, and the guard was restored.
            // SAFETY: `mixed` writes f[gid] for gid < 100, the length of `f`.
            let ev = unsafe {
                mixed
                    .launch()
                    .arg(&f)
                    .arg(&i)
                    .arg(100u32)
                    .arg(1f32)
                    .nd_range(192, l)
            };
            ev.unwrap().wait().unwrap();
            assert_eq!(f.read(&q).unwrap(), vec![3.0; 100]);
            // SAFETY: `fill` writes o[gid] for 100 ids.
            unsafe { fill.launch().arg(&out).arg(7).range(100) }.unwrap();
            assert_eq!(out.read(&q).unwrap(), vec![7; 100]);
            let x = Buffer::from_slice(&q, &(1..=1000).collect::<Vec<i32>>()).unwrap();
            assert_eq!(clgroups::algorithms::reduce_sum(&q, &x).unwrap(), 500500);
        },
    );
}
