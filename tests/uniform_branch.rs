//! Sub-group collectives under `get_global_id(d) OP n` (`n` a scalar argument): where collectives
//! are work-group barriers (PoCL 3.1's emulated backend, PoCL 6.0's native one) the launch
//! decides, with `n`, the local size and the offset, whether every work-group takes one branch
//! (run) or not (a typed error, nothing enqueued); elsewhere (NVIDIA) nothing is refused. Each case runs in a child process (this test again, with
//! `CLGROUPS_TEST_CHILD` set), so a barrier under divergent control flow that crashes PoCL
//! fails the test instead of killing the harness.

mod common;

use common::Poison;

use clgroups::{Buffer, Error, LocalSize, Program, Queue, Range};

const SRC: &str = r#"
#include <clgroups/subgroup.h>
kernel void direct(global const int *x, global int *out, uint n) {
    if (get_global_id(0) < n) out[get_global_id(0)] = sg_reduce_add(x[get_global_id(0)]);
}
kernel void via_var(global const int *x, global int *out, uint n) {
    size_t i = get_global_id(0);
    if (i < n) { int s = sg_reduce_add(x[i]); out[i] = s; }
}
kernel void early_exit(global const int *x, global int *out, ulong n) {
    size_t i = get_global_id(0);
    if (n <= i) return;
    out[i] = sg_reduce_add(x[i]);
}
kernel void straight(global const int *x, global int *out) {
    out[get_global_id(0)] = sg_reduce_add(x[get_global_id(0)]);
}
kernel void local_bound(global const int *x, global int *out, uint n) {
    if (get_local_id(0) < n) out[get_local_id(0)] = sg_reduce_add(x[get_global_id(0)]);
}
"#;

/// Whether the device's collectives are work-group barriers (emulated, PoCL's CPU devices).
fn barriers(q: &Queue) -> bool {
    q.device().needs_group_uniform_collectives()
}

fn poisoned(q: &Queue, len: usize) -> Buffer<i32> {
    let mut b = Buffer::new(q.context(), len).unwrap();
    b.fill(q, i32::POISON).unwrap();
    b
}

/// `out` of `kernel` over `global` at `offset` in groups of `local`, with `n` when given.
fn run<N: clgroups::launch::KernelArg>(
    p: &Program,
    kernel: &str,
    x: &Buffer<i32>,
    n: Option<N>,
    (global, local, offset): (usize, LocalSize, usize),
) -> clgroups::Result<Vec<i32>> {
    let q = p.queue();
    let out = poisoned(q, x.len());
    let k = p.kernel(kernel)?;
    let mut launch = k.launch().arg(x).arg(&out).offset(Range::d1(offset));
    if let Some(n) = n {
        launch = launch.arg(n);
    }
    // SAFETY: work-items offset..offset + global touch x[i] and out[i] only, inside both
    // (x.len() elements, at least offset + global); the collectives are uniform or refused.
    unsafe { launch.nd_range(global, local) }
        .and_then(|ev| ev.wait())
        .map_err(|e| {
            // A refused launch left `out` as it was.
            assert!(
                out.read(q).unwrap().iter().all(|&v| v == i32::POISON),
                "{e}"
            );
            e
        })?;
    Ok(out.read(q).unwrap())
}

/// The first `n` elements of `want`, then poison up to `len`.
fn prefix(want: &[i32], n: usize) -> Vec<i32> {
    (0..want.len())
        .map(|i| if i < n { want[i] } else { i32::POISON })
        .collect()
}

#[test]
fn bounds_on_group_boundaries_run_and_give_the_straight_results() {
    let test = "bounds_on_group_boundaries_run_and_give_the_straight_results";
    common::in_child(test, || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let x = Buffer::from_slice(&q, &common::values(320, 7)).unwrap();
        let l64 = LocalSize::Exact(Range::d1(64));
        let none: Option<u32> = None;
        let straight = run(&p, "straight", &x, none, (320, l64, 0)).unwrap();
        for (kernel, n) in [
            ("direct", 192u32),
            ("via_var", 128),
            ("direct", 0),
            ("via_var", 999),
        ] {
            let got = run(&p, kernel, &x, Some(n), (256, l64, 0)).unwrap();
            assert_eq!(
                got[..256],
                prefix(&straight, n as usize)[..256],
                "{kernel} n = {n}"
            );
            println!("{kernel}: n = {n}, local 64: same as straight-line code");
        }
        // Work-items 64..320: n = 192 is a group boundary there too.
        let got = run(&p, "via_var", &x, Some(192u32), (256, l64, 64)).unwrap();
        let want: Vec<i32> = (0..320)
            .map(|i| {
                if (64..192).contains(&i) {
                    straight[i]
                } else {
                    i32::POISON
                }
            })
            .collect();
        assert_eq!(got, want, "offset 64");
        let got = run(&p, "early_exit", &x, Some(128u64), (256, l64, 0)).unwrap();
        assert_eq!(got[..256], prefix(&straight, 128)[..256], "early_exit");
        println!("offset and early return: same as straight-line code");
    });
}

/// Sub-group sums of ones: each element is its sub-group's size; the sizes tile `0..n`.
fn assert_tiled_counts(got: &[i32], n: usize, what: &str) {
    let mut i = 0;
    while i < n {
        let v = got[i];
        assert!(v > 0 && i + v as usize <= n, "{what}: {v} at {i}: {got:?}");
        assert!(
            got[i..i + v as usize].iter().all(|&w| w == v),
            "{what}: {got:?}"
        );
        i += v as usize;
    }
    assert!(
        got[n..].iter().all(|&v| v == i32::POISON),
        "{what}: {got:?}"
    );
}

#[test]
fn awkward_bounds_are_refused_before_enqueueing_on_the_emulated_backend() {
    let test = "awkward_bounds_are_refused_before_enqueueing_on_the_emulated_backend";
    common::in_child(test, || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        let x = Buffer::from_slice(&q, &common::values(256, 3)).unwrap();
        let l64 = LocalSize::Exact(Range::d1(64));
        if barriers(&q) {
            for (kernel, n) in [("direct", 100u32), ("via_var", 1)] {
                match run(&p, kernel, &x, Some(n), (256, l64, 0)) {
                    Err(e @ Error::InvalidLaunch { .. }) => {
                        let text = e.to_string();
                        for want in ["` at line ", &format!("= {n})"), "[64]", "unconditionally"] {
                            assert!(text.contains(want), "{kernel}: {want}: {text}");
                        }
                        println!("barriers: {kernel} n = {n}: refused: {text}");
                    }
                    r => panic!("{kernel} n = {n}: want InvalidLaunch, got {r:?}"),
                }
            }
            // An offset moves the boundaries: 128 is no boundary of groups starting at 32.
            let r = run(&p, "via_var", &x, Some(128u32), (192, l64, 32));
            assert!(matches!(r, Err(Error::InvalidLaunch { .. })), "{r:?}");
        } else {
            // Collectives that are not work-group barriers (NVIDIA): not checked, so not
            // refused; not launched (n = 100 splits a sub-group: not valid OpenCL).
            p.kernel("direct").unwrap();
            println!("native: direct: not refused (the driver's business; not launched)");
        }
    });
}

#[test]
fn driver_picked_local_sizes_keep_the_branch_uniform() {
    let test = "driver_picked_local_sizes_keep_the_branch_uniform";
    common::in_child(test, || {
        let q = common::queue();
        let p = Program::from_source(&q, SRC).unwrap();
        if !barriers(&q) {
            println!("not barriers: not run: the driver's local size may split a sub-group at n");
            return;
        }
        let ones = Buffer::from_slice(&q, &[1i32; 256]).unwrap();
        // Auto: where collectives are barriers the launch picks a local size that divides 96.
        let got = run(&p, "via_var", &ones, Some(96u32), (256, LocalSize::Auto, 0)).unwrap();
        assert_tiled_counts(&got, 96, "nd_range Auto, n = 96");
        // A plain range (these kernels are never rounded): one launch, the same choice.
        let out = poisoned(&q, 256);
        let k = p.kernel("early_exit").unwrap();
        // SAFETY: work-items 0..200 touch ones[i] and out[i], inside both (256 elements).
        let ev = unsafe { k.launch().arg(&ones).arg(&out).arg(40u64).range(200) };
        ev.unwrap().wait().unwrap();
        let got = out.read(&q).unwrap();
        assert_tiled_counts(&got, 40, "range(200), n = 40");
        println!("Auto and plain ranges: sub-group sums tile 0..n");
    });
}

#[test]
fn local_id_bounds_stay_refused_at_build_on_the_emulated_backend() {
    let q = common::queue();
    let p = Program::from_source(&q, SRC).unwrap();
    match (p.kernel("local_bound"), barriers(&q)) {
        (Err(e @ Error::Unsupported { .. }), true) => {
            let text = e.to_string();
            assert!(
                text.contains("condition on get_local_id at line 19"),
                "{text}"
            );
            println!("barriers: local_bound refused: {text}");
        }
        (Ok(_), false) => println!("not barriers: local_bound not refused (the driver's business)"),
        (r, barriers) => panic!("barriers: {barriers}: {:?}", r.map(|_| ())),
    }
}

#[cfg(feature = "scaling")]
#[test]
fn root_device_launches_check_every_device_before_enqueueing() {
    let test = "root_device_launches_check_every_device_before_enqueueing";
    common::in_child(test, || {
        let Some(root) = common::root_device(test) else {
            return;
        };
        let checked = root
            .devices()
            .iter()
            .any(|d| d.needs_group_uniform_collectives());
        let k = root.program(SRC).unwrap().kernel("via_var").unwrap();
        let ones = common::colored(&root, &[1; 256], 64);
        let launch = |n: u32| {
            let out = common::colored(&root, &[i32::POISON; 256], 64);
            // SAFETY: work-items 0..256 touch ones[i] and out[i], inside both (256 elements).
            let ev = unsafe {
                k.launch()
                    .arg(&ones)
                    .arg(&out)
                    .arg(n)
                    .nd_range(256, Range::d1(64))
            };
            (ev.and_then(|ev| ev.wait()), out.read().unwrap())
        };
        let (r, got) = launch(128);
        r.unwrap();
        assert_tiled_counts(&got, 128, "root device, n = 128");
        if checked {
            // 100 splits a work-group of device 0; 160 one of device 1 only (the launch is
            // split in work-groups over the devices: 0..128, 128..256).
            for n in [100, 160] {
                let (r, got) = launch(n);
                assert!(matches!(r, Err(Error::InvalidLaunch { .. })), "{r:?}");
                assert!(
                    got.iter().all(|&v| v == i32::POISON),
                    "n = {n}: a refused launch ran"
                );
                println!("root device: n = {n} refused: {}", r.unwrap_err());
            }
        }
    });
}
