//! Collectives made divergent by what a call passes. A helper whose collective sits under a
//! condition on one of its parameters (`int f(int v) { if (v > 0) return
//! sub_group_reduce_add(v); return 0; }`) is divergent where a call passes that parameter a
//! value differing between work-items (`f(x[get_global_id(0)])`), and not where the value is
//! the same for all of them (`f(n)` of a kernel argument, `f(sub_group_reduce_max(v))`). So each
//! call of a function that uses collectives is looked at with the parameters it passes such
//! values tainted ([`Syntax::seeded`]), and through the helpers those pass them on to, as if
//! the helper were written into the call; the caller is refused, not the helper.
//!
//! The hoist, which may only make a kernel right where it was defined, reads each helper with
//! every parameter tainted that some call passes such a value ([`seeded_syntax`]): a
//! collective under a vote on one (`if (sub_group_any(v > 3)) return sub_group_reduce_add(v);`)
//! is moved ahead inside the helper, for every caller.

use super::divergence::{evaluated_calls, regions, regions_in, Region};
use super::source::{any_word, id_word, FunctionDef, Scanned, Span, Syntax, VaryingParams};
use crate::builtins;
use crate::obstacle::Obstacle;
use std::collections::{BTreeSet, HashMap};

/// How deep calls are followed (OpenCL C has no recursion; a guard against malformed input).
const CALL_DEPTH: usize = 16;

/// `f` as [`divergent_argument`] would see it from a call passing each of its parameters that
/// some call passes a value differing between work-items such a value; `None` where no call
/// does.
pub(super) fn seeded_syntax(s: &Scanned<'_>, f: &FunctionDef) -> Option<Syntax> {
    let [by_id, deep] = s
        .varying_params
        .get_or_init(|| varying_params(s))
        .get(&f.name)?;
    Some(s.syntax(f).seeded(s, by_id.clone(), deep.clone()))
}

/// Rounds over the functions, callers (mostly defined after their helpers) first, until no
/// call marks another parameter (each is marked at most once), at most [`CALL_DEPTH`] rounds
/// (a chain of helpers defined callers first takes a round per level; the parameters found so
/// far then seed the hoist, and every call is still checked by [`divergent_argument`]).
fn varying_params(s: &Scanned<'_>) -> VaryingParams {
    let mut out: VaryingParams = HashMap::new();
    for _ in 0..CALL_DEPTH {
        let mut marked = false;
        for f in s.functions.iter().rev() {
            let seeded = out
                .get(&f.name)
                .map(|[a, b]| s.syntax(f).seeded(s, a.clone(), b.clone()));
            let syntax = seeded.as_ref().unwrap_or_else(|| s.syntax(f));
            for i in evaluated_calls(s, f) {
                let reached = callees(s, i).into_iter();
                for (g, through) in reached.flat_map(|(c, t)| s.named(c).map(move |g| (g, t))) {
                    let (by_id, deep) = passed(s, i, g, syntax, through);
                    if deep.is_empty() {
                        continue;
                    }
                    let sets = out.entry(g.name.clone()).or_default();
                    for (set, names) in sets.iter_mut().zip([by_id, deep]) {
                        for name in names {
                            marked |= set.insert(name);
                        }
                    }
                }
            }
        }
        if !marked {
            return out;
        }
    }
    log::debug!("parameters differing between work-items: {CALL_DEPTH} rounds, not settled");
    out
}

/// The functions call `i` reaches: the one it names, or (a function-like macro) those its
/// replacement lists call, marked `true` (`#define APPLY(x) positive_sum(x)`).
fn callees<'s>(s: &'s Scanned<'_>, i: usize) -> Vec<(&'s str, bool)> {
    let mut out = vec![(s.text(i), false)];
    if s.is_fn_macro(s.text(i)) {
        for body in s.macros.get(s.text(i)).into_iter().flatten() {
            let word = |k: usize| &s.src[body[k].span.clone()];
            out.extend(
                (0..body.len().saturating_sub(1))
                    .filter(|&k| word(k + 1) == "(")
                    .map(|k| (word(k), true)),
            );
        }
    }
    out
}

/// The parameters of `g` that call `i` passes values differing between work-items under
/// `syntax`'s taint: by an id, and by an id or a load. Through a macro (`through`), every
/// parameter where any of the call's arguments differs (the macro may pass it anywhere).
fn passed(
    s: &Scanned<'_>,
    i: usize,
    g: &FunctionDef,
    syntax: &Syntax,
    through: bool,
) -> (BTreeSet<Box<str>>, BTreeSet<Box<str>>) {
    let (mut by_id, mut deep) = (BTreeSet::new(), BTreeSet::new());
    let names = s.param_names(g).unwrap_or_default();
    let args = s.arguments(i);
    if through {
        let id = args.iter().any(|&a| varies(s, a, &syntax.tainted, id_word));
        let loaded = id
            || args
                .iter()
                .any(|&a| varies(s, a, &syntax.deep_tainted, any_word));
        let all = || names.iter().map(|n| Box::from(n.as_str())).collect();
        let none = BTreeSet::new;
        return (
            if id { all() } else { none() },
            if loaded { all() } else { none() },
        );
    }
    for (&arg, name) in args.iter().zip(&names) {
        if varies(s, arg, &syntax.tainted, id_word) {
            by_id.insert(Box::from(name.as_str()));
        }
        if varies(s, arg, &syntax.deep_tainted, any_word) {
            deep.insert(Box::from(name.as_str()));
        }
    }
    deep.extend(by_id.iter().cloned());
    (by_id, deep)
}

/// The first call in `f` (with `syntax`'s taint) of a function using collectives (`uses`)
/// whose arguments make one of them divergent, and why.
pub(super) fn divergent_argument(
    s: &Scanned<'_>,
    f: &FunctionDef,
    syntax: &Syntax,
    uses: &dyn Fn(&str) -> bool,
    depth: usize,
) -> Option<Obstacle> {
    if depth >= CALL_DEPTH {
        log::debug!(
            "calls deeper than {CALL_DEPTH} in `{}`: not followed",
            f.name
        );
        return None;
    }
    for i in evaluated_calls(s, f).filter(|&i| uses(s.text(i))) {
        let reached =
            (callees(s, i).into_iter()).flat_map(|(c, t)| s.named(c).map(move |g| (g, t)));
        for (g, through) in reached {
            let (by_id, deep) = passed(s, i, g, syntax, through);
            if deep.is_empty() {
                continue;
            }
            let seeded = s.syntax(g).seeded(s, by_id.clone(), deep.clone());
            if let Some(why) = divergent_in(s, g, &seeded, uses, depth) {
                // The parameter named: the first (in order) whose value alone makes it so, for
                // the outermost call only (each search follows the calls again: once per
                // level would cost (parameters + 1) to the power of the depth).
                let names = s.param_names(g).unwrap_or_default();
                let tainted: Vec<_> = (names.into_iter())
                    .filter(|n| deep.contains(n.as_str()))
                    .collect();
                let alone = |p: &String| {
                    let only = |set: &BTreeSet<Box<str>>| {
                        set.iter().filter(|q| ***q == **p).cloned().collect()
                    };
                    let seeded = s.syntax(g).seeded(s, only(&by_id), only(&deep));
                    divergent_in(s, g, &seeded, uses, depth).map(|why| (p.clone(), why))
                };
                let first = tainted.first().cloned().unwrap_or_default();
                let search = depth == 0 && tainted.len() > 1;
                let found = search.then(|| tainted.iter().find_map(alone)).flatten();
                let (parameter, why) = found.unwrap_or((first, why));
                return Some(Obstacle::Passes {
                    function: g.name.clone(),
                    line: s.line(s.tokens[i].span.start),
                    parameter,
                    why: Box::new(why),
                });
            }
        }
    }
    None
}

/// The first collective of `g` under a region that `syntax`'s taint adds, or of a call it makes
/// with such arguments.
fn divergent_in(
    s: &Scanned<'_>,
    g: &FunctionDef,
    syntax: &Syntax,
    uses: &dyn Fn(&str) -> bool,
    depth: usize,
) -> Option<Obstacle> {
    // Only the regions the call's values make: a helper divergent by itself is refused as
    // such, and its callers with it (`divergence::divergent_users`).
    let own: Vec<_> = regions(s, g).iter().map(Region::site).collect();
    let regions = regions_in(s, g, syntax);
    for i in evaluated_calls(s, g).filter(|&i| uses(s.text(i))) {
        let under = |r: &&Region| r.span.0 <= i && i < r.span.1 && !own.contains(&r.site());
        if let Some(r) = regions.iter().find(under) {
            return Some(r.divergent(s, i, uses, None));
        }
    }
    divergent_argument(s, g, syntax, uses, depth + 1)
}

/// How a set of words is looked for in a range ([`id_word`], [`any_word`]).
type Mentions = fn(&Scanned<'_>, Span, &BTreeSet<Box<str>>) -> Option<usize>;

/// Whether argument `arg` mentions one of `words` outside the operands of calls whose result a
/// sub-group shares (`f(sub_group_reduce_add(x[i]))` passes every work-item the same value).
fn varies(s: &Scanned<'_>, arg: Span, words: &BTreeSet<Box<str>>, mentions: Mentions) -> bool {
    let (mut from, mut t) = (arg.0, arg.0);
    while t < arg.1 {
        if s.is_call(t) && builtins::uniform_in_sub_group(s.text(t)) {
            if mentions(s, (from, t), words).is_some() {
                return true;
            }
            t = s.partner(t + 1);
            from = t + 1;
        }
        t += 1;
    }
    mentions(s, (from, arg.1), words).is_some()
}
