//! Issue 20, item 1: a sub-group collective under a bound on the global id,
//! `if (i < n) y[i] = sg_reduce_add(x[i]);`, where the device's collectives are work-group
//! barriers (PoCL 3.1's emulated sub-groups, PoCL 6.0's native ones): with `n` a multiple of the
//! sub-group size but not of the work-group size, the branch is uniform per sub-group (valid
//! OpenCL) but splits a work-group, and PoCL 6.0 used to write `y[i]` for `i >= n` too.
//!
//! The table: every bound `n` in `0..=65` and around the range's end `G` (every residue modulo
//! the sub-group and work-group sizes), work-groups of 24 (32 on NVIDIA) and 64 and driver-picked ones (`Auto`, plain ranges), the bound as
//! an `if`, an early `return` and a conditional expression, through the layer (`sg_*`) and the
//! standard built-ins (`sub_group_*`). Each launch either runs and gives exactly the sub-group
//! sums of the work-items below `n`, or is refused before anything is enqueued; no value is ever
//! written by a work-item the branch excludes. Launches run in a child process (this test again,
//! with `CLGROUPS_TEST_CHILD` set), so a barrier a work-item skips that crashes the
//! driver fails the test instead of killing the harness.

mod common;

use common::Poison;

use clgroups::device::{GroupBarriers, ShuffleBackend};
use clgroups::error::Unsupported;
use clgroups::plan::Refusal;
use clgroups::{Buffer, Error, LocalSize, Program, Queue, Range};

/// The kernels, `REDUCE` standing for the collective (`sg_reduce_add`, `sub_group_reduce_add`).
const SHAPES: &str = r#"
kernel void if_bound(global const int *x, global int *y, uint n) {
    size_t i = get_global_id(0);
    if (i < n) y[i] = REDUCE(x[i]);
}
kernel void early_return(global const int *x, global int *y, uint n) {
    size_t i = get_global_id(0);
    if (i >= n) return;
    y[i] = REDUCE(x[i]);
}
kernel void ternary(global const int *x, global int *y, uint n) {
    size_t i = get_global_id(0);
    int s = i < n ? REDUCE(x[i]) : 0;
    if (i < n) y[i] = s;
}
"#;

const KERNELS: [&str; 3] = ["if_bound", "early_return", "ternary"];

/// The global size of every launch (a multiple of 8, 24, 32 and 64).
const G: usize = 192;

/// The program for one API: the layer's `sg_*` or the standard `sub_group_*` built-ins.
fn program(q: &Queue, api: &str) -> Program {
    let src = match api {
        "sg" => format!(
            "#include <clgroups/subgroup.h>\n{}",
            SHAPES.replace("REDUCE", "sg_reduce_add")
        ),
        _ => format!(
            "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n{}",
            SHAPES.replace("REDUCE", "sub_group_reduce_add")
        ),
    };
    Program::from_source(q, &src).unwrap()
}

/// How a launch is shaped.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `nd_range(G, local)`.
    Groups(usize),
    /// `nd_range(G, Auto)`.
    Auto,
    /// `range(G)`.
    Plain,
}

/// `y` after launching `kernel` (over ones) with bound `n`; an error leaves `y` untouched
/// (asserted).
fn launch(
    p: &Program,
    kernel: &str,
    ones: &Buffer<i32>,
    n: u32,
    shape: Shape,
) -> clgroups::Result<Vec<i32>> {
    let q = p.queue();
    let y = Buffer::from_slice(q, &[i32::POISON; G]).unwrap();
    let k = p.kernel(kernel)?;
    let l = k.launch().arg(ones).arg(&y).arg(n);
    // SAFETY: work-items 0..G read ones[i] and write y[i] only, inside both (G elements).
    let ev = unsafe {
        match shape {
            Shape::Groups(local) => l.nd_range(G, LocalSize::Exact(Range::d1(local))),
            Shape::Auto => l.nd_range(Range::d1(G), LocalSize::Auto),
            Shape::Plain => l.range(G),
        }
    };
    match ev.and_then(|ev| ev.wait()) {
        Ok(()) => Ok(y.read(q).unwrap()),
        Err(e) => {
            let got = y.read(q).unwrap();
            assert!(
                got.iter().all(|&v| v == i32::POISON),
                "refused but ran: {e}"
            );
            Err(e)
        }
    }
}

/// Checks `got` of a launch with bound `n`: poison from `n` on; below it, sub-group sums of
/// ones, i.e. each sub-group's size: with work-groups of `local` and sub-groups of `sg`
/// exactly `min(sg, local - j * sg)` for sub-group `j`, else (driver-picked groups) blocks of
/// equal values that tile `0..n`.
fn check(got: &[i32], n: usize, groups: Option<(usize, usize)>, what: &str) {
    for (i, &v) in got.iter().enumerate().skip(n) {
        assert_eq!(v, i32::POISON, "{what}: work-item {i} >= n = {n} wrote {v}");
    }
    match groups {
        Some((local, sg)) => {
            for (i, &v) in got.iter().enumerate().take(n) {
                let j = (i % local) / sg;
                let want = sg.min(local - j * sg) as i32;
                assert_eq!(
                    v, want,
                    "{what}: y[{i}] (work-groups of {local}, sub-groups {sg})"
                );
            }
        }
        None => {
            let mut i = 0;
            while i < n {
                let v = got[i];
                assert!(v > 0 && i + v as usize <= n, "{what}: {v} at {i}: {got:?}");
                let block = &got[i..i + v as usize];
                assert!(block.iter().all(|&w| w == v), "{what}: {got:?}");
                i += v as usize;
            }
        }
    }
}

/// The table for one API on the device under test.
fn table(api: &str) {
    let q = common::queue();
    let d = q.device().clone();
    let barriers = d.needs_group_uniform_collectives();
    let p = program(&q, api);
    let ones = Buffer::from_slice(&q, &[1i32; G]).unwrap();
    let (mut ran, mut refused) = (0, 0);
    // Work-groups of 24: partial sub-groups (on NVIDIA, a partial warp).
    let small = 24;
    for kernel in KERNELS {
        let k = p.kernel(kernel).unwrap();
        for shape in [
            Shape::Groups(small),
            Shape::Groups(64),
            Shape::Auto,
            Shape::Plain,
        ] {
            let sg = match shape {
                Shape::Groups(l) => k.sub_groups().max_sub_group_size(Range::d1(l)).unwrap(),
                _ => k.sub_groups().max_sub_group_size(Range::d1(64)).unwrap(),
            };
            // Every residue modulo 64 (and so 8, 24 and 32), the range's end and beyond.
            for n in (0..=65).chain([G - 1, G, G + 1]) {
                // Elsewhere a bound inside a sub-group is not valid OpenCL: not launched.
                // Sub-groups start at multiples of `sg` within each work-group (a work-group's
                // last one may be partial).
                let inside = match shape {
                    Shape::Groups(l) => (n % l) % sg != 0,
                    _ => n % sg != 0,
                };
                if !barriers && inside && n < G {
                    continue;
                }
                let what = format!("{api} {kernel} {shape:?} n = {n} on {d}");
                let uniform = match shape {
                    Shape::Groups(l) => n % l == 0 || n >= G || !barriers,
                    // clgroups picks the groups: sub-group-aligned bounds must run.
                    _ => n % sg == 0 || n >= G,
                };
                match launch(&p, kernel, &ones, n as u32, shape) {
                    Ok(got) => {
                        let groups = match shape {
                            Shape::Groups(l) => Some((l, sg)),
                            _ => None,
                        };
                        check(&got, n.min(G), groups, &what);
                        ran += 1;
                    }
                    Err(e @ Error::InvalidLaunch { .. }) if barriers && !uniform => {
                        let text = e.to_string();
                        let Error::InvalidLaunch { reason, .. } = &e else {
                            unreachable!()
                        };
                        assert!(
                            matches!(
                                **reason,
                                Refusal::SplitsGroup(_) | Refusal::UniformTooSmall { .. }
                            ),
                            "{what}: {text}"
                        );
                        let why =
                            text.contains("work-group barriers") || text.contains("abort PoCL");
                        assert!(why, "{what}: {text}");
                        refused += 1;
                    }
                    Err(e) => panic!("{what}: {e}"),
                }
            }
        }
    }
    println!("{api} on {d}: {ran} launches ran right, {refused} refused before enqueueing");
    assert!(ran > 0);
    assert_eq!(
        refused > 0,
        barriers,
        "refusals only where collectives are barriers"
    );
}

#[test]
fn every_bound_residue_runs_right_or_is_refused_with_the_layer() {
    let test = "every_bound_residue_runs_right_or_is_refused_with_the_layer";
    common::in_child(test, || table("sg"));
}

#[test]
fn every_bound_residue_runs_right_or_is_refused_with_built_ins() {
    let test = "every_bound_residue_runs_right_or_is_refused_with_built_ins";
    common::in_child(test, || table("sub_group"));
}

/// The issue's case: n = 72 in work-groups of 64 with sub-groups of 8 (uniform per sub-group,
/// not per work-group). Where collectives are work-group barriers it is refused before anything
/// is enqueued (PoCL 6.0 wrote all 128 elements before the guard); on PoCL 6.0 this must be
/// the native backend.
#[test]
fn bounds_uniform_per_sub_group_only_are_refused_where_collectives_are_group_barriers() {
    let test = "bounds_uniform_per_sub_group_only_are_refused_where_collectives_are_group_barriers";
    common::in_child(test, || {
        let q = common::queue();
        let d = q.device().clone();
        if common::subgroups_required() {
            assert!(d.sub_groups().driver.native(), "{d}: no native sub-groups");
        }
        let p = program(&q, "sg");
        let ones = Buffer::from_slice(&q, &[1i32; G]).unwrap();
        let k = p.kernel("if_bound").unwrap();
        let sg = k.sub_groups().max_sub_group_size(Range::d1(64)).unwrap();
        let n = 64 + sg;
        let r = launch(&p, "if_bound", &ones, n as u32, Shape::Groups(64));
        if d.needs_group_uniform_collectives() {
            let e = r.expect_err("a work-group-divergent collective must be refused");
            let text = e.to_string();
            let reason = d.group_uniform_reason().unwrap().to_string();
            assert!(text.contains(&reason) && text.contains("`i < n`"), "{text}");
            println!("{d}: n = {n}, local 64: refused: {text}");
        } else {
            check(&r.unwrap(), n, Some((64, sg)), "native, not barriers");
        }
        // A plain range picks groups that keep the bound uniform (before: 256-item groups on
        // PoCL 6.0, refused).
        let got = launch(&p, "if_bound", &ones, 96, Shape::Plain).unwrap();
        check(&got, 96, None, "plain range, n = 96");
    });
}

/// PoCL's CPU devices with native sub-groups count as barrier devices; the reason names them
/// (the emulated backend's where it is forced: `CLGROUPS_SHUFFLE_BACKEND=emulated`).
#[test]
fn pocl_native_cpu_devices_need_group_uniform_collectives() {
    let d = common::device();
    let pocl = d.identity().implementation == clgroups::device::Implementation::Pocl;
    let backend = d.sub_groups().effective.shuffle_backend;
    let native = d.sub_groups().driver.native() && backend != ShuffleBackend::Emulated;
    if pocl && native && d.kind() == clgroups::device::DeviceKind::Cpu {
        assert!(d.needs_group_uniform_collectives());
        assert_eq!(d.group_uniform_reason(), Some(GroupBarriers::PoclCpu));
        assert!(d
            .group_uniform_reason()
            .unwrap()
            .to_string()
            .contains("PoCL"));
    }
    if backend == ShuffleBackend::Emulated {
        assert!(d.needs_group_uniform_collectives(), "{d}: emulated");
        assert_eq!(d.group_uniform_reason(), Some(GroupBarriers::Emulated));
    }
    // A kernel with a collective under a local-id condition is refused at build there.
    let q = Queue::new(&d).unwrap();
    let src = "#include <clgroups/subgroup.h>\n\
        kernel void k(global int *y) { if (get_local_id(0) < 5) y[0] = sg_reduce_add(1); }";
    let p = Program::from_source(&q, src).unwrap();
    match (p.kernel("k"), d.needs_group_uniform_collectives()) {
        (
            Err(
                e @ Error::Unsupported {
                    what: Unsupported::DivergentCollective { barriers, .. },
                    ..
                },
            ),
            true,
        ) => {
            assert_eq!(barriers, d.group_uniform_reason(), "{e}");
            let reason = d.group_uniform_reason().unwrap().to_string();
            assert!(e.to_string().contains(&reason), "{e}");
        }
        (Ok(_), false) => {}
        (r, b) => panic!("barriers: {b}: {:?}", r.map(|_| ())),
    }
}
