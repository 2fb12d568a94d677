//! Issue 32: kernels written by macros, the way CLBlast and others write them (a `#define` that
//! stamps a kernel per type with a `##`-pasted name, a macro-made kernel calling a helper that
//! calls `sub_group_reduce_add`, one calling `sg_inclusive_scan_add` directly, a multi-line
//! macro with `\` continuations), using sub-group collectives: on the emulated backend (PoCL
//! 3.1, or any device with `emulated` forced) they need the local-memory scratch the build
//! threads through the macros' replacement lists. Every result is checked against the host's
//! maths over the sub-groups the kernel reports, in work-groups that are and are not multiples
//! of the sub-group size, on the device's own backend and on `emulated` forced; a macro that
//! writes only the keyword and the name, `KERNEL_HEAD(k)(...)`, included. A kernel whose
//! parameter list follows neither its keyword nor such a macro's use is refused alone, the rest
//! of its program running.

mod common;

use clgroups::device::ShuffleBackend;
use clgroups::{Buffer, Error, Kernel, LocalSize, Program, Queue, Range};

/// Sub-groups as people write them with macros; every kernel also records its sub-group id
/// and local id (`sg[2 i]`, `sg[2 i + 1]`).
const SOURCE: &str = r#"
#include <clgroups/subgroup.h>
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

/* A helper on a standard built-in, as kernels written for cl_khr_subgroups call it. */
static int group_total(int v) { return sub_group_reduce_add(v); }

static void record(global uint *sg) {
    size_t i = get_global_id(0);
    sg[2 * i] = get_sub_group_id();
    sg[2 * i + 1] = get_sub_group_local_id();
}

/* CLBlast-style: one kernel per type, the name pasted. */
#define DEFINE_SUM(T) \
    kernel void sum_##T(global const T *x, global T *out, global uint *sg) { \
        size_t i = get_global_id(0); \
        out[i] = sub_group_reduce_add(x[i]); \
        record(sg); \
    }
DEFINE_SUM(int)
DEFINE_SUM(float)

/* A macro-made kernel calling a helper that calls a collective. */
#define MAKE_TOTAL(name) kernel void name(global const int *x, global int *out, global uint *sg) { out[get_global_id(0)] = group_total(x[get_global_id(0)]); record(sg); }
MAKE_TOTAL(total_via_helper)

/* The layer directly, the element type a macro argument. */
#define MAKE_SCAN(name, T) kernel void name(global const T *x, global T *out, global uint *sg) { \
    size_t i = get_global_id(0); \
    out[i] = sg_inclusive_scan_add(x[i]); \
    sg[2 * i] = sg_get_group_id(); \
    sg[2 * i + 1] = sg_get_local_id(); \
}
MAKE_SCAN(scan_uint, uint)

/* A multi-line macro with continuations, a broadcast and a scan through the standard names. */
#define MAKE_LANES(name)                                                 \
    __kernel void name(__global const int *x,                            \
                       __global int *out,                                \
                       __global uint *sg)                                \
    {                                                                    \
        size_t i = get_global_id(0);                                     \
        int first = sub_group_broadcast(x[i], 0);                        \
        out[i] = first + sub_group_scan_exclusive_add(x[i]);             \
        record(sg);                                                      \
    }
MAKE_LANES(lanes)

/* The keyword and the name from one macro, the parameters where it is used. */
#define KERNEL_HEAD(name) __kernel void name
KERNEL_HEAD(head_total)(global const int *x, global int *out, global uint *sg) {
    out[get_global_id(0)] = group_total(x[get_global_id(0)]);
    record(sg);
}

/* Written out, next to them. */
kernel void plain_total(global const int *x, global int *out, global uint *sg) {
    out[get_global_id(0)] = group_total(x[get_global_id(0)]);
    record(sg);
}
"#;

/// What each kernel computes, per sub-group (members in lane order).
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Every member gets the sub-group's sum.
    Sum,
    /// Every member gets the sum up to itself.
    InclusiveScan,
    /// Every member gets lane 0's value plus the sum before itself.
    FirstPlusExclusive,
}

/// Work-group sizes: multiples of the usual sub-group sizes and not.
const LOCALS: [usize; 4] = [8, 12, 33, 64];
/// Work-groups per launch.
const GROUPS: usize = 3;

/// The device's own queue, and one with `emulated` forced where that is not its backend.
fn queues() -> Vec<Queue> {
    let d = common::device();
    let mut v = vec![Queue::new(&d).unwrap()];
    if d.sub_groups().effective.shuffle_backend != ShuffleBackend::Emulated {
        let e = d.with_backend(ShuffleBackend::Emulated).unwrap();
        v.push(Queue::new(&e).unwrap());
    }
    v
}

/// The sub-groups of one work-group from what its work-items recorded (`sg`: id, local id per
/// work-item), checked against the definition: numbered over the local id, lanes in order,
/// only the last partial. Returns the members (local ids) of each sub-group in lane order.
fn sub_groups(sg: &[u32], what: &str) -> Vec<Vec<usize>> {
    let w = sg.len() / 2;
    let m = (0..w).filter(|&l| sg[2 * l] == 0).count();
    assert!(m >= 1, "{what}: no work-item in sub-group 0");
    for l in 0..w {
        let want = [(l / m) as u32, (l % m) as u32];
        assert_eq!(
            sg[2 * l..2 * l + 2],
            want,
            "{what}: item {l} (sub-groups of {m})"
        );
    }
    (0..w.div_ceil(m))
        .map(|id| (id * m..w.min(id * m + m)).collect())
        .collect()
}

/// Runs `k` over `x` in each of [`LOCALS`] and checks `op` against the host; returns the number
/// of values checked.
fn run<T>(q: &Queue, k: &Kernel, x: &[T], op: Op, what: &str) -> usize
where
    T: clgroups::buffer::Scalar + PartialEq + std::ops::Add<Output = T>,
{
    let mut checks = 0;
    for local in LOCALS
        .into_iter()
        .filter(|&l| l <= k.limits().max_work_group_size)
    {
        let n = local * GROUPS;
        let xb = Buffer::from_slice(q, &x[..n]).unwrap();
        let out = Buffer::<T>::new(q, n).unwrap();
        let sg = Buffer::<u32>::new(q, 2 * n).unwrap();
        // SAFETY: work-item i reads x[i] and writes out[i], sg[2i], sg[2i+1], all < n (global
        // n); the collectives are reached by every work-item.
        unsafe {
            k.launch()
                .arg(&xb)
                .arg(&out)
                .arg(&sg)
                .nd_range(Range::d1(n), LocalSize::Exact(Range::d1(local)))
        }
        .and_then(|e| e.wait())
        .unwrap_or_else(|e| panic!("{what} in groups of {local}: {e}"));
        let (got, ids) = (out.read(q).unwrap(), sg.read(q).unwrap());
        for g in 0..GROUPS {
            let base = g * local;
            let at = format!("{what} in groups of {local}, group {g}");
            for members in sub_groups(&ids[2 * base..2 * (base + local)], &at) {
                let vals: Vec<T> = members.iter().map(|&l| x[base + l]).collect();
                let mut prefix = Vec::with_capacity(vals.len());
                for (j, &v) in vals.iter().enumerate() {
                    prefix.push(if j == 0 { v } else { prefix[j - 1] + v });
                }
                for (j, &l) in members.iter().enumerate() {
                    let want = match op {
                        Op::Sum => prefix[vals.len() - 1],
                        Op::InclusiveScan => prefix[j],
                        Op::FirstPlusExclusive if j == 0 => vals[0],
                        Op::FirstPlusExclusive => vals[0] + prefix[j - 1],
                    };
                    assert_eq!(got[base + l], want, "{at}, item {l}");
                    checks += 1;
                }
            }
        }
    }
    checks
}

#[test]
fn macro_made_kernels_with_collectives_run_right_on_every_backend() {
    let n = LOCALS[LOCALS.len() - 1] * GROUPS;
    let ints: Vec<i32> = common::values(n, 7).iter().map(|v| v % 1000).collect();
    let floats: Vec<f32> = ints.iter().map(|&v| v as f32).collect();
    let uints: Vec<u32> = ints.iter().map(|&v| v.unsigned_abs()).collect();
    for q in queues() {
        let d = q.device().clone();
        let backend = d.sub_groups().effective.shuffle_backend;
        let p = Program::from_source(&q, SOURCE)
            .unwrap_or_else(|e| panic!("{d} ({backend}): the program builds: {e}"));
        let k = |name: &str| {
            p.kernel(name)
                .unwrap_or_else(|e| panic!("{d} ({backend}): kernel {name}: {e}"))
        };
        let at = |name: &str| format!("{d} ({backend}): {name}");
        let mut checks = run(&q, &k("sum_int"), &ints, Op::Sum, &at("sum_int"));
        checks += run(&q, &k("sum_float"), &floats, Op::Sum, &at("sum_float"));
        for name in ["total_via_helper", "head_total", "plain_total"] {
            checks += run(&q, &k(name), &ints, Op::Sum, &at(name));
        }
        checks += run(
            &q,
            &k("scan_uint"),
            &uints,
            Op::InclusiveScan,
            &at("scan_uint"),
        );
        let lanes = k("lanes");
        checks += run(&q, &lanes, &ints, Op::FirstPlusExclusive, &at("lanes"));
        // The arguments the user passes, without the hidden scratch.
        assert_eq!(lanes.args().len(), 3, "{}", at("lanes"));
        eprintln!("{d} ({backend}): {checks} values checked");
    }
}

#[test]
fn a_kernel_whose_parameters_no_macro_writes_beside_its_keyword_is_refused_alone() {
    // `KERNEL_HEAD` writes the keyword and the name, and the parameters come from another
    // macro: the emulated scratch cannot be given to `hidden_sum`. The program still builds and
    // the other kernels, macro-made ones among them, run.
    let src = format!(
        "{SOURCE}\n#define SIGNATURE (global const int *x, global int *out, global uint *sg)\n\
         #define MAKE_HIDDEN(name) KERNEL_HEAD(name) SIGNATURE {{ \
         out[get_global_id(0)] = sub_group_reduce_add(x[get_global_id(0)]); record(sg); }}\n\
         MAKE_HIDDEN(hidden_sum)\n"
    );
    let n = LOCALS[LOCALS.len() - 1] * GROUPS;
    let ints: Vec<i32> = common::values(n, 11).iter().map(|v| v % 1000).collect();
    for q in queues() {
        let d = q.device().clone();
        let backend = d.sub_groups().effective.shuffle_backend;
        let p = Program::from_source(&q, &src)
            .unwrap_or_else(|e| panic!("{d} ({backend}): the program builds: {e}"));
        let at = |name: &str| format!("{d} ({backend}): {name}");
        match (backend, p.kernel("hidden_sum")) {
            (ShuffleBackend::Emulated, Err(e @ Error::Unsupported { .. })) => {
                let shown = e.to_string();
                assert!(
                    shown.contains("KERNEL_HEAD"),
                    "{}: {shown}",
                    at("hidden_sum")
                );
            }
            (ShuffleBackend::Emulated, other) => {
                panic!("{}: refused, got {:?}", at("hidden_sum"), other.err())
            }
            (_, k) => {
                let k = k.unwrap_or_else(|e| panic!("{}: {e}", at("hidden_sum")));
                run(&q, &k, &ints, Op::Sum, &at("hidden_sum"));
            }
        }
        for name in ["total_via_helper", "head_total", "sum_int", "plain_total"] {
            let k = p
                .kernel(name)
                .unwrap_or_else(|e| panic!("{}: {e}", at(name)));
            run(&q, &k, &ints, Op::Sum, &at(name));
        }
    }
}
