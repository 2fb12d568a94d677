//! Property test on a device: random kernel sources in everyday styles (attributes, comments
//! with braces, macros, `#if` inside and around declarations, helpers, typedefs) that the
//! compiler builds always build through `Program` with the same kernel names, and every
//! rewrite (rounded variants, the emulated scratch threaded through a layer helper) builds too:
//! no fallback was needed.

mod common;

use clgroups::kernel::Obstacle;
use clgroups::Program;
use proptest::prelude::*;

/// Pieces a kernel header may carry.
const ATTRS: &[&str] = &[
    "",
    "__attribute__((reqd_work_group_size(4, 1, 1)))",
    "__attribute__((work_group_size_hint(8, 1, 1)))",
    "__attribute__((vec_type_hint(float4)))",
    "ATTR",
];
const COMMENTS: &[&str] = &[
    "",
    "/* { kernel void x() { */",
    "// } barrier(\n",
    "/* ) */",
];
const BODIES: &[&str] = &[
    "o[get_global_id(0)] = a[get_global_id(0)] * 2.0f;",
    "size_t i = get_global_id(0); if (i < n) o[i] = helper(a[i]);",
    "o[get_global_id(0)] = (real)get_global_size(0);",
    "#if FLAG\n o[get_global_id(0)] = 1.0f;\n#else\n o[get_global_id(0)] = 2.0f;\n#endif\n",
    "for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) o[i] = SCALE(a[i]);",
    "local float t[4]; t[get_local_id(0) % 4] = a[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = t[get_local_id(0) % 4];",
    "o[get_global_id(0)] = lane_same(a[get_global_id(0)]);",
];

/// One kernel's text from the choices.
fn kernel(i: usize, attr: usize, comment: usize, body: usize, style: usize) -> String {
    let (kw, gl) = if style % 2 == 0 {
        ("kernel", "global")
    } else {
        ("__kernel", "__global")
    };
    let header = match style % 3 {
        0 => format!("{kw} {} void k{i}", ATTRS[attr]),
        1 => format!("{} {kw} void {}k{i}", ATTRS[attr], COMMENTS[comment]),
        _ => format!(
            "#if FLAG\n{kw}\n#else\n{kw} {}\n#endif\nvoid k{i}",
            ATTRS[attr]
        ),
    };
    format!(
        "{header}({gl} real *o, {gl} const float *a, const uint n) {} {{\n{}\n}}\n",
        COMMENTS[comment], BODIES[body]
    )
}

const PRELUDE: &str = "#include <clgroups/subgroup.h>\n#define FLAG 1\n\
    #define ATTR __attribute__((vec_type_hint(float)))\n#define SCALE(x) ((x) * 3.0f)\n\
    #define MAKE_KERNEL(NAME) kernel void NAME\n\
    typedef float real;\nfloat helper(float x) { return x + 1.0f; }\n\
    float lane_same(float x) { return sg_shuffle_xor(x, 0); }\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn sources_that_build_build_with_every_variant(
        choices in prop::collection::vec((0..ATTRS.len(), 0..COMMENTS.len(), 0..BODIES.len(), 0..8usize), 1..4),
    ) {
        let q = common::queue();
        let mut src = PRELUDE.to_string();
        for (i, &(a, c, b, s)) in choices.iter().enumerate() {
            src.push_str(&kernel(i, a, c, b, s));
        }
        let p = Program::from_source(&q, &src)
            .unwrap_or_else(|e| panic!("valid source refused: {e}\n{src}"));
        let mut names: Vec<String> = (0..choices.len()).map(|i| format!("k{i}")).collect();
        names.sort();
        let mut got = p.kernel_names();
        got.sort();
        prop_assert_eq!(got, names.clone());
        for name in &names {
            let k = p.kernel(name).unwrap();
            if let Err(why) = k.rounding_support() {
                let fell_back = matches!(
                    why,
                    Obstacle::VariantsFailed { .. } | Obstacle::OnlyWithoutRewrites
                );
                prop_assert!(!fell_back, "{}: {}\n{}", name, why, src);
            }
        }
    }
}
