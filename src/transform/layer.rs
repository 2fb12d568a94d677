//! Which functions use the sub-group layer, and the emulated backend's scratch threading.
//!
//! On the `emulated` backend every layer operation reads and writes a `__local ulong` scratch
//! that the launch passes as a hidden trailing kernel argument, `clg_sg_scratch`. The rule the
//! build applies, so that users never plumb it by hand:
//!
//! * a function *uses the layer* when its body has a word that [`is_layer_word`] accepts, uses a
//!   `#define`d macro whose replacement does (transitively), or calls a function of the same
//!   source that uses the layer (transitively);
//! * every such kernel gets the hidden parameter `__local ulong *clg_sg_scratch`;
//! * every such helper function gets it appended to its parameters (definition and prototypes),
//!   and every call to such a helper from a function of the source gets `clg_sg_scratch`
//!   appended to its arguments;
//! * a helper that already declares `CLG_SG_SCRATCH_PARAM` (or `_ONLY`) is left as written,
//!   with its calls: the macros remain for code that threads the scratch itself.
//!
//! Inside `#define` replacement lists ([`super::macro_scratch`]): calls to such helpers get
//! `clg_sg_scratch` too, and every kernel a macro writes gets the parameter when the source
//! uses the layer at all (the macro's arguments may bring the collectives); the driver's
//! argument info then tells the host which kernels take it. What the edits cannot reach is
//! reported ([`Threading`]): the build then declares a stand-in so that the program builds, and
//! the kernels without the parameter are refused.

use super::edit::Threading;
use super::source::Scanned;
use crate::builtins::{self, Flags};
use crate::device::ShuffleBackend;
use std::collections::{BTreeSet, HashMap};

/// Whether identifier `word` is a use of the layer (a whole word: `msg_len` is not): the
/// layer's `sg_*` operations and the `CLG_SG_SCRATCH*` plumbing macros ([`Flags::LAYER`]).
pub fn is_layer_word(word: &str) -> bool {
    builtins::flags(word).has(Flags::LAYER)
}

/// Whether identifier `word` is a sub-group *collective* (a shuffle, broadcast, reduction, scan,
/// vote or barrier), as opposed to a query such as `get_sub_group_local_id` or
/// `sg_get_local_range`. PoCL 6.0 aborts the process for collectives in work-groups of one
/// work-item (measured: every query runs there, every collective tried aborts).
pub fn is_sub_group_collective(word: &str) -> bool {
    builtins::is_sub_group_collective(word)
}

/// [`is_layer_word`], or a standard sub-group built-in: on the `emulated` and `nvidia-ptx`
/// backends the polyfill provides every built-in on the layer, so a function calling one uses
/// the layer (it needs the emulated scratch, and prefers whole warps on NVIDIA). Elsewhere built-ins are
/// the driver's own (or the layer's on `khr`, which needs neither), and only `sg_*` counts.
fn is_layer_or_builtin_word(word: &str) -> bool {
    builtins::flags(word).has(Flags::LAYER | Flags::POLYFILLED)
}

/// Whether `word` is a collective of the `emulated` backend (one that synchronises the
/// work-group): a layer collective, or a standard sub-group built-in the polyfill provides on it.
pub(crate) fn is_emulated_collective(word: &str) -> bool {
    is_layer_or_builtin_word(word) && is_sub_group_collective(word)
}

/// Names of the functions of `s` that use the layer on `backend`, transitively: standard
/// built-ins count on the backends where the polyfill provides them on the layer.
pub(crate) fn layer_users_on(s: &Scanned<'_>, backend: ShuffleBackend) -> BTreeSet<String> {
    use crate::device::ShuffleBackend::{Emulated, NvidiaPtx};
    match backend {
        // The scratch must reach every function that expands a macro calling a helper that
        // takes it; the other backends' decisions stay those of the direct uses.
        Emulated => users_and_macros(s, is_layer_or_builtin_word, true).0,
        NvidiaPtx => users(s, is_layer_or_builtin_word),
        _ => layer_users(s),
    }
}

/// Names of the functions (kernels included) of `s` that use the layer, transitively.
pub(crate) fn layer_users(s: &Scanned<'_>) -> BTreeSet<String> {
    users(s, is_layer_word)
}

/// Names of the functions (kernels included) of `s` whose body has a word accepted by `direct`,
/// uses a macro whose replacement has one, or calls such a function, transitively.
pub(crate) fn users(s: &Scanned<'_>, direct: fn(&str) -> bool) -> BTreeSet<String> {
    users_and_macros(s, direct, false).0
}

/// [`users`], and the macros whose replacement has a word accepted by `direct`, names such a
/// macro or calls such a function (`#define REDUCE(x) warp_sum(x)`), transitively: what the
/// divergence analysis checks.
pub(crate) fn users_through_calls(
    s: &Scanned<'_>,
    direct: fn(&str) -> bool,
) -> (BTreeSet<String>, BTreeSet<String>) {
    users_and_macros(s, direct, true)
}

/// [`users`] and [`users_through_calls`]: one graph of who names whom (a function's body naming a
/// macro or calling a function, a macro's replacement naming a macro or, with
/// `through_calls`, calling a function), walked back from the direct users (a pass per level
/// of calls took time quadratic in the length of a chain of helpers).
fn users_and_macros(
    s: &Scanned<'_>,
    direct: fn(&str) -> bool,
    through_calls: bool,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut by: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut hits = Vec::new();
    for (name, bodies) in &s.macros {
        let mut hit = false;
        for body in bodies {
            for (i, t) in body.iter().enumerate() {
                let w = &s.src[t.span.clone()];
                hit = hit || direct(w);
                // Other macros by name, functions where the replacement calls them.
                let call = through_calls
                    && body
                        .get(i + 1)
                        .is_some_and(|n| &s.src[n.span.clone()] == "(");
                if call || s.macros.contains_key(w) {
                    by.entry(w).or_default().push(name);
                }
            }
        }
        if hit {
            hits.push(name.as_str());
        }
    }
    for f in &s.functions {
        let mut hit = false;
        for i in f.body.0 + 1..f.body.1 {
            let w = s.text(i);
            hit = hit || direct(w);
            if s.is_call(i) || s.macros.contains_key(w) {
                by.entry(w).or_default().push(&f.name);
            }
        }
        if hit {
            hits.push(f.name.as_str());
        }
    }
    let all = reach(hits, &by);
    let functions = (s.functions.iter())
        .filter(|f| all.contains(&f.name))
        .map(|f| f.name.clone())
        .collect();
    let macros = (all.iter())
        .filter(|n| s.macros.contains_key(n.as_str()))
        .cloned()
        .collect();
    (functions, macros)
}

/// `start` and every name that reaches one of them through `by` (name -> names that use it).
fn reach<'a>(start: Vec<&'a str>, by: &HashMap<&'a str, Vec<&'a str>>) -> BTreeSet<String> {
    let mut users: BTreeSet<String> = start.iter().map(|n| n.to_string()).collect();
    let mut todo = start;
    while let Some(name) = todo.pop() {
        for &user in by.get(name).into_iter().flatten() {
            if users.insert(user.to_string()) {
                todo.push(user);
            }
        }
    }
    users
}

/// The edits that thread `clg_sg_scratch` through the helper functions in `users` (see the
/// module docs); kernels the scanner read get their parameter elsewhere.
#[cfg(test)]
pub(crate) fn scratch_edits(
    s: &Scanned<'_>,
    users: &BTreeSet<String>,
) -> Vec<(usize, usize, String)> {
    scratch_threading(s, users).edits
}

/// [`scratch_edits`], and the same inside `#define` replacement lists: calls to threaded
/// helpers get the scratch, and every kernel a macro writes gets the parameter where the
/// source uses the layer (the driver's argument info then tells the host which kernels take
/// it: the macro's arguments may bring the collectives; see [`super::macro_scratch`]).
pub(crate) fn scratch_threading(s: &Scanned<'_>, users: &BTreeSet<String>) -> Threading {
    const PARAM: &str = "__local ulong *clg_sg_scratch";
    // Functions whose header is a function-like macro's call are made by that macro: their
    // parameters are the macro's (edited in its replacement list), their name unknown.
    let threaded: BTreeSet<&str> = s
        .functions
        .iter()
        .filter(|f| !f.is_kernel && users.contains(&f.name) && !s.is_fn_macro(&f.name))
        .filter(|f| {
            let (open, close) = (f.open_paren, s.partner(f.open_paren));
            !(open + 1..close).any(|i| s.text(i).starts_with("CLG_SG_SCRATCH"))
        })
        .map(|f| f.name.as_str())
        .collect();
    let used = (0..s.tokens.len()).any(|i| is_layer_or_builtin_word(s.text(i)))
        || (s.macros.values().flatten().flatten())
            .any(|t| is_layer_or_builtin_word(&s.src[t.span.clone()]));
    if threaded.is_empty() && !used {
        return Threading::default();
    }
    log::debug!("emulated sub-group scratch threaded through helpers {threaded:?}");
    let layer_macros = users_and_macros(s, is_layer_or_builtin_word, true).1;
    let mut out = super::macro_scratch::edits(s, &threaded, &layer_macros, users, used);
    // Calls sit inside braces (function bodies, and bodies whose header a macro writes);
    // definitions and prototypes outside them.
    let mut depth = 0usize;
    for i in 0..s.tokens.len() {
        match s.text(i) {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        if !threaded.contains(s.text(i)) || !s.is_call(i) {
            continue;
        }
        let (open, close) = (i + 1, s.partner(i + 1));
        let empty = close == open + 1 || (close == open + 2 && s.text(open + 1) == "void");
        let at = s.tokens[close].span.start;
        out.edits.push(if depth > 0 {
            // A call: the kernel's or helper's own `clg_sg_scratch` goes last.
            let sep = if close == open + 1 { "" } else { ", " };
            (at, at, format!("{sep}clg_sg_scratch"))
        } else if empty {
            // A definition or prototype with `()` or `(void)`.
            (s.tokens[open].span.end, at, PARAM.to_string())
        } else {
            (at, at, format!(", {PARAM}"))
        });
    }
    out
}

#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn example_is_layer_word() {
        use is_layer_word;
        assert!(is_layer_word("sg_reduce_add"));
        assert!(!is_layer_word("msg_len"));
    }

    #[test]
    fn example_is_sub_group_collective() {
        use is_sub_group_collective;
        assert!(
            is_sub_group_collective("sg_reduce_add")
                && is_sub_group_collective("sub_group_broadcast")
        );
        assert!(
            !is_sub_group_collective("get_sub_group_size")
                && !is_sub_group_collective("sg_get_local_id")
        );
    }
}
