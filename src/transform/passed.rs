//! Collectives made divergent by what a call passes. A helper whose collective sits under a
//! condition on one of its parameters (`int f(int v) { if (v > 0) return
//! sub_group_reduce_add(v); return 0; }`) is divergent where a call passes that parameter a
//! value differing between work-items (`f(x[get_global_id(0)])`), and not where the value is
//! the same for all of them (`f(n)` of a kernel argument, `f(sub_group_reduce_max(v))`). So each
//! call of a function that uses collectives is looked at with the parameters it passes such
//! values tainted ([`Syntax::seeded`]), and through the helpers those pass them on to, as if
//! the helper were written into the call; the caller is refused, not the helper.

use super::divergence::{evaluated_calls, regions, regions_in, Region};
use super::source::{any_word, id_word, FunctionDef, Scanned, Span, Syntax};
use crate::builtins;
use crate::obstacle::Obstacle;
use std::collections::BTreeSet;

/// How deep calls are followed (OpenCL C has no recursion; a guard against malformed input).
const CALL_DEPTH: usize = 16;

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
        let args = s.arguments(i);
        for g in s.functions.iter().filter(|g| g.name == s.text(i)) {
            let Some(names) = s.param_names(g) else {
                continue;
            };
            let (mut by_id, mut deep) = (BTreeSet::new(), BTreeSet::new());
            for (&arg, name) in args.iter().zip(&names) {
                if varies(s, arg, &syntax.tainted, id_word) {
                    by_id.insert(Box::from(name.as_str()));
                }
                if varies(s, arg, &syntax.deep_tainted, any_word) {
                    deep.insert(Box::from(name.as_str()));
                }
            }
            deep.extend(by_id.iter().cloned());
            if deep.is_empty() {
                continue;
            }
            let seeded = s.syntax(g).seeded(s, by_id, deep);
            if let Some(why) = divergent_in(s, g, &seeded, uses, depth) {
                let parameter = (names.iter())
                    .find(|n| seeded.deep_tainted.contains(n.as_str()))
                    .cloned()
                    .unwrap_or_default();
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
            return Some(r.divergent(s, i, None));
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
