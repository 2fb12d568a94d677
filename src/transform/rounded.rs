//! Range-rounded ("guard") variants of kernels: a pure text transform of OpenCL C.
//!
//! Public, and stable under semantic versioning, so that the kernel a rounded launch really
//! runs can be read (the variants' names appear in compiler logs and profilers) and tested
//! without a device.
//!
//! A plain range launch leaves the work-group size to the driver, which must pick a divisor of
//! the global size: a prime size forces work-groups of one work-item. Like DPC++'s range
//! rounding, clgroups can instead launch a *rounded variant* of the kernel over a larger range
//! and let the extra work-items exit at once. Kernel authors write no bounds check; this module
//! writes the variant from the kernel's own source.
//!
//! # The variants of kernel `k`
//!
//! * Two are written: the *rounded* variant [`VariantKind::Rounded`]`.name("k")` = `k__clg_rounded`, whose
//!   first statement is the guard, and the *sized* variant [`VariantKind::Sized`]`.name("k")` =
//!   `k__clg_sized`, identical but without the guard. A rounded launch runs the sized variant
//!   over the part of the range where every work-item is inside the user's range (no branch,
//!   so CPU drivers keep vectorising) and the rounded variant over the last row of
//!   work-groups only.
//! * Their parameters are `k`'s, plus six trailing ones: `const ulong clg_user_size0..2`, the
//!   user's global range in OpenCL order padded with 1, then `const ulong clg_user_offset0..2`,
//!   the user's global offset (0 when none).
//! * The guard is `if (clg_real_global_id(0) - clg_user_offset0 >= clg_user_size0 || ...
//!   (1) ... || ... (2) ...) return;`, where `clg_real_global_id` calls the real
//!   `get_global_id` from before the user's code ([`super::queries`]: the text then starts
//!   with it), so that a user macro named `get_global_id` changes the user's uses only.
//! * Then comes `k`'s body, copied. Inside it (and in macros it expands), `get_global_size(d)`
//!   reports the user's range (1 for `d >= 3`, as OpenCL does), `get_global_offset(d)` the
//!   user's offset, and `get_global_linear_id()` is
//!   `((id2 - off2) * u1 + (id1 - off1)) * u0 + (id0 - off0)` over the user's range `u` and
//!   offset `off` (`id` the real global id). All three are function-like `#define`s placed right
//!   before the copied body and `#undef`ed right after it, so code outside the variant is
//!   unaffected; a source that `#define`s one of them gets no rounded variants, and neither
//!   does a program whose build options define one of them or `get_global_id`
//!   ([`Obstacle::DefinesQuery`]: its kernels run as written).
//! * Not changed: `get_global_id` (so indexing is exactly as in the unrounded launch),
//!   `get_work_dim`, and `get_num_groups`, `get_local_size`, `get_enqueued_local_size`,
//!   `get_group_id`, `get_local_id` and `get_local_linear_id`, which describe the real launch.
//!   Functions the kernel calls also see the launched range; [`rounding_obstacle`] therefore
//!   refuses kernels whose called functions use `get_global_size`, `get_global_offset` or
//!   `get_global_linear_id`.
//!
//! # Placement and line numbers
//!
//! Each variant is written right after its original kernel (not at the end of the source), so
//! it sits under the same `#if` branch and sees the same macros and helper functions. `#line`
//! directives make compiler messages about the copied header and body point to the original
//! lines, and a final `#line` restores the numbering of the text that follows.
//! With `keep_original == false`, the variants *replace* their original kernel, so only they
//! are compiled (programs keep the originals: ND-range launches use them).
//!
//! # What must not be rounded
//!
//! An early return makes the last work-group and sub-group partial, which breaks barriers,
//! collectives and local memory. [`rounding_obstacle`] says why a kernel must run unrounded.

use super::queries::{defined_query, with_real_queries};
use super::source::{FunctionDef, KernelDecl, Kind, Scanned};
use super::variant::VariantKind;
use crate::builtins::{self, Flags};
use crate::error::{Error, InputFault, Result};
use crate::obstacle::{Obstacle, Use, UseKind, Via};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The guard, the first statement of the rounded variant.
pub(crate) const GUARD: &str = "if (clg_real_global_id(0) - clg_user_offset0 >= clg_user_size0 || \
clg_real_global_id(1) - clg_user_offset1 >= clg_user_size1 || \
clg_real_global_id(2) - clg_user_offset2 >= clg_user_size2) return;";

/// The trailing parameters of every variant: the user's range and offset.
pub(crate) const EXTRA_PARAMS: &str =
    "const ulong clg_user_size0, const ulong clg_user_size1, const ulong clg_user_size2, \
const ulong clg_user_offset0, const ulong clg_user_offset1, const ulong clg_user_offset2";

/// How many parameters [`EXTRA_PARAMS`] declares (its commas, plus one).
pub(crate) const EXTRA_PARAM_COUNT: usize = {
    let (bytes, mut i, mut n) = (EXTRA_PARAMS.as_bytes(), 0, 1);
    while i < bytes.len() {
        n += (bytes[i] == b',') as usize;
        i += 1;
    }
    n
};

/// The user-range queries, defined around the copied body.
pub(crate) const DEFINES: &str =
    "#define get_global_size(clg_d) ((clg_d) == 0 ? (size_t)clg_user_size0 : \
(clg_d) == 1 ? (size_t)clg_user_size1 : (clg_d) == 2 ? (size_t)clg_user_size2 : (size_t)1)
#define get_global_offset(clg_d) ((clg_d) == 0 ? (size_t)clg_user_offset0 : \
(clg_d) == 1 ? (size_t)clg_user_offset1 : (clg_d) == 2 ? (size_t)clg_user_offset2 : (size_t)0)
#define get_global_linear_id() ((((size_t)(clg_real_global_id(2) - clg_user_offset2) * \
(size_t)clg_user_size1 + (size_t)(clg_real_global_id(1) - clg_user_offset1)) * \
(size_t)clg_user_size0 + (size_t)(clg_real_global_id(0) - clg_user_offset0)))";

pub(crate) const UNDEFS: &str =
    "#undef get_global_size\n#undef get_global_offset\n#undef get_global_linear_id";

/// The work-item built-ins [`DEFINES`] defines (and [`UNDEFS`] undefines).
pub(crate) const DEFINED: &[&str] = &[
    "get_global_size",
    "get_global_offset",
    "get_global_linear_id",
];

/// Why no kernel of a program built with `options` may be rounded: a `-D` defines a query
/// [`DEFINES`] defines or [`GUARD`] calls ([`super::queries::option_query`]).
pub(crate) fn rounded_option_query(options: &str) -> Option<Obstacle> {
    super::queries::option_query(options, DEFINED)
}

/// Why kernel `k` of `src` must not be rounded, or `None` when it may be.
///
/// Refused: every kernel of a source that `#define`s a query [`DEFINES`] defines;
/// `local` pointer parameters; and, in the body, in functions it calls (found in `src`)
/// and in `#define`d macros it uses, transitively: `barrier`, `*_barrier`, `work_group_*`,
/// `async_work_group_*`, `wait_group_events`, anything containing `sub_group`/`subgroup`
/// (`sub_group_*`, `get_sub_group_*`, `intel_sub_group_*`, ...), the layer's `sg_*`, the
/// `local`/`__local` qualifier ([`shape_dependence`] is decided per launch: a required
/// work-group size keeps the shape). Also refused: a called function that uses `get_global_size`, `get_global_offset` or
/// `get_global_linear_id` (it would see the launched range). Comments and literals are ignored.
pub(crate) fn rounding_obstacle(scanned: &Scanned<'_>, k: &KernelDecl) -> Option<Obstacle> {
    let reason = defined_query(scanned, DEFINED).or_else(|| obstacle(scanned, k));
    if let Some(r) = &reason {
        log::debug!("not rounding kernel `{}`: {r}", k.name);
    }
    reason
}

pub(super) fn obstacle(scanned: &Scanned<'_>, k: &KernelDecl) -> Option<Obstacle> {
    if let Some(p) = k
        .params
        .iter()
        .find(|p| p.address_space.as_deref() == Some("local"))
    {
        return Some(Obstacle::LocalParameter {
            kernel: k.name.clone(),
            parameter: p.name.clone(),
        });
    }
    first_use(scanned, k, forbidden)
}

/// The first identifier in `k`'s body, in functions it calls or in macros it uses
/// (transitively) for which `forbidden(identifier, in_called_function)` says why, as
/// "kernel `k` calls `f`, which uses ..."; shared with the whole-launch check of
/// [`super::partitioned`].
pub(crate) fn first_use(
    scanned: &Scanned<'_>,
    k: &KernelDecl,
    forbidden: fn(&str, bool) -> Option<UseKind>,
) -> Option<Obstacle> {
    let body: Vec<(Kind, &str)> = scanned
        .tokens
        .iter()
        .filter(|t| t.span.start > k.body.start && t.span.end < k.body.end)
        .map(|t| (t.kind, &scanned.src[t.span.clone()]))
        .collect();
    let mut functions: HashMap<&str, Vec<&FunctionDef>> = HashMap::new();
    for f in &scanned.functions {
        functions.entry(f.name.as_str()).or_default().push(f);
    }
    let mut walk = Walk {
        scanned,
        functions,
        seen: HashSet::new(),
        forbidden,
    };
    walk.check(body).map(|(via, used)| Obstacle::Uses {
        kernel: k.name.clone(),
        via,
        used,
    })
}

/// A depth-first walk through a body, the functions it calls and the macros it uses, on a
/// stack of its own (a chain of thousands of helpers or macros overflowed the thread's).
struct Walk<'s, 'a> {
    scanned: &'s Scanned<'a>,
    /// The function definitions of `scanned`, by name.
    functions: HashMap<&'s str, Vec<&'s FunctionDef>>,
    seen: HashSet<(String, bool)>,
    forbidden: fn(&str, bool) -> Option<UseKind>,
}

/// A body being walked: what leads to it (`None` for the kernel's own), its tokens and whether
/// it is a called function's.
type Body<'a> = (Option<Via>, Vec<(Kind, &'a str)>, bool);

/// The bodies of one name being walked, in turn; the body and token walked next.
struct Frame<'a> {
    bodies: Vec<Body<'a>>,
    body: usize,
    next: usize,
}

impl<'a> Walk<'_, 'a> {
    /// The first obstacle in `tokens` (a kernel's body): the functions and macros leading to
    /// it, and the use.
    fn check(&mut self, tokens: Vec<(Kind, &'a str)>) -> Option<(Vec<Via>, Use)> {
        let root = (None, tokens, false);
        let mut stack = vec![Frame {
            bodies: vec![root],
            body: 0,
            next: 0,
        }];
        while let Some(top) = stack.last_mut() {
            let Some((_, tokens, in_function)) = top.bodies.get(top.body) else {
                stack.pop();
                continue;
            };
            let in_function = *in_function;
            let Some(&(kind, text)) = tokens.get(top.next) else {
                (top.body, top.next) = (top.body + 1, 0);
                continue;
            };
            top.next += 1;
            if kind != Kind::Ident {
                continue;
            }
            if let Some(kind) = (self.forbidden)(text, in_function) {
                let via = stack.iter().filter_map(|f| f.bodies[f.body].0.clone());
                return Some((via.collect(), Use::new(text, kind)));
            }
            if self.seen.insert((text.to_string(), in_function)) {
                let bodies = self.callee(text, in_function);
                if !bodies.is_empty() {
                    stack.push(Frame {
                        bodies,
                        body: 0,
                        next: 0,
                    });
                }
            }
        }
        None
    }

    /// The bodies of the functions, then of the macros, that `src` defines as `name`.
    fn callee(&self, name: &str, in_function: bool) -> Vec<Body<'a>> {
        let scanned = self.scanned;
        let mut out = Vec::new();
        for f in self.functions.get(name).into_iter().flatten() {
            let toks: Vec<_> = (f.body.0 + 1..f.body.1)
                .map(|i| (scanned.tokens[i].kind, scanned.text(i)))
                .collect();
            out.push((Some(Via::Calls(name.to_string())), toks, true));
        }
        for body in scanned.macros.get(name).into_iter().flatten() {
            let toks: Vec<_> = body
                .iter()
                .map(|t| (t.kind, &scanned.src[t.span.clone()]))
                .collect();
            out.push((Some(Via::Macro(name.to_string())), toks, in_function));
        }
        out
    }
}

/// Why kernel `k`'s result may depend on its work-group shape (it asks for it, in its body,
/// functions it calls or macros it uses), or `None`. Rounding a plain range changes the shape
/// unless the kernel requires one (`reqd_work_group_size`).
pub(crate) fn shape_dependence(scanned: &Scanned<'_>, k: &KernelDecl) -> Option<Obstacle> {
    // A kernel that asks for the shape may compute indices from it (clpeak's
    // `get_group_id(0) * get_local_size(0) * N + get_local_id(0)`).
    fn shape(id: &str, _: bool) -> Option<UseKind> {
        builtins::flags(id)
            .has(Flags::SHAPE)
            .then_some(UseKind::ShapeQuery)
    }
    first_use(scanned, k, shape)
}

/// Why identifier `id` forbids rounding, if it does.
pub(super) fn forbidden(id: &str, in_function: bool) -> Option<UseKind> {
    let flags = builtins::flags(id);
    if flags.has(Flags::WORK_GROUP) {
        return Some(UseKind::WorkGroupCollective);
    }
    if flags.has(Flags::SUB_GROUP) {
        return Some(UseKind::SubGroup);
    }
    if id == "local" || id == "__local" {
        return Some(UseKind::LocalMemory);
    }

    if in_function && flags.has(Flags::GLOBAL_RANGE) {
        return Some(UseKind::SeesRoundedRange);
    }
    None
}

/// `src` with a rounded variant of each kernel in `kernels` (see the module docs).
///
/// `kernels` must come from the scan of `src`;
/// pass only kernels for which [`rounding_obstacle`] is `None`. With `keep_original`, each
/// variant follows its kernel; without, it replaces it. Errors when a declaration does not
/// match `src` or two declarations overlap.
pub fn with_rounded_variants(
    src: &str,
    kernels: &[KernelDecl],
    keep_original: bool,
) -> Result<String> {
    let mut wrote = false;
    let out = with_variants(src, kernels, keep_original, |out, src, k| {
        wrote = true;
        write_variant(out, src, k);
    })?;
    log::debug!(
        "wrote rounded variants of {} kernel(s) (keep originals: {keep_original})",
        kernels.len()
    );
    Ok(if wrote { with_real_queries(out) } else { out })
}

/// `src` with `write(out, src, k)` called right after each kernel `k` of `kernels` (which
/// replaces the kernel unless `keep_original`); shared by the variant generators. Kernels with a
/// [`KernelDecl::rewrite_obstacle`] are left alone, and so are kernels whose last line goes on
/// with a `#` (see [`gets_variants`]).
pub(crate) fn with_variants(
    src: &str,
    kernels: &[KernelDecl],
    keep_original: bool,
    mut write: impl FnMut(&mut String, &str, &KernelDecl),
) -> Result<String> {
    let mut sorted: Vec<&KernelDecl> = kernels.iter().filter(|k| gets_variants(src, k)).collect();
    sorted.sort_by_key(|k| k.decl_start);
    sorted.dedup_by_key(|k| k.decl_start);
    let mut out = String::with_capacity(src.len() * 2);
    let mut pos = 0;
    for k in sorted {
        check_decl(src, k)?;
        if k.decl_start < pos {
            return Err(Error::input(InputFault::KernelOverlaps {
                kernel: k.name.clone(),
            }));
        }
        let keep = if keep_original {
            k.body.end
        } else {
            k.decl_start
        };
        out.push_str(&src[pos..keep]);
        write(&mut out, src, k);
        pos = k.body.end;
    }
    out.push_str(&src[pos..]);
    Ok(out)
}

/// Whether [`with_variants`] writes variants of `k`: it has no rewrite obstacle, and the rest of
/// its last line (past blanks and `/* */` comments) does not start with `#`. Variants end with a
/// `#line` directive and a line break, so such a `#` would start a line and become a directive
/// (`}#define M ...`): a stray `#` the driver rejects would turn into a valid `#define`.
pub(crate) fn gets_variants(src: &str, k: &KernelDecl) -> bool {
    if let Some(why) = &k.rewrite_obstacle {
        log::debug!("no variant of kernel `{}`: {why}", k.name);
        return false;
    }
    let mut rest = src.get(k.body.end..).unwrap_or("");
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\x0b', '\x0c']);
        match rest.strip_prefix("/*").and_then(|r| r.split_once("*/")) {
            Some((_, after)) => rest = after,
            None => break,
        }
    }
    let directive = rest.starts_with('#') || rest.starts_with("%:");
    if directive {
        log::debug!(
            "no variant of kernel `{}`: its last line goes on with a `#` after its `}}`",
            k.name
        );
    }
    !directive
}

/// Errors unless `k`'s spans are ordered, inside `src` and hold what they claim.
fn check_decl(src: &str, k: &KernelDecl) -> Result<()> {
    let ordered = k.decl_start <= k.name_span.start
        && k.name_span.end <= k.params_span.start
        && k.params_span.end <= k.body.start
        && k.body.start < k.body.end;
    let holds = ordered
        && src.get(k.name_span.clone()) == Some(k.name.as_str())
        && src
            .get(k.params_span.clone())
            .is_some_and(|p| p.starts_with('(') && p.ends_with(')'))
        && src
            .get(k.body.clone())
            .is_some_and(|b| b.starts_with('{') && b.ends_with('}'))
        && src.is_char_boundary(k.decl_start);
    if holds {
        Ok(())
    } else {
        Err(Error::input(InputFault::DeclarationMismatch {
            kernel: k.name.clone(),
        }))
    }
}

/// 1-based line of byte offset `at` in `src`.
pub(crate) fn line_of(src: &str, at: usize) -> usize {
    1 + src.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count()
}

/// Appends the rounded (guarded) and sized (unguarded) variants of `k` (spans already checked).
fn write_variant(out: &mut String, src: &str, k: &KernelDecl) {
    write_variants(out, src, k, &src[k.body.start + 1..k.body.end - 1], "");
}

/// [`write_variant`] with `body` and `more` parameters after the user-range ones.
pub(crate) fn write_variants(out: &mut String, src: &str, k: &KernelDecl, body: &str, more: &str) {
    let (open, close) = (k.params_span.end - 1, k.body.end - 1);
    let extra = [EXTRA_PARAMS, more].join(if more.is_empty() { "" } else { ", " });
    let (params_from, params_text) = if k.params.is_empty() {
        (k.params_span.start + 1, extra)
    } else {
        (open, format!(", {extra}"))
    };
    for (name, guard) in [
        (VariantKind::Rounded.name(&k.name), GUARD),
        (VariantKind::Sized.name(&k.name), ""),
    ] {
        let _ = write!(
            out,
            "\n#line {}\n{}{name}{}{params_text}{}\n{guard}\n{DEFINES}\n#line {}\n{body}\n{UNDEFS}\n}}\n#line {}\n",
            line_of(src, k.decl_start),
            &src[k.decl_start..k.name_span.start],
            &src[k.name_span.end..params_from],
            &src[open..=k.body.start],
            line_of(src, k.body.start),
            line_of(src, close),
        );
    }
}

#[cfg(test)]
#[path = "rounded_tests.rs"]
mod tests;

#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn example_rounding_obstacle() {
        use crate::transform::source::scan_kernels;
        let src = "#define SYNC barrier(CLK_LOCAL_MEM_FENCE)\n\
                   kernel void a(global int* x) { x[get_global_id(0)] = 1; /* barrier( */ }\n\
                   kernel void b(global int* x) { SYNC; }";
        let k = scan_kernels(src).unwrap();
        let s = Scanned::new(src).unwrap();
        assert_eq!(rounding_obstacle(&s, &k[0]), None);
        let why = rounding_obstacle(&s, &k[1]).unwrap();
        assert_eq!(
            why.to_string(),
            "kernel `b` uses macro `SYNC`, which uses `barrier` (a work-group collective)"
        );
        let used = Use::new("barrier", UseKind::WorkGroupCollective);
        let (kernel, via) = ("b".to_string(), vec![Via::Macro("SYNC".into())]);
        assert_eq!(why, Obstacle::Uses { kernel, via, used });
    }

    #[test]
    fn example_with_rounded_variants() {
        use crate::transform::source::scan_kernels;
        let src =
            "kernel void fill(global int* o) {\n  o[get_global_id(0)] = get_global_size(0);\n}\n";
        let out = with_rounded_variants(src, &scan_kernels(src).unwrap(), true).unwrap();
        // The real queries first (see `super::queries`), then the source.
        assert!(out.contains(&format!("#line 1\n{}", src.trim_end())));
        assert!(out
            .contains("kernel void fill__clg_rounded(global int* o, const ulong clg_user_size0, "));
        assert_eq!(scan_kernels(&out).unwrap().len(), 3);
    }
}
