use super::super::edit::apply_edits;
use super::super::edit::Threading;
use super::super::layer;
use super::super::source::Scanned;
use crate::device::ShuffleBackend;

/// `src` with the emulated scratch threaded, and what could not be reached.
fn threaded(src: &str) -> (String, Threading) {
    let s = Scanned::new(src).unwrap();
    let users = layer::layer_users_on(&s, ShuffleBackend::Emulated);
    let t = layer::scratch_threading(&s, &users);
    (apply_edits(src, t.edits.clone()), t)
}

const P: &str = "__local ulong *clg_sg_scratch";

#[test]
fn kernels_stamped_per_type_get_the_parameter_in_the_macro() {
    let src =
        "#define SUM(T) kernel void sum_##T(global T *x) { x[0] = sub_group_reduce_add(x[0]); }\n\
               SUM(int)\nSUM(float)\n";
    let (out, t) = threaded(src);
    assert_eq!(
        out,
        format!(
            "#define SUM(T) kernel void sum_##T(global T *x, {P}) {{ x[0] = sub_group_reduce_add(x[0]); }}\n\
             SUM(int)\nSUM(float)\n"
        )
    );
    assert!(t.unreached.is_none() && t.unthreadable.is_none(), "{t:?}");
}

#[test]
fn calls_in_macros_pass_the_scratch_and_their_users_are_threaded() {
    let src = "float h(float v) { return sg_reduce_add(v); }\n\
               #define TOTAL(v) h(v)\n\
               float g(float v) { return TOTAL(v) * 2; }\n\
               #define MAKE(name) __kernel void name(void) { float a = h(1.0f) + g(2.0f); }\n\
               MAKE(k)\n\
               kernel void plain(global float *x) { x[0] = TOTAL(x[0]); }\n";
    let (out, _) = threaded(src);
    assert_eq!(
        out,
        format!(
            "float h(float v, {P}) {{ return sg_reduce_add(v); }}\n\
             #define TOTAL(v) h(v, clg_sg_scratch)\n\
             float g(float v, {P}) {{ return TOTAL(v) * 2; }}\n\
             #define MAKE(name) __kernel void name({P}) {{ float a = h(1.0f, clg_sg_scratch) + g(2.0f, clg_sg_scratch); }}\n\
             MAKE(k)\n\
             kernel void plain(global float *x) {{ x[0] = TOTAL(x[0]); }}\n"
        )
    );
    // `plain` uses the layer through the macro: its parameter comes with the kernels'. The
    // backends without a scratch decide as before, from the direct uses.
    let s = Scanned::new(src).unwrap();
    assert!(layer::layer_users_on(&s, ShuffleBackend::Emulated).contains("plain"));
    for other in [ShuffleBackend::Khr, ShuffleBackend::NvidiaPtx] {
        assert!(
            !layer::layer_users_on(&s, other).contains("plain"),
            "{other}"
        );
    }
}

#[test]
fn multi_line_macros_attributes_and_pasted_names() {
    let src = "#define REQD(n) __attribute__((reqd_work_group_size(n, 1, 1)))\n\
               #define CAT(a, b) a##b\n\
               #define MAKE(name, T) \\\n  kernel REQD(64) void CAT(name, _##T)( \\\n    global T *x) \\\n  \
               __attribute__((vec_type_hint(T))) { x[0] = sub_group_broadcast(x[0], 0); }\n\
               MAKE(bcast, int)\n";
    let (out, t) = threaded(src);
    assert!(
        out.contains(&format!(
            "global T *x, {P}) \\\n  __attribute__((vec_type_hint(T)))"
        )),
        "{out}"
    );
    assert_eq!(out.matches("clg_sg_scratch").count(), 1, "{out}");
    assert!(t.unreached.is_none(), "{t:?}");
}

#[test]
fn kernels_get_the_parameter_only_where_the_source_uses_the_layer() {
    let src = "#define MAKE(name) kernel void name(global int *x) { x[0] = 1; }\nMAKE(k)\n";
    assert_eq!(threaded(src).0, src);
    // Collectives may come through a macro's arguments: every kernel a macro writes gets it.
    let src = "#define MAKE(name, OP) kernel void name(global int *x) { x[0] = OP(x[0]); }\n\
               MAKE(k, sub_group_reduce_add)\n";
    assert!(threaded(src).0.contains(&format!("global int *x, {P})")));
}

#[test]
fn a_keyword_whose_parameter_list_follows_where_the_macro_is_used() {
    let src = "float h(float v) { return sg_reduce_add(v); }\n\
               #define HEAD(name) __kernel void name\n\
               #define MAKE(name) HEAD(name)(global float *x) { x[0] = h(x[0]); }\n\
               MAKE(a)\nHEAD(b)(void) { }\n\
               HEAD(c)(global float *x) { x[0] = h(x[0]); }\n";
    let (out, t) = threaded(src);
    assert_eq!(
        out,
        format!(
            "float h(float v, {P}) {{ return sg_reduce_add(v); }}\n\
             #define HEAD(name) __kernel void name\n\
             #define MAKE(name) HEAD(name)(global float *x, {P}) {{ x[0] = h(x[0], clg_sg_scratch); }}\n\
             MAKE(a)\nHEAD(b)({P}) {{ }}\n\
             HEAD(c)(global float *x, {P}) {{ x[0] = h(x[0], clg_sg_scratch); }}\n"
        )
    );
    assert!(t.unreached.is_none() && t.unthreadable.is_none(), "{t:?}");
}

#[test]
fn a_keyword_without_its_parameter_list_is_unreached() {
    let src = "#define HEAD(name) __kernel void name\n\
               #define SIG (global int *x)\n\
               #define MAKE(name) HEAD(name) SIG { x[0] = sub_group_reduce_add(1); }\n\
               MAKE(k)\n";
    let (_, t) = threaded(src);
    let why = t.unreached.clone().expect("unreached").to_string();
    assert!(why.contains("`HEAD` (line 1)"), "{why}");
    assert!(t.unthreadable.is_none(), "{t:?}");
    // An object-like macro cannot name the kernel: the header goes on where it is used.
    let src = "#define KERNEL __kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n\
               KERNEL void k(global int *x) { x[0] = sub_group_reduce_add(1); }\n";
    let (out, t) = threaded(src);
    assert!(t.unreached.is_none(), "{t:?}");
    assert!(out.contains(&format!("global int *x, {P})")), "{out}");
    // A keyword a macro's argument brings: `Q(kernel) void k(...)`.
    let src = "#define Q(x) x\n\
               #define MAKE(n) Q(kernel) void n(global int *x) { x[0] = sub_group_reduce_add(1); }\n\
               MAKE(k)\n";
    let (out, t) = threaded(src);
    assert!(t.unreached.is_none(), "{t:?}");
    assert!(
        out.contains(&format!("void n(global int *x, {P})")),
        "{out}"
    );
}

#[test]
fn functions_a_macro_makes_with_the_layer_are_unthreadable() {
    let src = "#define DEF(T) T total_##T(T v) { return sub_group_reduce_add(v); }\nDEF(int)\n";
    let why = threaded(src)
        .1
        .unthreadable
        .expect("unthreadable")
        .to_string();
    assert!(why.contains("`DEF`") && why.contains("total_##T"), "{why}");
    let src = "#define CAT(a, b) a##b\n\
               #define DEF(T) T CAT(total_, T)(T v) { return sub_group_reduce_add(v); }\nDEF(int)\n";
    let why = threaded(src)
        .1
        .unthreadable
        .expect("unthreadable")
        .to_string();
    assert!(why.contains("`DEF`"), "{why}");
    // Without the layer, such helpers are left alone.
    let src = "#define DEF(T) T twice_##T(T v) { return 2 * v; }\nDEF(int)\n\
               kernel void k(global int *x) { x[0] = sub_group_reduce_add(twice_int(x[0])); }\n";
    assert!(threaded(src).1.unthreadable.is_none());
    // A header a macro writes: its calls get the scratch, the macro's call is left alone.
    let src = "float h(float v) { return sg_reduce_add(v); }\n\
               #define HEAD(name) kernel void name(global float *x)\n\
               HEAD(k) { x[0] = h(x[0]); }\n\
               #define HELPER(T) T helper_##T(T v)\nHELPER(float) { return h(v); }\n";
    let (out, t) = threaded(src);
    assert!(
        out.contains("HEAD(k) { x[0] = h(x[0], clg_sg_scratch); }"),
        "{out}"
    );
    assert!(out.contains(&format!("(global float *x, {P})\n")), "{out}");
    assert!(out.contains("HELPER(float) {"), "{out}");
    let why = t.unthreadable.expect("unthreadable").to_string();
    assert!(why.contains("`HELPER`"), "{why}");
}

#[test]
fn kernels_after_a_header_a_macro_writes_are_still_read() {
    let src = "#define HEAD(name) __kernel void name\n\
               HEAD(k)(global int *x) { x[0] = 1; }\n\
               kernel void plain(global int *x) { x[0] = 2; }\n";
    let s = Scanned::new(src).unwrap();
    let names: Vec<&str> = s.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["HEAD", "plain"]);
    assert!(!s.functions[0].is_kernel && s.functions[1].is_kernel);
}
