//! Bad inputs through the API: each is a typed error before anything is enqueued (or, in
//! checked mode, after the launch), never a panic or a crashed process. Every case that
//! launches runs in a child process (this test binary again, with `CLGROUPS_TEST_CHILD` set),
//! so a regression that aborts or corrupts the heap fails its test instead of killing the
//! harness. Also: caches keep memory flat, and build logs keep the user's line numbers. Checked mode: `tests/checked_mode.rs`.

mod common;

use common::Poison;

use clgroups::algorithms::{ReduceOp, Reduction};
use clgroups::launch::{Local, LocalSize};
use clgroups::queue::Context;
use clgroups::scaling::{ColoredBuffer, Placement, RootDevice};
use clgroups::{Buffer, Error, Program, Queue, Range};

/// `tests/cl/fill.cl` and kernels of this test's own.
const SRC: &str = concat!(
    include_str!("cl/fill.cl"),
    r#"
kernel void fill3(global int *o, int v) {
    o[get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2))] = v;
}
kernel void scratch(global int *o, local int *tmp) {
    tmp[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(0)] = tmp[0];
}
"#
);

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
    common::in_child_with("overflowing_ranges_and_offsets_are_errors", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let (fill, fill3) = (p.kernel("fill").unwrap(), p.kernel("fill3").unwrap());
        let out = common::poisoned(&q, 64);
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
        common::untouched(&q, &out);
    });
}

#[test]
fn local_memory_beyond_the_device_is_an_error() {
    common::in_child_with("local_memory_beyond_the_device_is_an_error", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("scratch").unwrap();
        let out = common::poisoned(&q, 64);
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
        common::untouched(&q, &out);
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
    common::in_child_with("buffers_of_another_context_are_refused", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("fill").unwrap();
        let other = Queue::on(&Context::new(&[q.device().clone()]).unwrap(), q.device()).unwrap();
        let foreign = common::poisoned(&other, 64);
        // SAFETY: refused before enqueueing (checked below).
        let r = unsafe { k.launch().arg(&foreign).arg(1).range(64) };
        match r {
            Err(e @ Error::InvalidArgument { index: 0, .. }) => {
                assert!(e.to_string().contains("another context"), "{e}")
            }
            other => panic!("want InvalidArgument, got {:?}", other.map(|_| ())),
        }
        common::untouched(&other, &foreign);
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
        common::in_child_with("abusive_rounding_parameters_fall_back", env, || {
            let q = common::queue();
            let p = Program::from_source(&q, SRC).unwrap();
            let k = p.kernel("fill3").unwrap();
            for user in [Range::d1(7), Range::d3(7, 5, 3)] {
                let out = common::poisoned(&q, 128);
                // SAFETY: `fill3` writes the linear id, below user.len() <= 105 < 128.
                let ev = unsafe { k.launch().arg(&out).arg(3).range(user) }.unwrap();
                ev.wait().unwrap();
                let v = out.read(&q).unwrap();
                let n = user.len();
                assert!(v[..n].iter().all(|&x| x == 3), "{user:?}: {v:?}");
                assert!(v[n..].iter().all(|&x| x == i32::POISON), "{user:?}: {v:?}");
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
    common::in_child_with("reduction_result_before_any_run_is_an_error", &[], || {
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
    common::in_child_with("argument_mismatches_are_errors_not_panics", &[], || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let k = p.kernel("mixed").unwrap();
        let (f, i) = (
            Buffer::<f32>::new(q.context(), 64).unwrap(),
            Buffer::<i32>::new(q.context(), 64).unwrap(),
        );
        let u = Buffer::<u8>::new(q.context(), 64).unwrap();
        let l = LocalSize::Auto;
        // A launch that passes first: the kernel remembers its arguments' kinds and types, and
        // every case below must still be checked (none has the same kinds and types).
        let good = k.launch().arg(&f).arg(&i).arg(64u32).arg(1f32);
        // SAFETY: work-items 0..64 read i[id] and write f[id], both 64 elements.
        unsafe { good.nd_range(64, l) }.unwrap().wait().unwrap();
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
    let out = common::in_child_with(
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
    // NoDevices without a selector; NoDevice when CLGROUPS_DEVICE named one (the GPU machine).
    assert!(
        out.contains("CHILD-ERROR NoDevices") || out.contains("CHILD-ERROR NoDevice {"),
        "{out}"
    );
    assert!(out.contains("CLGROUPS_SHUFFLE_BACKEND=nvidia-ptx"), "{out}");
}

/// Multi-device launches refuse the same bad inputs before any device enqueues.
#[test]
fn root_launches_refuse_overflows_in_both_placements() {
    common::in_child_with(
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
                out.fill(i32::POISON).unwrap();
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
                    out.read().unwrap().iter().all(|&v| v == i32::POISON),
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
    common::in_child_with("memory_stays_flat", &[], || {
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
    // The diagnostic lines (NVIDIA's compiler also echoes the source line, `  oops;`).
    let named: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("oops") && l.contains("error"))
        .collect();
    assert!(!named.is_empty(), "{log}");
    for l in named {
        assert!(l.contains("kernel.cl:7:"), "{l}\n{log}");
    }
}

const DIVERGENT_SRC: &str = r#"
#include <clgroups/subgroup.h>
kernel void in_if(global int *o, global const int *x) {
    int v = x[get_global_id(0)];
    if (get_local_id(0) < 5) v = sg_reduce_add(v);
    o[get_global_id(0)] = v;
}
kernel void after_return(global int *o, global const int *x) {
    if (get_global_id(0) % 64 >= 5) return;
    o[get_global_id(0)] = sg_shuffle_down(x[get_global_id(0)], 1u);
}
kernel void in_id_loop(global int *o, global const int *x) {
    uint lid = get_local_id(0);
    int v = x[get_global_id(0)];
    for (uint i = 0; i < lid % 4; ++i) v = sg_inclusive_scan_add(v);
    o[get_global_id(0)] = v;
}
int lane0(int v) { if (sg_get_local_id() == 0) sg_barrier(); return sg_broadcast(v, 0u); }
kernel void via_helper(global int *o, global const int *x) { o[get_global_id(0)] = lane0(x[get_global_id(0)]); }
kernel void on_data(global int *o, global const int *x) {
    int v = x[get_global_id(0)];
    if (v > 0) v = sg_reduce_add(v);
    for (int i = 0; i < (x[get_global_id(0)] & 3); ++i) v = sg_shuffle(v, 3u);
    if (v < -400) { o[get_global_id(0)] = v; return; }
    o[get_global_id(0)] = sg_reduce_max(v);
}
int positive_sum(int v) { if (v > 0) return sg_reduce_add(v); return 0; }
kernel void via_parameter(global int *o, global const int *x) {
    o[get_global_id(0)] = positive_sum((int)get_local_id(0) - 3);
}
kernel void uniform(global int *o, global const int *x, int n) {
    int v = x[get_global_id(0)];
    if (n > 0) v = sg_reduce_add(v);
    for (int i = 0; i < n; ++i) v = sg_shuffle_xor(v, 1u) + i;
    if (get_local_id(0) == 0) o[get_global_id(0)] = 0;
    o[get_global_id(0)] = v + positive_sum(n);
}
kernel void straight(global int *o, global const int *x, int n) {
    int v = sg_reduce_add(x[get_global_id(0)]);
    for (int i = 0; i < 3; ++i) v = sg_shuffle_xor(v, 1u) + i;
    o[get_global_id(0)] = v + sg_reduce_add(n);
}
"#;

/// Sub-group collectives under work-item-dependent control flow (invalid: the layer's uniform
/// control flow rule) never crash or hang the host. Where collectives are work-group barriers
/// (the emulated backend, where PoCL 3.1 hangs or segfaults for such barriers, and PoCL 6.0's
/// native one), the kernels are refused with a typed error naming the call; collectives under
/// conditions on loaded values are masked where they can be (`tests/data_conditions.rs`) and
/// refused like these where they cannot (in a loop whose trip count a loaded value decides:
/// `on_data`; it ran before, giving unspecified values).
/// Elsewhere (NVIDIA) they are the driver's business: checked only that clgroups does not refuse
/// them (they are not launched). Everywhere, uniform conditions build and run correctly, a
/// helper's condition on its parameter included where the call passes a uniform value.
#[test]
fn divergent_sub_group_calls_never_crash_the_host() {
    common::in_child_with(
        "divergent_sub_group_calls_never_crash_the_host",
        &[],
        || {
            let q = common::queue();
            // PoCL 6.0's native collectives are work-group barriers too: refused the same way.
            let barriers = q.device().needs_group_uniform_collectives();
            let p = Program::from_source(&q, DIVERGENT_SRC).unwrap();
            let cases = [
                (
                    "in_if",
                    "sg_reduce_add at line 5 under a condition on get_local_id at line 5",
                ),
                (
                    "after_return",
                    "sg_shuffle_down at line 10 under a condition on get_global_id at line 9",
                ),
                (
                    "in_id_loop",
                    "sg_inclusive_scan_add at line 15 under a condition on lid at line 15",
                ),
                (
                    "via_helper",
                    "`lane0` at line 19, with sg_barrier at line 18",
                ),
                (
                    "via_parameter",
                    "`positive_sum` at line 29, passed a value differing between work-items as \
                     `v`: sg_reduce_add at line 27 under a condition on v at line 27",
                ),
                (
                    "on_data",
                    "sg_shuffle at line 23 under a condition on get_global_id at line 23 (not \
                     moved ahead: its condition is not shown uniform",
                ),
            ];
            for (name, want) in cases {
                match (p.kernel(name), barriers) {
                    (Err(e @ Error::Unsupported { .. }), true) => {
                        let text = e.to_string();
                        assert!(text.contains(&format!("kernel `{name}` ({want}")), "{text}");
                        println!("barriers: {name}: refused: {text}");
                    }
                    (Ok(_), false) => {
                        println!("not barriers: {name}: not refused (the driver's business)")
                    }
                    (r, _) => panic!("{name} (barriers: {barriers}): {:?}", r.map(|_| ())),
                }
            }
            let xs: Vec<i32> = (0..256).map(|i| (i * 7919) % 1000 - 500).collect();
            let x = Buffer::from_slice(&q, &xs).unwrap();
            let l = LocalSize::Exact(Range::d1(64));
            let run = |name: &str, n: i32| {
                let o = common::poisoned(&q, 256);
                let k = p.kernel(name).unwrap();
                // SAFETY: every work-item writes its own element of 256.
                let ev = unsafe { k.launch().arg(&o).arg(&x).arg(n).nd_range(256, l) };
                ev.unwrap().wait().unwrap();
                o.read(&q).unwrap()
            };
            assert_eq!(run("uniform", 3), run("straight", 3));
            println!("uniform conditions: same results as straight-line code");
        },
    );
}
