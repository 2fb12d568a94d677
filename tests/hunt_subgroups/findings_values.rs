//! Findings (values): conditions on kernel arguments, writes through pointers and in
//! conditions, values through arrays and helpers, the sub-group size.

use super::*;

// ---------------------------------------------------------------------------------------------
// Findings: each failed where its doc comment says (those still `#[ignore]`d fail today).
// ---------------------------------------------------------------------------------------------

const UNIFORM_SRC: &str = r#"
#include <clgroups/subgroup.h>
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void scan_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n == 3) r = sub_group_scan_exclusive_add(1);
    out[W*g+2] = r; REC;
}
kernel void scan_ternary(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0);
    int r = n == 3 ? sub_group_scan_inclusive_add(2) : 5;
    out[W*g+2] = r; REC;
}
kernel void layer_scan_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n > 2) r = sg_inclusive_scan_add(1);
    out[W*g+2] = r; REC;
}
kernel void reduce_if(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (n == 3) r = sub_group_reduce_max(x[g] % 50);
    out[W*g+2] = r; REC;
}
kernel void reduce_switch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    switch (n) {
    case 3: r = sub_group_reduce_max(x[g] % 50); break;
    default: r = -5;
    }
    out[W*g+2] = r; REC;
}
"#;

/// **Finding (fixed): a scan or reduction under a condition on a kernel argument (`if (n == 3) r =
/// sub_group_scan_exclusive_add(1);`, `n == 3 ? scan : 5`, `switch (n)`, the layer's
/// `sg_inclusive_scan_add` too) gives wrong values, crashes or hangs on the emulated backend.**
/// Every work-item reaches the collective (the condition is a kernel argument), so the kernel
/// is valid and the docs say such conditions are accepted.
///
/// - PoCL 3.1 (`emulated`): `scan_if` gives 0 on every lane and `get_sub_group_local_id()`
///   after it reads 0 on every lane; `scan_ternary` takes the `5` branch; `reduce_if` and
///   `reduce_switch` (no scan: the reduction's loop) segfault in work-groups of 33 and hang
///   in work-groups of 9 (a last sub-group of one work-item); right in groups of 12.
/// - PoCL 6.0 `emulated` forced: the scans give lane 0's value on every lane, the lanes read 0.
/// - PoCL 6.0 `khr`: right (native collectives).
///
/// The cause is PoCL's (3.1 and 6.0): a barrier inside a uniform conditional region followed
/// by a loop whose trip count differs between work-items is miscompiled, without sub-groups:
///
/// ```c
/// kernel void p(global int *out, int n) {
///   local ulong s[64]; uint lid = get_local_id(0); int r = -1;
///   if (n == 3) {
///      s[lid] = 1; barrier(CLK_LOCAL_MEM_FENCE);
///      uint l = lid % 8; int acc = 0;
///      for (uint i = 0; i < l; ++i) acc += (int)s[lid - l + i];
///      r = acc;
///   }
///   out[2 * lid] = r; out[2 * lid + 1] = lid % 8;  /* 0 everywhere, for both */
/// }
/// ```
///
/// The emulated scans and reductions (`cl/clgroups/detail/sg_emulated.h`,
/// `CLG_EMU_ALGORITHMS`/`CLG_EMU_REDUCE`: `for (i < l)` / `for (i < n)` after
/// `clg_emu_publish`'s barriers) were exactly that shape. Fixed: every loop over the emulated
/// scratch runs `clg_max_range()` trips in every work-item and skips the lanes it does not need
/// (`headers::tests::scratch_loops_run_the_same_trips_in_every_work_item`).
#[test]
fn collectives_under_a_uniform_argument_condition() {
    let test = "collectives_under_a_uniform_argument_condition";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, UNIFORM_SRC, "");
        let lane =
            |f: fn(usize) -> i32| move |s: &Sg| (0..s.xs.len()).map(|l| vec![f(l)]).collect();
        let scan_if = lane(|l| l as i32);
        let scan_ternary = lane(|l| 2 * (l as i32 + 1));
        let layer = lane(|l| l as i32 + 1);
        let max = |s: &Sg| s.all(vec![*s.v().iter().max().unwrap()]);
        let shapes: [(&[usize], &[usize]); 3] = [(&[24], &[12]), (&[99], &[33]), (&[18], &[9])];
        check_all(
            &q,
            &p,
            &[
                ("scan_if", &scan_if),
                ("scan_ternary", &scan_ternary),
                ("layer_scan_if", &layer),
                ("reduce_if", &max),
                ("reduce_switch", &max),
            ],
            &shapes,
            (3, 3),
        );
    });
}

const POINTERS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void vote_alias(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int *pv = &v;
    if (sub_group_any(v > 40)) { *pv = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
kernel void data_alias(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -7; int *pv = &v;
    if (x[g] > 0) { *pv = 1; r = sub_group_reduce_add(v); }
    out[W*g+2] = r; out[W*g+3] = v; REC;
}
"#;

/// **Finding: a collective moved ahead of its `if` misses a write through a pointer between
/// the condition and the call, silently.** `int *pv = &v; if (sub_group_any(v > 40)) { *pv =
/// 1; r = sub_group_reduce_add(v); }` gives the sum of the old `v` (e.g. 37 for 8 ones); the
/// same with a direct `v = 1;` is refused ("its operand reads `v`, written before the call"),
/// so the check sees names, not stores through pointers (`transform/hoist.rs`). The same for a
/// condition on a loaded value (`if (x[g] > 0) { *pv = 1; r = sub_group_reduce_add(v); }`,
/// `transform/nu_mask.rs`): 65 where 4 work-items take the branch. Wrong on PoCL 3.1, PoCL 6.0
/// `khr` and `emulated` (both rewrite on PoCL's CPU devices). Expected: the write seen (or the
/// kernel refused, as for the direct write). Fixed: an operand naming a variable whose address
/// the function takes does not move past a store that may go through a pointer; refused where
/// collectives are work-group barriers ("its operand reads `v`, written before the call").
#[test]
fn writes_through_pointers_before_a_moved_collective() {
    let test = "writes_through_pointers_before_a_moved_collective";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, POINTERS_SRC, "");
        let vote = |s: &Sg| {
            let v = s.v();
            match v.iter().any(|&e| e > 40) {
                true => s.all(vec![v.len() as i32, 1]),
                false => v.iter().map(|&e| vec![-1, e]).collect(),
            }
        };
        let data = |s: &Sg| {
            let taken = s.xs.iter().filter(|&&x| x > 0).count() as i32;
            (s.xs.iter())
                .map(|&x| {
                    if x > 0 {
                        vec![taken, 1]
                    } else {
                        vec![-7, x % 50]
                    }
                })
                .collect()
        };
        refused_or_checked(
            &q,
            &p,
            &[("vote_alias", &vote), ("data_alias", &data)],
            "its operand reads `v`, written before the call",
            &WIDE,
            (4, 0),
        );
    });
}

const CONDITION_WRITE_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 4
kernel void assign_in_condition(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    int w = 0;
    if (sub_group_any(v > 40) && (w = 1)) r = sub_group_reduce_add(w);
    out[W*g+2] = r; out[W*g+3] = w; REC;
}
"#;

/// **Finding: a collective moved ahead of an `if` whose condition assigns its operand reads
/// the value from before the assignment, silently.** `if (sub_group_any(v > 40) && (w = 1)) r =
/// sub_group_reduce_add(w);` gives 0 (the sum of `w = 0`) where it should give the sub-group's
/// size. The check for writes between the `if` and the call (`transform/hoist.rs`) looks at
/// the statements in between, not at the condition itself. Wrong on PoCL 3.1, PoCL 6.0 `khr`
/// and `emulated`. Fixed: the condition's assignments count as writes before the call; refused
/// where collectives are work-group barriers.
#[test]
fn assignment_in_a_vote_condition() {
    let test = "assignment_in_a_vote_condition";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, CONDITION_WRITE_SRC, "");
        let model = |s: &Sg| match s.v().iter().any(|&e| e > 40) {
            true => s.all(vec![s.xs.len() as i32, 1]),
            false => s.all(vec![-1, 0]),
        };
        let kernels: [(&str, &Model); 1] = [("assign_in_condition", &model)];
        let why = "its operand reads `w`, written before the call";
        refused_or_checked(&q, &p, &kernels, why, &WIDE, (4, 0));
    });
}

const HIDDEN_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
#define VOTE(c) if (sub_group_any((c) > 40)) r = sub_group_reduce_add(1); out[W*g+2] = r; REC
kernel void array_element(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2]; a[0] = x[g] % 50; a[1] = 0;
    VOTE(a[0]);
}
kernel void array_initializer(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2] = { x[g] % 50, 0 };
    VOTE(a[0]);
}
int val(global const int *x) { return x[get_global_id(0)] % 50; }
kernel void helper_value(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    VOTE(val(x));
}
uint my_lid(void) { return get_local_id(0); }
kernel void helper_id(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    VOTE((int)my_lid() * 4);
}
void get(int *o, global const int *x) { *o = x[get_global_id(0)] % 50; }
kernel void out_parameter(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t = 0; get(&t, x);
    VOTE(t);
}
kernel void pointer_into_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[4] = {0, 0, 0, 0}; int *p = a + 1; *p = x[g] % 50;
    VOTE(a[1]);
}
kernel void memcpy_copy(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t; __builtin_memcpy(&t, &x[g], 4); t %= 50;
    VOTE(t);
}
kernel void vote_in_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1; int f[1];
    f[0] = sub_group_any(v > 40);
    if (f[0]) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
"#;

/// **Finding: a vote whose work-item values reach it through a private array, a helper
/// function's return value or out-parameter, pointer arithmetic or `__builtin_memcpy` is taken
/// as uniform in the work-group, so the collective under it is left in place, silently.**
/// `int a[2]; a[0] = x[g] % 50; if (sub_group_any(a[0] > 40)) r = sub_group_reduce_add(1);`
/// is valid OpenCL (the vote is uniform in each sub-group) but splits the work-group; where
/// collectives are work-group barriers the branch then runs in sub-groups that did not take it
/// (r = 4 where it should stay -1), and PoCL 3.1 segfaults in work-groups of 33. The same
/// kernel with a scalar (`int t = x[g] % 50`), a struct member, a vector component or a
/// pointer to a scalar is moved ahead and right. Also a helper returning `get_local_id(0)`
/// (`uint my_lid(void)`), and a vote stored in an array (`f[0] = sub_group_any(...); if
/// (f[0])`). Wrong on PoCL 3.1 and PoCL 6.0 `emulated` forced; PoCL 6.0 `khr` is right here
/// only because its sub-group is the whole work-group. Cause (guess): the work-item-value
/// tracking (`transform/divergence.rs`, `transform/sg_uniform.rs`) follows assignments to
/// plain names only, and treats calls of user functions as uniform.
#[test]
fn work_item_values_through_arrays_and_helpers() {
    let test = "work_item_values_through_arrays_and_helpers";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, HIDDEN_SRC, "");
        let (model, by_id) = (any_above_40, any_id_above_40);
        check_all(
            &q,
            &p,
            &[("vote_in_array", &model)],
            &[(&[96], &[12])],
            (3, 0),
        );
        // Their votes are written by the `VOTE` macro, whose condition reads a work-item's
        // value: refused where collectives are work-group barriers (`..._written_out` runs
        // them written out).
        refused_or_checked(
            &q,
            &p,
            &[
                ("array_element", &model),
                ("array_initializer", &model),
                ("helper_value", &model),
                ("helper_id", &by_id),
                ("out_parameter", &model),
                ("pointer_into_array", &model),
                ("memcpy_copy", &model),
            ],
            "clgroups does not follow control flow written by macros",
            &[(&[96], &[12])],
            (3, 0),
        );
    });
}

const HIDDEN_WRITTEN_OUT_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void array_element(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2]; a[0] = x[g] % 50; a[1] = 0;
    if (sub_group_any((a[0]) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
kernel void array_initializer(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[2] = { x[g] % 50, 0 };
    if (sub_group_any((a[0]) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
int val(global const int *x) { return x[get_global_id(0)] % 50; }
kernel void helper_value(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (sub_group_any((val(x)) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
uint my_lid(void) { return get_local_id(0); }
kernel void helper_id(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1;
    if (sub_group_any(((int)my_lid() * 4) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
void get(int *o, global const int *x) { *o = x[get_global_id(0)] % 50; }
kernel void out_parameter(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t = 0; get(&t, x);
    if (sub_group_any((t) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
kernel void pointer_into_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int a[4] = {0, 0, 0, 0}; int *p = a + 1; *p = x[g] % 50;
    if (sub_group_any((a[1]) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
kernel void memcpy_copy(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int r = -1; int t; __builtin_memcpy(&t, &x[g], 4); t %= 50;
    if (sub_group_any((t) > 40)) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
kernel void vote_in_array(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1; int f[1];
    f[0] = sub_group_any(v > 40);
    if (f[0]) r = sub_group_reduce_add(1);
    out[W*g+2] = r; REC;
}
"#;

/// [`work_item_values_through_arrays_and_helpers`]'s kernels with the vote's `if` written out
/// (the macro-written `if` is [`super::findings_flow::vote_flow_written_by_macros`]'s finding):
/// the work-item's values reach the vote through a private array, an array initialiser, a
/// helper's result or out-parameter, a pointer into an array, `__builtin_memcpy`, and each
/// collective is moved ahead of its vote.
#[test]
fn work_item_values_through_arrays_and_helpers_written_out() {
    let test = "work_item_values_through_arrays_and_helpers_written_out";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, HIDDEN_WRITTEN_OUT_SRC, "");
        let (model, by_id) = (any_above_40, any_id_above_40);
        check_all(
            &q,
            &p,
            &[
                ("array_element", &model),
                ("array_initializer", &model),
                ("helper_value", &model),
                ("helper_id", &by_id),
                ("out_parameter", &model),
                ("pointer_into_array", &model),
                ("memcpy_copy", &model),
                ("vote_in_array", &model),
            ],
            &[(&[96], &[12])],
            (3, 0),
        );
    });
}

const SIZE_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle_relative : enable
#define REC out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id()
#define W 3
kernel void size_branch(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int r = -1;
    if (get_sub_group_size() == 8) r = sub_group_reduce_add(v);
    out[W*g+2] = r; REC;
}
kernel void broadcast_loop(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int v = x[g] % 50; int s = 0;
    for (uint i = 0; i < get_sub_group_size(); i++) s += sub_group_broadcast(v, i) * (int)(i + 1);
    out[W*g+2] = s; REC;
}
kernel void shuffle_up_scan(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0); int t = x[g] % 50;
    for (uint off = 1; off < get_sub_group_size(); off <<= 1) {
        int o = sub_group_shuffle_up(t, off);
        if (get_sub_group_local_id() >= off) t += o;
    }
    out[W*g+2] = t; REC;
}
"#;

/// **Finding: branches and loops on `get_sub_group_size()` — the classic `for (i = 0; i <
/// get_sub_group_size(); i++) s += sub_group_broadcast(v, i);` and the shuffle-up scan `for
/// (off = 1; off < get_sub_group_size(); off <<= 1)` — are taken as uniform in the work-group,
/// but a work-group that is not a multiple of the sub-group size has a partial last sub-group
/// of another size.** Valid OpenCL; with work-groups of 12 (sub-groups of 8 and 4) the loops
/// run different trip counts per sub-group and, where collectives are work-group barriers,
/// give wrong values (PoCL 6.0 `emulated`: `broadcast_loop` 167 where -13, even in the full
/// sub-group; `size_branch` writes 68 in the sub-group of 4) or crash (PoCL 3.1: segfault).
/// PoCL 6.0 `khr` is right (one sub-group per work-group there). Right in work-groups that are
/// multiples of 8. Expected: run in lockstep (as for loops bounded by a reduction) or refused.
///
/// Now the size counts as uniform in each sub-group only: the branch's collective moves ahead
/// and the loops run in lockstep. `shuffle_up_scan` stayed wrong on PoCL 6.0 `emulated` (lanes
/// 4..8 of the full sub-group without the last step): a PoCL miscompile of the lockstep loop
/// (the `if` ending its body after the shuffle's barriers, the increment under the flag
/// starting it; plain OpenCL crashed PoCL 3.1 and 6.0). Fixed: every lockstep iteration ends
/// with a barrier (`transform::lockstep`, docs/devices.md).
#[test]
fn branches_and_loops_on_the_sub_group_size() {
    let test = "branches_and_loops_on_the_sub_group_size";
    common::in_child_with(test, &FINDING_ENV, || {
        let q = common::queue();
        let p = build(&q, SIZE_SRC, "");
        let size_branch = |s: &Sg| {
            let v = s.v();
            s.all(vec![if v.len() == 8 { v.iter().sum() } else { -1 }])
        };
        let broadcast_loop = |s: &Sg| {
            let v = s.v();
            s.all(vec![(0..v.len()).map(|i| v[i] * (i as i32 + 1)).sum()])
        };
        let scan = |s: &Sg| {
            let v = s.v();
            (0..v.len()).map(|l| vec![v[..=l].iter().sum()]).collect()
        };
        check_all(
            &q,
            &p,
            &[
                ("size_branch", &size_branch),
                ("broadcast_loop", &broadcast_loop),
                ("shuffle_up_scan", &scan),
            ],
            &[(&[24], &[12]), (&[33], &[11])],
            (3, 0),
        );
    });
}
