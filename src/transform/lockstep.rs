//! Loops whose trip count is uniform in each sub-group but not in the work-group, run by the
//! whole work-group in lockstep where collectives are work-group barriers (the emulated
//! backend, PoCL's native CPU sub-groups).
//!
//! A collective in a loop's condition (`while (sub_group_any(i < v))`, the vote loop) or body
//! (`for (k = 0; k < sub_group_reduce_max(n); k++) s += sub_group_reduce_add(x[k]);`) is
//! reached by a sub-group as often as that sub-group loops; where a collective is a barrier of
//! the whole work-group, every work-item must reach it as often. So [`rewrite`] makes the loop
//! run until no work-item of the work-group goes on, each work-item's own state in a flag
//! `__clg_lN` (`while (C) S` becomes `{ int L = 1; for (;;) { L = L & ((C) != 0); if
//! (!clg_group_any(L)) break; if (L) S } }`; `for` loops also keep their increment for the
//! work-items still looping, `do` loops vote after their body). A work-item that finished
//! evaluates the condition again on a state its body no longer changes, which the original
//! evaluated last (so it must have no side effects: [`repeatable`]); its flag stays off. One
//! that left by a `break` evaluates it on a state the original never did: in loops with a
//! `break`, the condition must be [`pure`] (no loads) but in its collectives' operands, which
//! the flag masks ([`masked_operands`]: `sub_group_any(L ? (x[i] > 0) : 0)`). Inside,
//! `break` becomes `{ L = 0; continue; }`; a `return` or `goto` in the body stays refused (a
//! work-item leaving the loop would skip the barriers of the others). The body then sits
//! under `if (L)`, where [`super::hoist`] and [`super::nu_mask`] treat its collectives as
//! under any condition; its declarations with [`pure`] initializers run unguarded. A loop of
//! the kind among those statements drops its flag test `if (G)` and starts its own flag from
//! `G` instead ([`outer_guard`]), so its votes are reached by the whole work-group too.
//! `clg_group_any` is the build prelude's: the emulated scratch's vote of
//! the work-group, or `work_group_any` on PoCL's native sub-groups (`program::build`).
//! Each iteration ends with a work-group barrier ([`ITERATION_END`], in the `for (;;)`'s
//! increment, which a `continue` reaches too): PoCL (3.1 and 6.0) miscompiles the loop without
//! it where a branch ends the body after its last barrier and another starts it (the `for`
//! loop's increment under its flag): the shuffle-up scan with an `if` in its body took the
//! last step in no work-item on PoCL 6.0, and crashed both in plain OpenCL (docs/devices.md).

use super::divergence::{jumps, Region};
use super::edit::Edits;
use super::lex::{Kind, Token};
use super::sg_uniform::Uniformity;
use super::source::{
    assigns, statement_end, Conditional, FunctionDef, Scanned, Span, LOCKSTEP_FLAG,
};
use super::statement::{
    increments, known_call, pure, replaced_by, temporary, tokens_text, unsafe_at,
};
use crate::builtins::{self, Flags};
use crate::obstacle::NoRewrite;

/// The build prelude's vote of the whole work-group (an `int`, non-zero where any work-item
/// passed non-zero).
pub(crate) const GROUP_ANY: &str = "clg_group_any";

/// The barrier every iteration of a loop run in lockstep ends with (see the module's doc).
const ITERATION_END: &str = "barrier(CLK_LOCAL_MEM_FENCE)";

/// The edits that run the `for`, `while` or `do` loop at token `key` of `f` in lockstep, or
/// why it cannot (its condition or exits are not shown uniform in each sub-group, its
/// condition has side effects, its body returns). `n` numbers the flags.
pub(crate) fn rewrite(
    s: &Scanned<'_>,
    f: &FunctionDef,
    regions: &[Region],
    key: usize,
    n: usize,
) -> Result<Edits, NoRewrite> {
    let mut l = Loop::read(s, f, key)?;
    l.masked = l.check(s, f, regions)?;
    Ok(l.edits(s, n))
}

/// A loop's parts, as [`rewrite`] reads them.
struct Loop<'s> {
    /// Its keyword's token and text.
    key: usize,
    kind: &'s str,
    /// The construct (its body, its end).
    c: Conditional,
    /// A `for`'s init and increment; the condition (empty: `for (;;)`).
    init: Option<Span>,
    cond: Span,
    inc: Option<Span>,
    /// Its own `break`s and `continue`s.
    breaks: Vec<usize>,
    continues: Vec<usize>,
    /// Where the statements of its block start, where each may be guarded on its own.
    starts: Option<Vec<usize>>,
    /// The flag test `if (G)` of an enclosing lockstep loop right before it (its tokens and
    /// `G`): the loop runs unguarded instead, its own flag starting from `G`.
    outer: Option<(Span, String)>,
    /// The collectives' operands in the condition that load, masked by the flag in the vote
    /// ([`masked_operands`]).
    masked: Vec<Span>,
}

impl<'s> Loop<'s> {
    fn read(s: &'s Scanned<'_>, f: &FunctionDef, key: usize) -> Result<Self, NoRewrite> {
        let Some(c) = s.syntax(f).constructs(key..key + 1).next().copied() else {
            return Err(NoRewrite::Statement);
        };
        let kind = s.text(key);
        let (init, cond, inc) = match kind {
            "for" => for_parts(s, c.cond).ok_or(NoRewrite::Statement)?,
            "while" | "do" => (None, c.cond, None),
            _ => return Err(NoRewrite::Loop),
        };
        // Delimited as the edits need: a body; a `do` loop's `while (cond);` right after it;
        // each `break;` and `continue;` with its `;` (a text cut short has none of these).
        let body = c.body;
        let tail = |b: usize| {
            s.text(b) == "while" && s.text(b + 1) == "(" && s.partner(b + 1) + 2 == c.end
        };
        let delimited = body.0 < body.1
            && (kind != "do" || (body.1 + 2 < c.end && tail(body.1) && s.text(c.end - 1) == ";"));
        if !delimited {
            return Err(NoRewrite::Statement);
        }
        let (breaks, continues) = (jumps(s, f, body, "break"), jumps(s, f, body, "continue"));
        let ends = |t: &usize| t + 1 < s.tokens.len() && s.text(t + 1) == ";";
        if !breaks.iter().chain(&continues).all(ends) {
            return Err(NoRewrite::Statement);
        }
        Ok(Loop {
            key,
            kind,
            c,
            init,
            cond,
            inc,
            breaks,
            continues,
            starts: statements(s, body),
            outer: outer_guard(s, key),
            masked: Vec::new(),
        })
    }

    /// Why the loop cannot run in lockstep, if it cannot; else the operands to mask.
    fn check(
        &self,
        s: &Scanned<'_>,
        f: &FunctionDef,
        regions: &[Region],
    ) -> Result<Vec<Span>, NoRewrite> {
        // Its condition and the conditions of its exits shown uniform in each sub-group, loads
        // at an index included: where the work-items of a sub-group could stop at different
        // iterations, each sub-group's collectives would see the ones that stopped.
        let u = Uniformity::strict(s, f, regions);
        // A collective behind `?:` in the condition (or `&&` / `||` in a `for`'s) would run for
        // the work-items whose loop goes on only (a crash or a hang, measured).
        let guard = (self.cond.0..self.cond.1).find(|&t| match s.text(t) {
            "?" => true,
            w @ ("&" | "|") => self.kind == "for" && s.text(t + 1) == w,
            _ => false,
        });
        let collective =
            |t: usize| s.is_call(t) && super::layer::is_sub_group_collective(s.text(t));
        if let Some(t) = guard.filter(|&g| (g..self.cond.1).any(collective)) {
            let op = if s.text(t) == "?" {
                "?:"
            } else {
                &s.text(t).repeat(2)
            };
            return Err(NoRewrite::ShortCircuit(op.to_string()));
        }
        let jumps: Vec<usize> = self.breaks.iter().chain(&self.continues).copied().collect();
        let exits = (regions.iter())
            .filter(|r| self.key < r.key && r.key < self.c.end && !r.loop_header)
            .filter(|r| jumps.iter().any(|&t| r.span.0 <= t && t < r.span.1))
            .map(|r| r.cond);
        for range in std::iter::once(self.cond).chain(exits) {
            if let Some(t) = u.first_divergent(s, range) {
                return Err(NoRewrite::NotUniform(s.text(t).to_string()));
            }
        }
        repeatable(s, self.cond)?;
        // Work-items that left by a `break`, or (run from an enclosing loop's flag) whose outer
        // loop ended, evaluate the condition on a state the source never evaluated it on (and
        // declare the init's names): without loads or divisions but in collectives' operands,
        // which the flag masks.
        let mut masked = Vec::new();
        if self.outer.is_some() || !self.breaks.is_empty() {
            masked = masked_operands(s, self.cond)?;
        }
        if self.outer.is_some() {
            if let Some(init) = self.init.filter(|&(a, _)| declares(s, a)) {
                initializers_pure(s, init)?;
            }
        }
        let body = self.c.body;
        // A macro in the body may expand to several statements: kept together under one flag
        // test, in a block (a single statement holding one would change which follow the loop).
        if let Some(t) = (body.0..body.1)
            .find(|&t| expands(s, t))
            .filter(|_| s.text(body.0) != "{")
        {
            return Err(unsafe_at(s, t, s.text(t)));
        }
        if let Some(t) = (body.0..body.1).find(|&t| matches!(s.text(t), "return" | "goto")) {
            return Err(NoRewrite::LeavesLoop(s.text(t).to_string()));
        }
        // A `do` loop's `break` or `continue` would skip the vote at its end.
        if self.kind == "do" {
            if let Some(w) = [&self.breaks, &self.continues]
                .into_iter()
                .find_map(|v| v.first().map(|&t| s.text(t)))
            {
                return Err(NoRewrite::LeavesLoop(w.into()));
            }
        }
        // A `continue` ends the work-item's iteration: the statements of the body after it
        // wait for a flag instead, so it must end its statement (`if (c) continue;`).
        if !self
            .continues
            .iter()
            .all(|&t| self.ends_its_statement(s, t))
        {
            return Err(NoRewrite::LeavesLoop("continue".into()));
        }
        Ok(masked)
    }

    /// Whether the `continue` at token `t` is the last thing its statement of the body runs
    /// (only `}` and `else` branches follow it there).
    fn ends_its_statement(&self, s: &Scanned<'_>, t: usize) -> bool {
        let Some(starts) = &self.starts else {
            return false;
        };
        let Some(&a) = starts.iter().rev().find(|&&a| a <= t) else {
            return false;
        };
        let end = statement_end(s, a, self.c.body.1 - 1);
        let mut at = t + 2;
        while at < end {
            at = match s.text(at) {
                "}" => at + 1,
                "else" => statement_end(s, at + 1, end),
                _ => return false,
            };
        }
        s.text(t + 1) == ";"
    }

    /// The condition's text, each of [`Loop::masked`] evaluated only where `live` is set.
    fn masked_condition(&self, s: &Scanned<'_>, live: &str) -> String {
        let mut text = String::new();
        let mut at = self.cond.0;
        for &(a, b) in &self.masked {
            let operand = tokens_text(s, a, b);
            text += &format!("{} ({live} ? ({operand}) : 0) ", tokens_text(s, at, a));
            at = b;
        }
        text + &tokens_text(s, at, self.cond.1)
    }

    /// The edits, its flags numbered `n`.
    fn edits(&self, s: &Scanned<'_>, n: usize) -> Edits {
        let (key, body) = (self.key, self.c.body);
        let live = temporary(s, 'l', n);
        debug_assert!(live.starts_with(LOCKSTEP_FLAG));
        let first = temporary(s, 'f', n);
        let (any, end) = (GROUP_ANY, ITERATION_END);
        // `for (;;)`: a loop left only by its `break`s.
        let cond_text = match self.cond.0 < self.cond.1 {
            true => self.masked_condition(s, &live),
            false => "1".into(),
        };
        // The iteration's own flag where `continue`s end it (a lockstep flag too: tainted).
        let skip = format!("{live}k");
        // Inside an enclosing lockstep loop, the work-items it still runs.
        let start = match &self.outer {
            Some((_, g)) => format!("({g})"),
            None => "1".into(),
        };
        let (declare, test, reset) = match self.continues.is_empty() {
            true => (format!("int {live} = {start}"), live.clone(), String::new()),
            false => (
                format!("int {live} = {start}, {skip} = 0"),
                format!("{live} & !{skip}"),
                format!(" {skip} = 0;"),
            ),
        };
        let vote =
            format!("{live} = {live} & (({cond_text}) != 0); if (!{any}({live})) break;{reset}");
        let end_of = |t: usize| s.tokens[t].span.end;
        let text = |r: Option<Span>| r.map_or(String::new(), |(a, b)| tokens_text(s, a, b));
        let mut edits: Edits = Vec::new();
        if let Some((guard, _)) = self.outer {
            edits.push(replaced_by(s, guard, String::new()));
        }
        // The body under the flag: each statement of a block on its own where none may declare
        // a name (collectives then move only in front of their own statement), else as a whole.
        let guard = match &self.starts {
            Some(starts) => {
                for &a in starts {
                    let at = s.tokens[a].span.start;
                    edits.push((at, at, format!("if ({test}) ")));
                }
                String::new()
            }
            None => format!(" if ({live})"),
        };
        match self.kind {
            "while" => {
                let close = s.partner(key + 1);
                let head = format!("{{ {declare}; for (;; {end}) {{ {vote}{guard}");
                edits.push(replaced_by(s, (key, close + 1), head));
                edits.push((end_of(body.1 - 1), end_of(body.1 - 1), " } }".into()));
            }
            "for" => {
                let close = s.partner(key + 1);
                let step = match self.inc {
                    Some(r) if r.0 < r.1 => {
                        format!("if (!{first} & {live}) {{ {}; }} ", text(self.inc))
                    }
                    _ => String::new(),
                };
                // The init before the loop (in the block that scopes it): the analysis reads a
                // `for`'s whole header as its condition.
                let init = match (self.init, &self.outer) {
                    (Some((a, _)), Some(_)) if !declares(s, a) => {
                        format!("if ({start}) {}; ", text(self.init))
                    }
                    (Some(_), _) => format!("{}; ", text(self.init)),
                    (None, _) => String::new(),
                };
                let head = format!(
                    "{{ {declare}, {first} = 1; {init}for (;; {first} = 0, {end}) \
                     {{ {step}{vote}{guard}"
                );
                edits.push(replaced_by(s, (key, close + 1), head));
                edits.push((end_of(body.1 - 1), end_of(body.1 - 1), " } }".into()));
            }
            _ => {
                // The vote after the body, where the condition stands (nothing conditional
                // around a collective: PoCL's native sub-groups took one under `if (!first)`
                // wrong).
                let head = format!("{{ {declare}; for (;; {end}) {{{guard}");
                edits.push(replaced_by(s, (key, key + 1), head));
                edits.push(replaced_by(
                    s,
                    (body.1, self.c.end),
                    format!("{vote} }} }}"),
                ));
            }
        }
        // A `break` of this loop: the work-item stops looping (where it ends its statement of
        // the body, the later statements wait for the flag: no `continue`, which would make
        // their collectives follow an exit); a `continue`, its iteration.
        for &t in &self.breaks {
            let rest = match self.ends_its_statement(s, t) {
                true => "",
                false => " continue;",
            };
            edits.push(replaced_by(
                s,
                (t, t + 2),
                format!("{{ {live} = 0;{rest} }}"),
            ));
        }
        for &t in &self.continues {
            edits.push(replaced_by(s, (t, t + 2), format!("{{ {skip} = 1; }}")));
        }
        edits
    }
}

/// The first tokens of the statements of block `body` that get a flag test (not the empty
/// ones, nor declarations, which run unguarded), where every declaration's initializers are
/// pure, none is labelled, no preprocessor line splits them and there are at most
/// [`MAX_GUARDS`]; `None` otherwise (or for a single statement).
fn statements(s: &Scanned<'_>, (a, b): (usize, usize)) -> Option<Vec<usize>> {
    if s.text(a) != "{" || s.partner(a) + 1 != b {
        return None;
    }
    if (a..b).any(|t| s.text(t).starts_with('#') || expands(s, t)) {
        return None;
    }
    let mut starts = Vec::new();
    let mut t = a + 1;
    while t < b - 1 {
        let end = statement_end(s, t, b - 1);
        // A label (`again:`) stays with its statement.
        if s.tokens[t].kind == Kind::Ident && s.text(t + 1) == ":" {
            return None;
        }
        // A declaration runs for every work-item (its names stay in scope for the statements
        // after it) where its initializers are pure; an empty statement needs no flag.
        if declares(s, t) {
            initializers_pure(s, (t, end)).ok()?;
        } else if s.text(t) != ";" {
            starts.push(t);
        }
        if starts.len() > MAX_GUARDS {
            return None;
        }
        t = end;
    }
    Some(starts)
}

/// Whether the statement at token `t` declares a name (`int q = 0`, `float4 *p`, `const ...`).
fn declares(s: &Scanned<'_>, t: usize) -> bool {
    let w = s.text(t);
    let keyword = matches!(
        w,
        "return"
            | "break"
            | "continue"
            | "goto"
            | "case"
            | "default"
            | "do"
            | "else"
            | "sizeof"
            | "if"
            | "for"
            | "while"
            | "switch"
    );
    // `p *= 2` is no declaration of `*p`.
    let pointer = s.text(t + 1) == "*" && !assigns(s, t + 1);
    let named = s.tokens[t].kind == Kind::Ident
        && !keyword
        && (s.tokens[t + 1].kind == Kind::Ident || pointer);
    named || QUALIFIERS.contains(&w)
}

/// Whether the initializers of the declaration `(a, b)` (each declarator's after its `=`) are
/// [`pure`] and its declarators call and change nothing (`a * f(x);` is no declaration): a
/// work-item that the source does not run it for may run it.
fn initializers_pure(s: &Scanned<'_>, (a, b): Span) -> Result<(), NoRewrite> {
    let mut value = None;
    let mut t = a;
    while t < b {
        let w = s.text(t);
        if value.is_none() && (w == "(" || increments(s, t) || (w != "=" && assigns(s, t))) {
            return Err(unsafe_at(s, t, w));
        }
        match w {
            "(" | "{" => t = s.partner(t),
            "=" if value.is_none() && assigns(s, t) => value = Some(t + 1),
            "," | ";" => {
                if let Some(v) = value.take() {
                    pure(s, (v, t), super::layer::is_sub_group_collective)?;
                }
            }
            _ => {}
        }
        t += 1;
    }
    match value {
        Some(v) => pure(s, (v, b), super::layer::is_sub_group_collective),
        None => Ok(()),
    }
}

/// The loop holding token `i` that the flag test `if (G)` at token `k` of an enclosing loop
/// run in lockstep guards: run in lockstep too, from `G` (collectives move no further out).
pub(crate) fn guarded_loop(s: &Scanned<'_>, f: &FunctionDef, k: usize, i: usize) -> Option<usize> {
    let key = s.partner(k + 1) + 1;
    outer_guard(s, key).filter(|g| g.0 .0 == k)?;
    let c = s.syntax(f).constructs(key..key + 1).next()?;
    (key < i && i < c.end && matches!(s.text(key), "for" | "while" | "do")).then_some(key)
}

/// The flag test `if (G)` that an enclosing loop run in lockstep put right before the loop
/// at token `key` (its tokens, `G`'s text): `G` only flags, `&` and `!`.
fn outer_guard(s: &Scanned<'_>, key: usize) -> Option<(Span, String)> {
    let close = key.checked_sub(1).filter(|&c| s.text(c) == ")")?;
    let open = s.partner(close);
    let flag = |t: usize| matches!(s.text(t), "&" | "!") || s.text(t).starts_with(LOCKSTEP_FLAG);
    let guarded = open > 0 && s.text(open - 1) == "if" && open + 1 < close;
    (guarded && (open + 1..close).all(flag))
        .then(|| ((open - 1, key), tokens_text(s, open + 1, close)))
}

/// At most this many statements of a body get a flag test of their own (more: the body gets
/// one; each round of the hoist scans the text again).
const MAX_GUARDS: usize = 64;

/// Words that start a declaration.
const QUALIFIERS: [&str; 18] = [
    "const",
    "volatile",
    "unsigned",
    "signed",
    "struct",
    "union",
    "enum",
    "typedef",
    "static",
    "private",
    "__private",
    "local",
    "__local",
    "global",
    "__global",
    "constant",
    "__constant",
    "__attribute__",
];

/// Whether a macro's definitions are constants (no identifier: `#define BOUND 30`).
fn constant(defs: &[Vec<Token>]) -> bool {
    (defs.iter().flatten()).all(|k| k.kind != Kind::Ident)
}

/// A `for` header's `(init, condition, increment)` tokens (`None`: empty init or increment),
/// split at its two top-level `;`.
fn for_parts(s: &Scanned<'_>, (a, b): Span) -> Option<(Option<Span>, Span, Option<Span>)> {
    let mut semis = Vec::new();
    let mut t = a;
    while t < b {
        match s.text(t) {
            "(" | "[" | "{" => t = s.partner(t),
            ";" => semis.push(t),
            _ => {}
        }
        t += 1;
    }
    let [x, y] = semis[..] else { return None };
    let part = |p: usize, q: usize| (p < q).then_some((p, q));
    Some((part(a, x), (x + 1, y), part(y + 1, b)))
}

/// Whether the condition `range` may be evaluated again by a work-item whose loop ended: no
/// side effects (no assignment, increment, call of a function clgroups does not know, macro
/// other than a constant's (`#define BOUND 30`) or `non_uniform` built-in, whose work-items
/// would change). Loads and divisions may stay: the
/// work-item repeats its last evaluation, on the state it had then.
fn repeatable(s: &Scanned<'_>, (a, b): (usize, usize)) -> Result<(), NoRewrite> {
    for t in a..b {
        if assigns(s, t) || increments(s, t) || expands(s, t) {
            return Err(unsafe_at(s, t, s.text(t)));
        }
        if s.is_call(t) {
            // `sub_group_elect` and the clustered ones, `non_uniform` without the name.
            if builtins::flags(s.text(t)).has(Flags::NON_UNIFORM) {
                return Err(NoRewrite::NonUniform);
            }
            known_call(s, t, super::layer::is_sub_group_collective)?;
        }
    }
    Ok(())
}

/// The operands of the collectives in condition `cond` that are not [`pure`] (`x[i] > 0` in
/// `sub_group_any(x[i] > 0)`), where the rest of it is. A work-item that stopped looping then
/// evaluates them only as the flag's mask, `sub_group_any(L ? (x[i] > 0) : 0)`: its sub-group
/// stopped with it (the exits are uniform in each sub-group), so the collective's result goes
/// unused there, and the sub-groups still looping see their own operands.
fn masked_operands(s: &Scanned<'_>, cond: Span) -> Result<Vec<Span>, NoRewrite> {
    let collective = super::layer::is_sub_group_collective;
    if pure(s, cond, collective).is_ok() {
        return Ok(Vec::new());
    }
    let (mut masked, mut from, mut t) = (Vec::new(), cond.0, cond.0);
    while t < cond.1 {
        let w = s.text(t);
        if s.is_call(t) && collective(w) && !builtins::flags(w).has(Flags::BARRIER) {
            pure(s, (from, t + 2), collective)?;
            for operand in s.arguments(t) {
                // (a collective inside would run only where the flag is set)
                if let Some(u) =
                    (operand.0..operand.1).find(|&u| s.is_call(u) && collective(s.text(u)))
                {
                    return Err(unsafe_at(s, u, s.text(u)));
                }
                if pure(s, operand, collective).is_err() {
                    masked.push(operand);
                }
            }
            (from, t) = (s.partner(t + 1), s.partner(t + 1));
        }
        t += 1;
    }
    pure(s, (from, cond.1), collective)?;
    Ok(masked)
}

/// Whether token `t` names a macro that may expand to more than a constant.
fn expands(s: &Scanned<'_>, t: usize) -> bool {
    s.macros.get(s.text(t)).is_some_and(|d| !constant(d))
}

#[cfg(test)]
#[path = "lockstep_tests.rs"]
mod tests;
