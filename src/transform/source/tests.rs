//! Tests of [`super`]: the scanner's declarations, obstacles and errors.
use super::*;

fn names(src: &str) -> Vec<String> {
    scan_kernels(src)
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect()
}

fn err(src: &str) -> String {
    scan_kernels(src).unwrap_err().to_string()
}

const TRICKY: &str = r#"// kernel void in_comment(global int* x) {}
#define KERNEL_HELPER(x) { (x) }  \
    kernel void in_macro() {
/* kernel void in_block(
   global int* x) { */
typedef struct { int a; } pair;
constant int table[3] = {1, 2, 3};
int my_kernel_fn(int kernel_count) { return kernel_count + 1; }
void helper(global int* p);
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void
first(global const float* restrict in, // the input
      __global float *out,
      const int n) {
    const char* s = "}{ kernel void fake() {";
    char c = '}';
    if (n > 0) { for (int i = 0; i < n; i++) { out[i] = in[i]; } }
}
kernel void CLG_NAMED_SUB_GROUP_SIZE(primary) second(void) { }
void __kernel third(local int* scratch, image2d_t img) {}
"#;

#[test]
fn finds_only_kernel_definitions() {
    assert_eq!(names(TRICKY), ["first", "second", "third"]);
}

#[test]
fn spans_lines_and_attributes() {
    let k = scan_kernels(TRICKY).unwrap();
    let first = &k[0];
    assert_eq!(first.line, 10);
    assert!(TRICKY[first.decl_start..].starts_with("__attribute__((reqd_work_group_size"));
    assert_eq!(&TRICKY[first.name_span.clone()], "first");
    assert!(TRICKY[first.params_span.clone()].starts_with("(global const float*"));
    assert!(TRICKY[first.params_span.clone()].ends_with("const int n)"));
    let body = &TRICKY[first.body.clone()];
    assert!(body.starts_with("{\n    const char*"));
    assert!(body.ends_with("} }\n}"));
    assert_eq!(first.sub_group_size, None);
    assert_eq!(k[1].sub_group_size, Some(SubGroupSizeAttr::Primary));
    assert!(TRICKY[k[1].decl_start..].starts_with("kernel void CLG_NAMED"));
    assert!(TRICKY[k[2].decl_start..].starts_with("void __kernel third"));
    assert_eq!(k[2].line, 20);
}

#[test]
fn parameters() {
    let k = scan_kernels(TRICKY).unwrap();
    let p = &k[0].params;
    assert_eq!(p.len(), 3);
    assert_eq!(p[0].text, "global const float* restrict in");
    assert_eq!(p[0].name, "in");
    assert!(p[0].is_pointer);
    assert_eq!(p[0].address_space.as_deref(), Some("global"));
    assert_eq!(p[1].text, "__global float *out");
    assert_eq!(p[1].address_space.as_deref(), Some("global"));
    assert_eq!(p[2].text, "const int n");
    assert!(!p[2].is_pointer);
    assert_eq!(p[2].address_space, None);
    assert!(k[1].params.is_empty());
    assert_eq!(k[2].params[0].address_space.as_deref(), Some("local"));
    assert_eq!(k[2].params[1].name, "img");
    assert_eq!(k[2].params[1].address_space, None);
}

#[test]
fn attributes_in_parameters_and_after_them() {
    let src = "kernel void k(global float4* __attribute__((aligned(16))) a, int b[4])\n\
                   __attribute__((work_group_size_hint(8, 1, 1))) { }";
    let k = &scan_kernels(src).unwrap()[0];
    assert_eq!(k.params[0].name, "a");
    assert_eq!(k.params[1].name, "b");
    assert_eq!(k.params[1].text, "int b[4]");
    assert!(src[k.body.clone()] == *"{ }");
}

#[test]
fn sub_group_size_macros() {
    let size = |attr: &str| {
        let src = format!("{attr}\nkernel void k(global int* x) {{ }}");
        scan_kernels(&src).map(|k| k[0].sub_group_size)
    };
    assert_eq!(size("").unwrap(), None);
    assert_eq!(
        size("CLG_REQD_SUB_GROUP_SIZE(16)").unwrap(),
        Some(SubGroupSizeAttr::Exact(16))
    );
    assert_eq!(
        size("CLG_REQD_SUB_GROUP_SIZE(0x20u)").unwrap(),
        Some(SubGroupSizeAttr::Exact(32))
    );
    assert_eq!(
        size("__attribute__((intel_reqd_sub_group_size(8)))").unwrap(),
        Some(SubGroupSizeAttr::Exact(8))
    );
    assert_eq!(
        size("CLG_NAMED_SUB_GROUP_SIZE(automatic)").unwrap(),
        Some(SubGroupSizeAttr::Automatic)
    );
    let e = size("CLG_REQD_SUB_GROUP_SIZE(SG)").unwrap_err().to_string();
    assert!(e.contains("kernel `k` (line 1)"), "{e}");
    assert!(
        e.contains("CLG_REQD_SUB_GROUP_SIZE(SG) needs a positive integer"),
        "{e}"
    );
    assert!(size("CLG_REQD_SUB_GROUP_SIZE(0)").is_err());
    assert!(size("CLG_REQD_SUB_GROUP_SIZE(8 + 8)").is_err());
    let e = size("CLG_NAMED_SUB_GROUP_SIZE(large)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`primary` or `automatic`"), "{e}");
    let e = size("CLG_REQD_SUB_GROUP_SIZE(8)\nCLG_REQD_SUB_GROUP_SIZE(16)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("lines 1 and 2"), "{e}");
}

#[test]
fn preprocessor_lines_are_skipped() {
    let src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
                   #if 0 /* a comment that spans\n lines */ kernel void no(){\n#endif\n\
                   # define X(a) a \\\n   kernel void nope() {\n\
                   kernel void yes(global int* x) {\n#pragma unroll\n for(;;){} }";
    assert_eq!(names(src), ["yes"]);
    let k = &scan_kernels(src).unwrap()[0];
    assert_eq!(k.line, 7);
}

#[test]
fn macro_definitions_are_remembered() {
    let src =
        "#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)\n#define N 4\n#define F(a, b) \\\n  a + b\n";
    let s = Scanned::new(src).unwrap();
    let texts = |name: &str| -> Vec<&str> {
        s.macros[name][0]
            .iter()
            .map(|t| &src[t.span.clone()])
            .collect()
    };
    assert_eq!(texts("SYNC"), ["barrier", "(", "CLK_LOCAL_MEM_FENCE", ")"]);
    assert_eq!(texts("N"), ["4"]);
    assert_eq!(texts("F"), ["a", "+", "b"]);
    assert!(s.tokens.is_empty());
}

#[test]
fn unbalanced_brackets_are_errors_with_lines() {
    let e = err("kernel void k(global int* x) {\n  x[0] = (1;\n}\n");
    assert_eq!(
        e,
        "invalid input: `(` at line 2 is closed by `}` at line 3 (in kernel `k`)"
    );
    let e = err("kernel void k(global int* x) {\n  if (1) {\n}\n");
    assert_eq!(e, "invalid input: unclosed `{` at line 1 (in kernel `k`)");
    let e = err("kernel void k(global int* x\n{ }");
    assert_eq!(e, "invalid input: unclosed `(` at line 1 (in kernel `k`)");
    let e = err("void f() { }\n}\n");
    assert_eq!(e, "invalid input: unmatched `}` at line 2");
}

#[test]
fn unterminated_comments_and_literals_are_errors() {
    assert_eq!(
        err("kernel void k() {}\n/* open"),
        "invalid input: unterminated comment at line 2"
    );
    assert_eq!(
        err("kernel void k() {\n char* s = \"abc\n\"; }"),
        "invalid input: unterminated literal at line 2"
    );
}

#[test]
fn unreadable_parameters_stop_rewrites_not_the_scan() {
    let k = &scan_kernels("kernel void k(global int*) { }").unwrap()[0];
    assert_eq!(
        k.rewrite_obstacle
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("invalid input: parameter 0 of kernel `k` (line 1) has no name")
    );
}

#[test]
fn preprocessor_lines_in_a_declaration_stop_rewrites() {
    let src = "#if RELAX == 1\n__kernel\n#else\n__kernel __attribute__((reqd_work_group_size(WGS,1,1)))\n\
                   #endif\nvoid Xaxpy(global float* x) { x[0] = 1; }\n\
                   kernel void fine(global float* x) {\n#if A\n x[0] = 1;\n#else\n x[0] = 2;\n#endif\n}\n\
                   ATTR kernel void attr(global float* x) { }\n\
                   kernel void open_if(global float* x) {\n#if A\n}\n#endif\n";
    let k = scan_kernels(src).unwrap();
    let why: Vec<Option<&Obstacle>> = k.iter().map(|k| k.rewrite_obstacle.as_ref()).collect();
    assert_eq!(k[0].name, "Xaxpy");
    assert_eq!(why[0], Some(&Obstacle::DirectiveInDeclaration { line: 3 }));
    assert_eq!(why[1], None);
    let token = "ATTR".to_string();
    assert_eq!(why[2], Some(&Obstacle::BeforeDeclaration { token }));
    assert_eq!(why[3], Some(&Obstacle::UnclosedIf));
    assert_eq!(
        why[2].unwrap().to_string(),
        "`ATTR` before its declaration is not understood (a macro?)"
    );
}

#[test]
fn scan_for_build_never_fails_on_structure() {
    let src = "#ifdef A\nkernel void k(global int* x) {\n#else\nkernel void k(global int* x) {\n#endif\n x[0] = 1; }";
    let (k, why) = crate::transform::scan(src).unwrap();
    assert!(k.is_empty());
    assert!(why.unwrap().to_string().contains("unclosed"));
    let src =
        "#define SIMD 16\nkernel __attribute__((intel_reqd_sub_group_size(SIMD))) void k() { }";
    let (k, _) = crate::transform::scan(src).unwrap();
    let sixteen = Some(SubGroupSizeAttr::Exact(16));
    assert_eq!(
        (k[0].sub_group_size, k[0].own_sub_group_attr),
        (sixteen, true)
    );
    assert!(crate::transform::scan("CLG_REQD_SUB_GROUP_SIZE(S) kernel void k() { }").is_err());
}

/// Own sizes through object-like macros are read; what cannot be told is reported, not guessed.
#[test]
fn own_sub_group_sizes_behind_macros() {
    let own = |src: &str| {
        let k = scan_kernels(src).unwrap();
        (
            k[0].sub_group_size,
            k[0].own_sub_group_attr,
            k[0].unresolved_sub_group_attr.clone(),
        )
    };
    let exact = |n| Some(SubGroupSizeAttr::Exact(n));
    let reqd = "__attribute__((intel_reqd_sub_group_size(16)))";
    // The issue's two cases, and the llama.cpp style (`#ifdef` in front of the declaration).
    assert_eq!(
        own(&format!(
            "#define REQD {reqd}
REQD kernel void k() {{ }}"
        )),
        (exact(16), true, None)
    );
    assert_eq!(
        own("#define S (0x10)
#define SIMD_SIZE S
             kernel __attribute__((intel_reqd_sub_group_size(SIMD_SIZE))) void k() { }"),
        (exact(16), true, None)
    );
    let llama = "#ifdef cl_intel_required_subgroup_size
        #define REQD_SUBGROUP_SIZE_32 __attribute__((intel_reqd_sub_group_size(32)))
        #elif defined(cl_qcom_reqd_sub_group_size)
        #define REQD_SUBGROUP_SIZE_64 __attribute__((qcom_reqd_sub_group_size(\"half\")))
        #endif
#ifdef INTEL_GPU
REQD_SUBGROUP_SIZE_32
#elif defined(ADRENO_GPU)
        REQD_SUBGROUP_SIZE_64
#endif
kernel void k(global float *x) { }";
    assert_eq!(own(llama), (exact(32), true, None));
    // Macros that say nothing about sub-groups are no attribute.
    assert_eq!(
        own("#define T float
kernel void k(global T *x) { }"),
        (None, false, None)
    );
    // Function-like macros, differing definitions, expressions: unresolved, with where.
    for (src, want) in [
        (
            "#define F(n) __attribute__((intel_reqd_sub_group_size(n)))
#define n 8
F(16) kernel void k() { }",
            "`F` at line 3",
        ),
        (
            &format!(
                "#ifdef A
#define R {reqd}
#else
#define R
#endif
R kernel void k() {{ }}"
            ),
            "`R` at line 6",
        ),
        (
            "#ifdef A
#define S 8
#else
#define S 16
#endif
kernel __attribute__((intel_reqd_sub_group_size(S))) void k() { }",
            "intel_reqd_sub_group_size(S) at line 6",
        ),
        (
            "kernel __attribute__((intel_reqd_sub_group_size(8 * 2))) void k() { }",
            "(8 * 2) at line 1",
        ),
    ] {
        let (size, attr, why) = own(src);
        assert_eq!((size, attr), (None, true), "{src}");
        assert!(
            why.as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
                .contains(want),
            "{src}: {why:?}"
        );
    }
    // A function-like macro with a literal size is read.
    assert_eq!(
        own("#define F() __attribute__((intel_reqd_sub_group_size(8)))
F() kernel void k() { }"),
        (exact(8), true, None)
    );
}

#[test]
fn utf8_and_crlf() {
    let src = "// é\r\nkernel void k(global int* x) { /* ü */ x[0] = 1; }\r\n";
    let k = &scan_kernels(src).unwrap()[0];
    assert_eq!(k.line, 2);
    assert_eq!(k.params[0].name, "x");
}

use crate::transform::fuzz::SOUP;
use proptest::prelude::*;

proptest! {
    #[test]
    fn token_soups_never_panic(picks in prop::collection::vec(0..SOUP.len(), 0..60)) {
        let src: String = picks.iter().map(|&i| SOUP[i]).collect::<Vec<_>>().join(" ");
        let _ = crate::transform::scan(&src);
        if let Ok(kernels) = scan_kernels(&src) {
            let out = crate::transform::rounded::with_rounded_variants(&src, &kernels, true);
            let out = out.expect("variants of scanned kernels are written");
            let rewritable = kernels.iter().filter(|k| k.rewrite_obstacle.is_none()).count();
            let again = scan_kernels(&out).expect("the rewritten source scans");
            prop_assert_eq!(again.len(), kernels.len() + 2 * rewritable);
            let _ = crate::transform::partitioned::with_partitioned_variants(&src, &kernels, false);
        }
    }
}

#[test]
fn example_kerneldecl() -> crate::Result<()> {
    use scan_kernels;
    let src = "kernel void k(global int *x) { x[get_global_id(0)] = 1; }";
    let k = &scan_kernels(src)?[0];
    assert_eq!(&src[k.name_span.clone()], "k");
    assert_eq!(&src[k.body.clone()], "{ x[get_global_id(0)] = 1; }");
    assert!(k.rewrite_obstacle.is_none()); // clgroups may write variants of it
    Ok(())
}

#[test]
fn example_param() -> crate::Result<()> {
    use scan_kernels;
    let k = &scan_kernels("kernel void k(__local float *t, uint n) { }")?[0];
    let p = &k.params[0];
    assert!(p.is_pointer);
    assert_eq!(
        (p.name.as_str(), p.address_space.as_deref()),
        ("t", Some("local"))
    ); // no `__`
    assert!(!k.params[1].is_pointer && k.params[1].address_space.is_none());
    Ok(())
}

#[test]
fn example_subgroupsizeattr() -> crate::Result<()> {
    use {scan_kernels, SubGroupSizeAttr};
    let k = &scan_kernels("kernel CLG_NAMED_SUB_GROUP_SIZE(automatic) void k() { }")?[0];
    assert_eq!(k.sub_group_size, Some(SubGroupSizeAttr::Automatic));
    Ok(())
}

#[test]
fn example_scan_kernels() {
    use {scan_kernels, SubGroupSizeAttr};
    let src = "float twice(float x) { return 2 * x; }\n\
               kernel void CLG_REQD_SUB_GROUP_SIZE(16)\n\
               scale(global float* v, const float s) { v[get_global_id(0)] *= twice(s); }";
    let k = &scan_kernels(src).unwrap()[0];
    assert_eq!(k.name, "scale");
    assert_eq!(k.line, 2);
    assert_eq!(k.params[0].text, "global float* v");
    assert_eq!(k.params[1].name, "s");
    assert_eq!(k.sub_group_size, Some(SubGroupSizeAttr::Exact(16)));
    assert!(scan_kernels("kernel void k() { (; }").is_err());
}

#[test]
fn work_group_size_attributes_are_read_from_tokens() {
    let src = "#define WGS 64\n\
        __attribute__((reqd_work_group_size(64, 1, 1))) kernel void a(global int *x) {\n\
          /* work_group_size_hint(8, 8, 8) */ x[0] = 1; }\n\
        kernel __attribute__((work_group_size_hint(16, 2, 1))) void b(global int *x) { x[0] = 2; }\n\
        kernel __attribute__((reqd_work_group_size(WGS, 1, 1))) void c(global int *x) { x[0] = 3; }\n\
        // reqd_work_group_size(32, 1, 1)\n\
        kernel void d(global int *x) { x[0] = 4; }";
    let k = scan_kernels(src).unwrap();
    assert_eq!(k[0].reqd_work_group_size, Some(vec![64, 1, 1]));
    assert_eq!(k[0].work_group_size_hint, None); // a comment in the body
    assert_eq!(k[1].work_group_size_hint, Some(vec![16, 2, 1]));
    assert_eq!(k[2].reqd_work_group_size, None); // a macro: the driver's to report
    assert_eq!(k[3].reqd_work_group_size, None); // a comment before the declaration
}
