//! What may differ between work-items, per function ([`super::Syntax`]): the built-ins flagged
//! [`Flags::ID`] (ids, the sub-group's size, the collectives whose result differs between the
//! work-items of a sub-group), the user functions whose result does ([`Scanned::varying_helpers`])
//! and the variables assigned from expressions that mention one, transitively. Private arrays
//! count as variables (`a[0] = get_local_id(0)` taints `a`, and `a[0]` reads it), and so do
//! variables written where the analysis cannot follow: through a pointer into them (`int *p = a;
//! *p = ..`, `int *p = &t`) or by a call they are passed to (`get(&t)`, `memcpy(&t, ..)`), which
//! count as assigned the call.

use super::{Kind, Scanned, Span};
use crate::builtins::{self, Flags};
use std::collections::{BTreeSet, HashSet};

/// How deep chains of helpers are followed ([`Scanned::varying_helpers`]; OpenCL C has no
/// recursion, a chain defined callers first takes a round per level).
const HELPER_ROUNDS: usize = 16;

/// The words of a function that may differ between work-items: by an id, and by an id or a load.
pub(super) type Seeds = [BTreeSet<Box<str>>; 2];

impl Scanned<'_> {
    /// Whether token `t` names a private array of the function around it (declared in its body,
    /// not `local`): its elements are the work-item's own values, not memory.
    pub(crate) fn is_private_array(&self, t: usize) -> bool {
        self.private_arrays
            .get_or_init(|| private_arrays(self))
            .contains(&t)
    }

    /// The user functions whose result (returned, or stored through a parameter) may differ
    /// between work-items whatever their arguments: by an id (`uint my_lid(void) { return
    /// get_local_id(0); }`), and by an id or a load (`x[get_global_id(0)]`), once asked for.
    pub(super) fn varying_helpers(&self) -> &Seeds {
        self.varying_helpers.get_or_init(|| varying_helpers(self))
    }

    /// The words that differ between work-items before any assignment in the function of `body`:
    /// its [`Flags::ID`] built-ins and the calls of [`Scanned::varying_helpers`].
    pub(super) fn seeds(&self, body: Span) -> Seeds {
        self.seeds_with(body, self.varying_helpers())
    }

    /// [`Scanned::seeds`] with `helpers` for [`Scanned::varying_helpers`]: a helper's name only
    /// where the body calls it (a variable may have the name of another function).
    fn seeds_with(&self, body: Span, helpers: &Seeds) -> Seeds {
        let mut seeds: Seeds = Default::default();
        for t in body.0..body.1 {
            // Built-ins and helpers alike are called.
            if !self.is_call(t) {
                continue;
            }
            let w = self.text(t);
            if helpers[0].contains(w) || builtins::flags(w).has(Flags::ID) {
                seeds[0].insert(w.into());
                seeds[1].insert(w.into());
            } else if helpers[1].contains(w) {
                seeds[1].insert(w.into());
            }
        }
        seeds
    }
}

/// The tokens that name a private array in the function around them
/// ([`Scanned::is_private_array`]): each function's arrays declared `T name[..]` in its body,
/// and every mention of those names there.
fn private_arrays(s: &Scanned<'_>) -> HashSet<usize> {
    let mut out = HashSet::new();
    for f in &s.functions {
        let body = f.body;
        let declared: HashSet<&str> = (body.0 + 1..body.1)
            .filter(|&t| s.text(t + 1) == "[" && s.tokens[t].kind == Kind::Ident)
            .filter(|&t| {
                let before = s.text(t - 1);
                s.tokens[t - 1].kind == Kind::Ident
                    && !matches!(
                        before,
                        "return" | "case" | "else" | "sizeof" | "do" | "goto"
                    )
            })
            .filter(|&t| {
                // Not `local` memory: the qualifier's words back to the statement's start.
                let words = (body.0 + 1..t).rev().map(|k| s.text(k));
                !words
                    .take_while(|w| !matches!(*w, ";" | "{" | "}"))
                    .any(|w| matches!(w, "local" | "__local"))
            })
            .map(|t| s.text(t))
            .collect();
        out.extend((body.0 + 1..body.1).filter(|&t| declared.contains(s.text(t))));
    }
    out
}

/// [`Scanned::varying_helpers`]: rounds over the functions in source order (helpers mostly
/// defined before their callers) until none is added, at most [`HELPER_ROUNDS`].
fn varying_helpers(s: &Scanned<'_>) -> Seeds {
    // Per function: its assignments and what it gives its caller.
    type Read = (Vec<(usize, Span)>, Vec<Span>);
    let outputs: Vec<Read> = (s.functions.iter())
        .map(|f| (assignments(s, f.body), outputs(s, f)))
        .collect();
    let mut out: Seeds = Default::default();
    for _ in 0..HELPER_ROUNDS {
        let before = out[1].len() + out[0].len();
        let helpers = s
            .functions
            .iter()
            .zip(&outputs)
            .filter(|(f, _)| !f.is_kernel);
        for (f, (assigned, outputs)) in helpers {
            let [by_id, deep] = s.seeds_with(f.body, &out);
            let by_id = tainted(s, assigned, id_word, by_id);
            if outputs.iter().any(|&o| id_word(s, o, &by_id).is_some()) {
                out[0].insert(f.name.as_str().into());
            }
            let deep = tainted(s, assigned, any_word, deep);
            if outputs.iter().any(|&o| any_word(s, o, &deep).is_some()) {
                out[1].insert(f.name.as_str().into());
            }
        }
        if out[1].len() + out[0].len() == before {
            return out;
        }
    }
    log::debug!("helpers differing between work-items: {HELPER_ROUNDS} rounds, not settled");
    out
}

/// What function `f` gives its caller: the expressions it returns and those it stores through
/// (or into) a parameter (`*o = e`, `o[i] = e`).
fn outputs(s: &Scanned<'_>, f: &super::FunctionDef) -> Vec<Span> {
    let params = s.param_names(f).unwrap_or_default();
    let body = f.body;
    let returned = (body.0 + 1..body.1)
        .filter(|&t| s.text(t) == "return")
        .map(|t| (t + 1, expression_end(s, t + 1, body.1)));
    let stored = stores(s, body)
        .into_iter()
        .filter(|&(t, _)| params.iter().any(|p| p == s.text(t)))
        .map(|(_, e)| e);
    returned.chain(stored).collect()
}

/// The token after the expression from `t`: its `;`, or a `,` / closing bracket outside its
/// own brackets.
fn expression_end(s: &Scanned<'_>, mut t: usize, end: usize) -> usize {
    while t < end {
        match s.text(t) {
            "(" | "[" | "{" => t = s.partner(t),
            ";" | "," | ")" | "]" | "}" => return t,
            _ => {}
        }
        t += 1;
    }
    end
}

/// The prefix of the flags of loops run in lockstep (`transform::lockstep`): each says whether
/// its work-item still loops, which differs between the sub-groups of a work-group, so it is
/// tainted whatever it is assigned.
pub(crate) const LOCKSTEP_FLAG: &str = "__clg_l";

/// The words of `tainted` (a function's [`Scanned::seeds`], and parameters a call passes values
/// differing between work-items: [`super::Syntax::seeded`]), the lockstep flags and the variables
/// assigned from an expression in which `mentions` finds one, transitively.
pub(super) fn tainted(
    s: &Scanned<'_>,
    assignments: &[(usize, Span)],
    mentions: fn(&Scanned<'_>, Span, &BTreeSet<Box<str>>) -> Option<usize>,
    mut tainted: BTreeSet<Box<str>>,
) -> BTreeSet<Box<str>> {
    loop {
        let before = tainted.len();
        for &(target, expr) in assignments {
            let flag = s.text(target).starts_with(LOCKSTEP_FLAG);
            if !tainted.contains(s.text(target)) && (flag || mentions(s, expr, &tainted).is_some())
            {
                tainted.insert(s.text(target).into());
            }
        }
        if tainted.len() == before {
            return tainted;
        }
    }
}

/// The first token of `range` in `words`, outside subscripts and not subscripted (a value
/// loaded from memory is data, even at a work-item's own index; a private array's element is
/// the work-item's own value), and outside the operands of calls whose result the whole
/// work-group shares ([`group_uniform`]).
pub(crate) fn id_word(s: &Scanned<'_>, range: Span, words: &BTreeSet<Box<str>>) -> Option<usize> {
    let mut t = range.0;
    while t < range.1 {
        match s.text(t) {
            "[" => t = s.partner(t),
            _ if group_uniform(s, t) => t = s.partner(t + 1),
            w if words.contains(w) && (s.text(t + 1) != "[" || s.is_private_array(t)) => {
                return Some(t)
            }
            _ => {}
        }
        t += 1;
    }
    None
}

/// The first token of `range` in `words`, subscripts included (not in the operands of calls
/// whose result the whole work-group shares).
pub(crate) fn any_word(s: &Scanned<'_>, range: Span, words: &BTreeSet<Box<str>>) -> Option<usize> {
    let mut t = range.0;
    while t < range.1 {
        match s.text(t) {
            _ if group_uniform(s, t) => t = s.partner(t + 1),
            w if words.contains(w) => return Some(t),
            _ => {}
        }
        t += 1;
    }
    None
}

/// Whether token `t` calls a work-group function whose result every work-item of the
/// work-group shares (`work_group_any`, `work_group_reduce_add`, the lockstep vote; not the
/// scans), so that no condition on it depends on the work-item.
fn group_uniform(s: &Scanned<'_>, t: usize) -> bool {
    let flags = builtins::flags(s.text(t));
    s.is_call(t)
        && flags.has(Flags::WORK_GROUP_FUNCTION)
        && flags.has(Flags::SHARED)
        && !flags.has(Flags::PER_LANE)
}

/// The assignments of `body` to variables ([`super::Syntax::assignments`]): `v = e`, `v += e`,
/// `*v = e`, declarations with an initialiser, stores into a private array (`a[i] = e`: to `a`)
/// or through a pointer into one, and what the analysis cannot follow as assignments of what
/// may write there: a private array or an address (`&t`) assigned to a pointer `p` as assigned
/// `p` (`p` stores into it), and passed to a call as assigned the call.
pub(super) fn assignments(s: &Scanned<'_>, body: Span) -> Vec<(usize, Span)> {
    let all = stores(s, body);
    // (the array or variable, the pointer assigned its address)
    let escaped: Vec<(usize, usize)> = (all.iter())
        .flat_map(|&(p, (a, b))| (a..b).filter(|&t| escapes(s, t)).map(move |t| (t, p)))
        .collect();
    let pointers: HashSet<&str> = escaped.iter().map(|&(_, p)| s.text(p)).collect();
    let mut out: Vec<(usize, Span)> = (all.into_iter())
        .filter(|&(t, _)| {
            s.text(t + 1) != "[" || s.is_private_array(t) || pointers.contains(s.text(t))
        })
        .collect();
    out.extend(escaped.into_iter().map(|(t, p)| (t, (p, p + 1))));
    // Passed to a call: assigned the innermost call around it (asked per escaping token, not
    // per call: calls nested thousands deep took time quadratic in their depth).
    for t in (body.0 + 1..body.1).filter(|&t| escapes(s, t)) {
        if let Some(i) = call_around(s, t, body.0) {
            out.push((t, (i, s.partner(i + 1) + 1)));
        }
    }
    out
}

/// The call whose operands hold token `t`, the innermost, back to the statement's start.
fn call_around(s: &Scanned<'_>, t: usize, floor: usize) -> Option<usize> {
    let mut k = t;
    while k > floor + 1 {
        k -= 1;
        match s.text(k) {
            ")" | "]" if s.partner(k) < k => k = s.partner(k),
            "(" if s.partner(k) > t => return (k > 0 && s.is_call(k - 1)).then(|| k - 1),
            ";" | "{" | "}" => return None,
            _ => {}
        }
    }
    None
}

/// Whether token `t` lets its variable be written elsewhere: a private array's name not
/// subscripted (`a`, `a + 1`), or a variable (a private array's element) after a unary `&`.
fn escapes(s: &Scanned<'_>, t: usize) -> bool {
    if s.tokens[t].kind != Kind::Ident || s.text(t + 1) == "(" {
        return false;
    }
    let operand_end = |k: usize| {
        matches!(s.text(k), "]" | "&")
            || matches!(s.tokens[k].kind, Kind::Ident | Kind::Number)
                && !matches!(s.text(k), "return" | "case")
    };
    let unary = t > 0 && s.text(t - 1) == "&" && (t < 2 || !operand_end(t - 2));
    match (s.is_private_array(t), s.text(t + 1) == "[") {
        (true, false) => true,
        (true, true) => unary,
        (false, subscripted) => unary && !subscripted,
    }
}

/// Every assignment of `body`: its target (the array's name for `a[i] = e`) and expression.
fn stores(s: &Scanned<'_>, body: Span) -> Vec<(usize, Span)> {
    let mut out = Vec::new();
    for j in body.0 + 1..body.1 {
        if s.text(j) != "=" || matches!(s.text(j + 1), "=") {
            continue;
        }
        let mut target = j - 1;
        if matches!(s.text(target), "=" | "!" | "<" | ">") {
            continue; // a comparison
        }
        if matches!(
            s.text(target),
            "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^"
        ) {
            target -= 1;
        }
        // `a[i][j] = e`: to `a`; `*(p + i) = e`: to `p`.
        while s.text(target) == "]" && s.partner(target) > body.0 + 1 {
            target = s.partner(target) - 1;
        }
        if s.text(target) == ")" {
            let open = s.partner(target);
            target = (open..target)
                .find(|&k| s.tokens[k].kind == Kind::Ident)
                .unwrap_or(target);
        }
        // The expression: up to `;`, or `,` / `)` outside its own parentheses.
        let (mut t, mut depth) = (j + 1, 0);
        while t < body.1 {
            match s.text(t) {
                ";" | "}" => break,
                "," | ")" if depth == 0 => break,
                "(" => depth += 1,
                ")" => depth -= 1,
                "[" | "{" => t = s.partner(t),
                _ => {}
            }
            t += 1;
        }
        if s.tokens[target].kind == Kind::Ident {
            out.push((target, (j + 1, t)));
        }
    }
    out
}
