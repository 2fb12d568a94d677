//! Everything clgroups reads or writes in a kernel's OpenCL C source, behind one small
//! interface (pure text; the driver stays the source of truth, see `docs/architecture.md`,
//! "What clgroups does to your source").
//!
//! * Reading: [`read_source`] scans a program's source once per build (after moving the
//!   collectives where the backend needs it: `hoist`) into [`SourceFacts`]: the kernel
//!   definitions it may rewrite ([`KernelDecl`], with the reason where it may not:
//!   [`KernelDecl::rewrite_obstacle`]), the functions that use the sub-group layer or sub-group
//!   collectives (transitively), divergent collectives, the identifiers; `scan_root` the
//!   kernels of a root program with what the multi-device contract reads in them;
//!   [`rounding_obstacle`] and [`whole_launch_obstacle`] say why a kernel must not get a rounded
//!   or whole-launch variant; the scaling contract's proofs ([`own_id_index`]).
//! * Wrappers: [`wrapper_source`] writes, from the driver's argument info, the guard of a
//!   rounded launch for a kernel whose declaration cannot be rewritten (`wrap_obstacle`).
//! * Writing: [`Source::rewrite`] gives the text a build compiles for one sub-group size,
//!   scanning each text it writes once a build (the emulated
//!   scratch threaded through layer users, checked and rounded variants, pinned sizes);
//!   `scan_root` also adds the variants a root device runs; [`inline_includes`]
//!   resolves the embedded `cl/` headers; [`polyfill_prelude`] puts the standard built-ins a
//!   device lacks in front; [`build_log`] maps compiler messages back to the user's lines.
//! * Names: the generated variants' names ([`variant_name`]) and the words of checked mode's
//!   record ([`Violation`]).
//!
//! Inside: `lex` (tokens, brackets), `source` (the scanner), `layer` (layer use, scratch
//! threading; `macro_scratch` inside `#define` replacement lists), `rounded`, `checked`,
//! `partitioned`, `wrapper` (variants), `queries` (the built-ins the variants call, bound
//! before the user's code), `options` (build options), `access` (index proofs),
//! `footprint` (what each buffer parameter's accesses reach, as formulas), `headers`, `polyfill`,
//! `build_log`; `pp_eval` (the `#if` decisions a build's macros make).

#[cfg(feature = "scaling")]
mod access;
pub mod build_log;
mod checked;
mod divergence;
mod edit;
mod facts;
#[cfg(feature = "scaling")]
pub(crate) mod footprint;
#[cfg(test)]
mod fuzz;
mod headers;
mod hoist;
mod id_condition;
mod layer;
mod lex;
mod lockstep;
mod macro_scratch;
mod nu_mask;
mod options;
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // the variants are the scaling's
mod partitioned;
mod passed;
mod pipeline;
mod polyfill;
pub(crate) mod pp_eval;
mod queries;
mod rounded;
mod sg_uniform;
mod source;
mod statement;
mod variant;
mod wrapper;

pub use crate::obstacle::{
    ArgumentObstacle, DriverCall, NoRewrite, Obstacle, Undecided, Use, UseKind, Via,
};
#[cfg(feature = "scaling")]
pub(crate) use access::{own_id_index, IdIndex};
pub(crate) use checked::{checked_pointers, Violation, CHECK_WORDS};
pub(crate) use facts::{barrier_collectives, SourceFacts};
pub(crate) use headers::inline_includes;
pub(crate) use options::{parse as build_options, BuildOption};
#[cfg(feature = "scaling")]
pub(crate) use partitioned::{is_global_pointer, option_query, whole_launch_obstacle};
pub(crate) use pipeline::{read as read_source, Source};
pub(crate) use polyfill::{prelude as polyfill_prelude, probe_source as polyfill_probe};
pub(crate) use queries::with_real_queries;
pub(crate) use rounded::{
    rounded_option_query, rounding_obstacle, shape_dependence, EXTRA_PARAM_COUNT,
};
pub use source::SubGroupSizeAttr;
pub(crate) use source::{KernelDecl, Scanned};
pub(crate) use variant::{is_generated, probe_canary, VariantKind};
pub(crate) use wrapper::{unseen_code, wrapper_source, DriverArg};

use crate::error::Result;
use edit::apply_edits;
use std::collections::BTreeMap;

/// The kernels of `src` that generated variants may be written for (see
/// [`KernelDecl::rewrite_obstacle`]), and, where the scanner cannot read the source as a whole,
/// no kernels and the reason. Errors only for a malformed clgroups attribute.
#[cfg(test)]
pub(crate) fn scan(src: &str) -> Result<(Vec<KernelDecl>, Option<Obstacle>)> {
    match Scanned::new(src) {
        Ok(s) => Ok((scanned_kernels(&s)?, None)),
        Err(e) => {
            log::debug!("source not scanned ({e}): no generated variants");
            Ok((Vec::new(), Some(Obstacle::Unscanned(Box::new(e)))))
        }
    }
}

/// A kernel of a root program's source, with what the multi-device contract reads in it.
#[cfg(feature = "scaling")]
#[derive(Clone, Debug)]
pub(crate) struct RootDecl {
    pub(crate) decl: KernelDecl,
    /// Per parameter: proven to be indexed only by the work-item's own global id.
    pub(crate) own_ids: Vec<Option<IdIndex>>,
    /// What each parameter's accesses reach, as formulas.
    pub(crate) footprint: footprint::Footprint,
    /// Why the kernel cannot be split over devices ([`whole_launch_obstacle`]).
    pub(crate) whole_obstacle: Option<Obstacle>,
    /// Per parameter: the source may write through it although its pointee is `const`.
    pub(crate) const_dropped: Vec<bool>,
}

/// [`scan`] for a root program: one scan gives each kernel's contract facts too, and the text
/// with the partitioned variants (`partitioned::with_partitioned_variants`, checked ones when
/// `checked`) or why there is none (the source does not scan, or the variants cannot be written).
#[cfg(feature = "scaling")]
pub(crate) fn scan_root(
    src: &str,
    checked: bool,
) -> Result<(Vec<RootDecl>, std::result::Result<String, Obstacle>)> {
    let s = match Scanned::new(src) {
        Ok(s) => s,
        Err(e) => {
            log::debug!("source not scanned ({e}): no generated variants");
            return Ok((Vec::new(), Err(Obstacle::Unscanned(Box::new(e)))));
        }
    };
    let kernels = scanned_kernels(&s)?;
    let variants = match partitioned::defined_query(&s) {
        Some(why) => Err(why),
        None => partitioned::with_partitioned_variants_on(&s, &kernels, checked)
            .map_err(|e| Obstacle::Unscanned(Box::new(e))),
    };
    let decls = kernels
        .into_iter()
        .map(|decl| RootDecl {
            own_ids: decl
                .params
                .iter()
                .map(|p| own_id_index(&s, &decl, &p.name))
                .collect(),
            whole_obstacle: whole_launch_obstacle(&s, &decl),
            footprint: footprint::footprint(&s, &decl),
            const_dropped: footprint::const_dropped(&s, &decl),
            decl,
        })
        .collect();
    Ok((decls, variants))
}

/// The kernels of a scanned source. Kernels defined more than once (under `#if` branches) are
/// marked not rewritable: their variants would be written once per definition.
fn scanned_kernels(s: &Scanned<'_>) -> Result<Vec<KernelDecl>> {
    let mut kernels = s.kernel_decls()?;
    let mut seen = BTreeMap::new();
    for k in &kernels {
        *seen.entry(k.name.clone()).or_insert(0usize) += 1;
    }
    let sizes = |k: &KernelDecl| (k.sub_group_size, k.unresolved_sub_group_attr.clone());
    let twins: Vec<(String, usize, bool)> = kernels
        .iter()
        .filter(|k| seen[&k.name] > 1)
        .map(|k| {
            let differ = kernels
                .iter()
                .any(|o| o.name == k.name && sizes(o) != sizes(k));
            (k.name.clone(), k.line, differ)
        })
        .collect();
    for (k, (_, _, differ)) in kernels.iter_mut().filter(|k| seen[&k.name] > 1).zip(&twins) {
        k.rewrite_obstacle.get_or_insert(Obstacle::DefinedTwice);
        if *differ {
            // Which definition the compiler keeps is the preprocessor's business: no size.
            let lines: Vec<usize> = twins
                .iter()
                .filter(|t| t.0 == k.name)
                .map(|t| t.1)
                .collect();
            k.own_sub_group_attr = true;
            k.sub_group_size = None;
            k.unresolved_sub_group_attr = Some(Obstacle::DifferentDefinitions { lines });
        }
    }
    Ok(kernels)
}

/// `kernels` (of `src`) with their sub-group size attributes read from the lines the compiler
/// keeps under the macros of `state` ([`pp_eval`]): a kernel defined under `#if` branches, or
/// whose size macro is, gets the size of the branch compiled. Lines that depend on a macro
/// clgroups cannot tell are read both ways; a size that differs between them is unresolved,
/// naming the macro. Nothing changes for a source without conditionals or one that does not
/// scan once blanked.
pub(crate) fn resolve_conditional_sizes(
    src: &str,
    kernels: &mut [KernelDecl],
    mut state: pp_eval::PpState,
) {
    let lines = pp_eval::evaluate(src, &mut state);
    if lines.iter().all(|l| *l == pp_eval::LineState::Active) {
        return;
    }
    // Each text read once: the source's kernels are `kernels` (as scanned, not yet resolved).
    let read = |text: &str| {
        let scanned;
        let kernels = match text == src {
            true => kernels as &[KernelDecl],
            false => {
                scanned = Scanned::new(text).and_then(|s| scanned_kernels(&s)).ok()?;
                &scanned
            }
        };
        let size = |k: &KernelDecl| {
            let attr = (k.sub_group_size, k.own_sub_group_attr);
            (k.name.clone(), (attr, k.unresolved_sub_group_attr.clone()))
        };
        Some(kernels.iter().map(size).collect::<BTreeMap<_, _>>())
    };
    let texts = (
        pp_eval::blank(src, &lines, true),
        pp_eval::blank(src, &lines, false),
    );
    let kept = read(&texts.0);
    let dropped = match texts.0 == texts.1 {
        true => kept.clone(),
        false => read(&texts.1),
    };
    let (Some(kept), Some(dropped)) = (kept, dropped) else {
        log::debug!("#if branches: the source does not scan once blanked; sizes as read");
        return;
    };
    // What the unknown lines depend on, each once, in order.
    let mut names: Vec<Undecided> = Vec::new();
    for l in &lines {
        if let pp_eval::LineState::Unknown(m) = l {
            if !names.contains(m) {
                names.push(m.clone());
            }
        }
    }
    for k in kernels.iter_mut() {
        let (a, b) = (kept.get(&k.name), dropped.get(&k.name));
        let resolved = match (a, b) {
            (Some(a), Some(b)) if a == b => a.clone(),
            (None, None) => continue, // in no compiled branch: the driver has no such kernel
            _ => {
                let macros = names.clone();
                ((None, true), Some(Obstacle::SelectedByIf { macros }))
            }
        };
        let ((size, own), why) = resolved;
        let why = match why {
            // Reasons that name the `#if` branches already say what they depend on.
            Some(Obstacle::SelectedByIf { .. } | Obstacle::DifferentDefinitions { .. }) | None => {
                why
            }
            Some(w) if !names.is_empty() => Some(Obstacle::UnknownMacros {
                why: Box::new(w),
                macros: names.clone(),
            }),
            w => w,
        };
        log::debug!(
            "kernel `{}` at line {}: sub-group size attribute under the build's #if branches: \
             {size:?} (own: {own}, unresolved: {why:?})",
            k.name,
            k.line
        );
        (
            k.sub_group_size,
            k.own_sub_group_attr,
            k.unresolved_sub_group_attr,
        ) = (size, own, why);
    }
}

/// What a build rewrites in one kernel (see [`Source::rewrite`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rewrites {
    /// The emulated sub-group scratch as a hidden trailing parameter.
    pub(crate) scratch: bool,
    /// Rounded variants.
    pub(crate) round: bool,
    /// Checked variants (whose rounded variants are checked too).
    pub(crate) check: bool,
    /// `intel_reqd_sub_group_size` of the build's size.
    pub(crate) pin: bool,
}

/// The edit appending `__local ulong *clg_sg_scratch` to a kernel's parameters.
fn scratch_param_edit(k: &KernelDecl) -> (usize, usize, String) {
    const PARAM: &str = "__local ulong *clg_sg_scratch";
    let span = &k.params_span;
    if k.params.is_empty() {
        // `()` or `(void)`.
        (span.start, span.end, format!("({PARAM})"))
    } else {
        (span.end - 1, span.end - 1, format!(", {PARAM}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn layer_of(src: &str) -> BTreeSet<String> {
        layer::layer_users(&Scanned::new(src).unwrap())
    }

    #[test]
    fn layer_use_is_a_whole_word_and_transitive() {
        assert_eq!(
            layer_of("kernel void a() { float s = sg_reduce_add(x); }"),
            BTreeSet::from(["a".to_string()])
        );
        assert!(layer_of("kernel void a() { int msg_len = 1; }").is_empty());
        let src = "#define SUM(v) sg_reduce_add(v)\nfloat h(float v) { return SUM(v); }\n\
                   float g(float v) { return h(v) + 1; }\nkernel void k(global float* x) { x[0] = g(x[0]); }\n\
                   kernel void plain(global float* x) { x[0] = 1; }";
        let users: Vec<String> = layer_of(src).into_iter().collect();
        assert_eq!(users, ["g", "h", "k"]);
    }

    #[test]
    fn sizes_chosen_by_if_branches_follow_the_build_macros() {
        let src = "#ifndef NO_SG\n#ifdef cl_intel_required_subgroup_size\n\
                   #define REQD_32 __attribute__((intel_reqd_sub_group_size(32)))\n#define INTEL 1\n#endif\n\
                   #ifdef INTEL\nREQD_32\n#endif\nkernel void k(global int *x) { x[0] = 1; }\n\
                   #else\nkernel void k(global int *x) { x[0] = 2; }\n#endif\n\
                   #if __VENDOR__ > 1\n#define W 8\n#else\n#define W 16\n#endif\n\
                   kernel __attribute__((intel_reqd_sub_group_size(W))) void v(global int *x) { }\n";
        let size_of = |state: pp_eval::PpState| {
            let mut kernels = scan(src).unwrap().0;
            resolve_conditional_sizes(src, &mut kernels, state);
            let k = kernels.iter().find(|k| k.name == "k").unwrap().clone();
            let v = kernels.iter().find(|k| k.name == "v").unwrap().clone();
            (
                k.sub_group_size,
                k.unresolved_sub_group_attr,
                v.unresolved_sub_group_attr,
            )
        };
        // As read without the build's macros: two definitions of `k` with different sizes.
        let (k, _) = scan(src).unwrap();
        assert!(k[0].unresolved_sub_group_attr.is_some());
        let mut intel = pp_eval::PpState::default();
        intel.define("cl_intel_required_subgroup_size", "1");
        let (size, why, v) = size_of(intel.clone());
        assert_eq!((size, why), (Some(SubGroupSizeAttr::Exact(32)), None));
        assert!(v.unwrap().to_string().contains("`__VENDOR__` is unknown"));
        let (size, why, _) = size_of(pp_eval::PpState::default());
        assert_eq!((size, why), (None, None));
        intel.define("NO_SG", "1");
        assert_eq!(size_of(intel).0, None);
        let mut unknown = pp_eval::PpState::default();
        unknown.forget("cl_intel_required_subgroup_size");
        let why = size_of(unknown).1.unwrap().to_string();
        assert!(why.contains("`cl_intel_required_subgroup_size`"), "{why}");
    }

    #[test]
    fn scratch_is_threaded_through_helpers() {
        let src = "float h(float v);\nfloat h(float v) { return sg_reduce_add(v); }\n\
                   uint lane(void) { return sg_get_local_id(); }\n\
                   float mine(float v CLG_SG_SCRATCH_PARAM) { return sg_reduce_add(v); }\n\
                   kernel void k(global float* x) { x[0] = h(x[0]) + lane() + mine(1 CLG_SG_SCRATCH); }";
        let s = Scanned::new(src).unwrap();
        let out = apply_edits(src, layer::scratch_edits(&s, &layer::layer_users(&s)));
        assert_eq!(
            out,
            "float h(float v, __local ulong *clg_sg_scratch);\n\
             float h(float v, __local ulong *clg_sg_scratch) { return sg_reduce_add(v); }\n\
             uint lane(__local ulong *clg_sg_scratch) { return sg_get_local_id(); }\n\
             float mine(float v CLG_SG_SCRATCH_PARAM) { return sg_reduce_add(v); }\n\
             kernel void k(global float* x) { x[0] = h(x[0], clg_sg_scratch) + lane(clg_sg_scratch) + mine(1 CLG_SG_SCRATCH); }"
        );
    }

    fn with_scratch(src: &str) -> String {
        let edits = source::scan_kernels(src)
            .unwrap()
            .iter()
            .map(scratch_param_edit)
            .collect();
        apply_edits(src, edits)
    }

    #[test]
    fn scratch_parameter_is_appended_to_every_form_of_parameter_list() {
        let src = "kernel void a(global int *x,\n uint n) { }\nkernel void b(void) { }\nkernel void c() { }";
        assert_eq!(
            with_scratch(src),
            "kernel void a(global int *x,\n uint n, __local ulong *clg_sg_scratch) { }\n\
             kernel void b(__local ulong *clg_sg_scratch) { }\n\
             kernel void c(__local ulong *clg_sg_scratch) { }"
        );
    }
}
