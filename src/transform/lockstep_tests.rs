use super::super::hoist::uniform_collectives;
use super::super::layer::is_emulated_collective;

fn rewritten(body: &str) -> String {
    let src = format!(
        "#define STEP(i) i++; s++\n#define BOUND 30\n\
         kernel void k(global const int *x, global int *o) {{ int g = get_global_id(0); \
         int v = x[g]; int i = 0, s = 0; {body} o[g] = s; }}"
    );
    uniform_collectives(&src, is_emulated_collective)
}

#[test]
fn vote_loops_run_in_lockstep() {
    let out = rewritten("while (sub_group_any(i < v)) { if (i < v) s += i; i++; }");
    assert!(
        out.contains(
            "{ int __clg_l0 = 1; for (;; barrier(CLK_LOCAL_MEM_FENCE)) { \
             __clg_l0 = __clg_l0 & ((sub_group_any(i < v)) != 0); \
             if (!clg_group_any(__clg_l0)) break; \
             { if (__clg_l0) if (i < v) s += i; if (__clg_l0) i++; } } }"
        ),
        "{out}"
    );
}

#[test]
fn for_loops_keep_their_increment_and_breaks_end_the_work_items_loop() {
    let out = rewritten(
        "for (int k = 0; k < sub_group_reduce_max(v); k++) {\
         if (sub_group_all(k > 3)) break; s++; }",
    );
    let head = "{ int __clg_l0 = 1, __clg_f0 = 1; int k = 0; \
                for (;; __clg_f0 = 0, barrier(CLK_LOCAL_MEM_FENCE)) { \
                if (!__clg_f0 & __clg_l0) { k++; }";
    assert!(out.contains(head), "{out}");
    // The `break` ends its statement: the later ones wait for the flag.
    assert!(
        out.contains("{ __clg_l0 = 0; } if (__clg_l0) s++;"),
        "{out}"
    );
    assert!(!out.contains("break; s++"), "{out}");
}

#[test]
fn endless_loops_left_by_a_vote_and_macros_in_blocks() {
    let out = rewritten("for (;;) { i++; if (sub_group_all(i >= v)) break; }");
    assert!(out.contains("__clg_l0 = __clg_l0 & ((1) != 0);"), "{out}");
    let out = rewritten("while (sub_group_any(i < v + BOUND)) { STEP(i); }");
    assert!(out.contains("if (__clg_l0) { STEP(i); }"), "{out}");
}

#[test]
fn long_bodies_and_empty_statements_get_no_flag_test_each() {
    // A fuzz case: 60,000 empty statements, each given a test, made the hoist's later
    // rounds scan 800 KB (over a second on the GPU machine's host).
    let out = rewritten(&format!(
        "while (sub_group_any(i < v)) {{ i++;{} }}",
        ";".repeat(5000)
    ));
    assert_eq!(out.matches("if (__clg_l0)").count(), 1, "{}", &out[..400]);
    let many = "s++; ".repeat(super::MAX_GUARDS + 1);
    let out = rewritten(&format!("while (sub_group_any(i < v)) {{ i++; {many}}}"));
    assert!(
        out.contains("break; if (__clg_l0) { i++; s++;"),
        "{}",
        &out[..400]
    );
}

#[test]
fn declarations_with_pure_initializers_run_unguarded() {
    let out = rewritten("while (sub_group_any(i < v)) { int q = i * 2, z; i++; s += q; }");
    assert!(
        out.contains("break; { int q = i * 2, z; if (__clg_l0) i++; if (__clg_l0) s += q; }"),
        "{out}"
    );
    // `s *= 2` assigns; a declaration that loads, or a label, keeps one test for the body.
    let out = rewritten("while (sub_group_any(i < v)) { s *= 2; i++; }");
    assert!(
        out.contains("{ if (__clg_l0) s *= 2; if (__clg_l0) i++; }"),
        "{out}"
    );
    for body in [
        "int q = x[i]; i++; s += q;",
        "again: i++;",
        "i * f(x); i++;",
        "i * x[i++]; i++;",
    ] {
        let out = rewritten(&format!("while (sub_group_any(i < v)) {{ {body} }}"));
        assert!(
            out.contains(&format!("if (__clg_l0) {{ {body} }}")),
            "{out}"
        );
    }
}

#[test]
fn do_loops_vote_after_their_body() {
    let out = rewritten("do { i++; } while (sub_group_all(i < v));\n s = i;");
    assert!(
        out.contains(
            "{ int __clg_l0 = 1; for (;; barrier(CLK_LOCAL_MEM_FENCE)) { { if (__clg_l0) i++; } \
             __clg_l0 = __clg_l0 & ((sub_group_all(i < v)) != 0); \
             if (!clg_group_any(__clg_l0)) break; } }\n s = i;"
        ),
        "{out}"
    );
}

#[test]
fn loops_that_return_or_change_state_in_their_condition_stay() {
    for body in [
        "while (sub_group_any(i < v)) { if (i > 100) return; i++; }",
        "while (sub_group_any(i++ < v)) s++;",
        "do { if (i > 2) continue; s++; } while (sub_group_any(++i < v));",
        "do { i++; if (i > 2) continue; s++; } while (sub_group_any(i < v));",
        "while (sub_group_any(i < v)) STEP(i);",
        "do { i++; if (sub_group_all(i > 3)) break; } while (sub_group_any(i < v));",
        // After the `break`, `x[i]` would be read at an `i` the source never read it at.
        "while (x[i] > 0 && sub_group_any(i < v)) { i += 10; if (sub_group_all(i > v)) break; }",
        "while (sub_group_any(x[sub_group_reduce_add(i)] > 0)) \
         { if (sub_group_all(i > v)) break; }",
        "while (i < get_local_id(0)) s += sub_group_reduce_add(1);",
    ] {
        let out = rewritten(body);
        assert!(!out.contains("clg_group_any"), "{body}: {out}");
    }
}

/// A loop left by a `break` whose condition's collective loads: a work-item that left
/// evaluates the operand only where its flag is set (its sub-group left with it).
#[test]
fn loads_in_a_votes_operand_are_masked_by_the_flag() {
    let body = "while (sub_group_any(x[i] > 0)) { i += 10; if (sub_group_all(i > v)) break; }";
    let out = rewritten(body);
    assert!(
        out.contains(
            "__clg_l0 = __clg_l0 & ((sub_group_any( (__clg_l0 ? (x[i] > 0) : 0) )) != 0);"
        ),
        "{out}"
    );
    // An operand that loads nothing stays as written.
    let body = "for (int k = 0; sub_group_broadcast(x[k], 0u) > 0; k++) \
                { if (sub_group_all(k > v)) break; }";
    let out = rewritten(body);
    assert!(out.contains("(__clg_l0 ? (x[k]) : 0) , 0u)"), "{out}");
}
