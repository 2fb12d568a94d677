use super::*;

fn flagged(src: &str) -> Vec<String> {
    let s = Scanned::new(src).unwrap();
    let found = divergent_users(
        &s,
        crate::transform::layer::is_emulated_collective,
        crate::transform::hoist::obstacle,
    );
    found
        .refused
        .into_iter()
        .map(|(k, why)| format!("{k}: {why}"))
        .collect()
}

/// What [`divergent_users`] finds in `src` for the standard and the layer's collectives.
fn standard(src: &str) -> Divergence {
    let s = Scanned::new(src).unwrap();
    divergent_users(
        &s,
        crate::transform::layer::is_sub_group_collective,
        crate::transform::hoist::obstacle,
    )
}

#[test]
fn work_item_dependent_conditions_are_found() {
    let src = "
kernel void a(global int *o) { int v = 1; if (get_local_id(0) < 5) v = sg_reduce_add(v); o[0] = v; }
kernel void b(global int *o) {
if (get_global_id(0) % 64 >= 5) return;
o[0] = sg_shuffle(1, 0u);
}
kernel void c(global int *o) { uint lid = get_local_id(0); uint h = max(1u, lid / 2);
for (uint i = 0; i < h; ++i) { sg_barrier(); } }
int helper(int v) { if (sg_get_local_id() == 0) v = sg_broadcast(v, 0u); return v; }
kernel void d(global int *o) { o[0] = helper(1); }
kernel void e(global int *o) { while (1) { if (get_local_id(0) == 3) break; sg_barrier(); } }
kernel void f(global int *o) { int v = 0; do { v = sg_reduce_add(v); } while (v < get_local_id(0)); }
kernel void g(global int *o) { int v = 0; if (get_local_id(0)) { v = 1; } else v = sg_reduce_max(v); }
#define SUM(x) sg_reduce_add(x)
kernel void h(global int *o) { switch (get_local_id(0)) { case 0: o[0] = SUM(1); } }
kernel void i(global int *o) { if (get_sub_group_id() > 0) o[0] = sub_group_reduce_add(1); }
";
    let got = flagged(src);
    let names: Vec<&str> = got.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        names,
        ["a", "b", "c", "d", "e", "f", "g", "h", "helper", "i"],
        "{got:#?}"
    );
    let want = "sg_reduce_add at line 2 under a condition on get_local_id at line 2";
    assert!(got[0].contains(want), "{}", got[0]);
    assert!(
        got[0].ends_with("(`get_local_id` outside a collective))"),
        "{}",
        got[0]
    );
    assert!(got[2].contains("condition on h at line 8"), "{}", got[2]);
    assert!(
        got[3].contains("`helper` at line 10, with sg_broadcast at line 9"),
        "{}",
        got[3]
    );
}

/// (Conditions on values loaded at an id count for the collectives themselves: the build masks
/// or moves what it can first; `nu_mask`'s tests.)
#[test]
fn uniform_conditions_are_not() {
    let src = "
kernel void a(global int *o, int n) { int v = o[get_global_id(0)]; if (n > 0) v = sg_reduce_add(v);
for (int i = 0; i < n; ++i) v = sg_shuffle_xor(v, 1u);
if (get_local_id(0) == 0) o[0] = v;
o[get_global_id(0)] = v; }
kernel void b(global int *o) { int v = o[get_global_id(0)]; if (sg_any(v == get_local_id(0))) o[0] = 1; }
kernel void c(global int *o, local int *t) { uint lid = get_local_id(0); if (lid == 0) o[0] = 1;
t[lid] = lid; barrier(CLK_LOCAL_MEM_FENCE); if (t[0] == 0) o[2] = sg_reduce_min(1);
o[1] = sg_reduce_add(lid); }
";
    assert!(flagged(src).is_empty(), "{:#?}", flagged(src));
}

#[test]
fn collectives_deciding_a_loop_of_work_item_values_are_found() {
    let src = "
kernel void a(global const int *x, global int *o) { int v = x[get_global_id(0)], it = 0;
while (sub_group_any(v + it < 30)) { o[it] = v; it++; } }
kernel void b(global const int *x, global int *o, int k) { size_t i = get_global_id(0);
for (; sub_group_all(x[i] > k); ) { o[i] = 1; k++; } }
kernel void c(global const int *x, global int *o, int n) { int s = 0;
for (int it = 0; sub_group_any(x[it] > 0) && it < n; ++it) s += x[it];
while (sub_group_all(s < n)) s += 4;
for (int j = sub_group_reduce_add(x[get_global_id(0)]); j < n; ++j) o[j] = 1; }
";
    let found = standard(src);
    let refused: Vec<&str> = found.refused.keys().map(String::as_str).collect();
    assert_eq!(refused, ["a", "b"], "{:#?}", found.refused);
    // Found, and movable: the build runs such loops in lockstep (`transform::lockstep`).
    let why = found.refused["a"].to_string();
    assert_eq!(
        why,
        "sub_group_any at line 3 under a condition on v at line 3"
    );
    assert!(found.refused["b"]
        .to_string()
        .contains("sub_group_all at line 5 under a condition on i"));
}

#[test]
fn conditional_expressions_count_as_branches() {
    let src = "
kernel void a(global int *o, uint n) { size_t i = get_global_id(0);
int v = i < n ? sg_reduce_add(o[i]) : 0; if (i < n) o[i] = v; }
kernel void b(global int *o) { o[0] = get_local_id(0) == 3 ? 1 : sub_group_reduce_add(1); }
kernel void c(global int *o, uint n) { size_t i = get_global_id(0);
o[i] = sg_reduce_add(i < n ? o[i] : 0) + (i == n ? 1 : 2); }
kernel void d(global int *o, int n) { o[0] = n > 2 ? sg_reduce_add(1) : 0; }
kernel void e(global int *o) { if (get_local_id(0) > 3 && sub_group_any(o[0] > 0)) o[1] = 1; }
kernel void f(global int *o, uint n) { size_t i = get_global_id(0); o[0] = i >= n || sub_group_all(1); }
kernel void g(global int *o, int n) { o[0] = (n > 2 && o[1] & 1) || sub_group_all(1); }
";
    let found = standard(src);
    let refused: Vec<&str> = found.refused.keys().map(String::as_str).collect();
    assert_eq!(refused, ["b", "e"], "{:#?}", found.refused);
    let why = found.refused["e"].to_string();
    assert!(
        why.contains("sub_group_any at line 8 under a condition on get_local_id"),
        "{why}"
    );
    let conds: Vec<&str> = found.at_launch["f"]
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(conds, ["`i >= n` at line 9"]);
    assert!(found.refused["b"]
        .to_string()
        .contains("sub_group_reduce_add at line 4 under a condition on get_local_id"));
    let conds: Vec<&str> = found.at_launch["a"]
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(conds, ["`i < n` at line 3"]);
    assert_eq!(found.at_launch.len(), 2, "{:#?}", found.at_launch);
}

#[test]
fn global_id_bounds_on_arguments_are_left_to_the_launch() {
    let src = "
kernel void a(global int *o, uint n) { size_t i = get_global_id(0);
if (i < n) o[i] = sg_reduce_add(o[i]); }
kernel void b(global int *o, int n) { if (get_global_id(1) >= n) return; o[0] = sg_broadcast(1, 0u);
if (n > get_global_id(0)) o[1] = sg_reduce_max(1); }
kernel void c(global int *o, uint n) { size_t i = get_global_id(0);
if (i < n) o[i] = sg_reduce_add(1); if (get_local_id(0) < 3) sg_barrier(); }
kernel void d(global int *o, uint n) { size_t i = get_global_id(0);
if (i < n) { if (i < n + 1) o[i] = sg_reduce_add(1); } }
kernel void e(global int *o, uint n) { a(o, n); }
";
    let s = Scanned::new(src).unwrap();
    let found = divergent_users(
        &s,
        crate::transform::layer::is_emulated_collective,
        crate::transform::hoist::obstacle,
    );
    let at_launch: Vec<(&str, Vec<&str>)> = found
        .at_launch
        .iter()
        .map(|(k, c)| (k.as_str(), c.iter().map(|c| c.text.as_str()).collect()))
        .collect();
    let want = [
        ("a", vec!["`i < n` at line 3"]),
        (
            "b",
            vec![
                "`get_global_id(1) >= n` at line 4",
                "`n > get_global_id(0)` at line 5",
            ],
        ),
    ];
    assert_eq!(at_launch, want);
    let refused: Vec<&str> = found.refused.keys().map(String::as_str).collect();
    assert_eq!(refused, ["c", "d", "e"], "{:#?}", found.refused);
    assert!(found.refused["c"]
        .to_string()
        .contains("sg_barrier at line 7"));
    assert!(found.refused["d"]
        .to_string()
        .contains("condition on i at line 9"));
    assert!(found.refused["e"]
        .to_string()
        .contains("`a` at line 10, with `i < n` at line 3"));
}

#[test]
fn votes_on_values_loaded_at_an_id_decide_for_the_work_group_only_in_each_sub_group() {
    let src = "
kernel void a(global const int *x, global int *o) { int v = x[get_global_id(0)], r = -1;
    if (sub_group_any(v > 50)) r = sub_group_reduce_add(v);
    if (v > 50) o[1] = sub_group_reduce_max(v); o[0] = r; }
";
    let found = standard(src);
    let why = found.refused["a"].to_string();
    assert!(
        why.starts_with("sub_group_reduce_add at line 3 under a condition on v at line 3"),
        "{why}"
    );
    // Moved ahead of the vote; the plain data condition stays the layer's rule (data).
    let out = crate::transform::hoist::uniform_collectives(
        src,
        crate::transform::layer::is_sub_group_collective,
    );
    assert!(out.contains("__clg_u0 = sub_group_reduce_add(v); if (sub_group_any(v > 50))"));
    let s = Scanned::new(&out).unwrap();
    let found = divergent_users(
        &s,
        crate::transform::layer::is_sub_group_collective,
        crate::transform::hoist::obstacle,
    );
    assert!(found.refused.is_empty(), "{:#?}\n{out}", found.refused);
}

/// A helper's collective under a condition on its parameter is divergent where a call passes
/// that parameter a value differing between work-items, through helpers passing it on: the
/// caller is refused, not the helper, nor the callers passing uniform values.
#[test]
fn parameters_follow_their_calls() {
    let src = "
int branchy(int v) { if (v > 0) return sub_group_reduce_add(v); return 0; }
int twice(int v) { if (v > 1) return sub_group_reduce_max(v); return 0; }
int relay(int w) { return twice(w + 1); }
int data(global const int *p) { if (p[0] > 0) return sub_group_reduce_add(1); return 0; }
kernel void a(global int *o) { o[get_global_id(0)] = branchy(o[get_global_id(0)]); }
kernel void b(global int *o) { uint lid = get_local_id(0); o[lid] = relay((int)lid); }
kernel void c(global int *o, int n) { o[get_global_id(0)] = branchy(n) + relay(n); }
kernel void d(global int *o) { o[0] = branchy(sub_group_reduce_add(o[get_global_id(0)])); }
kernel void e(global int *o) { o[get_global_id(0)] = data(o + get_global_id(0)); }
kernel void f(global int *o) { o[0] = data(o + get_group_id(0)) + branchy(get_sub_group_id()); }
#define APPLY(x) branchy(x)
kernel void g(global int *o, int n) { o[0] = APPLY(n); o[1] = APPLY((int)get_local_id(0)); }
int pick(int a, int b) { if (b > 0) return sub_group_reduce_add(a); return 0; }
kernel void h(global int *o) { uint l = get_local_id(0); o[l] = pick((int)l, (int)l); }
";
    let found = standard(src);
    let refused: Vec<&str> = found.refused.keys().map(String::as_str).collect();
    assert_eq!(refused, ["a", "b", "e", "g", "h"], "{:#?}", found.refused);
    assert_eq!(
        found.refused["a"].to_string(),
        "`branchy` at line 6, passed a value differing between work-items as `v`: \
         sub_group_reduce_add at line 2 under a condition on v at line 2"
    );
    let why = found.refused["b"].to_string();
    assert!(
        why.starts_with(
            "`relay` at line 7, passed a value differing between work-items as `w`: \
                         `twice` at line 4, passed"
        ),
        "{why}"
    );
    assert!(found.refused["e"].to_string().contains("as `p`"));
    // Through a macro, on the line that passes a work-item's id (and `n`).
    let why = found.refused["g"].to_string();
    assert!(why.starts_with("`branchy` at line 13, passed"), "{why}");
    // The parameter named is the one the condition reads, not the first passed such a value.
    let why = found.refused["h"].to_string();
    assert!(
        why.contains("as `b`: sub_group_reduce_add at line 14"),
        "{why}"
    );
}

/// A work-item's value reaching a condition through a helper's result or out-parameter, a
/// private array (written, or through a pointer into it) or a collective whose result differs
/// between the lanes (scans, `elect`) or between sub-groups (the size) counts: the collective
/// under it moves where its condition is shown uniform in each sub-group, else stays refused.
#[test]
fn values_through_helpers_arrays_and_lane_varying_collectives_count() {
    let src = "
uint my_lid(void) { return get_local_id(0); }
int val(global const int *x) { return x[get_global_id(0)] % 50; }
void get(int *o, global const int *x) { *o = x[get_global_id(0)] % 50; }
kernel void a(global int *o) { int r = 0;
    if (my_lid() < 4u) r = sub_group_reduce_add(1); o[0] = r; }
kernel void b(global int *o) { uint a[1]; a[0] = get_local_id(0); int r = 0;
    if (a[0] < 4u) r = sub_group_reduce_add(1); o[0] = r; }
kernel void c(global int *o) { uint a[2]; uint *p = a; *p = get_local_id(0); int r = 0;
    if (a[0] < 4u) r = sub_group_reduce_add(1); o[0] = r; }
kernel void d(global int *o) { int r = 0;
    if (sub_group_scan_exclusive_add(1) < 2) r = sub_group_reduce_add(1); o[0] = r; }
kernel void e(global int *o) { int r = 0, t = sub_group_elect();
    if (t) r = sub_group_reduce_add(1); o[0] = r; }
kernel void f(global int *o) { int r = 0;
    if (get_sub_group_size() == 8) r = sub_group_reduce_add(1); o[0] = r; }
kernel void g(global const int *x, global int *o) { int r = 0;
    if (sub_group_any(val(x) > 40)) r = sub_group_reduce_add(1); o[0] = r; }
kernel void h(global const int *x, global int *o) { int t = 0, r = 0; get(&t, x);
    if (sub_group_any(t > 40)) r = sub_group_reduce_add(1); o[0] = r; }
kernel void i(global const int *x, global int *o) { int t, r = 0;
    __builtin_memcpy(&t, &x[get_global_id(0)], 4);
    if (sub_group_any(t > 40)) r = sub_group_reduce_add(1); o[0] = r; }
";
    let refused = |src: &str| -> Vec<String> { standard(src).refused.into_keys().collect() };
    assert_eq!(refused(src), ["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
    let out = crate::transform::hoist::uniform_collectives(
        src,
        crate::transform::layer::is_sub_group_collective,
    );
    assert_eq!(refused(&out), ["a", "b", "c", "d", "e"], "{out}");
    let why = standard(src).refused["b"].to_string();
    assert!(why.contains("under a condition on a at line 8"), "{why}");
}

#[test]
fn gotos_and_control_flow_in_macros_around_collectives_are_refused() {
    let head = "kernel void k(global const int *x, global int *o, int n) {\n\
                int v = x[get_global_id(0)]; int i = 0, s = 0, r = 0;\n";
    let refused = |defs: &str, body: &str| {
        let src = format!("{defs}\n{head}{body}\no[0] = s + r; }}");
        let d = standard(&src);
        d.refused.get("k").map(|why| why.to_string())
    };
    let goto = "again: s += sub_group_reduce_add(1); i++; if (sub_group_any(i < v)) goto again;";
    let why = refused("", goto).unwrap_or_default();
    assert!(
        why.contains("`goto` at line 4: clgroups does not follow jumps"),
        "{why}"
    );
    let cases = [
        (
            "#define LOOP_WHILE_ANY while (sub_group_any(i < v))",
            "LOOP_WHILE_ANY { s += sub_group_reduce_add(1); i++; }",
            "macro `LOOP_WHILE_ANY` (line 4), whose replacement list holds `while`",
        ),
        (
            "#define UNTIL_ALL(c, body) while (!sub_group_all(c)) { body; }",
            "UNTIL_ALL(i >= v, s += sub_group_reduce_add(1); i++);",
            "macro `UNTIL_ALL`",
        ),
        (
            "#define IF_ANY(c) if (sub_group_any(c))\n#define WHEN(c) IF_ANY(c)",
            "WHEN(v > 40) r = sub_group_reduce_add(1);",
            "macro `WHEN` (line 5), whose replacement list holds `if`",
        ),
        (
            "#define PICK(c, a) ((c) ? (a) : 0)",
            "r = PICK(v > 0, sub_group_reduce_add(1));",
            "holds `?`",
        ),
    ];
    for (defs, body, want) in cases {
        let why = refused(defs, body).unwrap_or_default();
        assert!(why.contains(want), "{body}: {why}");
    }
    // Flow on values the work-group shares, `?:` around no collective, a `goto` where no
    // condition reads a work-item's value: nothing hidden.
    let fine = [
        (
            "#define IF_N if (n > 2)",
            "IF_N r = sub_group_reduce_add(1);",
        ),
        (
            "#define MIN(a, b) ((a) < (b) ? (a) : (b))",
            "r = sub_group_reduce_add(MIN(v, 3));",
        ),
        (
            "",
            "again: s += sub_group_reduce_add(1); i++; if (i < n) goto again;",
        ),
    ];
    for (defs, body) in fine {
        assert_eq!(refused(defs, body), None, "{body}");
    }
}
