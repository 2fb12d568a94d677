//! Sub-group collectives under work-item-dependent control flow, found before a launch.
//!
//! The layer's rule is uniform control flow: every work-item of the work-group reaches each
//! `sg_*` call. On the `emulated` backend every collective is a pair of work-group barriers, and
//! PoCL 3.1 compiles a barrier under a condition on the work-item's id into a work-group function
//! that loops forever or jumps to an invalid address (measured: plain OpenCL with
//! `if (get_local_id(0) < 5) barrier(..)` hangs, a loop of `get_local_id(0) % 4` barriers or an
//! early `return` on `get_global_id(0) % 64 >= 5` segfaults; the same shapes on a value loaded from
//! memory return wrong values). So, on that backend only, a kernel is refused when the scanner sees
//! a collective — or a call of a function or macro that uses one — inside an `if`/`for`/`while`/`do`/
//! `switch` whose condition mentions a work-item id ([the built-ins flagged [`Flags::ID`]], or a variable assigned from
//! one), or after a `return`/`break`/`continue` under such a condition. Conditions on kernel
//! arguments, loop counters over uniform bounds and values loaded from memory are not refused.
//! An `if` of a kernel whose condition is exactly `get_global_id(D) OP n` (or through a variable
//! assigned once from it; [`super::id_condition`]) is left to each launch, which knows `n`, the
//! local size and the offset ([`crate::plan::uniform_branch`]); any other id condition is
//! refused, even where it happens to be uniform: compute unconditionally instead
//! (`sg_reduce_add(i < n ? x[i] : 0)`). A conditional expression (`i < n ? sg_reduce_add(v) :
//! 0`) counts as an `if` around its branches, and `&&` / `||` as one around their right
//! operand. A `break` under such a condition makes its whole loop divergent (later iterations
//! run for part of the work-items), a `return` everything from its outermost loop on. A loop's
//! own condition (and a `for`'s increment) is under it too when it reads an id or a value loaded
//! at one: a collective there runs as often as each sub-group loops ([`super::lockstep`] runs
//! such loops in lockstep where their trip count is uniform in each sub-group; calls of
//! work-group functions whose result the work-group shares, `work_group_any`, depend on no
//! work-item). A condition on a value loaded at an id counts as well ([`Region::data`]), for
//! the collectives and for the functions and macros that use them. Before this, the build
//! moves what it soundly can out of such conditions ([`super::hoist`]); a refusal says why the
//! call was not moved. Control flow the scanner does not follow is refused around collectives
//! ([`hidden_flow`]): a `goto` in a function with such conditions, macros writing control flow.

use super::source::{
    any_word, id_word, Conditional, FunctionDef, Scanned, Span, Syntax, LOCKSTEP_FLAG,
};
use super::variant::is_generated;
use crate::builtins::{self, Flags};
use crate::obstacle::{NoRewrite, Obstacle};
use crate::plan::uniform_branch::IdCondition;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Why a collective under a region stays as written (the hoist's answer, `hoist::obstacle`):
/// `(source, function, its regions, the call's token)`.
pub(crate) type Unmoved = fn(&Scanned<'_>, &FunctionDef, &[Region], usize) -> Option<NoRewrite>;

/// What [`divergent_users`] finds.
#[derive(Debug, Default)]
pub(crate) struct Divergence {
    /// Each function that reaches a collective under work-item-dependent control flow (directly,
    /// or by calling such a function), and why: `"sg_reduce_add at line 7 under a condition on
    /// get_local_id at line 6"`.
    pub(crate) refused: BTreeMap<String, Obstacle>,
    /// Each kernel whose collectives sit only under conditions a launch decides
    /// ([`super::id_condition`]), and those conditions.
    pub(crate) at_launch: BTreeMap<String, Vec<IdCondition>>,
}

/// The functions of `s` with collectives under work-item-dependent control flow: refused, or
/// (kernels whose only such conditions are [`super::id_condition`]'s) decided at launch.
/// `collective` tells the collectives (or the functions that use them).
pub(crate) fn divergent_users(
    s: &Scanned<'_>,
    collective: fn(&str) -> bool,
    unmoved: Unmoved,
) -> Divergence {
    let (users, macros) = super::layer::users_through_calls(s, collective);
    let uses = |w: &str| collective(w) || users.contains(w) || macros.contains(w);
    let mut out = Divergence::default();
    for f in &s.functions {
        match divergent_call(s, f, &uses, unmoved) {
            Err(why) => _ = out.refused.insert(f.name.clone(), why),
            Ok(conds) if !conds.is_empty() => _ = out.at_launch.insert(f.name.clone(), conds),
            Ok(_) => {}
        }
    }
    // Callers of a flagged function are flagged too (the call may well be uniform), and so are
    // callers of a kernel with launch-time conditions (which would go unchecked). In passes
    // over the functions in source order, each examining only the functions that call a name
    // flagged since they were last examined (what a pass over every body finds; passes over
    // every body took time quadratic in the length of a chain of helpers).
    let mut callers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (n, f) in s.functions.iter().enumerate() {
        for i in (f.body.0 + 1..f.body.1).filter(|&i| s.is_call(i)) {
            callers.entry(s.text(i)).or_default().push(n);
        }
    }
    let flagged = out.refused.keys().chain(out.at_launch.keys());
    let mut pass: BTreeSet<usize> = flagged
        .flat_map(|name| callers.get(name.as_str()).into_iter().flatten().copied())
        .collect();
    while !pass.is_empty() {
        let mut next = BTreeSet::new();
        while let Some(n) = pass.pop_first() {
            let f = &s.functions[n];
            if out.refused.contains_key(&f.name) {
                continue;
            }
            let flagged = |w: &str| out.refused.contains_key(w) || out.at_launch.contains_key(w);
            let callee = (f.body.0 + 1..f.body.1).find(|&i| s.is_call(i) && flagged(s.text(i)));
            if let Some(i) = callee {
                let line = s.line(s.tokens[i].span.start);
                let name = s.text(i);
                let why = match out.refused.get(name) {
                    Some(why) => why.clone(),
                    None => Obstacle::Condition(out.at_launch[name][0].text.clone()),
                };
                let why = Obstacle::Calls {
                    function: name.to_string(),
                    line,
                    why: Box::new(why),
                };
                out.at_launch.remove(&f.name);
                out.refused.insert(f.name.clone(), why);
                // Later functions see it in this pass, earlier ones in the next.
                for &c in callers.get(f.name.as_str()).into_iter().flatten() {
                    _ = if c > n {
                        pass.insert(c)
                    } else {
                        next.insert(c)
                    };
                }
            }
        }
        pass = next;
    }
    out
}

/// A stretch of a function whose execution depends on a work-item id.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    /// The tokens it covers.
    pub(crate) span: (usize, usize),
    /// The construct's token: `if`/`for`/`while`/`do`/`switch`, or the `?` or first `&`/`|` of
    /// a conditional expression or `&&`/`||`.
    pub(crate) key: usize,
    /// Whether it is what follows an exit (`return`, `break`, `continue`) under the condition.
    pub(crate) after_exit: bool,
    /// Such a region's loop that the exit leaves (a `return`: the outermost around it; `None`
    /// outside loops).
    pub(crate) exited: Option<usize>,
    /// Whether it is a loop's own condition (and a `for`'s increment), evaluated again on each
    /// iteration: as often as the loop runs.
    pub(crate) loop_header: bool,
    /// Whether its condition reads a work-item's value only through memory loaded at an id
    /// (`x[get_global_id(0)] > t`): [`super::hoist`] masks the collectives under it or
    /// computes them ahead (and the helpers any work-item may call), where conditions on an id
    /// must be shown uniform in each sub-group first; what stays there is refused.
    pub(crate) data: bool,
    /// The condition's tokens.
    pub(crate) cond: (usize, usize),
    /// The id word's token in the condition.
    id: usize,
    /// The condition, where a launch decides it ([`super::id_condition`]).
    at_launch: Option<IdCondition>,
}

impl Region {
    /// What tells it from another region of its function: its construct, span and kind.
    pub(super) fn site(&self) -> (usize, Span, bool, bool) {
        (self.key, self.span, self.after_exit, self.loop_header)
    }

    /// Why the call at token `i` under the region is divergent (`uses`: the collectives, to
    /// name the one a macro called there uses).
    pub(super) fn divergent(
        &self,
        s: &Scanned<'_>,
        i: usize,
        uses: &dyn Fn(&str) -> bool,
        unmoved: Option<NoRewrite>,
    ) -> Obstacle {
        let line = |t: usize| s.line(s.tokens[t].span.start);
        let name = s.text(i);
        let inner = match s.macros.contains_key(name) {
            true => macro_words(s, name).into_iter().find(|w| uses(w)),
            false => None,
        };
        // A name the rewrites made (a lockstep flag) that no word of the user's stands for.
        let id = match s.text(self.id) {
            w if w.starts_with(LOCKSTEP_FLAG) => "the work-items still running its loop",
            w if is_generated(w) => "a collective computed ahead",
            w => w,
        };
        Obstacle::Divergent {
            macro_name: inner.is_some().then(|| name.into()),
            collective: inner.unwrap_or_else(|| name.to_string()),
            line: line(i),
            id: id.to_string(),
            id_line: line(self.id),
            unmoved,
        }
    }
}

/// The regions of `f` whose execution depends on a work-item id.
pub(crate) fn regions(s: &Scanned<'_>, f: &FunctionDef) -> Vec<Region> {
    regions_in(s, f, s.syntax(f))
}

/// [`regions`] with `syntax`'s taint ([`Syntax::seeded`]: parameters a call passes values
/// differing between work-items).
pub(super) fn regions_in(s: &Scanned<'_>, f: &FunctionDef, syntax: &Syntax) -> Vec<Region> {
    let body = f.body;
    let (tainted, deep) = (&syntax.tainted, &syntax.deep_tainted);
    let mut regions: Vec<Region> = Vec::new();
    // Per exit word, how many of it lie before each token of the body: a region's exits in
    // constant time (scanned per region, nested regions took time quadratic in their depth).
    let counts = |w: &str| {
        let mut n = vec![0u32; body.1 - body.0 + 1];
        for t in body.0..body.1 {
            n[t - body.0 + 1] = n[t - body.0] + u32::from(s.text(t) == w);
        }
        n
    };
    let exit_counts = ["return", "break", "continue"].map(counts);
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut named = |t: usize| {
        *names
            .entry(s.text(t))
            .or_insert_with(|| users_word(s, f, t))
    };
    for c in syntax.conditionals(body.0 + 1..body.1) {
        let (k, cond, region) = (c.key, c.cond, c.body);
        // A loop's condition runs again on every iteration: a collective in it runs for the
        // work-items still looping. Its trip count differs between sub-groups when the condition
        // reads an id or a value loaded at an id (`sub_group_all(x[i] > k)`): uniform in each
        // sub-group through the collective, not in the work-group.
        if let Some(header) = loop_header(s, c) {
            if let Some(id) = id_word(s, cond, tainted).or_else(|| any_word(s, cond, deep)) {
                regions.push(Region {
                    span: header,
                    key: k,
                    after_exit: false,
                    exited: None,
                    loop_header: true,
                    data: false,
                    cond,
                    id: named(id),
                    at_launch: None,
                });
            }
        }
        // A condition on a value loaded at an id is data to the layer's collectives, not to the
        // `non_uniform` built-ins, which are called there to work on the active work-items, nor
        // where a collective decides it (`sub_group_any(x[i] > 0)`: uniform in each sub-group,
        // not in the work-group; PoCL 3.1 ran such a branch for every sub-group).
        let collective = (cond.0..cond.1)
            .any(|t| s.is_call(t) && super::layer::is_sub_group_collective(s.text(t)));
        let (id, data) = match id_word(s, cond, tainted) {
            Some(id) => (id, false),
            None => match any_word(s, cond, deep) {
                Some(id) => (id, !collective),
                None => continue,
            },
        };
        let at_launch = (!data && matches!(s.text(k), "if" | "?" | "&" | "|"))
            .then(|| super::id_condition::recognise(s, f, cond))
            .flatten();
        let mut r = Region {
            span: region,
            key: k,
            after_exit: false,
            exited: None,
            loop_header: false,
            data,
            cond,
            id: named(id),
            at_launch,
        };
        regions.push(r.clone());
        // An exit inside the region makes what follows it divergent too.
        let within = |t: usize| t.clamp(body.0, body.1) - body.0;
        let [ret, mut brk, mut cont] = exit_counts
            .each_ref()
            .map(|n| n[within(region.1)] > n[within(region.0)]);
        // A `break` or `continue` of a loop (`break`: or `switch`) inside the region leaves
        // only that one.
        brk = brk && !jumps(s, f, region, "break").is_empty();
        cont = cont && !jumps(s, f, region, "continue").is_empty();
        // Later iterations of the loops around it run for part of the work-items too: after a
        // `return`, everything from the outermost loop on; after a `break`, the whole innermost
        // loop (its condition included); after a `continue`, the rest of the iteration.
        r.after_exit = true;
        if !(ret || brk || cont) {
            continue; // (the loops around every region took time quadratic in their number)
        }
        let loops = enclosing_loops(s, f, region.0);
        let innermost = loops.iter().max_by_key(|l| l.0);
        if ret {
            let outermost = loops.iter().map(|l| l.0).min();
            r.exited = outermost;
            r.span = (outermost.unwrap_or(region.1).min(region.1), body.1);
            regions.push(r);
        } else if let (true, Some(&l)) = (brk, innermost) {
            (r.span, r.exited) = (l, Some(l.0));
            regions.push(r);
        } else if brk || cont {
            r.span = (region.1, innermost.map_or(region.1, |l| l.1));
            r.exited = innermost.map(|l| l.0);
            regions.push(r);
        }
    }
    regions
}

/// The token a refusal names for the word at `t` that differs between work-items: `t`, unless
/// the rewrites made that name (a lockstep flag, a collective computed ahead); then the first
/// word of the user's differing between work-items that it is assigned from (a loop's flag:
/// its condition, else what its loop's `break`s sit under), through the names made for loops
/// around it; `t` where there is none.
fn users_word(s: &Scanned<'_>, f: &FunctionDef, t: usize) -> usize {
    if !is_generated(s.text(t)) {
        return t;
    }
    let syntax = s.syntax(f);
    let users = |set: &BTreeSet<Box<str>>| -> BTreeSet<Box<str>> {
        set.iter().filter(|w| !is_generated(w)).cloned().collect()
    };
    let (tainted, deep) = (users(&syntax.tainted), users(&syntax.deep_tainted));
    let found = |r: Span| id_word(s, r, &tainted).or_else(|| any_word(s, r, &deep));
    let (mut todo, mut seen) = (vec![s.text(t)], BTreeSet::new());
    while let Some(name) = todo.pop() {
        if !seen.insert(name) {
            continue;
        }
        let exprs = syntax.assignments.iter().filter(|a| s.text(a.0) == name);
        for &(_, expr) in exprs {
            if let Some(w) = found(expr) {
                return w;
            }
            todo.extend(
                (expr.0..expr.1)
                    .map(|u| s.text(u))
                    .filter(|w| is_generated(w)),
            );
        }
        // The flag's block (`{ int L = 1; for (;; ..) { .. } }`): the conditions of its breaks.
        let first = (f.body.0..f.body.1).find(|&u| s.text(u) == name);
        let open = first.and_then(|u| (f.body.0..u).rev().find(|&o| s.text(o) == "{"));
        if let Some(w) = open.filter(|_| name.starts_with(LOCKSTEP_FLAG)) {
            if let Some(w) = found((w, s.partner(w))) {
                return w;
            }
        }
    }
    t
}

/// The calls of `f` that run: not those in the operands of `sizeof` and `__typeof__`.
pub(crate) fn evaluated_calls<'s>(
    s: &'s Scanned<'_>,
    f: &FunctionDef,
) -> impl Iterator<Item = usize> + 's + use<'s> {
    let body = f.body;
    let unevaluated: Vec<(usize, usize)> = (body.0 + 1..body.1)
        .filter(|&t| matches!(s.text(t), "sizeof" | "__typeof__" | "typeof") && s.is_call(t))
        .map(|t| (t + 1, s.partner(t + 1)))
        .collect();
    (body.0 + 1..body.1)
        .filter(move |&i| s.is_call(i) && !unevaluated.iter().any(|r| r.0 < i && i < r.1))
}

/// The first call of a word accepted by `uses` in `f` that sits under (or after an exit
/// under) a condition on a work-item id, described; else the launch-time conditions
/// ([`super::id_condition`]) that such calls sit under.
fn divergent_call(
    s: &Scanned<'_>,
    f: &FunctionDef,
    uses: &dyn Fn(&str) -> bool,
    unmoved: Unmoved,
) -> Result<Vec<IdCondition>, Obstacle> {
    let regions = regions(s, f);
    if let Some(why) = hidden_flow(s, f, &regions, uses) {
        return Err(why);
    }
    let mut conds: Vec<IdCondition> = Vec::new();
    for i in evaluated_calls(s, f).filter(|&i| uses(s.text(i))) {
        let under = || {
            regions
                .iter()
                .filter(move |r| r.span.0 <= i && i < r.span.1)
        };
        if let Some(r) = under().find(|r| r.at_launch.is_none()) {
            return Err(r.divergent(s, i, uses, unmoved(s, f, &regions, i)));
        }
        for c in under().filter_map(|r| r.at_launch.as_ref()) {
            if !conds.contains(c) {
                conds.push(c.clone());
            }
        }
    }
    match super::passed::divergent_argument(s, f, s.syntax(f), uses, 0) {
        Some(why) => Err(why),
        None => Ok(conds),
    }
}

/// Control flow in macros: a statement's, or an expression's (where the macro's text or
/// arguments use collectives).
const STATEMENT_FLOW: [&str; 9] = [
    "if", "while", "for", "do", "switch", "goto", "return", "break", "continue",
];
const EXPRESSION_FLOW: [&str; 3] = ["?", "&&", "||"];

/// Why `f`, which uses a collective (a word `uses` accepts), is refused for control flow the
/// scanner does not follow: a `goto` where `f` has conditions on a work-item's value
/// (`regions`), or a use of a macro whose replacement list (through the macros it names) holds
/// control flow ([`STATEMENT_FLOW`], [`EXPRESSION_FLOW`]) and whose text or arguments read a
/// work-item's value.
fn hidden_flow(
    s: &Scanned<'_>,
    f: &FunctionDef,
    regions: &[Region],
    uses: &dyn Fn(&str) -> bool,
) -> Option<Obstacle> {
    let used = evaluated_calls(s, f).find(|&i| uses(s.text(i)))?;
    let line = |t: usize| s.line(s.tokens[t].span.start);
    let collective = (s.text(used).to_string(), line(used));
    let body = f.body.0 + 1..f.body.1;
    if let Some(t) = body
        .clone()
        .find(|&t| s.text(t) == "goto" && !regions.is_empty())
    {
        let flow = ("goto".to_string(), line(t), None);
        return Some(Obstacle::HiddenFlow { collective, flow });
    }
    let deep = &s.syntax(f).deep_tainted;
    let varying = |w: &str| deep.contains(w) || w == "[" || builtins::flags(w).has(Flags::ID);
    let mut texts: HashMap<&str, Vec<String>> = HashMap::new();
    for t in body.filter(|&t| s.macros.contains_key(s.text(t))) {
        let name = s.text(t);
        let words = texts.entry(name).or_insert_with(|| macro_words(s, name));
        let args = match s.is_fn_macro(name) && s.text(t + 1) == "(" {
            true => t + 2..s.partner(t + 1),
            false => t..t,
        };
        let args_use = args.clone().any(|u| s.is_call(u) && uses(s.text(u)));
        let args_read = args.clone().any(|u| varying(s.text(u)));
        // A statement's condition (`if (..)`, loops, `switch`) or a jump reading a work-item's
        // value; `?:`, `&&` or `||` around a collective of its arguments, or its own where
        // they read one.
        let flow = (0..words.len()).find(|&n| {
            let w = words[n].as_str();
            let read = match condition(words, n) {
                Some(c) => c.iter().any(|w| varying(w)),
                None => STATEMENT_FLOW.contains(&w) && words.iter().any(|w| varying(w)),
            };
            let own = args_read && words.iter().any(|w| uses(w));
            STATEMENT_FLOW.contains(&w) && (read || args_read)
                || EXPRESSION_FLOW.contains(&w) && (args_use && (args_read || read) || own)
        });
        if let Some(word) = flow.map(|n| words[n].clone()) {
            let flow = (name.to_string(), line(t), Some(word.clone()));
            return Some(Obstacle::HiddenFlow { collective, flow });
        }
    }
    None
}

/// The words of the condition after word `n` of `words` where that is `if`, `while`, `for` or
/// `switch` and the condition closes.
fn condition(words: &[String], n: usize) -> Option<&[String]> {
    if !matches!(words[n].as_str(), "if" | "while" | "for" | "switch") {
        return None;
    }
    let mut depth = 0i32;
    for (m, w) in words.iter().enumerate().skip(n + 1) {
        depth += i32::from(w == "(") - i32::from(w == ")");
        if depth == 0 {
            return Some(&words[n + 1..m]);
        }
    }
    None
}

/// The words of macro `name`'s replacement lists and of the macros they name (`&&` and `||`
/// as one word each).
fn macro_words(s: &Scanned<'_>, name: &str) -> Vec<String> {
    let (mut words, mut todo, mut seen) = (Vec::new(), vec![name], BTreeSet::new());
    while let Some(m) = todo.pop() {
        if !seen.insert(m) {
            continue;
        }
        for body in s.macros.get(m).into_iter().flatten() {
            for (n, tok) in body.iter().enumerate() {
                let w = &s.src[tok.span.clone()];
                let next = body.get(n + 1).filter(|t| t.span.start == tok.span.end);
                match next.map(|t| &s.src[t.span.clone()]) {
                    Some(x) if x == w && matches!(w, "&" | "|") => words.push(format!("{w}{w}")),
                    _ => words.push(w.to_string()),
                }
                if let Some((key, _)) = s.macros.get_key_value(w) {
                    todo.push(key);
                }
            }
        }
    }
    words
}

/// The `break`s (or `continue`s: `jump`) in tokens `span` of `f` that leave the construct
/// around `span`: not those of a loop (or, for `break`, a `switch`) inside it.
pub(crate) fn jumps(s: &Scanned<'_>, f: &FunctionDef, (a, b): Span, jump: &str) -> Vec<usize> {
    let inner: Vec<Span> = (s.syntax(f).constructs(a..b))
        .filter(|i| match s.text(i.key) {
            "for" | "while" | "do" => true,
            w => w == "switch" && jump == "break",
        })
        .map(|i| (i.key, i.end))
        .collect();
    (a..b)
        .filter(|&t| s.text(t) == jump && !inner.iter().any(|&(x, y)| x < t && t < y))
        .collect()
}

/// If `c` is a loop, the tokens evaluated on every iteration besides its body: the condition
/// of a `while` or `do`, the condition and increment of a `for`.
fn loop_header(s: &Scanned<'_>, c: &Conditional) -> Option<Span> {
    let cond = c.cond;
    match s.text(c.key) {
        "while" | "do" => Some(cond),
        "for" => {
            let mut t = cond.0;
            while t < cond.1 && s.text(t) != ";" {
                t = match s.text(t) {
                    "(" | "[" | "{" => s.partner(t) + 1,
                    _ => t + 1,
                };
            }
            Some((t.min(cond.1), cond.1))
        }
        _ => None,
    }
}

/// The loops of `f` that contain token `at`: each from its keyword to its end (a `do` loop's
/// condition included).
fn enclosing_loops(s: &Scanned<'_>, f: &FunctionDef, at: usize) -> Vec<Span> {
    (s.syntax(f).constructs(f.body.0 + 1..at))
        .filter(|c| matches!(s.text(c.key), "for" | "while" | "do"))
        .map(|c| (c.key, c.end))
        .filter(|l| l.0 <= at && at < l.1)
        .collect()
}

#[cfg(test)]
#[path = "divergence_tests.rs"]
mod tests;
