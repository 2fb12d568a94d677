//! Helpers, macros, variants and uniform flow; required sizes with work-group sizes; writes
//! between a vote and its collective.

use super::*;

const SHAPES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4

/* ?: with a lane-dependent condition nested in built-in calls' arguments. */
kernel void tern_args(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; uint lane = get_sub_group_local_id();
    out[W*g+2] = max(lane < 3u ? sub_group_reduce_add(v) : -100, sub_group_broadcast(v, 0u));
    out[W*g+3] = clamp(lane % 2u ? sub_group_reduce_max(v) : sub_group_reduce_min(v), -30, 30);
    REC;
}

/* Helpers taking local and global pointers and calling collectives. */
void stage(local int *t, int v) { t[get_local_id(0)] = sub_group_reduce_add(v); }
kernel void local_helper(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; local int t[128];
    stage(t, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[W*g+2] = t[get_local_id(0)]; out[W*g+3] = t[get_local_id(0)] - sub_group_reduce_add(v);
    REC;
}
void put(global int *p, int v) { *p = sub_group_scan_exclusive_add(v); }
kernel void global_ptr_helper(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    put(out + W*g + 2, v);
    put(&out[W*g + 3], 1);
    REC;
}

/* Work-group barriers, sub_group_barrier and collectives interleaved. */
kernel void barrier_mix(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; local int t[128]; uint lid = get_local_id(0);
    t[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    int w = t[(lid + 1) % get_local_size(0)];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    int s = sub_group_reduce_add(w);
    barrier(CLK_LOCAL_MEM_FENCE);
    t[lid] = s;
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[W*g+2] = s; out[W*g+3] = t[lid] - s;
    REC;
}

/* Kernels stamped out by a macro with ##-pasted built-in names. */
#define MAKE(NAME, OP) kernel void NAME(global const int *x, global int *out, int n) { \
    size_t g = get_global_id(0); int v = x[g] % 50; \
    out[W*g+2] = sub_group_reduce_##OP(v); out[W*g+3] = sub_group_scan_inclusive_##OP(v); REC; }
MAKE(macro_max, max)
MAKE(macro_min, min)

/* Variants chosen by build options. */
kernel void variant(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
#ifdef USE_SCAN
    out[W*g+2] = sub_group_scan_inclusive_add(v);
#else
    out[W*g+2] = sub_group_reduce_add(v);
#endif
#if defined(cl_khr_subgroups) && (FACTOR > 1)
    out[W*g+3] = FACTOR * sub_group_any(v > 45);
#else
    out[W*g+3] = -3;
#endif
    REC;
}

/* A loop bounded by a kernel argument, left by a vote. */
kernel void vote_break(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int s = 0, i = 0;
    for (i = 0; i < n; i++) {
        if (sub_group_all(v < 10 * i)) break;
        s += sub_group_reduce_max(v - i);
    }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}

/* switch on a kernel argument (a fallthrough into a broadcast; a reduction there is
   uniform_condition_collectives' finding), a do-while with a uniform continue,
   broadcasts from a uniform non-constant lane, uniform early returns. */
kernel void switch_arg(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1, s = -1;
    switch (n) {
    case 0: r = sub_group_reduce_add(v); break;
    case 5: r = 2 * n;
    case 6: s = sub_group_broadcast(v, 1u % get_sub_group_size()); break;
    default: r = -5;
    }
    out[W*g+2] = r; out[W*g+3] = s; REC;
}
kernel void do_continue(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    int i = 0, s = 0;
    do {
        i++;
        if (i == 2) continue;
        s += sub_group_reduce_add(v * i);
    } while (i < n);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
kernel void lanes(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    out[W*g+2] = sub_group_broadcast(v, get_sub_group_size() - 1);
    out[W*g+3] = sub_group_broadcast(v, (uint)n % get_sub_group_size());
    REC;
}
kernel void group_return(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50;
    REC; out[W*g+2] = -1; out[W*g+3] = -1;
    if (get_group_id(0) == 1) return;
    if (get_local_size(0) > 100 || get_num_groups(0) == 1000 || get_work_dim() == 3) return;
    out[W*g+2] = sub_group_reduce_add(v); out[W*g+3] = 0;
}
"#;

/// Shapes the other suites do not run, right everywhere: `?:` nested in built-in calls'
/// arguments, helpers taking `local`/`global` pointers, barriers and `sub_group_barrier`
/// between collectives, `##`-made kernels, `#ifdef`/`#if` variants from `-D` options, a vote
/// `break` in a loop bounded by a kernel argument, `switch` on a kernel argument with a
/// fallthrough, a `do` loop with a uniform `continue`, broadcasts from a uniform non-constant
/// lane, early returns on the group id and local size.
#[test]
fn helpers_macros_variants_and_uniform_flow() {
    let test = "helpers_macros_variants_and_uniform_flow";
    common::in_child_with(test, &[], || {
        let q = common::queue();
        let p = build(&q, SHAPES_SRC, "-DUSE_SCAN -DFACTOR=3");
        let sum = |v: &[i32]| v.iter().sum::<i32>();
        let tern_args = |s: &Sg| {
            let v = s.v();
            let (mx, mn) = (*v.iter().max().unwrap(), *v.iter().min().unwrap());
            (0..v.len())
                .map(|l| {
                    let a = if l < 3 { sum(&v) } else { -100 };
                    let b = if l % 2 == 1 { mx } else { mn };
                    vec![a.max(v[0]), b.clamp(-30, 30)]
                })
                .collect()
        };
        let local_helper = |s: &Sg| s.all(vec![sum(&s.v()), 0]);
        let global_ptr = |s: &Sg| {
            let v = s.v();
            (0..v.len()).map(|l| vec![sum(&v[..l]), l as i32]).collect()
        };
        let barrier_mix = |s: &Sg| {
            let l = s.local[0];
            let x = common::values(s.gs.iter().max().unwrap() + l + 1, 1);
            let w: Vec<i32> = (s.gs.iter())
                .map(|&g| x[g / l * l + (g % l + 1) % l] % 50)
                .collect();
            s.all(vec![sum(&w), 0])
        };
        let macro_max = |s: &Sg| {
            let v = s.v();
            let m = *v.iter().max().unwrap();
            (0..v.len())
                .map(|l| vec![m, *v[..=l].iter().max().unwrap()])
                .collect()
        };
        let macro_min = |s: &Sg| {
            let v = s.v();
            let m = *v.iter().min().unwrap();
            (0..v.len())
                .map(|l| vec![m, *v[..=l].iter().min().unwrap()])
                .collect()
        };
        let variant = |s: &Sg| {
            let v = s.v();
            let any = 3 * i32::from(v.iter().any(|&e| e > 45));
            (0..v.len()).map(|l| vec![sum(&v[..=l]), any]).collect()
        };
        let vote_break = |s: &Sg| {
            let v = s.v();
            let (mut sum, mut i) = (0, 0);
            while i < s.n {
                if v.iter().all(|&e| e < 10 * i) {
                    break;
                }
                sum += v.iter().map(|&e| e - i).max().unwrap();
                i += 1;
            }
            s.all(vec![sum, i])
        };
        let switch_arg = |s: &Sg| {
            let v = s.v();
            assert_eq!(s.n, 5);
            s.all(vec![10, v[1 % v.len()]])
        };
        let do_continue = |s: &Sg| {
            let v = s.v();
            let total = (1..=s.n).filter(|&i| i != 2).map(|i| sum(&v) * i).sum();
            s.all(vec![total, s.n])
        };
        let lanes = |s: &Sg| {
            let v = s.v();
            s.all(vec![v[v.len() - 1], v[s.n as usize % v.len()]])
        };
        let group_return = |s: &Sg| match s.group() {
            1 => s.all(vec![-1, -1]),
            _ => s.all(vec![sum(&s.v()), 0]),
        };
        check_all(
            &q,
            &p,
            &[
                ("tern_args", &tern_args),
                ("local_helper", &local_helper),
                ("global_ptr_helper", &global_ptr),
                ("barrier_mix", &barrier_mix),
                ("macro_max", &macro_max),
                ("macro_min", &macro_min),
                ("variant", &variant),
                ("vote_break", &vote_break),
                ("switch_arg", &switch_arg),
                ("do_continue", &do_continue),
                ("lanes", &lanes),
                ("group_return", &group_return),
            ],
            &WIDE,
            (4, 5),
        );
    });
}

const REQD_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#define W 7
#define BODY \
    size_t g = get_global_id(0) + get_global_size(0) * get_global_id(1); \
    int v = x[g] % 50; \
    out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id(); \
    out[W*g+2] = sub_group_reduce_add(v); \
    out[W*g+3] = sub_group_scan_inclusive_max(v); \
    out[W*g+4] = get_sub_group_size() * 100 + get_num_sub_groups(); \
    out[W*g+5] = get_max_sub_group_size(); \
    out[W*g+6] = intel_sub_group_shuffle(v, (get_sub_group_local_id() + 1) % get_sub_group_size());
__attribute__((intel_reqd_sub_group_size(4))) __attribute__((reqd_work_group_size(12, 1, 1)))
kernel void s4_12(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(8))) __attribute__((reqd_work_group_size(4, 3, 1)))
kernel void s8_4x3(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(4))) __attribute__((reqd_work_group_size(5, 1, 1)))
kernel void s4_5(global const int *x, global int *out, int n) { BODY }
__attribute__((intel_reqd_sub_group_size(16))) __attribute__((reqd_work_group_size(3, 3, 1)))
kernel void s16_3x3(global const int *x, global int *out, int n) { BODY }
"#;

/// `intel_reqd_sub_group_size(S)` together with `reqd_work_group_size`, 1-D and 2-D, with
/// partial last sub-groups (12 = 3 x 4, 4 x 3 = 8 + 4, 5 = 4 + 1, 3 x 3 = 9 < 16).
#[test]
fn required_sizes_with_required_work_group_sizes() {
    let test = "required_sizes_with_required_work_group_sizes";
    common::in_child_with(test, &[], || {
        let q = common::queue();
        let p = build(&q, REQD_SRC, "");
        let mut bad = Vec::new();
        for (name, size, global, local) in [
            ("s4_12", 4, &[24usize][..], &[12usize][..]),
            ("s8_4x3", 8, &[8, 6], &[4, 3]),
            ("s4_5", 4, &[15], &[5]),
            ("s16_3x3", 16, &[6, 6], &[3, 3]),
        ] {
            let group: usize = local.iter().product();
            let model = |s: &Sg| {
                let v = s.v();
                let n = v.len();
                let count = group.div_ceil(size) as i32;
                (0..n)
                    .map(|l| {
                        vec![
                            v.iter().sum(),
                            *v[..=l].iter().max().unwrap(),
                            n as i32 * 100 + count,
                            size.min(group) as i32,
                            v[(l + 1) % n],
                        ]
                    })
                    .collect()
            };
            match p.kernel(name) {
                Err(Error::FeatureNotSupported { .. }) => {
                    println!(
                        "{}: {name}: size {size} not offered",
                        device_line(q.device())
                    );
                }
                _ => bad.extend(check(&q, &p, name, (global, local), 7, 0, &model)),
            }
        }
        assert!(
            bad.is_empty(),
            "{}:\n{}",
            device_line(q.device()),
            bad.join("\n")
        );
    });
}

const WRITES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void direct(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) { v = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
void set_one(int *p) { *p = 1; }
kernel void helper_write(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) { set_one(&v); r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void comma(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (sub_group_any(v > 40)) r = (v = 1, sub_group_reduce_add(v));
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void post_increment(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int k = 1;
    if (sub_group_any(v > 40)) r = sub_group_reduce_add(k++);
    out[W*g+2] = r; out[W*g+3] = k; REC;
}
typedef struct { int a; int b; } pair_t;
kernel void member(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); pair_t p; p.a = x[g] % 50; p.b = 0; int r = -1;
    if (sub_group_any(p.a > 40)) { p.a = 1; r = sub_group_reduce_add(p.a); }
    out[W*g+2] = r; out[W*g+3] = p.a; REC;
}
"#;

/// A collective under a vote whose operand is written between the vote and the call (directly,
/// through a helper taking its address, by a comma operator, a struct member) or has a side
/// effect (`k++`): where collectives are work-group barriers it cannot be computed ahead, and
/// is refused with a typed error naming why; elsewhere it runs, checked against the host.
#[test]
fn writes_between_a_vote_and_its_collective() {
    let test = "writes_between_a_vote_and_its_collective";
    common::in_child_with(test, &[], || {
        let q = common::queue();
        let d = q.device();
        let p = build(&q, WRITES_SRC, "");
        let one = |s: &Sg| {
            let v = s.v();
            match v.iter().any(|&e| e > 40) {
                true => s.all(vec![v.len() as i32, 1]),
                false => v.iter().map(|&e| vec![-1, e]).collect(),
            }
        };
        let inc = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 2]),
            false => s.all(vec![-1, 1]),
        };
        for (name, why) in [
            ("direct", "written before the call"),
            ("helper_write", "written before the call"),
            ("comma", "written before the call"),
            ("post_increment", "not safe to evaluate everywhere"),
            ("member", "written before the call"),
        ] {
            if d.needs_group_uniform_collectives() {
                match p.kernel(name) {
                    Err(e @ Error::Unsupported { .. }) => {
                        let text = e.to_string();
                        assert!(text.contains(why), "{}: {name}: {text}", device_line(d));
                        println!("{}: {name}: refused: {text}", device_line(d));
                    }
                    r => panic!("{}: {name}: {:?}", device_line(d), r.map(|_| ())),
                }
            } else {
                let model: &Model = if name == "post_increment" { &inc } else { &one };
                check_all(&q, &p, &[(name, model)], &WIDE, (4, 0));
            }
        }
    });
}
