//! Findings (flow): lane-varying conditions, id conditions through helpers, `switch`, macros,
//! `goto`, short circuits in lockstep loops.

use super::*;

const LANE_CONDITIONS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_vote : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
#define UNDER(c) int v = x[g] % 50; int r = -1000; if (c) r = sub_group_non_uniform_reduce_add(v); out[W*g+2] = r; REC
kernel void under_scan(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_scan_exclusive_add(1) < 2);
}
kernel void under_inverse_ballot(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_inverse_ballot((uint4)(5u, 0u, 0u, 0u)));
}
kernel void under_elect(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); UNDER(sub_group_elect());
}
"#;

/// **Finding: a `non_uniform` reduction under a condition made of a lane-varying collective
/// (`if (sub_group_elect())`, `if (sub_group_scan_exclusive_add(1) < 2)`, `if
/// (sub_group_inverse_ballot(...))`) is not masked: the condition is taken as uniform.**
/// The same reduction under `get_sub_group_local_id() == 0`, a shuffle or a ballot bit
/// is masked and right. `sub_group_elect()` — the canonical leader test — segfaults the
/// process on PoCL 3.1, PoCL 6.0 `khr` and `emulated`; the scan condition gives every lane
/// the sum over the whole sub-group (38 where lanes 0 and 1 should get 29 and the others keep
/// -1000) on all three; the inverse ballot is wrong on PoCL 6.0 and segfaults PoCL 3.1. Cause
/// (guess): `transform/sg_uniform.rs` counts every sub-group built-in's result as uniform in
/// the sub-group; elect, scans, inverse ballots, ballot scans and shuffles are per lane.
#[test]
#[ignore = "finding: lane-varying collectives (elect, scans, inverse_ballot) as conditions are taken as uniform: wrong values or segfault"]
fn non_uniform_collectives_under_lane_varying_conditions() {
    let test = "non_uniform_collectives_under_lane_varying_conditions";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, LANE_CONDITIONS_SRC, "");
        let over = |lanes: fn(usize) -> bool| {
            move |s: &Sg| {
                let v = s.v();
                let sum: i32 = (0..v.len()).filter(|&l| lanes(l)).map(|l| v[l]).sum();
                (0..v.len())
                    .map(|l| vec![if lanes(l) { sum } else { -1000 }])
                    .collect()
            }
        };
        let scan = over(|l| l < 2);
        let inverse = over(|l| l == 0 || l == 2);
        let elect = over(|l| l == 0);
        check_all(
            &q,
            &p,
            &[
                ("under_scan", &scan),
                ("under_inverse_ballot", &inverse),
                ("under_elect", &elect),
            ],
            &[(&[32], &[16]), (&[24], &[12])],
            (3, 0),
        );
    });
}

const LANE_CONDITIONS_WRITTEN_OUT_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_vote : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void under_scan(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1000;
    if (sub_group_scan_exclusive_add(1) < 2) r = sub_group_non_uniform_reduce_add(v);
    out[W*g+2] = r; REC;
}
kernel void under_inverse_ballot(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1000;
    if (sub_group_inverse_ballot((uint4)(5u, 0u, 0u, 0u))) r = sub_group_non_uniform_reduce_add(v);
    out[W*g+2] = r; REC;
}
kernel void under_elect(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1000;
    int e = sub_group_elect();
    if (e) r = sub_group_non_uniform_reduce_add(v);
    if (sub_group_elect()) r += sub_group_non_uniform_reduce_add(v);
    out[W*g+2] = r; REC;
}
"#;

/// [`non_uniform_collectives_under_lane_varying_conditions`]'s kernels with the `if` written out
/// (the macro-written `if` is [`vote_flow_written_by_macros`]'s finding), `elect` also through
/// a variable: each reduction masked by its lane-varying condition.
#[test]
fn non_uniform_collectives_under_lane_varying_conditions_written_out() {
    let test = "non_uniform_collectives_under_lane_varying_conditions_written_out";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, LANE_CONDITIONS_WRITTEN_OUT_SRC, "");
        let over = |lanes: fn(usize) -> bool, times: i32| {
            move |s: &Sg| {
                let v = s.v();
                let sum: i32 = (0..v.len()).filter(|&l| lanes(l)).map(|l| v[l]).sum();
                (0..v.len())
                    .map(|l| vec![if lanes(l) { times * sum } else { -1000 }])
                    .collect()
            }
        };
        let scan = over(|l| l < 2, 1);
        let inverse = over(|l| l == 0 || l == 2, 1);
        let elect = over(|l| l == 0, 2);
        check_all(
            &q,
            &p,
            &[
                ("under_scan", &scan),
                ("under_inverse_ballot", &inverse),
                ("under_elect", &elect),
            ],
            &[(&[32], &[16]), (&[24], &[12])],
            (3, 0),
        );
    });
}

const IDS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
uint my_lid(void) { return get_local_id(0); }
kernel void helper_id(global const int *x, global int *out, int n) {
    int r = -1;
    if (my_lid() < 4u) r = sub_group_reduce_add(1);
    out[get_global_id(0)] = r;
}
kernel void array_id(global const int *x, global int *out, int n) {
    int r = -1; uint a[1]; a[0] = get_local_id(0);
    if (a[0] < 4u) r = sub_group_reduce_add(1);
    out[get_global_id(0)] = r;
}
"#;

/// **Finding: a collective under a condition on a work-item id that reaches it through a
/// helper (`uint my_lid(void) { return get_local_id(0); } if (my_lid() < 4u) ...`) or a
/// private array (`a[0] = get_local_id(0); if (a[0] < 4u) ...`) is not refused** where
/// collectives are work-group barriers (the docs promise `Error::Unsupported` for conditions
/// on ids "or a variable computed from one"). Launched, it hangs PoCL 6.0 (`khr` and
/// `emulated`: killed after 120 s) and segfaults PoCL 3.1. The test only creates the kernels
/// (nothing is launched).
#[test]
fn id_conditions_through_helpers_and_arrays_are_refused() {
    let test = "id_conditions_through_helpers_and_arrays_are_refused";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let d = q.device();
        if !d.needs_group_uniform_collectives() {
            println!(
                "{}: not run: collectives are not work-group barriers",
                device_line(d)
            );
            return;
        }
        let p = build(&q, IDS_SRC, "");
        let mut bad = Vec::new();
        for (name, id) in [("helper_id", "my_lid"), ("array_id", "a")] {
            match p.kernel(name) {
                Err(e @ Error::Unsupported { .. })
                    if e.to_string().contains(&format!(
                        "sub_group_reduce_add at line {} under a condition on {id} at line",
                        if name == "helper_id" { 6 } else { 11 }
                    )) && e
                        .to_string()
                        .contains("not shown uniform in each sub-group") =>
                {
                    println!("{name}: refused: {e}")
                }
                r => bad.push(format!("{name}: {:?}", r.map(|_| "created (would run)"))),
            }
        }
        assert!(bad.is_empty(), "{}:\n{}", device_line(d), bad.join("\n"));
    });
}

const SWITCH_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void vote_switch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    switch (sub_group_any(v > 40)) { case 1: r = sub_group_reduce_add(1); break; default: r = -1; }
    out[W*g+2] = r; REC;
}
"#;

/// **Finding (a valid kernel refused, with a wrong reason): a collective in a `switch` on a
/// vote** (`switch (sub_group_any(v > 40)) { case 1: r = sub_group_reduce_add(1); break; }`,
/// the same as the `if` form, which runs) is refused where collectives are work-group barriers
/// with "not moved ahead: it runs in a loop" — there is no loop (the `switch`'s `break` is
/// probably read as a loop's). A `switch` on a loaded value (`switch (x[g] > 0)`) is refused
/// with the same wrong reason. PoCL 3.1, PoCL 6.0 `khr` and `emulated`.
/// Fixed: a collective in a `switch` on a value uniform in each sub-group moves ahead of the
/// `switch`, as under an `if`.
#[test]
fn switch_on_a_vote() {
    let test = "switch_on_a_vote";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SWITCH_SRC, "");
        check_all(&q, &p, &[("vote_switch", &any_above_40)], &WIDE, (3, 0));
    });
}

const MACRO_FLOW_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
#define LOOP_WHILE_ANY while (sub_group_any(i < v))
kernel void object_macro_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    LOOP_WHILE_ANY { s += sub_group_reduce_add(1); i++; }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
#define UNTIL_ALL(c, body) while (!sub_group_all(c)) { body; }
kernel void function_macro_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    UNTIL_ALL(i >= v, s += sub_group_reduce_add(1); i++);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
#define IF_ANY(c) if (sub_group_any(c))
kernel void function_macro_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    IF_ANY(v > 40) r = sub_group_reduce_add(1);
    out[W*g+2] = r; out[W*g+3] = 0; REC;
}
"#;

/// **Finding: a vote loop or a vote `if` written by a macro runs unchecked, silently wrong.**
/// `#define LOOP_WHILE_ANY while (sub_group_any(i < v))` then `LOOP_WHILE_ANY { s +=
/// sub_group_reduce_add(1); i++; }`, the same through `#define UNTIL_ALL(c, body) while
/// (!sub_group_all(c)) { body; }`, and `#define IF_ANY(c) if (sub_group_any(c))` are valid
/// OpenCL that the same code without the macro runs right (in lockstep, or moved ahead); with
/// the macro, neither lockstep nor the move applies and nothing is refused: PoCL 3.1 and PoCL
/// 6.0 `emulated` give 40 / 5 where 48 / 6 (the loop), 4 where -1 (the `if`, in a sub-group
/// that did not take it), and PoCL 3.1 segfaults in work-groups of 33. PoCL 6.0 `khr` is
/// right (one sub-group per work-group). Where the
/// macro is function-like and used in the condition only (`while (ANY_BELOW(i, v))`) or in
/// the body (`BODY_SUM(s)`), the kernel is refused instead (the refusal named the macro as
/// the collective and a flag the rewrite made as the condition; it now names the macro, the
/// collective it uses and the loop's variable). Cause (guess): `transform/lockstep.rs`
/// and `transform/hoist.rs` read the kernel's tokens before macro expansion; a vote or loop
/// keyword inside a macro's replacement list is not seen. Fixed: where collectives are
/// work-group barriers, a function using collectives and a macro whose replacement list holds
/// control flow on a work-item's value is refused, naming the macro.
#[test]
fn vote_flow_written_by_macros() {
    let test = "vote_flow_written_by_macros";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, MACRO_FLOW_SRC, "");
        let loops = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap();
            s.all(vec![most * s.xs.len() as i32, most])
        };
        let branch = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 0]),
            false => s.all(vec![-1, 0]),
        };
        let kernels: [(&str, &Model); 3] = [
            ("object_macro_loop", &loops),
            ("function_macro_loop", &loops),
            ("function_macro_if", &branch),
        ];
        let why = "clgroups does not follow control flow written by macros";
        refused_or_checked(&q, &p, &kernels, why, &WIDE, (4, 0));
    });
}

const GOTO_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void goto_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
again:
    s += sub_group_reduce_add(1);
    i++;
    if (sub_group_any(i < v)) goto again;
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
"#;

/// **Finding: a loop written with `goto` under a vote runs unchecked, silently wrong.**
/// `again: s += sub_group_reduce_add(1); i++; if (sub_group_any(i < v)) goto again;` is valid
/// OpenCL C (each sub-group loops as one), the `do { } while (sub_group_any(i < v))` form runs
/// in lockstep, but the `goto` form is neither run in lockstep nor refused: PoCL 3.1 and PoCL
/// 6.0 `emulated` give 40 / 5 where 48 / 6. PoCL 6.0 `khr` is right (one sub-group per
/// work-group). The docs refuse a `goto` in a lockstep loop's body; a backward `goto` that
/// makes the loop is not seen at all (`transform/lockstep.rs`, `transform/divergence.rs`).
/// Fixed: where collectives are work-group barriers, a function with collectives, a `goto` and
/// a condition on a work-item's value is refused.
#[test]
fn goto_loop_under_a_vote() {
    let test = "goto_loop_under_a_vote";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, GOTO_SRC, "");
        let model = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap().max(1);
            s.all(vec![most * s.xs.len() as i32, most])
        };
        let kernels: [(&str, &Model); 1] = [("goto_loop", &model)];
        let why = "clgroups does not follow jumps";
        refused_or_checked(&q, &p, &kernels, why, &WIDE, (4, 0));
    });
}

const SHORT_CIRCUIT_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void ternary_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i = 0, s = 0;
    while (i < n ? sub_group_any(i < v) : 0) { s += sub_group_reduce_add(1); i++; }
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
kernel void for_and_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = (x[g] % 50 + 50) % 7; int i, s = 0;
    for (i = 0; i < n && sub_group_any(i < v); i++) s += sub_group_reduce_add(1);
    out[W*g+2] = s; out[W*g+3] = i; REC;
}
"#;

/// **Finding: a lockstep loop whose condition holds its vote behind `?:` or `&&` keeps the
/// vote conditional, so work-items whose loop already ended skip it: a segfault or a hang.**
/// `while (i < n ? sub_group_any(i < v) : 0)` becomes `__clg_l0 = __clg_l0 & ((i < n ?
/// sub_group_any(i < v) : 0) != 0);` inside the lockstep `for (;;)`: a work-item whose
/// sub-group left the loop earlier still has `i < n` and reaches the vote, one whose sub-group
/// went on to `i == n` does not. PoCL 3.1 and PoCL 6.0 `emulated` segfault in work-groups of
/// 33 (right in groups of 12 by luck). `for (i = 0; i < n && sub_group_any(i < v); i++)` hangs
/// PoCL 6.0 `khr` in work-groups of 12 (killed after 120 s; the `while` form of the same loop
/// runs). Valid OpenCL: `i` is uniform in each sub-group. Expected: the vote computed by every
/// work-item (as the docs do for `&&`/`||` chains under `if`: `((L) != 0) & ((R) != 0)`), or a
/// refusal (`transform/lockstep.rs`).
/// Refused now where collectives are work-group barriers: "it is behind `?:` (`&&`) in its
/// loop's condition, which clgroups does not run in lockstep".
#[test]
fn lockstep_conditions_with_short_circuits() {
    let test = "lockstep_conditions_with_short_circuits";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SHORT_CIRCUIT_SRC, "");
        let model = |s: &Sg| {
            let most = s.xs.iter().map(|x| (x % 50 + 50) % 7).max().unwrap();
            let i = most.min(s.n);
            s.all(vec![i * s.xs.len() as i32, i])
        };
        let kernels: [(&str, &Model); 2] =
            [("for_and_condition", &model), ("ternary_condition", &model)];
        let why = "in its loop's condition, which clgroups does not run in lockstep";
        refused_or_checked(&q, &p, &kernels, why, &WIDE, (4, 4));
    });
}
