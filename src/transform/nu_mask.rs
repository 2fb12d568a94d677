//! `non_uniform` built-ins (`cl_khr_subgroup_non_uniform_vote`, `_non_uniform_arithmetic`,
//! `_clustered_reduce`) under work-item-dependent `if`s and `&&` / `||` / `?:` chains, where
//! collectives are work-group barriers: computed by every work-item ahead of the outermost `if`
//! around the call (or of its statement), the work-items its conditions exclude contributing the
//! operation's identity. The other collectives under conditions only on values loaded at an id
//! the same way ([`super::hoist`] sends them here).
//!
//! The built-ins are defined over the sub-group's *active* work-items: those that reach the
//! call. Where that set is exactly the work-items for which the enclosing conditions hold (`M`,
//! the conditions conjoined: an `if`'s, negated in its `else` branch; `A` of `A && B`, `!A` of
//! `A || B`, by C's precedence; `c` of `c ? a : b` in `a`, `!c` in `b`), the same value is
//! computed by every work-item:
//!
//! * a reduction or scan of `v`: the same built-in over `M ? v : I`, `I` the operation's
//!   identity of `v`'s type (`add` `-0`, `mul` `1`, `and` `~0`, `or`/`xor` `0`, the logical ones
//!   `1`/`0`/`0`, `min`/`max` the type's largest/smallest value or `±INFINITY`); an inactive
//!   lane's `I` leaves every fold over the active lanes as it was, so an active lane's inclusive
//!   (exclusive) scan is its prefix over the active lanes at or below (below) it, and the first
//!   active lane's exclusive scan is `I`, as the built-in defines;
//! * `any(p)`: `any(M & p)`; `all(p)`: `all(!M | p)`; `elect()`: no active lane below
//!   (`sub_group_scan_exclusive_add(M ? 1u : 0u) == 0u`); `all_equal(x)`: every active `x`
//!   equals the first active lane's (its `x` summed with the others' `-0`).
//!
//! The rewrite needs: every enclosing construct between the call and the body of its innermost
//! loop (or the function's) an `if` or a chain (a loop that work-items leave at different
//! iterations, a `switch`, or an earlier exit under such a condition change who reaches the call
//! in ways `M` does not tell), the conditions and the operand free of side effects and safe to
//! evaluate everywhere ([`super::hoist::pure`], no collective in the operand; the outermost
//! `if`'s condition may load: it is then evaluated once, into a temporary), and their variables
//! not written between the outermost `if` and the call. Else the call is refused, naming why
//! ([`NoRewrite`]).

use super::divergence::Region;
use super::edit::Edits;
use super::source::{statement_end, FunctionDef, Scanned};
use super::statement::{pure, tokens_text, unwritten};
use crate::builtins::{self, Flags};
use crate::obstacle::NoRewrite;

/// Whether `word` is a built-in defined over the active work-items: these are masked here (or
/// refused, naming why), never moved as they are.
pub(super) fn is_non_uniform(word: &str) -> bool {
    builtins::flags(word).has(Flags::NON_UNIFORM)
}

/// The operation's identity for values like `v` (its text), where it has one.
fn identity(op: &str, v: &str) -> Option<String> {
    let t = format!("__typeof__({v})");
    // The type's largest (smallest) value: `±INFINITY` for floating types, else from the
    // type's size and signedness; each branch converted to the type, the unused ones never
    // evaluated. (A `_Generic` over the integer types gave an `int`'s inactive lanes their own
    // value on NVIDIA's OpenCL: a masked `max` there was the unmasked one.)
    let bound = |max: bool| {
        let bits = format!("(1UL << (8 * sizeof({t}) - 1))");
        let (inf, signed, unsigned) = match max {
            true => (
                "INFINITY",
                format!("({t})({bits} - 1UL)"),
                format!("({t})-1"),
            ),
            false => (
                "-INFINITY",
                format!("({t})(0UL - {bits})"),
                format!("({t})0"),
            ),
        };
        format!("(({t})0.5 != ({t})0 ? ({t}){inf} : ({t})-1 < ({t})0 ? {signed} : {unsigned})")
    };
    Some(match op {
        "add" => format!("-({t})0"),
        "mul" => format!("({t})1"),
        "and" => format!("~({t})0"),
        "or" | "xor" => format!("({t})0"),
        "logical_and" => "1".into(),
        "logical_or" | "logical_xor" => "0".into(),
        "min" => bound(true),
        "max" => bound(false),
        _ => return None,
    })
}

/// The call `name(args)` computed by every work-item, `mask` telling the active ones; `None`
/// for a built-in without such a form (ballots, broadcasts, shuffles, rotations).
fn masked_call(name: &str, args: &[String], mask: &str) -> Option<String> {
    let first_active = format!("(sub_group_scan_exclusive_add(({mask}) ? 1u : 0u) == 0u)");
    let one = |a: &[String]| (a.len() == 1).then(|| a[0].clone());
    match name {
        "sub_group_elect" if args.is_empty() => return Some(first_active),
        "sub_group_non_uniform_any" => {
            let p = one(args)?;
            return Some(format!("{name}(({mask}) & (({p}) != 0))"));
        }
        "sub_group_non_uniform_all" => {
            let p = one(args)?;
            return Some(format!("{name}((({mask}) == 0) | (({p}) != 0))"));
        }
        "sub_group_non_uniform_all_equal" => {
            let x = one(args)?;
            let first = format!(
                "sub_group_non_uniform_reduce_add((__typeof__({x}))((({mask}) & {first_active}) \
                 ? ({x}) : -(__typeof__({x}))0))"
            );
            return Some(format!(
                "sub_group_non_uniform_all((({mask}) == 0) | (({x}) == {first}))"
            ));
        }
        _ => {}
    }
    let op = [
        "sub_group_non_uniform_reduce_",
        "sub_group_non_uniform_scan_inclusive_",
        "sub_group_non_uniform_scan_exclusive_",
        "sub_group_clustered_reduce_",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))?;
    let clustered = builtins::flags(name).has(Flags::CLUSTERED);
    if args.len() != 1 + usize::from(clustered) {
        return None;
    }
    let v = &args[0];
    let id = identity(op, v)?;
    let rest: String = args[1..].iter().map(|a| format!(", {a}")).collect();
    Some(format!(
        "{name}((__typeof__({v}))(({mask}) ? ({v}) : {id}){rest})"
    ))
}

/// A collective every work-item of the sub-group must reach (the layer's, the standard ones) as
/// [`masked_call`] computes the `non_uniform` ones: over the work-items `mask` tells, the others
/// contributing the identity; `None` for those without such a form (broadcasts, shuffles).
/// Where every work-item of the sub-group reaches the call (the original's rule) `mask` holds
/// for all of them and the value is the original's; where some skip it, the value is the
/// operation over those that reach it, never a hang.
fn masked_uniform_call(name: &str, args: &[String], mask: &str) -> Option<String> {
    let [v] = args else { return None };
    match name {
        "sg_any" | "sub_group_any" => return Some(format!("{name}(({mask}) & (({v}) != 0))")),
        "sg_all" | "sub_group_all" => {
            return Some(format!("{name}((({mask}) == 0) | (({v}) != 0))"))
        }
        _ => {}
    }
    let op = [
        "sg_reduce_",
        "sub_group_reduce_",
        "sub_group_scan_inclusive_",
        "sub_group_scan_exclusive_",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))
    .or_else(|| matches!(name, "sg_inclusive_scan_add" | "sg_exclusive_scan_add").then_some("add"))
    .filter(|op| matches!(*op, "add" | "min" | "max"))?;
    let id = identity(op, v)?;
    Some(format!(
        "{name}((__typeof__({v}))(({mask}) ? ({v}) : {id}))"
    ))
}

/// The `:` of the conditional expression whose `?` is token `k` and whose sides are `side`.
fn else_of(s: &Scanned<'_>, k: usize, side: (usize, usize)) -> Option<usize> {
    let mut depth = 0usize;
    let mut t = k + 1;
    while t < side.1 {
        match s.text(t) {
            "(" | "[" | "{" => t = s.partner(t),
            "?" => depth += 1,
            ":" if depth == 0 => return Some(t),
            ":" => depth -= 1,
            _ => {}
        }
        t += 1;
    }
    None
}

/// The edits that compute the `non_uniform` built-in called at token `i` of `f` ahead of the
/// outermost `if` around it (or of its statement), masked by the conditions of the `if`s, the
/// conditional expressions and the `&&` / `||` around it; or why not. Other
/// collectives, under conditions only on values loaded at an id ([`super::hoist`]), the same
/// way ([`masked_uniform_call`]), or computed ahead as they are where they have no masked form.
/// The outermost `if`'s condition, where it is not safe to evaluate twice (a load:
/// `if (x[g] > 0)`), is evaluated once, into a temporary, where it was, and the `if` tests the
/// temporary.
pub(super) fn masked(
    s: &Scanned<'_>,
    f: &FunctionDef,
    regions: &[Region],
    i: usize,
    n: usize,
) -> Result<Edits, NoRewrite> {
    let syntax = s.syntax(f);
    // The `if`s around the call inside its innermost loop or switch, outermost first: their
    // keyword, condition and whether the call is in the branch the condition takes.
    let mut ifs: Vec<(usize, (usize, usize), bool)> = Vec::new();
    for c in syntax.constructs(f.body.0 + 1..i) {
        let (k, cond, body) = (c.key, c.cond, c.body);
        if !(k <= i && i < c.end) {
            continue;
        }
        match s.text(k) {
            "if" if body.0 <= i => {
                let then_end = statement_end(s, body.0, f.body.1);
                ifs.push((k, cond, i < then_end));
            }
            "if" => {}
            _ => ifs.clear(),
        }
    }
    for r in regions.iter().filter(|r| r.span.0 <= i && i < r.span.1) {
        if r.loop_header {
            return Err(NoRewrite::LoopCondition);
        }
        if r.after_exit {
            return Err(NoRewrite::AfterExit);
        }
        if !ifs.iter().any(|&(k, ..)| k == r.key) && !matches!(s.text(r.key), "?" | "&" | "|") {
            // An `if` outside a loop or switch around the call.
            return Err(NoRewrite::Loop);
        }
    }
    // Where no `if` is around it, the statement of the conditional expressions around it.
    let start = match ifs.first() {
        Some(&(k, ..)) => k,
        None => {
            let keys = regions.iter().filter(|r| r.span.0 <= i && i < r.span.1);
            let first = keys.map(|r| r.key).min().ok_or(NoRewrite::NonUniform)?;
            super::statement::statement_start(s, f, first)?
        }
    };
    // The conditional expressions and `&&` / `||` around the call after that point: their
    // conditions and whether the call is on the side their condition takes (`L && R`: `L`
    // true; `L || R`: `L` false; `c ? a : b`: `c` true in `a`, false in `b`).
    let mut chains: Vec<((usize, usize), bool)> = Vec::new();
    for c in syntax.conditionals(start..i).iter().filter(|c| c.chain) {
        let (k, cond, side) = (c.key, c.cond, c.body);
        // `&&` and `||` by precedence.
        let (cond, side) = match s.text(k) {
            "?" => (cond, side),
            _ => c.operands.ok_or(NoRewrite::Statement)?,
        };
        if !(side.0 <= i && i < side.1) {
            continue;
        }
        let taken = match s.text(k) {
            "&" => true,
            "|" => false,
            _ => i < else_of(s, k, side).ok_or(NoRewrite::Statement)?,
        };
        chains.push((cond, taken));
    }
    let close = s.partner(i + 1);
    let collective = super::layer::is_sub_group_collective;
    let operand = (i + 2, close);
    pure(s, operand, collective)?;
    if let Some(t) = (operand.0..operand.1).find(|&t| s.is_call(t) && collective(s.text(t))) {
        return Err(super::statement::unsafe_at(s, t, s.text(t)));
    }
    let mut read = vec![operand];
    // The outermost condition, captured where it is not pure: (its tokens, the temporary).
    let mut captured: Option<((usize, usize), String)> = None;
    for (nth, &(_, cond, _)) in ifs.iter().enumerate() {
        match pure(s, cond, collective) {
            Ok(()) => read.push(cond),
            Err(NoRewrite::Unsafe { .. }) if nth == 0 => {
                captured = Some((cond, super::statement::temporary(s, 'c', n)));
            }
            Err(e) => return Err(e),
        }
    }
    for &(cond, _) in &chains {
        pure(s, cond, collective)?;
        read.push(cond);
    }
    unwritten(s, f, start, i, &read)?;
    let conds = ifs.iter().map(|&(_, c, taken)| (c, taken));
    let mask: Vec<String> = (conds.chain(chains.iter().copied()))
        .map(|(c, taken)| {
            let op = if taken { "!=" } else { "==" };
            let cond = match &captured {
                Some((at, temp)) if *at == c => temp.clone(),
                _ => tokens_text(s, c.0, c.1),
            };
            format!("(({cond}) {op} 0)")
        })
        .collect();
    let mask = mask.join(" & ");
    // The arguments, split at the top-level commas.
    let mut args = Vec::new();
    let mut a = operand.0;
    let mut t = operand.0;
    while t <= operand.1 {
        if t == operand.1 || s.text(t) == "," {
            if t > a {
                args.push(tokens_text(s, a, t));
            }
            a = t + 1;
        } else if matches!(s.text(t), "(" | "[") {
            t = s.partner(t);
        }
        t += 1;
    }
    let name = s.text(i);
    let typed = tokens_text(s, i, close + 1);
    if mask.is_empty() {
        return Err(NoRewrite::NonUniform);
    }
    let value = match is_non_uniform(name) {
        true => masked_call(name, &args, &mask).ok_or(NoRewrite::NonUniform)?,
        false if builtins::flags(name).has(Flags::BARRIER) => return Err(NoRewrite::Barrier),
        // A broadcast or shuffle: the original's value wherever the original is defined.
        false => masked_uniform_call(name, &args, &mask).unwrap_or_else(|| typed.clone()),
    };
    log::debug!(
        "`{name}` at line {}: computed by every work-item ({value})",
        s.line(s.tokens[i].span.start)
    );
    let before = match &captured {
        Some((_, temp)) => format!(
            "int {temp} = (({}) != 0); ",
            tokens_text(s, start + 2, s.partner(start + 1))
        ),
        None => String::new(),
    };
    let mut edits = super::statement::place(s, f, start, (i, close), (&typed, &value, &before), n);
    if let Some((c, temp)) = captured {
        edits.push(super::statement::replaced_by(s, c, temp));
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use crate::transform::divergence::divergent_users;
    use crate::transform::hoist::uniform_collectives;
    use crate::transform::layer::is_sub_group_collective;
    use crate::transform::source::Scanned;

    fn rewrite(body: &str) -> (String, Vec<String>) {
        let src = format!(
            "kernel void k(global const int *x, global int *o, uint mode) {{\n\
             uint lane = get_sub_group_local_id(); int v = x[get_global_id(0)]; int r = -7;\n\
             {body}\no[get_global_id(0)] = r; }}"
        );
        let out = uniform_collectives(&src, is_sub_group_collective);
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
        let s = Scanned::new(&out).unwrap();
        let refused = divergent_users(
            &s,
            is_sub_group_collective,
            crate::transform::hoist::obstacle,
        )
        .refused;
        (out, refused.into_values().map(|o| o.to_string()).collect())
    }

    #[test]
    fn calls_under_ifs_are_computed_by_every_work_item_with_identities() {
        let (out, refused) = rewrite(
            "if (lane % 2u == 0u) {\n  r = sub_group_non_uniform_reduce_add(v);\n  \
             r += sub_group_non_uniform_scan_exclusive_max(v & 7);\n} else if (mode > 1u)\n  \
             r = sub_group_elect() + sub_group_clustered_reduce_min(v, 4) + \
             sub_group_non_uniform_all(v > 0);",
        );
        assert!(refused.is_empty(), "{refused:?}\n{out}");
        for want in [
            "__clg_u0 = sub_group_non_uniform_reduce_add((__typeof__(v))((((lane % 2u == 0u) != 0)) \
             ? (v) : -(__typeof__(v))0)); ",
            "sub_group_non_uniform_scan_exclusive_max((__typeof__(v & 7))((((lane % 2u == 0u) != 0)) \
             ? (v & 7) : ((__typeof__(v & 7))0.5 != (__typeof__(v & 7))0 ? (__typeof__(v & 7))\
             -INFINITY : (__typeof__(v & 7))-1 < (__typeof__(v & 7))0 ? (__typeof__(v & 7))(0UL - \
             (1UL << (8 * sizeof(__typeof__(v & 7)) - 1))) : (__typeof__(v & 7))0))",
            // The else branch: the first condition false, the second true.
            "= (sub_group_scan_exclusive_add((((lane % 2u == 0u) == 0) & ((mode > 1u) != 0)) ? 1u \
             : 0u) == 0u); ",
            ": (__typeof__(v))-1)), 4); ",
            "sub_group_non_uniform_all(((((lane % 2u == 0u) == 0) & ((mode > 1u) != 0)) == 0) | \
             ((v > 0) != 0)); if (lane % 2u == 0u) {",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
    }

    #[test]
    fn conditions_on_values_loaded_at_an_id_are_masked_too() {
        let (out, refused) = rewrite(
            "if (v > 7) {\n  int slot = sub_group_non_uniform_scan_exclusive_add(1);\n  r = slot;\n}",
        );
        assert!(refused.is_empty(), "{refused:?}\n{out}");
        let want = "__clg_u0 = sub_group_non_uniform_scan_exclusive_add((__typeof__(1))((((v > 7) \
                    != 0)) ? (1) : -(__typeof__(1))0)); if (v > 7) {";
        assert!(out.contains(want), "{out}");
        // The other collectives too: masked where they have an identity, as they are else.
        let (out, refused) = rewrite(
            "if (v > 7) { r = sub_group_reduce_max(v) + sg_inclusive_scan_add(v);\n\
             r += sg_any(v > 9) + sub_group_broadcast(v, 0u); }",
        );
        assert!(refused.is_empty(), "{refused:?}\n{out}");
        for want in [
            "= sub_group_reduce_max((__typeof__(v))((((v > 7) != 0)) ? (v) : ((__typeof__(v))0.5 \
             != (__typeof__(v))0 ? (__typeof__(v))-INFINITY",
            "= sg_inclusive_scan_add((__typeof__(v))((((v > 7) != 0)) ? (v) : -(__typeof__(v))0));",
            "= sg_any((((v > 7) != 0)) & ((v > 9) != 0));",
            "= sub_group_broadcast(v, 0u);",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
        // A condition that loads (`if (x[g] > 0)`) is evaluated once, where it was.
        let (out, refused) = rewrite(
            "if (x[lane] > 3) { if (lane > 3u) r = sub_group_non_uniform_reduce_add(v); }\n\
             if (x[get_global_id(0)] > 0) r = sg_reduce_add(v);",
        );
        assert!(refused.is_empty(), "{refused:?}\n{out}");
        for want in [
            "int __clg_c0 = ((x[lane] > 3) != 0); __typeof__(sub_group_non_uniform_reduce_add(v)) \
             __clg_u0 = sub_group_non_uniform_reduce_add((__typeof__(v))((((__clg_c0) != 0) & \
             ((lane > 3u) != 0)) ? (v) : -(__typeof__(v))0)); if (__clg_c0) {",
            "int __clg_c1 = ((x[get_global_id(0)] > 0) != 0); __typeof__(sg_reduce_add(v)) \
             __clg_u1 = sg_reduce_add((__typeof__(v))((((__clg_c1) != 0)) ? (v) : \
             -(__typeof__(v))0)); if (__clg_c1) r = __clg_u1;",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
    }

    #[test]
    fn calls_in_chains_are_masked_by_the_values_before_them() {
        // Issue 38: in `A || B` the work-items that evaluate `B` are those where `A` is false.
        let (out, refused) = rewrite(
            "r = lane > 3u && sub_group_non_uniform_any(v > 0);\n\
             r = lane > 3u && v > 0 || sub_group_non_uniform_reduce_add(v) > 5;\n\
             r = lane > 1u ? 4 : lane == 0u ? sub_group_non_uniform_scan_inclusive_add(v) : 6;",
        );
        assert!(refused.is_empty(), "{refused:?}\n{out}");
        for want in [
            "= sub_group_non_uniform_any((((lane > 3u) != 0)) & ((v > 0) != 0)); \
             r = lane > 3u && __clg_u",
            // `a && b || c`: `c` where `a && b` is false, not where `a` is true.
            "= sub_group_non_uniform_reduce_add((__typeof__(v))((((lane > 3u && v > 0) == 0)) ? \
             (v) : -(__typeof__(v))0)); r = lane > 3u && v > 0 || __clg_u",
            // The else side of the first `?`, the then side of the second.
            "((((lane > 1u) == 0) & ((lane == 0u) != 0)) ? (v) : -(__typeof__(v))0)); \
             r = lane > 1u ? 4 : lane == 0u ? __clg_u",
        ] {
            assert!(out.contains(want), "{want}\n{out}");
        }
    }

    #[test]
    fn data_dependent_collectives_that_cannot_be_masked_are_refused() {
        for (body, why) in [
            // Loops of loaded values: the work-items of a sub-group may stop at different
            // iterations (`transform::lockstep` runs only loops shown uniform).
            (
                "while (v > 3) v = sg_shuffle_down(v, 1u) - 1;",
                "not shown uniform",
            ),
            (
                "for (int i = 0; i < (x[get_local_id(0)] & 3); ++i) r += sg_reduce_add(i);",
                "not shown uniform",
            ),
            ("if (v > 3) sg_barrier();", "barrier"),
            ("if (v > 3) return; r = sg_reduce_add(v);", "an exit"),
            ("if (x[v] > 3) r = sg_reduce_add(x[v + 1]);", "(`[`"),
        ] {
            let (out, refused) = rewrite(body);
            assert!(
                refused.len() == 1 && refused[0].contains(why),
                "{body}: {refused:?}\n{out}"
            );
        }
    }

    #[test]
    fn what_the_active_work_items_cannot_be_told_of_stays_refused() {
        for (body, why) in [
            (
                "if (lane > 3u) r = sub_group_non_uniform_broadcast(v, 0u);",
                "non_uniform",
            ),
            (
                "if (lane > 3u) r = sub_group_non_uniform_reduce_add(v / (int)mode);",
                "(`/`",
            ),
            (
                "if (lane > 3u) return; r = sub_group_non_uniform_reduce_add(v);",
                "an exit",
            ),
            (
                "if (lane > 3u) { if (x[lane] > 3) r = sub_group_non_uniform_reduce_add(v); }",
                "(`[`",
            ),
            (
                "while (lane < mode) { if (v > 0) r = sub_group_elect(); mode--; }",
                "in a loop",
            ),
            (
                "if (lane > 3u) { v++; r = sub_group_non_uniform_reduce_add(v); }",
                "reads `v`",
            ),
            // Conditions on values loaded at an id count for these built-ins.
            (
                "if (v > 3) return; r = sub_group_non_uniform_reduce_add(1);",
                "an exit",
            ),
            (
                "for (int i = 0; i < v; ++i) r += sub_group_non_uniform_reduce_add(i);",
                "not shown uniform",
            ),
        ] {
            let (out, refused) = rewrite(body);
            assert!(
                refused.len() == 1 && refused[0].contains(why),
                "{body}: {refused:?}\n{out}"
            );
        }
    }
}
