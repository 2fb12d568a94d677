//! Collectives under conditions, made reachable by the whole work-group where collectives are
//! work-group barriers (the emulated backend, PoCL's native CPU sub-groups).
//!
//! OpenCL requires only that every work-item of a *sub-group* reaches a collective: a kernel may
//! call one behind a condition that is uniform in each sub-group (`if (sub_group_any(v > 0) &&
//! sub_group_reduce_add(v) > t)`, `if (sub_group_all(p)) { s = sub_group_reduce_add(v); }`).
//! Where the collective is a work-group barrier, every work-item of the *work-group* must reach
//! it, so before [`super::divergence`] decides, the build rewrites such calls when the rewrite
//! keeps the meaning of every valid kernel:
//!
//! * `L && R` / `L || R` whose right operand `R` holds the collective and is free of side effects
//!   and safe to evaluate anywhere ([`pure`]: no loads, stores, divisions, increments or calls
//!   other than collectives and known built-ins), and `L` writes nothing: `(((L) != 0) & ((R) !=
//!   0))` (`|`): both sides are evaluated by every work-item; where `L` is uniform in the
//!   sub-group (as the specification requires of the original), each sub-group that evaluated
//!   `R` before computes the same value now, and the others discard it;
//! * a collective call (pure, not a barrier) under an `if` or a conditional expression: computed
//!   into a temporary (`__typeof__(call) __clg_uN = call;`) in front of the statement holding the
//!   condition (or the `switch` on such a value), where none of its variables is written or
//!   declared between that point and the call, and no loop or other `switch` lies between them.
//!
//! The `non_uniform` built-ins, defined over the work-items that reach them, are masked instead
//! ([`super::nu_mask`]), and so are the other collectives under conditions only on values
//! loaded at an id (`if (x[g] > 0) s = sg_reduce_add(v);`): reductions, scans and votes over
//! the work-items the conditions take, the rest computed ahead as they are. A loop whose trip
//! count is uniform in each sub-group but not in the work-group (a collective in its condition,
//! a `break` under one; loads at an index not included) runs in lockstep
//! ([`super::lockstep`]), its body under a flag, where the rules above move its collectives.
//! A helper function that calls collectives and that any work-item may call (no condition, no
//! pointer, load or store outside itself: [`super::statement::pure_helper`]) moves like a
//! collective. Nothing else moves: collectives in loops whose trip count a work-item's own
//! value decides, after a `return` or `continue` under such a condition, or with an operand
//! that reads memory stay as written, and [`super::divergence`] refuses them, naming the
//! reason ([`NoRewrite`]).

use super::divergence::{self, Region};
use super::edit::Edits;
use super::sg_uniform::Uniformity;
use super::source::{assigns, FunctionDef, Scanned};
use super::statement::{
    increments, place, pure, pure_helper, replaced_by, statement_start, tokens_text, unwritten,
};
use crate::builtins::{self, Flags};
use crate::obstacle::NoRewrite;

/// `src` with the collectives that [`super::divergence`] would refuse moved where the whole
/// work-group reaches them, wherever that keeps the meaning ([`uniform_collectives`]'s rules
/// in the module's documentation). `collective` tells the collectives. No line is added.
/// A build runs these steps through [`super::pipeline::read`], which scans each text once.
#[cfg(test)]
pub(crate) fn uniform_collectives(src: &str, collective: fn(&str) -> bool) -> String {
    let (mut text, mut n) = (src.to_string(), 0);
    while let Ok(s) = Scanned::new(&text) {
        let Some((next, moved)) = next_text(&s, collective, n) else {
            break;
        };
        (text, n) = (next, n + moved);
    }
    text
}

/// How many collectives [`uniform_collectives`] moves at most.
pub(crate) const MAX_FIXES: usize = 256;

/// One round of [`uniform_collectives`] over one scan: the scanned text with, in every
/// function, its first collective under a divergent condition that can be moved moved (each
/// function's moves are its own: one function's edits change nothing another's analysis reads),
/// numbered from `n` (moves so far, at most [`MAX_FIXES`] in all), and how many moved; `None`
/// where none can. A round per move a function needs, not per move in the source.
pub(crate) fn next_text(
    s: &Scanned<'_>,
    collective: fn(&str) -> bool,
    n: usize,
) -> Option<(String, usize)> {
    let mut edits = Edits::new();
    let (mut moved, mut done_to) = (0, 0);
    for f in &s.functions {
        let span = s.tokens[f.body.0].span.start..s.tokens[f.body.1].span.end;
        if n + moved >= MAX_FIXES || span.start < done_to {
            continue;
        }
        if let Some(fix) = first_fix(s, f, collective, n + moved) {
            log::debug!("collective under a divergent condition rewritten: {fix:?}");
            if fix.iter().all(|e| span.start <= e.0 && e.1 <= span.end) {
                (moved, done_to) = (moved + 1, span.end);
                edits.extend(fix);
            }
        }
    }
    (moved > 0).then(|| (super::edit::apply_edits(s.src, edits), moved))
}

/// The edits of the first collective of `f` under a divergent region that can be rewritten.
fn first_fix(
    s: &Scanned<'_>,
    f: &FunctionDef,
    collective: fn(&str) -> bool,
    n: usize,
) -> Option<Edits> {
    // A helper as its callers' values make it (`passed::seeded_syntax`).
    let seeded = super::passed::seeded_syntax(s, f);
    let syntax = seeded.as_ref().unwrap_or_else(|| s.syntax(f));
    let regions = divergence::regions_in(s, f, syntax);
    let u = Uniformity::seeded(s, f, syntax, &regions);
    // Helpers that call collectives, every work-item may call (`statement::pure_helper`):
    // moved like a collective.
    divergence::evaluated_calls(s, f)
        .filter(|&i| collective(s.text(i)) || pure_helper(s, s.text(i)) == Some(true))
        .find_map(|i| fix(s, f, (&regions, &u), i, n).ok().flatten())
}

/// Why the collective call at token `i` of `f`, under a region of `regions`, stays as
/// written; `None` when it is under none.
pub(crate) fn obstacle(
    s: &Scanned<'_>,
    f: &FunctionDef,
    regions: &[Region],
    i: usize,
) -> Option<NoRewrite> {
    let u = Uniformity::new(s, f, regions);
    fix(s, f, (regions, &u), i, 0).err()
}

/// The edits that move the call at token `i` out of its innermost divergent region (`None`
/// where it is under none), or why none do.
fn fix(
    s: &Scanned<'_>,
    f: &FunctionDef,
    (regions, u): (&[Region], &Uniformity<'_>),
    i: usize,
    n: usize,
) -> Result<Option<Edits>, NoRewrite> {
    let Some(r) = regions
        .iter()
        .filter(|r| r.span.0 <= i && i < r.span.1)
        .max_by_key(|r| r.span.0)
    else {
        return Ok(None);
    };
    // An operand across a preprocessor line stays: moved, its text would join that line to code.
    if let Some(t) = (s.text(i + 1) == "(")
        .then(|| (i + 2..s.partner(i + 1)).find(|&t| s.text(t).starts_with('#')))
        .flatten()
    {
        return Err(NoRewrite::Unsafe {
            token: s.text(t).to_string(),
            line: None,
        });
    }
    // A loop that the region makes divergent (the call is then under an `if` of the next
    // round); after a `break` (or `return`) under the condition, the loop from its keyword on;
    // after a `continue`, the rest of its loop's body: run in lockstep by the work-group, where
    // flags stop the work-item's loop or iteration instead (or says why not: a `return`). The
    // outermost such loop around the call first: its flag starts the inner loops' flags.
    let lockstep =
        |r: &Region| match r.loop_header || matches!(s.text(r.key), "for" | "while" | "do") {
            true => Some(r.key),
            false => r.exited,
        };
    // Behind `?:` in a loop's condition, or `&&` / `||` in a `for`'s: the loop's lockstep
    // decides (`lockstep::rewrite` refuses it), not the chain's rewrite.
    let header = |h: &Region| h.loop_header && h.span.0 <= i && i < h.span.1;
    let guarded = regions.iter().find(|h| header(h)).is_some_and(|h| {
        s.text(r.key) == "?" || matches!(s.text(r.key), "&" | "|") && s.text(h.key) == "for"
    });
    if lockstep(r).is_some() || guarded {
        let outermost = (regions.iter())
            .filter(|r| r.span.0 <= i && i < r.span.1)
            .filter_map(lockstep)
            .min();
        if let Some(key) = outermost {
            return super::lockstep::rewrite(s, f, regions, key, n).map(Some);
        }
    }
    if let Some(key) = (s.text(r.key) == "if")
        .then(|| super::lockstep::guarded_loop(s, f, r.key, i))
        .flatten()
    {
        return super::lockstep::rewrite(s, f, regions, key, n).map(Some);
    }
    if super::nu_mask::is_non_uniform(s.text(i)) {
        return super::nu_mask::masked(s, f, regions, i, n).map(Some);
    }
    // Only conditions on values loaded at an id: masked (reductions, scans, votes) or computed
    // ahead as they are; never left where part of a work-group may skip it.
    let around = regions.iter().filter(|r| r.span.0 <= i && i < r.span.1);
    let data = around.clone().all(|r| r.data);
    if data {
        match super::nu_mask::masked(s, f, regions, i, n) {
            // A conditional expression or `&&` / `||`: computed ahead as it is, below.
            Err(NoRewrite::NonUniform) => {}
            done => return done.map(Some),
        }
    }
    if r.after_exit {
        return Err(NoRewrite::AfterExit);
    }
    // A `cl_khr_subgroups` collective must be reached by every work-item of its sub-group
    // (else the program is undefined): behind `&&`, `||` or `?:` it is computed ahead whatever
    // the condition, since wherever the original is defined that is the value it had.
    let chain = matches!(s.text(r.key), "&" | "|" | "?") && must_be_reached(s.text(i));
    if let Some(t) = u.first_divergent(s, r.cond).filter(|_| !data && !chain) {
        return Err(NoRewrite::NotUniform(s.text(t).to_string()));
    }
    let key = r.key;
    match s.text(key) {
        "&" | "|" => match and_or(s, f, key, i) {
            Ok(edits) => Ok(Some(edits)),
            Err(_) => hoist(s, f, statement_start(s, f, key)?, i, n).map(Some),
        },
        "?" => hoist(s, f, statement_start(s, f, key)?, i, n).map(Some),
        // A `switch` on a value uniform in each sub-group: an `if` chain.
        "if" | "switch" => hoist(s, f, key, i, n).map(Some),
        _ => Err(NoRewrite::Loop),
    }
}

/// Whether `word` is a `cl_khr_subgroups` collective that every work-item of the sub-group must
/// reach: a reduction, scan, broadcast or vote (not the `non_uniform` or clustered ones, not
/// a barrier).
fn must_be_reached(word: &str) -> bool {
    builtins::flags(word).has(Flags::MUST_REACH)
}

/// `L && R` (or `||`) at token `k` rewritten as `(((L) != 0) & ((R) != 0))` when `R` holds
/// call `i`, is [`pure`] and `L` writes nothing.
fn and_or(s: &Scanned<'_>, f: &FunctionDef, k: usize, i: usize) -> Result<Edits, NoRewrite> {
    let op = s.text(k);
    let operands = s
        .syntax(f)
        .conditionals(k..k + 1)
        .first()
        .and_then(|c| c.operands);
    let Some(((a, _), (_, b))) = operands.filter(|(_, r)| r.0 <= i && i < r.1) else {
        return Err(NoRewrite::Statement);
    };
    let collective: fn(&str) -> bool = super::layer::is_sub_group_collective;
    pure(s, (k + 2, b), collective)?;
    if let Some(t) = (a..k).find(|&t| assigns(s, t) || increments(s, t)) {
        return Err(NoRewrite::Written(s.text(t).to_string()));
    }
    let span = |x: usize, y: usize| &s.src[s.tokens[x].span.start..s.tokens[y - 1].span.end];
    let text = format!("(({}) != 0) {op} (({}) != 0)", span(a, k), span(k + 2, b));
    Ok(vec![replaced_by(s, (a, b), format!("({text})"))])
}

/// The edits computing call `i` into `__clg_uN` in front of statement `start`.
fn hoist(
    s: &Scanned<'_>,
    f: &FunctionDef,
    start: usize,
    i: usize,
    n: usize,
) -> Result<Edits, NoRewrite> {
    let name = s.text(i);
    if builtins::flags(name).has(Flags::BARRIER) {
        return Err(NoRewrite::Barrier);
    }
    let close = s.partner(i + 1);
    pure(s, (i + 2, close), super::layer::is_sub_group_collective)?;
    // No loop or switch between the statement (a `switch` itself) and the call.
    let around = |(a, b): (usize, usize)| a <= i && i < b;
    let loops = (s.syntax(f).constructs(start..i))
        .filter(|c| matches!(s.text(c.key), "for" | "while" | "do" | "switch") && c.key != start);
    if loops.into_iter().any(|c| around(c.cond) || around(c.body)) {
        return Err(NoRewrite::Loop);
    }
    unwritten(s, f, start, i, &[(i + 2, close)])?;
    let call = tokens_text(s, i, close + 1);
    Ok(place(s, f, start, (i, close), (&call, &call, ""), n))
}

#[cfg(test)]
#[path = "hoist_tests.rs"]
mod tests;
