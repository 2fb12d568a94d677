//! The statement and condition regions of a function, computed once per scanned text (on first
//! use, per function): each control construct (`if`/`for`/`while`/`switch`/`do`: its
//! condition, the statement it controls and where that ends), each `&&` / `||` / `?:` chain
//! (its condition and the tokens evaluated on one side of it), and the assignments to
//! variables, and the words whose values may differ between work-items. The divergence
//! analysis, the hoist, the mask and the uniformity analysis read them here
//! ([`Scanned::syntax`]) instead of deriving them from the tokens again.

use super::taint::{any_word, assignments, id_word, tainted, Seeds};
use super::{FunctionDef, Kind, Scanned};
use std::collections::BTreeSet;
use std::ops::Range;

/// Tokens `a..b`.
pub(crate) type Span = (usize, usize);

/// A construct or chain at token `key` whose `body` runs only where its `cond` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Conditional {
    /// The keyword (`if`, `for`, `while`, `switch`, `do`), the `?` of a conditional expression,
    /// or the first `&` / `|` of `&&` / `||`.
    pub(crate) key: usize,
    /// The condition's tokens (a chain's: back to an assignment, `return`, an opening bracket,
    /// `,`, `;`, a brace or another `?`/`:`).
    pub(crate) cond: Span,
    /// A construct's controlled statement (an `if`'s `else` branch included; a `do` loop's
    /// body); a chain's tokens evaluated only on one side of it (up to the expression's end: at
    /// times more than the operand, never less).
    pub(crate) body: Span,
    /// Whether it is a chain (`&&`, `||`, `?:`), not a construct.
    pub(crate) chain: bool,
    /// The token after its statement (a construct's; a `do` loop's condition included), or
    /// after a chain's side.
    pub(crate) end: usize,
    /// A `&&` / `||`'s operands by C's precedence and associativity (`a && b || c`: `c` runs
    /// where `a && b` is false), where both are found: `((a, key), (key + 2, b))`.
    pub(crate) operands: Option<(Span, Span)>,
}

/// The regions of one function ([`Scanned::syntax`]).
#[derive(Debug)]
pub(crate) struct Syntax {
    /// Every construct and chain of the body, by key.
    conditionals: Vec<Conditional>,
    /// The assignments to variables (`v = e`, `v += e`, declarations with an initialiser,
    /// stores into private arrays, what a pointer or call may write: `super::taint`): the
    /// variable's token and the expression's tokens.
    pub(crate) assignments: Vec<(usize, Span)>,
    /// What differs between work-items before any assignment ([`Scanned::seeds`]).
    seeds: Seeds,
    /// The seeds' words by an id and the variables assigned from expressions that mention one
    /// ([`id_word`]), transitively (stores to memory, `x[i] = ..`, are not followed): what may
    /// differ between work-items.
    pub(crate) tainted: BTreeSet<Box<str>>,
    /// The same with mentions anywhere, a subscript included (`v = x[get_global_id(0)]`,
    /// [`any_word`]): memory read at a work-item's own index too.
    pub(crate) deep_tainted: BTreeSet<Box<str>>,
}

impl Syntax {
    fn new(s: &Scanned<'_>, f: &FunctionDef) -> Self {
        let body = f.body;
        let reach = Reach::new(s, body);
        let conditionals = (body.0 + 1..body.1)
            .filter_map(|k| match construct(s, k, body.1) {
                Some((cond, controlled)) => Some(Conditional {
                    key: k,
                    cond,
                    body: controlled,
                    chain: false,
                    operands: None,
                    // What `statement_end(s, k, body.1)` gives: a `do` loop ends at the `;`
                    // after its condition, any other construct with what it controls.
                    end: match s.text(k) {
                        "do" => (controlled.1..body.1)
                            .find(|&t| s.text(t) == ";")
                            .map_or(body.1, |t| t + 1),
                        _ => controlled.1,
                    },
                }),
                None => chain(s, k, body, &reach).map(|(cond, side)| Conditional {
                    key: k,
                    cond,
                    body: side,
                    chain: true,
                    end: side.1,
                    operands: match s.text(k) {
                        "&" | "|" => and_or_operands(s, body, k, &reach),
                        _ => None,
                    },
                }),
            })
            .collect();
        let assignments = assignments(s, body);
        let seeds = s.seeds(body);
        Syntax {
            conditionals,
            tainted: tainted(s, &assignments, id_word, seeds[0].clone()),
            deep_tainted: tainted(s, &assignments, any_word, seeds[1].clone()),
            assignments,
            seeds,
        }
    }

    /// The same function's with parameters `by_id` differing by a work-item's id and `deep` by
    /// its id or a value loaded at it ([`id_word`], [`any_word`]): as the function is for a
    /// call that passes them such values.
    pub(crate) fn seeded(
        &self,
        s: &Scanned<'_>,
        mut by_id: BTreeSet<Box<str>>,
        mut deep: BTreeSet<Box<str>>,
    ) -> Syntax {
        by_id.extend(self.seeds[0].iter().cloned());
        deep.extend(self.seeds[1].iter().cloned());
        Syntax {
            conditionals: self.conditionals.clone(),
            tainted: tainted(s, &self.assignments, id_word, by_id),
            deep_tainted: tainted(s, &self.assignments, any_word, deep),
            assignments: self.assignments.clone(),
            seeds: self.seeds.clone(),
        }
    }

    /// The constructs and chains whose key lies in `keys`, in source order.
    pub(crate) fn conditionals(&self, keys: Range<usize>) -> &[Conditional] {
        let from = self.conditionals.partition_point(|c| c.key < keys.start);
        let to = self.conditionals.partition_point(|c| c.key < keys.end);
        &self.conditionals[from..to.max(from)]
    }

    /// The constructs (not chains) whose key lies in `keys`, in source order.
    pub(crate) fn constructs(&self, keys: Range<usize>) -> impl Iterator<Item = &Conditional> {
        self.conditionals(keys).iter().filter(|c| !c.chain)
    }
}

impl Scanned<'_> {
    /// The regions of function `f` (one of [`Scanned::functions`]), computed on first use.
    pub(crate) fn syntax(&self, f: &FunctionDef) -> &Syntax {
        let n = self.functions.partition_point(|g| g.body.0 < f.body.0);
        self.syntax[n].get_or_init(|| Syntax::new(self, &self.functions[n]))
    }
}

/// If token `k` starts a control construct, its condition's tokens and the tokens it controls.
fn construct(s: &Scanned<'_>, k: usize, end: usize) -> Option<(Span, Span)> {
    let word = s.text(k);
    if !matches!(word, "if" | "for" | "while" | "switch" | "do") {
        return None;
    }
    if word == "do" {
        let stop = statement_end(s, k + 1, end);
        // `do body while (cond);`
        let open = (stop..end).find(|&i| s.text(i) == "(")?;
        return Some(((open + 1, s.partner(open)), (k + 1, stop)));
    }
    if s.text(k + 1) != "(" {
        return None;
    }
    let close = s.partner(k + 1);
    if word == "while" && s.text(close + 1) == ";" {
        return None; // the tail of a `do` loop
    }
    let mut stop = statement_end(s, close + 1, end);
    if word == "if" && stop < end && s.text(stop) == "else" {
        stop = statement_end(s, stop + 1, end);
    }
    Some(((k + 2, close), (close + 1, stop)))
}

/// If token `k` is the `?` of a conditional expression or starts a `&&` / `||`, its condition's
/// tokens and the tokens evaluated only on one side of it ([`Conditional`]).
fn chain(s: &Scanned<'_>, k: usize, body: Span, reach: &Reach) -> Option<(Span, Span)> {
    let pair = |i: usize, c: &str| {
        s.text(i) == c && s.text(i + 1) == c && s.tokens[i].span.end == s.tokens[i + 1].span.start
    };
    let width = match s.text(k) {
        _ if s.tokens[k].kind != Kind::Punct => return None,
        "?" => 1,
        c @ ("&" | "|") if k + 1 < body.1 && pair(k, c) && !(k > 0 && pair(k - 1, c)) => 2,
        _ => return None,
    };
    let (a, b) = (reach.after_assignment(k), reach.expression_end(k + width));
    (a < k).then_some(((a, k), (k + width, b)))
}

/// The operands of the `&&` / `||` at token `k` (its first character) of `body`
/// ([`Conditional::operands`]).
fn and_or_operands(s: &Scanned<'_>, body: Span, k: usize, reach: &Reach) -> Option<(Span, Span)> {
    let op = s.text(k);
    let pair = |t: usize, c: &str| s.text(t) == c && adjacent(s, t) && s.text(t + 1) == c;
    // The left operand: back to what binds less tightly.
    let a = match op {
        "&" => reach.after_or(k),
        _ => reach.after_assigns(k),
    };
    let mut b = k + 2;
    while b < body.1 {
        match s.text(b) {
            "(" | "[" => b = s.partner(b),
            ";" | "," | ")" | "]" | "}" | "{" | "?" | ":" => break,
            _ if assigns(s, b) || pair(b, "|") || (op == "&" && pair(b, "&")) => break,
            _ => {}
        }
        b += 1;
    }
    (a < k && k + 2 < b).then_some(((a, k), (k + 2, b)))
}

/// Where the operands of a function's chains begin and end, for every token at once (asked per
/// `?`, `&&` and `||`, the scans took time quadratic in a chain's length).
struct Reach {
    floor: usize,
    /// Back from each token, the first token of the operand that ends just before it
    /// ([`starts`]), stopping at an assignment's `=`.
    eq: Vec<usize>,
    /// The same stopping at any assignment operator ([`assigns`]).
    assigns: Vec<usize>,
    /// The same stopping at an assignment or at `||`.
    or: Vec<usize>,
    /// From each token, the end of the expression: the first `;`, `,` or closing bracket
    /// outside brackets.
    end: Vec<usize>,
}

impl Reach {
    fn new(s: &Scanned<'_>, body: Span) -> Self {
        let pair = |t: usize, c: &str| s.text(t) == c && adjacent(s, t) && s.text(t + 1) == c;
        // `=` of an assignment, not of `==`, `!=`, `<=`, `>=`.
        let eq = |t: usize| {
            s.text(t) == "="
                && !matches!(s.text(t - 1), "=" | "!" | "<" | ">")
                && (t + 1 >= s.tokens.len() || s.text(t + 1) != "=")
        };
        let or = |t: usize| (s.text(t) == "|" && t > 0 && pair(t - 1, "|")) || assigns(s, t);
        let mut end = vec![0; body.1 - body.0];
        for b in (body.0..body.1).rev() {
            let at = |b: usize| end.get(b - body.0).copied().unwrap_or(b);
            end[b - body.0] = match s.text(b) {
                "(" | "[" | "{" => at(s.partner(b).max(b) + 1),
                ";" | "," | ")" | "]" | "}" => b,
                _ => at(b + 1),
            };
        }
        Reach {
            floor: body.0,
            eq: starts(s, body, eq),
            assigns: starts(s, body, |t| assigns(s, t)),
            or: starts(s, body, or),
            end,
        }
    }

    fn after_assignment(&self, k: usize) -> usize {
        self.eq[k - self.floor]
    }

    fn after_assigns(&self, k: usize) -> usize {
        self.assigns[k - self.floor]
    }

    fn after_or(&self, k: usize) -> usize {
        self.or[k - self.floor]
    }

    fn expression_end(&self, b: usize) -> usize {
        self.end.get(b - self.floor).copied().unwrap_or(b)
    }
}

/// For every `k` of `body.0..body.1`, the first token of the operand that ends just before
/// token `k`, scanning back no further than just after `body.0`: brackets are skipped whole,
/// and the scan stops at a token that separates expressions (an opening bracket, a brace, `,`,
/// `;`, `?`, `:`, `return`) or one for which `stop` holds. In one pass: the start from `k` is
/// the start from the token before (or from the opening bracket of a bracket just before),
/// unless the scan stops there.
fn starts(s: &Scanned<'_>, body: Span, stop: impl Fn(usize) -> bool) -> Vec<usize> {
    let floor = body.0;
    let mut start: Vec<usize> = Vec::with_capacity(body.1 - floor);
    for a in floor..body.1 {
        let from = |start: &[usize], a: usize| start[a - floor];
        let v = match a.checked_sub(1) {
            Some(t) if a > floor + 1 => match s.text(t) {
                ")" | "]" if s.partner(t) < a => from(&start, s.partner(t)),
                ")" | "]" => a,
                "(" | "[" | "{" | "}" | "," | ";" | "?" | ":" | "return" => a,
                _ if stop(t) => a,
                _ => from(&start, t),
            },
            _ => a,
        };
        start.push(v);
    }
    start
}

/// Whether tokens `a` and `a + 1` touch (`&&`, not `& &`).
pub(crate) fn adjacent(s: &Scanned<'_>, a: usize) -> bool {
    a + 1 < s.tokens.len() && s.tokens[a].span.end == s.tokens[a + 1].span.start
}

/// Whether token `t` starts an assignment operator (`=`, `+=`, `<<=`, ...), not a comparison.
pub(crate) fn assigns(s: &Scanned<'_>, t: usize) -> bool {
    let next = |k: usize| {
        if k + 1 < s.tokens.len() {
            s.text(k + 1)
        } else {
            ""
        }
    };
    match s.text(t) {
        "=" => {
            next(t) != "="
                && !(t > 0 && adjacent(s, t - 1) && matches!(s.text(t - 1), "=" | "!" | "<" | ">"))
        }
        "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" => adjacent(s, t) && next(t) == "=",
        _ => false,
    }
}

/// The token after the statement that starts at `i` (a block, or up to its `;`), no further
/// than `end`. What [`construct`] reads, on a stack of its own (`if (a) if (b) ..` or
/// `else if` chains thousands long overflowed the thread's): each entry says what the
/// statement holding the current one does at its end (`Some(k)`: the `do` at token `k`;
/// `None` with `true`: an `if`, whose `else` comes next).
pub(crate) fn statement_end(s: &Scanned<'_>, i: usize, end: usize) -> usize {
    let mut holders: Vec<(Option<usize>, bool)> = Vec::new();
    let mut at = i;
    loop {
        let word = s.text(at);
        let opens = matches!(word, "if" | "for" | "while" | "switch") && s.text(at + 1) == "(";
        let mut stop = match word {
            "{" => s.partner(at) + 1,
            "do" => {
                holders.push((Some(at), false));
                at += 1;
                continue;
            }
            // The tail of a `do` loop is no construct.
            _ if opens && !(word == "while" && s.text(s.partner(at + 1) + 1) == ";") => {
                holders.push((None, word == "if"));
                at = s.partner(at + 1) + 1;
                continue;
            }
            "if" | "for" | "while" | "switch" => at + 1,
            _ => {
                let mut t = at;
                while t < end && s.text(t) != ";" {
                    t = match s.text(t) {
                        "(" | "[" | "{" => s.partner(t) + 1,
                        _ => t + 1,
                    };
                }
                (t + 1).min(end)
            }
        };
        loop {
            match holders.pop() {
                None => return stop,
                Some((None, true)) if stop < end && s.text(stop) == "else" => {
                    holders.push((None, false));
                    at = stop + 1;
                    break;
                }
                Some((None, _)) => {}
                // `do body while (cond);` ends at its `;`; without a `(` it is no construct.
                Some((Some(k), _)) => {
                    stop = match (stop..end).any(|t| s.text(t) == "(") {
                        true => (stop..end)
                            .find(|&t| s.text(t) == ";")
                            .map_or(end, |t| t + 1),
                        false => k + 1,
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan [`starts`] replaces, token by token.
    fn scanned_back(
        s: &Scanned<'_>,
        k: usize,
        floor: usize,
        stop: impl Fn(usize) -> bool,
    ) -> usize {
        let mut a = k;
        while a > floor + 1 {
            let t = a - 1;
            match s.text(t) {
                ")" | "]" => {
                    a = s.partner(t);
                    continue;
                }
                "(" | "[" | "{" | "}" | "," | ";" | "?" | ":" | "return" => break,
                _ if stop(t) => break,
                _ => {}
            }
            a = t;
        }
        a
    }

    #[test]
    fn operand_starts_in_one_pass_are_the_scans_token_by_token() {
        let src = "kernel void k(global int *o, int a, int b) {\n\
                   int v = a && b || (a ? b : a) && o[a + (b || a)] || -a;\n\
                   o[0] = v += a || b && (v = a) ? a && b : (b, a);\n\
                   if (a == b || v <= a && (a != b)) { v = a ? b ? a : b : v; }\n\
                   return; }";
        let s = Scanned::new(src).unwrap();
        let body = s.functions[0].body;
        let stops: [&dyn Fn(usize) -> bool; 3] =
            [&|_| false, &|t| assigns(&s, t), &|t| s.text(t) == "|"];
        for stop in stops {
            let fast = starts(&s, body, stop);
            for k in body.0..body.1 {
                assert_eq!(
                    fast[k - body.0],
                    scanned_back(&s, k, body.0, stop),
                    "token {k}"
                );
            }
        }
    }

    #[test]
    fn chains_thousands_long_take_linear_time() {
        let long = |op: &str| {
            let chain = vec!["x"; 40_000].join(op);
            format!("kernel void k(global int *o, int x) {{ o[0] = {chain}; }}")
        };
        for op in [" ? ", " && ", " || "] {
            let src = long(op);
            let s = Scanned::new(&src).unwrap();
            let t = std::time::Instant::now();
            let syntax = s.syntax(&s.functions[0]);
            assert!(!syntax.conditionals(0..s.tokens.len()).is_empty());
            assert!(
                t.elapsed() < std::time::Duration::from_secs(2),
                "{op}: {:?}",
                t.elapsed()
            );
        }
    }
}
