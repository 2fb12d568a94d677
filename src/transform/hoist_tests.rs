use super::*;
use crate::transform::layer::is_sub_group_collective;

fn refused(src: &str) -> Vec<(String, String)> {
    let s = Scanned::new(src).unwrap();
    let d = divergence::divergent_users(
        &s,
        is_sub_group_collective,
        crate::transform::hoist::obstacle,
    );
    d.refused
        .into_iter()
        .map(|(k, why)| (k, why.to_string()))
        .collect()
}

const HEAD: &str = "kernel void k(global const int *x, global int *o, int t) {\n\
                    int v = x[get_global_id(0)] - (int)get_local_id(0); int r = 0, s = 0;\n";

fn kernel(body: &str) -> String {
    format!("{HEAD}{body}\no[get_global_id(0)] = r; }}")
}

#[test]
fn collectives_behind_and_or_are_evaluated_by_every_work_item() {
    let src = kernel("if (sub_group_any(v > 0) && sub_group_reduce_add(v) > t) r = 1;");
    assert_eq!(refused(&src).len(), 1, "{src}");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(
        out.contains(
            "if ((((sub_group_any(v > 0)) != 0) & ((sub_group_reduce_add(v) > t) != 0))) r = 1;"
        ),
        "{out}"
    );
    assert!(refused(&out).is_empty(), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
    // `||` with a scan, in an expression: `L || R` of the `||` only.
    let src = kernel("r = sub_group_all(v > 3) && t > 0 || sub_group_scan_inclusive_add(v) > t;");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(
        out.contains(
            "r = (((sub_group_all(v > 3) && t > 0) != 0) | ((sub_group_scan_inclusive_add(v) > t) != 0));"
        ),
        "{out}"
    );
}

#[test]
fn collectives_under_ifs_and_conditional_expressions_are_computed_ahead() {
    let src = kernel(
        "if (sub_group_any(v > 2)) {\n  if (sub_group_all(v < 100)) r = sub_group_reduce_min(v);\n}\n\
         s = sub_group_all(v == 1) ? sub_group_reduce_add(v) : 0;\n\
         if (t > 0) r = 1; else if (sub_group_any(v > 1)) r = sub_group_broadcast(v, 0);",
    );
    assert_eq!(refused(&src).len(), 1);
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
    for want in [
        "__clg_u0 = sub_group_all(v < 100); __typeof__(sub_group_reduce_min(v)) __clg_u2 \
         = sub_group_reduce_min(v); if (sub_group_any(v > 2)) {",
        "if (__clg_u0) r = __clg_u",
        "s = sub_group_all(v == 1) ? __clg_u3 : 0;",
        "else { __typeof__(sub_group_broadcast(v, 0)) __clg_u4",
    ] {
        assert!(out.contains(want), "{want}\n{out}");
    }
}

#[test]
fn what_cannot_move_stays_and_says_why() {
    let cases = [
        (
            "if (sub_group_any(v > 0)) r = sub_group_reduce_add(x[get_local_id(0)]);",
            "not safe to evaluate everywhere (`[`",
        ),
        (
            "if (sub_group_all(v > 0)) { v += 1; r = sub_group_reduce_add(v); }",
            "reads `v`, written",
        ),
        (
            "if (sub_group_any(v > t)) return; r = sub_group_reduce_add(v);",
            "follows an exit",
        ),
        // Loops that cannot run in lockstep: one work-item would leave it early; its trip
        // count differs between the work-items of a sub-group.
        (
            "while (sub_group_any(v > s)) { if (s > 100) return; s++; }",
            "leaves it with `return`",
        ),
        (
            "for (int i = 0; i < v; ++i) r += sub_group_reduce_add(i);",
            "not shown uniform in each sub-group (`v`",
        ),
        (
            "for (int i = 0; i < 8; ++i) { r += sub_group_reduce_add(i); if (v > i) break; }",
            "not shown uniform in each sub-group (`v`",
        ),
        (
            "r = v > 0 ? sub_group_non_uniform_broadcast(v, 0) : 0;",
            "non_uniform built-in",
        ),
        (
            "if (v > 0) r = sub_group_non_uniform_broadcast(v, 0);",
            "non_uniform built-in",
        ),
        (
            "if (v > 0) { s = v; r = sub_group_non_uniform_reduce_add(s); }",
            "reads `s`, written",
        ),
        (
            "if (v > 0) r = sub_group_non_uniform_reduce_add(x[get_global_id(0)]);",
            "(`[`",
        ),
        (
            "for (int i = 0; i < v; ++i) if (i > 1) r = sub_group_non_uniform_reduce_add(i);",
            "not shown uniform",
        ),
        (
            "if (sub_group_any(v > 0)) sub_group_barrier(CLK_LOCAL_MEM_FENCE);",
            "a barrier",
        ),
        (
            "if (sub_group_any(v > 0)) r = sub_group_reduce_add(v / t);",
            "(`/`",
        ),
        // Not uniform in the sub-group: invalid OpenCL, left to the refusal.
        (
            "if (v > 0) r = sub_group_reduce_add(v);",
            "not shown uniform in each sub-group (`v`",
        ),
        (
            "if (get_local_id(0) < 5) r = sub_group_reduce_add(1);",
            "(`get_local_id`",
        ),
    ];
    for (body, why) in cases {
        let src = kernel(body);
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert_eq!(out, src);
        let got = refused(&out);
        assert!(got.len() == 1 && got[0].1.contains(why), "{body}: {got:?}");
    }
}

#[test]
fn standard_collectives_behind_divergent_chains_are_computed_ahead() {
    // Issue 38: a standard collective must be reached by its whole sub-group, so the condition
    // before it in a chain is uniform wherever the kernel is defined.
    let src = kernel(
        "uint lid = get_sub_group_local_id();\n\
         if (sub_group_scan_inclusive_add(1) != (int)lid + 1 || sub_group_scan_exclusive_add(1u) != lid) r = 1;\n\
         s = lid > 2u ? sub_group_reduce_max(v) : -1;",
    );
    assert_eq!(refused(&src).len(), 1, "{src}");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
    for want in [
        "if ((((sub_group_scan_inclusive_add(1) != (int)lid + 1) != 0) | \
         ((sub_group_scan_exclusive_add(1u) != lid) != 0))) r = 1;",
        "= sub_group_reduce_max(v); s = lid > 2u ? __clg_u",
    ] {
        assert!(out.contains(want), "{want}\n{out}");
    }
    // The layer's keep theirs: every work-item of the work-group reaches them.
    let body = "uint lid = get_sub_group_local_id(); r = lid > 2u ? sg_reduce_add(v) : 0;";
    let out = uniform_collectives(&kernel(body), is_sub_group_collective);
    assert_eq!(refused(&out).len(), 1, "{out}");
}

#[test]
fn rewrites_keep_the_lines_of_calls_and_operands_written_over_several() {
    // A call over two lines under an `if`, a comment between `||` and its collective, a call
    // over two lines in a macro's definition: every line stays where it was.
    for body in [
        "if (sub_group_any(v > 2)) r = sub_group_reduce_add(\n    v);",
        "if (sub_group_any(v > 2)) r = sub_group_reduce_add\n(v);",
        "if (v > 0 || // the reduce\n    sub_group_reduce_max(v) > t) r = 1;",
        "if (x[get_global_id(0)] > 0) r = sub_group_non_uniform_reduce_add(\n  v);",
    ] {
        let src = kernel(body);
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert_ne!(out, src, "{src}");
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
        assert!(refused(&out).is_empty(), "{out}");
    }
}

#[test]
fn loops_of_sub_group_uniform_trip_counts_run_in_lockstep() {
    for body in [
        "for (int i = 0; i < sub_group_reduce_max(v); ++i) r += sub_group_reduce_add(i);",
        "while (sub_group_any(v + s < 30)) { r += 2; s++; }",
        "for (; sub_group_all(x[get_global_id(0)] > s); ) s++;",
        "do { s += 3; } while (sub_group_reduce_max(v) > s);",
        "for (int i = 0; i < 4; i += sub_group_reduce_max(v)) s++;",
        "for (int i = 0; i < 8; ++i) { s += sub_group_reduce_add(v);\n\
         if (sub_group_any(s > t)) break; }",
    ] {
        let src = kernel(body);
        assert_eq!(refused(&src).len(), 1, "{body}");
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert!(
            refused(&out).is_empty(),
            "{body}: {:?}\n{out}",
            refused(&out)
        );
        assert!(out.contains("clg_group_any(__clg_l"), "{out}");
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
    }
    // A `continue` before a collective: the rest of the iteration waits for a flag.
    let src = kernel(
        "int n = sub_group_reduce_max(v);\nfor (int i = 0; i < n; ++i) {\n\
         if (sub_group_all(v > i)) continue;\n r += sub_group_reduce_add(v); }",
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
    for want in [
        "{ int __clg_l0 = 1, __clg_l0k = 0, __clg_f0 = 1; int i = 0; \
         for (;; __clg_f0 = 0, barrier(CLK_LOCAL_MEM_FENCE)) {",
        "if (!clg_group_any(__clg_l0)) break; __clg_l0k = 0;",
        "if (__clg_l0 & !__clg_l0k) if (__clg_u",
        ") { __clg_l0k = 1; }",
        "if (__clg_l0 & !__clg_l0k) r += __clg_u",
    ] {
        assert!(out.contains(want), "{want}\n{out}");
    }
    // Unless more of its statement follows it.
    let src = kernel(
        "int n = sub_group_reduce_max(v);\nfor (int i = 0; i < n; ++i) {\n\
         if (sub_group_all(v > i)) { if (t > 0) continue; r++; }\n\
         r += sub_group_reduce_add(v); }",
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    let got = refused(&out);
    assert!(
        got.len() == 1 && got[0].1.contains("with `continue`"),
        "{got:?}\n{out}"
    );
    // A loop of the kind inside another: its flag starts from the outer one's (its votes are
    // reached by the whole work-group), whichever loop's collective comes first.
    for body in [
        "int a = 0; while (sub_group_any(a < v)) { int b = 0;\n\
         while (sub_group_any(b < v + a)) b++; r += b; a++; }",
        "for (int m = 0; m < 9; m++) { int q = 0, z = m * 2;\n\
         while (sub_group_any(q < v)) q++; r += q + z; if (sub_group_all(m >= v)) break; }",
        "int a = 0, b; while (sub_group_any(a < v)) { for (b = 0; b < sub_group_reduce_max(a);\n\
         b++) r += sub_group_reduce_add(b); a++; }",
    ] {
        let src = kernel(body);
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
        assert!(out.contains("int __clg_l1 = (__clg_l0)"), "{out}");
        assert!(!out.contains("if (__clg_l0) while"), "{out}");
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
    }
    let src = kernel(
        "int a = 0, b; while (sub_group_any(a < v)) { for (b = a; sub_group_any(b < v);\n\
         b++) r++; a++; }",
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(
        out.contains("if ((__clg_l0)) b = a; for (;; __clg_f1 = 0, barrier(CLK_LOCAL_MEM_FENCE))"),
        "{out}"
    );
    // The work-items whose outer loop ended load nothing: their flag masks the vote's operand.
    let src = kernel(
        "int a = 0; while (sub_group_any(a < v)) { int b = 0;\n\
         while (sub_group_any(x[b] < v)) b++; a++; }",
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{out}");
    assert!(
        out.contains("sub_group_any( (__clg_l1 ? (x[b] < v) : 0) )"),
        "{out}"
    );
    // Not where the outer loop's body runs under one test (a declaration that loads).
    let body = "int a = 0; while (sub_group_any(a < v)) { int b = x[a];\n\
                while (sub_group_any(b < v)) b++; a++; }";
    let out = uniform_collectives(&kernel(body), is_sub_group_collective);
    let got = refused(&out);
    assert!(
        got.len() == 1 && got[0].1.contains("runs in a loop"),
        "{got:?}\n{out}"
    );
}

#[test]
fn straight_helpers_with_collectives_move_like_collectives() {
    let helpers = "int h(int v) { int w = v * 2; return sub_group_reduce_add(w); }\n\
                   int branchy(int v) { if (v > 0) return sub_group_reduce_add(v); return 0; }\n\
                   int loads(global const int *p) { return sub_group_reduce_add(p[0]); }\n\
                   int looped(int v) { int s = 0; for (int i = 0; i < v; i++) s += i;\n\
                   return sub_group_reduce_add(s); }\n\
                   global int g0 = 1;\n\
                   int global_read(int v) { return sub_group_reduce_add(v + g0); }\n";
    // (A program-scope `constant` any work-item may read.)
    let src = format!(
        "{helpers}constant int K = 3;\nint hk(int v) {{ return h(v) * K; }}\n{}",
        kernel("if (sub_group_any(v > 0)) r = hk(v + 1);")
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
    assert!(out.contains("__typeof__(hk(v + 1)) __clg_u"), "{out}");
    for call in ["branchy(v)", "loads(x)", "looped(v)", "global_read(v)"] {
        let src = format!(
            "{helpers}{}",
            kernel(&format!("if (sub_group_any(v > 0)) r = {call};"))
        );
        let out = uniform_collectives(&src, is_sub_group_collective);
        let got = refused(&out);
        assert!(got.len() == 1 && got[0].0 == "k", "{call}: {got:?}\n{out}");
    }
}

/// Helpers whose collectives are each reached wherever they are called (under no condition,
/// before any `return`) move like collectives, branches after them included; those with a
/// collective under a condition or after a `return` stay refused.
#[test]
fn helpers_branching_after_their_collectives_move() {
    let helpers = "int leader(int v) { int s = sub_group_reduce_add(v);\n\
                   if (get_sub_group_local_id() == 0) return s; return 0; }\n\
                   int clamp_sum(int v) { int a = sub_group_reduce_max(v); return a > 9 ? 9 : a; }\n\
                   int either(int v) { int a = sub_group_reduce_max(v);\n\
                   return a > 0 ? a : sub_group_reduce_min(v); }\n\
                   int late(int v) { if (v > 100) return 0; return sub_group_reduce_add(v); }\n\
                   int chained(int v) { return v > 0 && sub_group_any(v > 1); }\n";
    for (condition, call, moves) in [
        ("sub_group_any(v > 0)", "leader(v)", true),
        ("x[get_global_id(0)] > 0", "leader(v)", true),
        ("sub_group_any(v > 0)", "clamp_sum(v + 1)", true),
        ("sub_group_any(v > 0)", "either(v)", false),
        ("x[get_global_id(0)] > 0", "late(v)", false),
        // (Its own `&&` computes the collective ahead first.)
        ("sub_group_any(v > 0)", "chained(v)", true),
    ] {
        let src = format!(
            "{helpers}{}",
            kernel(&format!("if ({condition}) r = {call};"))
        );
        let out = uniform_collectives(&src, is_sub_group_collective);
        let got = refused(&out);
        match moves {
            true => {
                assert!(got.is_empty(), "{call}: {got:?}\n{out}");
                assert!(
                    out.contains(&format!("__typeof__({call}) __clg_u")),
                    "{out}"
                );
            }
            false => assert!(got.len() == 1 && got[0].0 == "k", "{call}: {got:?}\n{out}"),
        }
    }
}

/// Under a condition on a loaded value, helpers any work-item may call are computed ahead like
/// the collectives they call; other helpers with collectives there are refused, not run
/// unchecked.
#[test]
fn helpers_under_conditions_on_loaded_values() {
    let helpers = "int h(int v) { return sub_group_reduce_add(v * 2); }\n\
                   int loads(global const int *p) { return sub_group_reduce_add(p[0]); }\n";
    let src = format!(
        "{helpers}{}",
        kernel("int w = x[get_global_id(0)]; if (w > 0) r = h(v + 1);")
    );
    assert_eq!(refused(&src).len(), 1, "{src}");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
    assert!(out.contains("__typeof__(h(v + 1)) __clg_u"), "{out}");
    let src = format!(
        "{helpers}{}",
        kernel("if (x[get_global_id(0)] > 0) r = loads(x);")
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    let got = refused(&out);
    assert_eq!(got.len(), 1, "{got:?}\n{out}");
    assert!(
        got[0].1.starts_with("loads at line 5 under a condition on"),
        "{got:?}"
    );
}

/// A helper calling a built-in defined over the work-items that reach it (`sub_group_elect`,
/// the clustered reductions) is not computed ahead: split sub-groups would change its value.
#[test]
fn helpers_with_built_ins_over_reaching_work_items_stay() {
    for helper in [
        "int lead(int v) { return v * sub_group_elect(); }\n",
        "int part(int v) { return sub_group_clustered_reduce_add(v, 4u); }\n",
    ] {
        let name = &helper[4..8];
        let src = format!(
            "{helper}{}",
            kernel(&format!(
                "int w = x[get_global_id(0)]; if (w > 0) r = {name}(v);"
            ))
        );
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert!(!out.contains("__clg_u"), "{out}");
        assert_eq!(refused(&out).len(), 1, "{out}");
    }
}

/// Function-like macros that expand to one call or one parenthesized expression, free of loads
/// and stores, move like the collectives they call; others stay refused.
#[test]
fn pure_macros_move_like_collectives() {
    let macros = "#define WSUM(x) sub_group_reduce_add(x)\n\
                  #define WMAX(x) (sub_group_reduce_max(x) * 2)\n\
                  #define BARE(x) sub_group_reduce_add(x) + 1\n\
                  #define LOADS(p) (sub_group_reduce_add((p)[0]))\n\
                  #define SHIFTS(x) (sub_group_reduce_add(x <<= 1))\n\
                  #define LOCAL(x) (sub_group_reduce_add(x + s))\n\
                  #define CAST(x) ((float)sub_group_reduce_max((int)(x)))\n";
    for (body, moved) in [
        (
            "if (sub_group_any(v > 3)) r = WSUM(v);",
            "__typeof__(WSUM(v)) __clg_u",
        ),
        (
            "int w = x[get_global_id(0)]; if (w > 0) r = WMAX(v + 1);",
            "__typeof__(WMAX(v + 1)) __clg_u",
        ),
    ] {
        let src = format!("{macros}{}", kernel(body));
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
        assert!(out.contains(moved), "{out}");
    }
    let src = format!(
        "{macros}{}",
        kernel("if (sub_group_any(v > 3)) r = CAST(v);")
    );
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(out.contains("__typeof__(CAST(v)) __clg_u"), "{out}");
    // (`LOCAL` names the caller's `s`, which could change between the call and its new place.)
    for call in ["BARE(v)", "LOADS(x)", "SHIFTS(v)", "LOCAL(v)"] {
        let src = format!(
            "{macros}{}",
            kernel(&format!("if (sub_group_any(v > 3)) r = {call};"))
        );
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert!(!out.contains("__clg_u"), "{call}: {out}");
        assert_eq!(refused(&out).len(), 1, "{call}: {out}");
    }
}

/// A helper whose collective a vote on its parameter guards, called with a value differing
/// between work-items: moved ahead inside the helper (the vote is uniform in each sub-group).
#[test]
fn votes_on_parameters_in_helpers_move() {
    let src = "int voted(int v) { if (sub_group_any(v > 3)) return sub_group_reduce_add(v); \
               return 0; }\n"
        .to_string()
        + &kernel("r = voted(v);");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
    assert!(out.contains("__clg_u0 = sub_group_reduce_add(v)"), "{out}");
}

/// A macro calling a helper with collectives counts as a use of them: under a vote it moves
/// like the helper (it ran unchecked: a work-group barrier under a sub-group's condition).
#[test]
fn macros_calling_helpers_with_collectives_are_uses() {
    let src = "int warp_sum(int v) { return sub_group_reduce_add(v); }\n\
               #define REDUCE(x) warp_sum(x)\n"
        .to_string()
        + &kernel("if (sub_group_any(v > 3)) r = REDUCE(v);");
    assert_eq!(refused(&src).len(), 1, "{src}");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert!(refused(&out).is_empty(), "{:?}\n{out}", refused(&out));
    assert!(out.contains("__typeof__(REDUCE(v)) __clg_u"), "{out}");
    let src = src.replace("if (sub_group_any(v > 3))", "if (get_local_id(0) < 5)");
    let out = uniform_collectives(&src, is_sub_group_collective);
    assert_eq!(refused(&out).len(), 1, "{out}");
}

#[test]
fn writes_in_the_condition_or_through_pointers_keep_the_collective_in_place() {
    let cases = [
        // The condition assigns the operand before the call.
        "if (sub_group_any(v > 40) && (s = 1)) r = sub_group_reduce_add(s);",
        "if (sub_group_any(v > 40)) r = (s = 1) ? sub_group_reduce_add(s) : 0;",
        // A store through a pointer to the operand, a call that may make one.
        "int *p = &v; if (sub_group_any(v > 40)) { *p = 1; r = sub_group_reduce_add(v); }",
        "int *p = &s; if (sub_group_any(v > 40)) { p[0]++; r = sub_group_reduce_add(s); }",
        "int *p = &s; if (x[get_global_id(0)] > 0) { *p = 1; r = sub_group_reduce_add(s); }",
    ];
    for body in cases {
        let src = kernel(body);
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert_eq!(out, src);
        let got = refused(&out);
        assert!(
            got.len() == 1 && got[0].1.contains("written"),
            "{body}: {got:?}"
        );
    }
    // Stores through pointers that cannot reach the operand, the store after the call.
    let moved = [
        "int *p = &s; if (sub_group_any(v > 40)) { *p = 1; r = sub_group_reduce_add(v); }",
        "if (sub_group_any(v > 40)) { o[0] = 1; r = sub_group_reduce_add(v); }",
        "if (sub_group_any(v > 40)) v = sub_group_reduce_add(v);",
    ];
    for body in moved {
        let out = uniform_collectives(&kernel(body), is_sub_group_collective);
        assert!(refused(&out).is_empty(), "{body}: {out}");
    }
}

#[test]
fn votes_behind_short_circuits_in_loop_conditions_are_refused() {
    let cases = [
        (
            "int i = 0; while (i < t ? sub_group_any(i < v) : 0) \
             { s += sub_group_reduce_add(1); i++; }",
            "behind `?:` in its loop's condition",
        ),
        (
            "int i; for (i = 0; i < t && sub_group_any(i < v); i++) s += sub_group_reduce_add(1);",
            "behind `&&` in its loop's condition",
        ),
    ];
    for (body, why) in cases {
        let src = kernel(body);
        let out = uniform_collectives(&src, is_sub_group_collective);
        let got = refused(&out);
        assert!(
            got.len() == 1 && got[0].1.contains(why),
            "{body}: {got:?}\n{out}"
        );
    }
}

#[test]
fn collectives_in_a_switch_on_a_vote_move_ahead_of_it() {
    let body = "switch (sub_group_any(v > 40)) { case 1: r = sub_group_reduce_add(1); break; \
                default: r = -1; }";
    let out = uniform_collectives(&kernel(body), is_sub_group_collective);
    assert!(out.contains("= sub_group_reduce_add(1); switch ("), "{out}");
    assert!(refused(&out).is_empty(), "{out}");
}

/// Refusals name what the user wrote: the macro and the collective it uses, the loop's
/// variable for the flag of a loop run in lockstep; never a name the rewrites made.
#[test]
fn refusals_of_macros_name_the_macro_and_the_users_variables() {
    let any = "#define ANY_BELOW(i, v) sub_group_any((i) < (v))\n";
    let sum = "#define BODY_SUM(s) s += sub_group_reduce_add(1)\n";
    let cases = [
        (
            format!(
                "{any}{}",
                kernel("int i = 0; while (ANY_BELOW(i, v)) { r++; i++; }")
            ),
            "macro `ANY_BELOW` (using sub_group_any) at line 4 under a condition on v at line 4",
        ),
        (
            format!(
                "{sum}{}",
                kernel("int i = 0; while (sub_group_any(i < v)) {\n BODY_SUM(r); i++; }")
            ),
            "macro `BODY_SUM` (using sub_group_reduce_add) at line 5 under a condition on v at \
             line 4",
        ),
        (
            format!(
                "{sum}{}",
                kernel(
                    "int i = 0; for (;;) {\n BODY_SUM(r); if (sub_group_all(++i >= v)) break; }"
                )
            ),
            "macro `BODY_SUM` (using sub_group_reduce_add) at line 5 under a condition on v at \
             line 5",
        ),
    ];
    for (src, want) in cases {
        let out = uniform_collectives(&src, is_sub_group_collective);
        let got = refused(&out);
        assert!(
            got.len() == 1 && got[0].1.starts_with(want),
            "{got:?}\n{out}"
        );
        assert!(
            !got[0].1.contains(crate::transform::variant::GENERATED),
            "{got:?}"
        );
    }
}
