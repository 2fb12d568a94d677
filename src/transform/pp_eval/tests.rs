use super::*;
use proptest::prelude::*;

/// The lines of `text` (1-based) each state covers, as `A` (active), `I` or `?name`.
fn states(text: &str, state: &mut PpState) -> Vec<String> {
    evaluate(text, state)
        .into_iter()
        .map(|s| match s {
            LineState::Active => "A".to_string(),
            LineState::Inactive => "I".to_string(),
            LineState::Unknown(m) => format!("?{m}"),
        })
        .collect()
}

fn value(expr: &str) -> Result<i128, Undecided> {
    let mut s = PpState::default();
    s.define("ONE", "1");
    s.define("TWO", "(ONE + ONE)");
    s.define("SELF", "SELF + 1");
    s.forget("UNK");
    expr::eval(expr, &s)
}

#[test]
fn expressions_have_the_preprocessor_meaning() {
    for (e, want) in [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("TWO * TWO", 4),
        ("-1 < 0", 1),
        ("-1 < 0u", 0), // the usual conversions: -1 becomes the largest unsigned value
        ("0xffffffffffffffff == -1", 1),
        ("1 << 63 >> 63", -1),
        ("1u << 63 >> 63", 1),
        ("7 / 2 + 7 % 2", 4),
        ("!0 + ~0", 0),
        ("defined ONE && defined(TWO) && !defined THREE", 1),
        ("NOT_DEFINED + 5", 5),
        ("SELF", 1), // SELF + 1 with the inner SELF an identifier: 0 + 1
        ("'a' == 97 && '\\n' == 10", 1),
        ("1 ? 2 : 3", 2),
        ("0 ? 2 : 3, 4", 4),
        ("010 + 0b11 + 10UL", 21),
        ("0 && UNK", 0),
        ("UNK && 0", 0),
        ("1 || UNK", 1),
        ("UNK ? 5 : 5", 5),
        ("0 ? UNK : 3", 3),
    ] {
        assert_eq!(value(e), Ok(want), "{e}");
    }
}

#[test]
fn what_cannot_be_told_is_named() {
    let mut s = PpState::default();
    s.forget("U");
    s.defs.insert("F".into(), Def::Function);
    for (e, want) in [
        ("U", Undecided::Macro("U".into())),
        ("U + 1 > 2", Undecided::Macro("U".into())),
        ("1 && U", Undecided::Macro("U".into())),
        ("defined(U)", Undecided::Macro("U".into())),
        ("F(1) > 2", Undecided::FunctionLike("F".into())),
        (
            "__NV_CL_C_VERSION >= 120",
            Undecided::Macro("__NV_CL_C_VERSION".into()),
        ),
        ("1 / 0", Undecided::DivisionByZero),
        ("1 +", Undecided::Malformed),
        ("(1", Undecided::Malformed),
        ("1 2", Undecided::Malformed),
        ("1.5 > 1", Undecided::Malformed),
        ("\"s\"", Undecided::Malformed),
        ("", Undecided::Malformed),
    ] {
        assert_eq!(expr::eval(e, &s), Err(want), "{e}");
    }
    // How each is worded.
    for (u, text) in [
        (
            Undecided::FunctionLike("F".into()),
            "F (a function-like macro)",
        ),
        (
            Undecided::DivisionByZero,
            "a division by zero in an #if condition",
        ),
        (Undecided::Malformed, "a malformed #if condition"),
    ] {
        assert_eq!(u.to_string(), text);
    }
    // `F` alone is 0 (a function-like macro's name without arguments is no call).
    assert_eq!(expr::eval("F + 2", &s), Ok(2));
}

#[test]
fn branches_follow_the_definitions_on_the_way() {
    // llama.cpp's rms_norm.cl: the size macro is defined only under the extension's #ifdef.
    let text = "#ifndef GGML_OPENCL_NO_REQD_SUBGROUP_SIZE
#ifdef cl_intel_required_subgroup_size
#define INTEL_GPU 1
#define REQD_SUBGROUP_SIZE_32 __attribute__((intel_reqd_sub_group_size(32)))
#elif defined(cl_qcom_reqd_sub_group_size)
#define ADRENO_GPU 1
#endif
#ifdef INTEL_GPU
REQD_SUBGROUP_SIZE_32
#elif defined (ADRENO_GPU)
REQD_SUBGROUP_SIZE_64
#endif
kernel void k() {}
#else // GGML_OPENCL_NO_REQD_SUBGROUP_SIZE
kernel void k() {}
#endif";
    let mut intel = PpState::default();
    intel.define("cl_intel_required_subgroup_size", "1");
    let want = "A A A A A I A A A A I A A A I A";
    assert_eq!(states(text, &mut intel).join(" "), want);
    // Without the extension (NVIDIA's own list): no attribute.
    let want = "A A I I A I A A I A I A A A I A";
    assert_eq!(
        states(text, &mut PpState::default()).join(" "),
        want,
        "{text}"
    );
    let mut opted_out = PpState::default();
    opted_out.define("GGML_OPENCL_NO_REQD_SUBGROUP_SIZE", "");
    let got = states(text, &mut opted_out);
    assert_eq!(got[12], "I");
    assert_eq!(got[14], "A");
}

#[test]
fn unknown_macros_make_their_branches_unknown_and_definitions_under_them_unknown() {
    let text = "#if __OPENCL_C_VERSION__ >= 200\n#define W 16\n#else\n#define W 32\n#endif\n\
                #if W == 16\nx\n#endif\n#if 0\n#elif 1\ny\n#else\nz\n#endif";
    let mut s = PpState::default();
    let got = states(text, &mut s);
    let u = "?__OPENCL_C_VERSION__";
    assert_eq!(got[..5], ["A", u, "A", u, "A"]);
    assert_eq!(got[6], "?W");
    assert_eq!(got[10], "A");
    assert_eq!(got[12], "I");
    assert_eq!(s.lookup("W"), Some(Def::Unknown));
    s.define("__OPENCL_C_VERSION__", "300");
    let got = states(text, &mut s);
    assert_eq!(got[1..4], ["A", "A", "I"]);
    assert_eq!(got[6], "A");
}

#[test]
fn includes_comments_continuations_and_undef() {
    let text =
        "#define A 1 /* a\n#if 0 */\n#if A \\\n  && 1\nyes\n#endif\n#undef A\n#if A\nno\n#endif\n\
                // #if 0\n#include \"mine.h\"\n#if B\nb\n#endif";
    let got = states(text, &mut PpState::default());
    assert_eq!(got[4], "A");
    assert_eq!(got[8], "I");
    assert_eq!(got[13], "?B");
    // clgroups' own headers do not make user names unknown.
    let got = states(
        "#include <clgroups/subgroup.h>\n#if B\nb\n#endif",
        &mut PpState::default(),
    );
    assert_eq!(got[2], "I");
}

#[test]
fn blanking_keeps_offsets_and_lines() {
    let text = "#if X\nint a;\n#else\nint é;\n#endif\n";
    let mut s = PpState::default();
    s.forget("X");
    let lines = evaluate(text, &mut s);
    let kept = blank(text, &lines, true);
    let dropped = blank(text, &lines, false);
    assert_eq!(kept.len(), text.len());
    assert_eq!(dropped.len(), text.len());
    assert_eq!(dropped.lines().count(), text.lines().count());
    assert!(kept.contains("int a;") && kept.contains("int é;"));
    // Both branches depend on `X`: neither is kept.
    assert!(!dropped.contains("int a;") && !dropped.contains("int é;"));
    s.define("X", "0");
    let dropped = blank(text, &evaluate(text, &mut s), false);
    assert!(!dropped.contains("int a;") && dropped.contains("int é;"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any text: no panic, one state per line, and the expression evaluator answers.
    #[test]
    fn any_text_is_answered(text in "(#|if|ifdef|elif|else|endif|define|undef|include|defined|\
        [A-Z_]{1,3}|[0-9]{1,3}|0x[0-9a-f]{1,17}|[-+*/%<>=!&|^~?:(),']|\\\\|/\\*|\\*/|//|\n| ){0,60}")
    {
        let mut s = PpState::default();
        let lines = evaluate(&text, &mut s);
        prop_assert_eq!(lines.len(), text.split('\n').count());
        for line in text.lines() {
            let _ = expr::eval(line, &s);
        }
    }

    /// Arithmetic agrees with Rust's on signed 64-bit values where C defines it.
    #[test]
    fn arithmetic_matches(a in -1000i64..1000, b in 1i64..1000, op in 0usize..8) {
        let ops = ["+", "-", "*", "/", "%", "<", "==", "&"];
        let want = match op {
            0 => a + b, 1 => a - b, 2 => a * b, 3 => a / b, 4 => a % b,
            5 => (a < b) as i64, 6 => (a == b) as i64, _ => a & b,
        };
        let e = format!("({a}) {} ({b})", ops[op]);
        prop_assert_eq!(value(&e), Ok(want as i128), "{}", e);
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Deep nesting and long self-expanding chains end.
    #[test]
    fn deep_nesting_ends(n in 0usize..3000) {
        let e = format!("{}1{}", "(".repeat(n), ")".repeat(n));
        let got = value(&e);
        prop_assert!(got == Ok(1) || got == Err(Undecided::Malformed));
        let mut s = PpState::default();
        for i in 0..n.min(300) {
            s.define(&format!("M{i}"), &format!("M{} + M{}", i + 1, i + 1));
        }
        let _ = expr::eval("M0", &s);
    }
}
