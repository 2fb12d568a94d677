//! [`SourceFacts`]: everything clgroups reads in a program's source, read once per build from
//! one scan and stored by the program; its kernels, launches and multi-device kernels ask these
//! facts instead of reading the text again.

use super::divergence::{self, Divergence};
use super::lex::Kind;
use super::source::Scanned;
use super::{layer, polyfill};
use super::{KernelDecl, Obstacle};
use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// What one scan of a source found.
#[derive(Debug, Default)]
pub(crate) struct SourceFacts {
    /// The kernel definitions variants may be written for ([`super::scan`]'s rules).
    pub(crate) kernels: Vec<KernelDecl>,
    /// Why the scanner could not read the source as a whole (then no kernels).
    pub(crate) unscanned: Option<Obstacle>,
    /// Functions that use the sub-group layer on the device, transitively.
    pub(crate) layer_users: BTreeSet<String>,
    /// Functions that use sub-group collectives (the layer's or the standard built-ins).
    pub(crate) collective_users: BTreeSet<String>,
    /// Collectives under work-item-dependent control flow, where collectives are work-group
    /// barriers ([`Device::needs_group_uniform_collectives`]).
    pub(crate) divergence: Divergence,
    /// Why each kernel must not be rounded (`None`: it may be), by name.
    pub(crate) rounding_obstacles: BTreeMap<String, Option<Obstacle>>,
    /// Why each kernel must not be launched through a wrapper (`None`: it may be), by name;
    /// a kernel defined more than once gets the first obstacle of any definition.
    pub(crate) wrap_obstacles: BTreeMap<String, Option<Obstacle>>,
    /// Why each kernel's result may depend on its work-group shape (`None`: it cannot), by name.
    pub(crate) shape_dependence: BTreeMap<String, Option<Obstacle>>,
    /// The edits threading the emulated scratch through the layer's helper functions and the
    /// kernels and calls macros write.
    pub(crate) scratch_edits: Vec<(usize, usize, String)>,
    /// Where those edits cannot reach a kernel's parameters (a kernel keyword in a macro that
    /// does not write the parameter list), when nothing else is out of their reach: a build
    /// that fails without it may declare a stand-in `clg_sg_scratch` (only kernels without the
    /// parameter can see it, and those are then refused).
    pub(crate) scratch_stand_in: Option<Obstacle>,
    /// Whether `intel_reqd_sub_group_size` stands outside the headers of the kernels the
    /// scanner read (in a macro's replacement list, or around a kernel it did not find): a
    /// kernel the scanner did not find may then require a size nobody tells clgroups.
    pub(crate) hidden_required_size: bool,
    /// Whether a conditional directive (`#if`, `#ifdef`, `#ifndef`) opens in the source read:
    /// only then can a build's macros choose what it compiles
    /// ([`super::resolve_conditional_sizes`]).
    pub(crate) conditionals: bool,
    /// Whether a word of the code, its macros or its directives names a standard sub-group
    /// built-in or a sub-group extension: the build adds the polyfill
    /// ([`super::polyfill::prelude`]).
    pub(crate) mentions_sub_groups: bool,
    /// Whether a word of the code, its macros or its directives is `intel_reqd_sub_group_size`
    /// (`program::build::derived_geometry`).
    pub(crate) names_required_size: bool,
    /// Every identifier of the code and of its macros (comments and strings excluded; the
    /// whole text split at non-identifier characters where the scanner cannot read it).
    words: BTreeSet<String>,
    /// Every identifier of the directive lines (of the whole text where the scanner cannot
    /// read it).
    directive_words: BTreeSet<String>,
    /// Every name a directive defines or undefines.
    defined: BTreeSet<String>,
    /// What each `#include` names (none where the scanner cannot read the source).
    pub(crate) includes: Vec<String>,
}

impl SourceFacts {
    /// Reads `src` for a build on a device of `backend` whose collectives are work-group
    /// barriers where `collective` (which tells them, [`barrier_collectives`]) is given. Errors
    /// only for a malformed clgroups attribute (see [`super::scan`]). A build reads its source
    /// through [`super::pipeline::read`], which scans it once for this and everything else.
    #[cfg(test)]
    pub(crate) fn read_on(
        src: &str,
        backend: ShuffleBackend,
        collective: Option<fn(&str) -> bool>,
    ) -> Result<SourceFacts> {
        SourceFacts::of_scan(src, Scanned::new(src).as_ref(), backend, collective)
    }

    /// [`SourceFacts::read_on`] of `src` as scanned (or not: the scanner's error).
    pub(crate) fn of_scan(
        src: &str,
        scanned: std::result::Result<&Scanned<'_>, &Error>,
        backend: ShuffleBackend,
        collective: Option<fn(&str) -> bool>,
    ) -> Result<SourceFacts> {
        let scanned = match scanned {
            Ok(s) => s,
            Err(e) => {
                log::debug!(
                    "source not scanned ({e}): no generated variants, names from the driver"
                );
                let words = text_words(src);
                return Ok(SourceFacts {
                    unscanned: Some(Obstacle::Unscanned(Box::new(e.clone()))),
                    hidden_required_size: words.contains(REQUIRED_SIZE)
                        || words.contains(REQUIRED_SIZE_UNDERSCORED),
                    mentions_sub_groups: polyfill::mentions_sub_groups(&words),
                    names_required_size: words.contains(REQUIRED_SIZE),
                    directive_words: words.clone(),
                    words,
                    defined: text_defines(src),
                    ..Default::default()
                });
            }
        };
        let layer_users = layer::layer_users_on(scanned, backend);
        let threading = match backend {
            ShuffleBackend::Emulated => layer::scratch_threading(scanned, &layer_users),
            _ => super::edit::Threading::default(),
        };
        if let Some(why) = &threading.unthreadable {
            log::debug!("emulated scratch: {why}; no stand-in for what the edits cannot reach");
        }
        let scratch_stand_in = threading
            .unreached
            .filter(|_| threading.unthreadable.is_none());
        let divergence = collective.map_or_else(Divergence::default, |c| {
            divergence::divergent_users(scanned, c, super::hoist::obstacle)
        });
        let kernels = super::scanned_kernels(scanned)?;
        let rounding_obstacles = kernels
            .iter()
            .map(|k| (k.name.clone(), super::rounding_obstacle(scanned, k)))
            .collect();
        let mut wrap_obstacles: BTreeMap<String, Option<Obstacle>> = BTreeMap::new();
        for k in &kernels {
            let why = super::wrapper::wrap_obstacle(scanned, k);
            let slot = wrap_obstacles.entry(k.name.clone()).or_default();
            if slot.is_none() {
                *slot = why;
            }
        }
        let shape_dependence = kernels
            .iter()
            .map(|k| (k.name.clone(), super::shape_dependence(scanned, k)))
            .collect();
        let words = scanned_words(scanned);
        let directive_words: BTreeSet<String> = (scanned.directive_idents.iter())
            .map(|span| src[span.clone()].to_string())
            .collect();
        let named = |w: &str| words.contains(w) || directive_words.contains(w);
        Ok(SourceFacts {
            kernels,
            unscanned: None,
            rounding_obstacles,
            wrap_obstacles,
            shape_dependence,
            collective_users: layer::users(scanned, layer::is_sub_group_collective),
            layer_users,
            divergence,
            scratch_edits: threading.edits,
            scratch_stand_in,
            hidden_required_size: hidden_required_size(scanned),
            conditionals: scanned.has_conditionals(),
            mentions_sub_groups: polyfill::mentions_sub_groups(&words)
                || polyfill::mentions_sub_groups(&directive_words),
            names_required_size: named(REQUIRED_SIZE),
            words,
            directive_words,
            defined: (scanned.macros.keys().chain(&scanned.undefs).cloned()).collect(),
            includes: scanned.includes.clone(),
        })
    }

    /// Whether `word` is an identifier of the source's code or macros.
    pub(crate) fn uses(&self, word: &str) -> bool {
        self.words.contains(word)
    }

    /// Whether `word` is an identifier of the source's code, macros or directives.
    pub(crate) fn spells(&self, word: &str) -> bool {
        self.words.contains(word) || self.directive_words.contains(word)
    }

    /// Whether a directive of the source defines or undefines `name`.
    pub(crate) fn defines(&self, name: &str) -> bool {
        self.defined.contains(name)
    }

    /// Whether an identifier of the source is a sub-group collective.
    pub(crate) fn names_sub_group_collectives(&self) -> bool {
        self.words.iter().any(|w| layer::is_sub_group_collective(w))
    }
}

/// Where `device`'s collectives are work-group barriers
/// ([`Device::needs_group_uniform_collectives`]), what tells them: the layer's and the polyfilled
/// built-ins on the emulated backend, every sub-group collective on PoCL's native ones.
pub(crate) fn barrier_collectives(device: &Device) -> Option<fn(&str) -> bool> {
    let backend = device.sub_groups().effective.shuffle_backend;
    match device.needs_group_uniform_collectives() {
        true if backend == ShuffleBackend::Emulated => Some(layer::is_emulated_collective),
        true => Some(layer::is_sub_group_collective),
        false => None,
    }
}

/// The identifiers of the scanned code and of its macros' bodies.
fn scanned_words(s: &Scanned<'_>) -> BTreeSet<String> {
    let macros = s.macros.values().flatten().flatten();
    s.tokens
        .iter()
        .chain(macros)
        .filter(|t| t.kind == Kind::Ident)
        .map(|t| s.src[t.span.clone()].to_string())
        .collect()
}

/// The kernel attribute that asks for a sub-group size.
const REQUIRED_SIZE: &str = "intel_reqd_sub_group_size";

/// The attribute's other spelling (GNU attributes may be written `__name__`).
const REQUIRED_SIZE_UNDERSCORED: &str = "__intel_reqd_sub_group_size__";

/// [`SourceFacts::hidden_required_size`] of a scanned source: the attribute (either spelling)
/// in a macro's replacement list or outside the headers of the kernels read, or a macro that
/// pastes tokens (`##`) in a source naming a piece of the attribute's name (`intel_reqd_ ##
/// sub_group_size`, `CAT(intel_, reqd_sub_group_size)`).
fn hidden_required_size(s: &Scanned<'_>) -> bool {
    let text = |t: &super::lex::Token| &s.src[t.span.clone()];
    let is_attr = |t: &super::lex::Token| {
        t.kind == Kind::Ident && [REQUIRED_SIZE, REQUIRED_SIZE_UNDERSCORED].contains(&text(t))
    };
    let macros = || s.macros.values().flatten().flatten();
    let piece = |t: &super::lex::Token| {
        let w = text(t);
        t.kind == Kind::Ident
            && !is_attr(t)
            && (w.contains("intel_reqd")
                || w.contains("reqd_sub_group")
                || w == "intel"
                || w == "intel_")
    };
    let pastes = (s.macros.values().flatten()).any(|body| {
        body.windows(2)
            .any(|w| text(&w[0]) == "#" && text(&w[1]) == "#")
    });
    macros().any(is_attr)
        || (s.tokens.iter().enumerate()).any(|(i, t)| is_attr(t) && !s.in_kernel_header(i))
        || (pastes && (s.tokens.iter().chain(macros())).any(piece))
}

/// The words of text the scanner cannot read (comments included: more words, never fewer).
fn text_words(src: &str) -> BTreeSet<String> {
    super::lex::words(src).map(str::to_string).collect()
}

/// The names of `#define` and `#undef` lines of text the scanner cannot read.
fn text_defines(src: &str) -> BTreeSet<String> {
    let name = |l: &str| {
        let rest = l.trim_start().strip_prefix('#')?.trim_start();
        let rest = (rest.strip_prefix("define"))
            .or_else(|| rest.strip_prefix("undef"))?
            .trim_start();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        Some(rest[..end].to_string()).filter(|n| !n.is_empty())
    };
    src.lines().filter_map(name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_skip_comments_and_strings_but_keep_macros() {
        let src = "#define G get_group_id(0)\n// get_global_size(0)\n\
                   kernel void k(global int *x) { x[G] = 1; /* get_num_groups */ }";
        let s = Scanned::new(src).unwrap();
        let words = scanned_words(&s);
        assert!(words.contains("get_group_id"));
        assert!(!words.contains("get_global_size"));
        assert!(!words.contains("get_num_groups"));
        assert!(text_words(src).contains("get_num_groups"));
    }

    #[test]
    fn required_sizes_the_scanner_cannot_attribute_are_hidden() {
        let hidden = |src: &str| hidden_required_size(&Scanned::new(src).unwrap());
        let attr = "__attribute__((intel_reqd_sub_group_size(16)))";
        let body = "(global int *x) { x[0] = 1; }";
        assert!(!hidden(&format!("{attr} kernel void k{body}")));
        assert!(!hidden(&format!("// {attr}\nkernel void k{body}")));
        assert!(hidden(&format!(
            "#define K(n) {attr} kernel void n{body}\nK(a)"
        )));
        assert!(hidden(&format!("#define R {attr}\nR kernel void k{body}")));
        assert!(hidden(&format!(
            "#define K(n) kernel void n{body}\n{attr} K(a)"
        )));
        let underscored = "__attribute__((__intel_reqd_sub_group_size__(8)))";
        assert!(hidden(&format!(
            "#define R {underscored}\nR kernel void k{body}"
        )));
        let pasted = "#define CAT(a, b) a##b\n\
                      #define R(s) __attribute__((CAT(intel_reqd_, sub_group_size)(s)))\n";
        assert!(hidden(&format!("{pasted}R(8) kernel void k{body}")));
        assert!(!hidden(&format!(
            "#define CAT(a, b) a##b\nkernel void CAT(k, 1){body}"
        )));
    }

    #[test]
    fn directives_are_read_from_the_scan() {
        let src = "#define WG __attribute__((reqd_work_group_size(64, 1, 1)))\n\
                   #undef  __reqd_work_group_size__\n\
                   #if defined(cl_khr_subgroups) /* intel_reqd_sub_group_size */\n#endif\n\
                   // #define intel_reqd_sub_group_size(S)\n\
                   kernel void k(global int *x) { x[0] = 0x1F; }";
        let unscannable = format!("{src}\n}}");
        for text in [src, &unscannable] {
            let f = SourceFacts::read_on(text, ShuffleBackend::Khr, None).unwrap();
            assert!(
                f.defines("WG") && f.defines("__reqd_work_group_size__"),
                "{text}"
            );
            assert!(!f.defines("reqd_work_group_size"), "{text}");
            assert!(f.spells("reqd_work_group_size") && f.spells("cl_khr_subgroups"));
            assert!(f.mentions_sub_groups, "{text}");
            assert!(!f.spells("x1F"));
        }
        let f = SourceFacts::read_on(src, ShuffleBackend::Khr, None).unwrap();
        assert!(!f.defines("intel_reqd_sub_group_size") && !f.names_required_size);
        assert!(f.conditionals);
        let plain = "#define N 4\n// #if N\nkernel void k(global int *x) { x[0] = N; }";
        let f = SourceFacts::read_on(plain, ShuffleBackend::Khr, None).unwrap();
        assert!(!f.conditionals && f.defines("N"));
    }
}
