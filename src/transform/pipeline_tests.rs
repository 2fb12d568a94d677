use super::*;
use crate::transform::layer::{is_emulated_collective, is_sub_group_collective};
use crate::transform::pp_eval::PpState;
use crate::transform::resolve_conditional_sizes;
use crate::transform::source::scans;

/// The raw string constant `name` of `file` (`const NAME: &str = r#"..."#;`).
fn raw_const<'a>(file: &'a str, name: &str) -> &'a str {
    let open = format!("const {name}: &str = r#\"");
    let start = file.find(&open).unwrap() + open.len();
    &file[start..start + file[start..].find("\"#;").unwrap()]
}

/// llama.cpp's `rms_norm.cl` as `tests/llama_kernels.rs` builds it: its prologue (`#if`
/// chains, `#error`, size macros), the kernel under `#ifdef INTEL_GPU`, sub-group collectives.
fn llama_rms_norm() -> String {
    let file = include_str!("../../tests/llama_kernels.rs");
    format!(
        "{}{}",
        raw_const(file, "PROLOGUE"),
        raw_const(file, "RMS_NORM")
    )
}

/// The sub-group sizes and attempts (with variants, with checked ones) of a build.
const ATTEMPTS: [(usize, bool, bool); 9] = {
    let mut all = [(0, false, false); 9];
    let mut i = 0;
    while i < 9 {
        let tries = [(true, true), (true, false), (false, false)];
        all[i] = (8 << (i / 3), tries[i % 3].0, tries[i % 3].1);
        i += 1;
    }
    all
};

/// The source read as a build reads it: its `#if` sizes resolved (with `cl_khr_subgroups`).
fn resolved(mut source: Source<'_>) -> Source<'_> {
    if source.text.contains('#') {
        let mut macros = PpState::default();
        macros.define("cl_khr_subgroups", "1");
        resolve_conditional_sizes(source.text, &mut source.facts.kernels, macros);
    }
    source
}

/// Attempt `(size, variants, check)` of a build, every rewrite planned.
fn attempt(source: &Source<'_>, (size, variants, check): (usize, bool, bool)) -> Result<String> {
    let plan = |name: &str| Rewrites {
        scratch: source.facts.layer_users.contains(name),
        round: true,
        check,
        pin: true,
    };
    source.rewrite(plan, variants, size)
}

/// What one `Program` build asks of the transform (`Program::build`, `build_with_fallbacks`)
/// on a device of `backend` with barrier collectives `collective`: the source read, its `#if`
/// sizes resolved, then per sub-group size the attempts a build makes (variants with checked
/// ones, without checked ones, without variants). The texts, in order, and how often each
/// text was scanned, with its length.
fn one_build(
    src: &str,
    backend: ShuffleBackend,
    collective: Barriers,
) -> (Vec<String>, Vec<(usize, usize)>) {
    scans::take();
    let texts = read(src, backend, collective, |source| {
        let source = resolved(source);
        ATTEMPTS.iter().map(|&a| attempt(&source, a)).collect()
    })
    .unwrap();
    (texts, scans::take())
}

/// Which words are collectives that are work-group barriers (none: they are not).
type Barriers = Option<fn(&str) -> bool>;

const BACKENDS: [(ShuffleBackend, Barriers); 3] = [
    (ShuffleBackend::Emulated, Some(is_emulated_collective)),
    (ShuffleBackend::Khr, Some(is_sub_group_collective)),
    (ShuffleBackend::NvidiaPtx, None),
];

/// llama's `rms_norm`, kernels whose collectives a build moves, a layer helper (scratch).
fn sources() -> [String; 3] {
    let uniform = include_str!("../../tests/cl/uniform_collectives.cl");
    let layer = "#include <clgroups/subgroup.h>\nfloat h(float v) { return sg_reduce_add(v); }\n\
                 kernel void k(global float *x) { x[get_global_id(0)] = h(x[get_global_id(0)]); }\n";
    [llama_rms_norm(), uniform.to_string(), layer.to_string()]
}

#[test]
fn one_build_scans_each_text_once() {
    for src in sources() {
        for (backend, collective) in BACKENDS {
            let (texts, scans) = one_build(&src, backend, collective);
            let twice: Vec<_> = scans.iter().filter(|(n, _)| *n > 1).collect();
            assert!(
                twice.is_empty(),
                "{backend:?}: scanned twice (times, bytes): {twice:?}"
            );
            // The texts compiled differ from the source: their scans are counted too.
            assert!(
                scans.len() > 1 && texts.iter().any(|t| *t != src),
                "{backend:?}"
            );
            let total: usize = scans.iter().map(|s| s.0).sum();
            eprintln!("{backend:?}, {} bytes: {total} scans {scans:?}", src.len());
        }
    }
}

#[test]
fn texts_from_earlier_attempts_are_the_texts_written_afresh() {
    for src in sources() {
        for (backend, collective) in BACKENDS {
            let (texts, _) = one_build(&src, backend, collective);
            for (a, text) in ATTEMPTS.into_iter().zip(&texts) {
                let alone = read(&src, backend, collective, |s| attempt(&resolved(s), a));
                assert_eq!(alone.unwrap(), *text, "{backend:?} {a:?}");
            }
        }
    }
}

#[cfg(feature = "scaling")]
#[test]
fn a_root_program_is_scanned_once_for_its_facts_and_variants() {
    for src in sources() {
        for checked in [false, true] {
            scans::take();
            let (decls, variants) = super::super::scan_root(&src, checked).unwrap();
            assert!(!decls.is_empty() && variants.is_ok(), "{variants:?}");
            assert_eq!(scans::take(), [(1, src.len())]);
        }
    }
}
