//! Tests of [`super`]: rounded and sized variants, obstacles and guards.
use super::*;
use crate::transform::queries::REAL_QUERIES;
use crate::transform::source::scan_kernels;

/// What every text with variants starts with: the real queries, then the user's line 1.
fn real() -> String {
    format!("{REAL_QUERIES}\n#line 1\n")
}

fn rounded(src: &str, keep: bool) -> String {
    with_rounded_variants(src, &scan_kernels(src).unwrap(), keep).unwrap()
}

fn obstacle_of(src: &str, kernel: usize) -> Option<String> {
    let s = crate::transform::Scanned::new(src).unwrap();
    rounding_obstacle(&s, &scan_kernels(src).unwrap()[kernel]).map(|o| o.to_string())
}

#[test]
fn one_dimensional_variant_exact_text() {
    let src = "// fill\nkernel void fill(global int* o) {\n  o[get_global_id(0)] = get_global_size(0);\n} // end\nint after;\n";
    let body = "\n  o[get_global_id(0)] = get_global_size(0);\n";
    let expected = format!(
        "{}// fill\nkernel void fill(global int* o) {{\n  \
         o[get_global_id(0)] = get_global_size(0);\n}}\
         \n#line 2\nkernel void fill__clg_rounded(global int* o, {EXTRA_PARAMS}) {{\
         \n{GUARD}\n{DEFINES}\n#line 2\n{body}\n{UNDEFS}\n}}\n#line 4\n\
         \n#line 2\nkernel void fill__clg_sized(global int* o, {EXTRA_PARAMS}) {{\
         \n\n{DEFINES}\n#line 2\n{body}\n{UNDEFS}\n}}\n#line 4\n // end\nint after;\n",
        real()
    );
    assert_eq!(rounded(src, true), expected);
}

#[test]
fn key_lines_are_as_documented() {
    assert_eq!(
        GUARD,
        "if (clg_real_global_id(0) - clg_user_offset0 >= clg_user_size0 || \
         clg_real_global_id(1) - clg_user_offset1 >= clg_user_size1 || \
         clg_real_global_id(2) - clg_user_offset2 >= clg_user_size2) return;"
    );
    assert!(DEFINES.starts_with("#define get_global_size(clg_d) ((clg_d) == 0 ? "));
    assert!(DEFINES.contains("\n#define get_global_offset(clg_d) ("));
    assert!(DEFINES.contains("\n#define get_global_linear_id() ("));
    assert_eq!(DEFINES.lines().count(), 3);
}

#[test]
fn three_dimensional_variant_without_parameters_and_with_attributes() {
    let src = "__attribute__((reqd_work_group_size(4, 4, 4)))\nkernel void\nvol ( void )\n{\n  size_t i = get_global_linear_id();\n}\n";
    let out = rounded(src, false);
    let one = |name: &str, guard: &str| {
        format!(
            "\n#line 1\n__attribute__((reqd_work_group_size(4, 4, 4)))\nkernel void\n{name} ({EXTRA_PARAMS})\n{{\
             \n{guard}\n{DEFINES}\n#line 4\n\n  size_t i = get_global_linear_id();\n\n{UNDEFS}\n}}\n#line 6\n"
        )
    };
    let expected = format!(
        "{}{}{}\n",
        real(),
        one("vol__clg_rounded", GUARD),
        one("vol__clg_sized", "")
    );
    assert_eq!(out, expected);
    let k = scan_kernels(&out).unwrap();
    assert_eq!(k.len(), 2);
    assert_eq!(k[0].name, "vol__clg_rounded");
    assert_eq!(k[1].name, "vol__clg_sized");
    assert_eq!(k[0].params.len(), 6);
    assert_eq!(k[0].params[2].text, "const ulong clg_user_size2");
    assert_eq!(k[0].params[5].text, "const ulong clg_user_offset2");
}

#[test]
fn several_kernels_keep_and_force() {
    let src = "kernel void a(global int* x) { x[0] = 1; }\nfloat h(float v) { return v; }\n\
               CLG_REQD_SUB_GROUP_SIZE(8) kernel void b(global float* y,\n  int n) { y[0] = h(n); }\n";
    let kept = scan_kernels(&rounded(src, true)).unwrap();
    let names: Vec<_> = kept.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a",
            "a__clg_rounded",
            "a__clg_sized",
            "b",
            "b__clg_rounded",
            "b__clg_sized"
        ]
    );
    assert_eq!(kept[4].params.len(), 8);
    assert_eq!(kept[4].params[1].name, "n");
    assert_eq!(kept[4].sub_group_size, kept[3].sub_group_size);
    let forced = rounded(src, false);
    let names: Vec<_> = scan_kernels(&forced)
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(
        names,
        [
            "a__clg_rounded",
            "a__clg_sized",
            "b__clg_rounded",
            "b__clg_sized"
        ]
    );
    assert!(forced.contains("\nfloat h(float v) { return v; }\n"));
    // Only the kernels passed in are rounded.
    let only_b = &scan_kernels(src).unwrap()[1..];
    let out = with_rounded_variants(src, only_b, false).unwrap();
    let user = out.strip_prefix(&real()).unwrap();
    assert!(user.starts_with("kernel void a(global int* x) { x[0] = 1; }\n"));
    assert_eq!(scan_kernels(&out).unwrap().len(), 3);
}

#[test]
fn line_directives_restore_original_numbering() {
    let src = "kernel void a(global int* x)\n{\n  x[0] = 1;\n}\n\nkernel void b(global int* x) { x[1] = 2; }\n";
    let out = rounded(src, true);
    let directives: Vec<_> = out.lines().filter(|l| l.starts_with("#line")).collect();
    // rounded and sized variant of `a`, then of `b`
    let a = ["#line 1", "#line 2", "#line 4"];
    let b = ["#line 6", "#line 6", "#line 6"];
    assert_eq!(directives, [&["#line 1"][..], &a, &a, &b, &b].concat());
    // The text after the last directive continues original line 6.
    assert!(out.ends_with("}\n#line 6\n\n"));
}

/// A user macro named like `get_global_id` changes the user's uses only: the guard and the
/// variants' definitions call `clg_real_global_id`, defined before the user's code (they
/// called `get_global_id`, so the guard compared local ids with the user's range).
#[test]
fn user_macros_do_not_change_the_guard() {
    let src = "#define get_global_id(d) get_local_id(d)\n\
               kernel void k(global int *y) { y[get_global_id(0)] = 1; }\n";
    assert_eq!(obstacle_of(src, 0), None);
    let out = rounded(src, true);
    assert!(out.starts_with(&format!("{}#define get_global_id", real())));
    let variants = &out[out.find("k__clg_rounded").unwrap()..];
    let ours = variants
        .lines()
        .filter(|l| l.starts_with("if (") || l.starts_with("#define"));
    assert_eq!(ours.clone().count(), 1 + 2 * 3);
    for l in ours {
        assert!(!l.contains("get_global_id("), "{l}");
    }
    // No variants, no helpers.
    assert_eq!(with_rounded_variants(src, &[], true).unwrap(), src);
    // A source defining a query the variants define: no kernel of it is rounded.
    let src = "#define get_global_offset(d) 0\nkernel void k(global int *y) { y[0] = 1; }\n\
               kernel void m(global int *y) { y[1] = 1; }";
    let why = "a macro named `get_global_offset` would change the `get_global_offset` of \
               clgroups' variants";
    assert_eq!(obstacle_of(src, 0).as_deref(), Some(why));
    assert_eq!(obstacle_of(src, 1).as_deref(), Some(why));
    // Build options: the queries the variants define or call, in either spelling.
    for (options, name) in [
        ("-D get_global_linear_id()=0", "get_global_linear_id"),
        ("-Dget_global_id(d)=get_local_id(d)", "get_global_id"),
    ] {
        let why = Obstacle::DefinesQuery(name.into());
        assert_eq!(rounded_option_query(options), Some(why), "{options}");
    }
    assert_eq!(
        rounded_option_query("-Dget_num_groups(d)=1 -DN=get_global_id(0)"),
        None
    );
}

#[test]
fn mismatched_declarations_are_errors() {
    let src = "kernel void a(global int* x) { }";
    let mut k = scan_kernels(src).unwrap();
    k[0].name = "b".into();
    let e = with_rounded_variants(src, &k, true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("kernel `b` does not match the source"), "{e}");
    let k = scan_kernels(src).unwrap();
    assert!(with_rounded_variants("short", &k, true).is_err());
}

#[test]
fn obstacles_in_the_body() {
    let cases = [
        (
            "barrier(CLK_LOCAL_MEM_FENCE);",
            "uses `barrier` (a work-group collective)",
        ),
        (
            "work_group_barrier(CLK_GLOBAL_MEM_FENCE);",
            "uses `work_group_barrier` (a work-group collective)",
        ),
        (
            "int s = work_group_reduce_add(1);",
            "uses `work_group_reduce_add` (a work-group collective)",
        ),
        (
            "int s = sub_group_reduce_add(1);",
            "uses `sub_group_reduce_add` (a sub-group operation)",
        ),
        (
            "uint s = get_sub_group_local_id();",
            "uses `get_sub_group_local_id` (a sub-group operation)",
        ),
        (
            "uint s = get_max_sub_group_size();",
            "uses `get_max_sub_group_size` (a sub-group operation)",
        ),
        (
            "int s = intel_sub_group_shuffle(1, 0);",
            "uses `intel_sub_group_shuffle` (a sub-group operation)",
        ),
        (
            "int s = sg_shuffle_xor(1, 1);",
            "uses `sg_shuffle_xor` (a sub-group operation)",
        ),
        ("local int tile[64];", "declares `local` memory"),
        ("__local int tile[64];", "declares `__local` memory"),
        (
            "wait_group_events(1, &e);",
            "uses `wait_group_events` (a work-group collective)",
        ),
    ];
    for (body, why) in cases {
        let src = format!("kernel void k(global int* x) {{ {body} }}");
        assert_eq!(
            obstacle_of(&src, 0),
            Some(format!("kernel `k` {why}")),
            "{body}"
        );
    }
}

#[test]
fn obstacles_through_parameters_functions_and_macros() {
    let src = "kernel void k(global int* x, local int* tmp) { }";
    assert_eq!(
        obstacle_of(src, 0).unwrap(),
        "kernel `k` has the local-memory parameter `tmp`"
    );
    let src = "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n\
               void outer(void) { sync(); }\n\
               kernel void k(global int* x) { outer(); }";
    assert_eq!(
        obstacle_of(src, 0).unwrap(),
        "kernel `k` calls `outer`, which calls `sync`, which uses `barrier` (a work-group collective)"
    );
    let src = "size_t n(void) { return get_global_size(0); }\n\
               kernel void k(global int* x) { x[0] = n(); }";
    assert_eq!(
        obstacle_of(src, 0).unwrap(),
        "kernel `k` calls `n`, which uses `get_global_size` (a called function would see the rounded range)"
    );
    let src = "#define RED(v) work_group_reduce_add(v)\n#define TWICE(v) RED(v) * 2\n\
               kernel void k(global int* x) { x[0] = TWICE(1); }";
    assert_eq!(
        obstacle_of(src, 0).unwrap(),
        "kernel `k` uses macro `TWICE`, which uses macro `RED`, which uses `work_group_reduce_add` (a work-group collective)"
    );
}

#[test]
fn no_obstacle_for_plain_kernels() {
    let src = "#define N get_global_size(0)\n\
               int twice(int v) { return 2 * v; } // barrier(\n\
               kernel void ok(global int* x) {\n\
                 /* barrier(CLK_LOCAL_MEM_FENCE); local int t[4]; */\n\
                 const char* s = \"sub_group_reduce_add barrier\";\n\
                 size_t my_barrier_count = N + get_global_linear_id() + get_local_id(0);\n\
                 x[get_global_id(0)] = twice(get_num_groups(0));\n\
               }\n\
               kernel void other(global int* x) { barrier(CLK_LOCAL_MEM_FENCE); }";
    assert_eq!(obstacle_of(src, 0), None);
    assert!(obstacle_of(src, 1).is_some());
}

#[test]
fn extra_param_count_counts_the_extra_params() {
    assert_eq!(EXTRA_PARAM_COUNT, 6);
    assert_eq!(
        EXTRA_PARAMS.matches("const ulong").count(),
        EXTRA_PARAM_COUNT
    );
}

/// Fuzz cases 275317, 296709, 349955 and 394496: a stray `#` after a kernel's `}` on its last
/// line. Variants end with a line break, which would turn it into a `#define`: that kernel gets
/// none, its source is left as it was, and the kernels before it still get theirs.
#[test]
fn no_variants_where_a_hash_goes_on_after_the_kernel() {
    let tail = "kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }";
    for after in [
        "#define MAKE(N) N",
        " /* c */ #define MAKE(N) N",
        "%:define MAKE(N) N",
    ] {
        let src = format!("kernel void one(global int *x) {{ x[0] = 1; }}\n{tail}{after}\n");
        let kernels = scan_kernels(&src).unwrap();
        assert_eq!(kernels.len(), 2);
        assert!(gets_variants(&src, &kernels[0]));
        assert!(!gets_variants(&src, &kernels[1]), "{after}");
        for keep in [true, false] {
            let out = rounded(&src, keep);
            assert!(out.contains(&format!("{tail}{after}\n")), "{out}");
            assert!(out.contains("one__clg_rounded") && !out.contains("twice__clg_rounded"));
        }
    }
    // Past a line break, or after other text, a `#` is as it was.
    let src = format!("{tail} // #define\n#define M 1\n{tail} int y; #\n");
    let src = src.replacen("twice", "thrice", 1);
    assert!(scan_kernels(&src)
        .unwrap()
        .iter()
        .all(|k| gets_variants(&src, k)));
}
