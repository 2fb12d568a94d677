//! [`footprint`]: a kernel body's buffer accesses read as [`Poly`]nomials.
//!
//! Recognised: `p[E]` where `E` is built with `+`, `-`, `*`, parentheses and integer casts
//! from integer literals, `get_global_id`/`get_local_id`/`get_group_id`/`get_global_size`/
//! `get_local_size`/`get_global_offset` of a literal dimension, `get_global_linear_id()`,
//! integer scalar parameters the body never changes, integer locals set once at their
//! declaration and never changed in their scope (`int px = get_global_id(0), py = ...;`),
//! object-like macros that are one integer literal, and variables of counted loops
//! `for ([T] k = A; k < B; k++)` (`<=`, `++k`, `k += c` too) that the loop body does not change.
//! Anything else makes the parameter's reads and writes unknown, as do a use of the
//! parameter that is not `p[...]` (pointer arithmetic, an alias, a call, `&p[i]`), a macro
//! whose body mentions it or whose call's arguments do, and token pasting anywhere. A name in
//! parentheses counts as the name (`(j) = 1` changes `j`, `(p[i]) = v` writes `p[i]`).

use super::pointee::pointee_size;
use super::{Footprint, Poly, Sym, Uses};
use crate::transform::lex::{parse_c_integer, Kind};
use crate::transform::source::{KernelDecl, Param, Scanned};
use std::collections::HashSet;

/// Integer type words a local or loop variable may be declared with (wider than 16 bits).
const INT_WORDS: &[&str] = &[
    "int",
    "uint",
    "unsigned",
    "signed",
    "long",
    "ulong",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
];
const QUALIFIERS: &[&str] = &["const", "private", "__private"];

pub(super) fn is_type_word(w: &str) -> bool {
    INT_WORDS.contains(&w) || QUALIFIERS.contains(&w)
}

/// The deepest expression nesting read (deeper: unknown).
pub(super) const MAX_DEPTH: usize = 64;

/// The footprint of kernel `k` of `scanned`: never panics, whatever the text.
pub(crate) fn footprint(scanned: &Scanned, k: &KernelDecl) -> Footprint {
    let unknown = || Footprint {
        params: vec![
            Uses {
                reads: None,
                writes: None,
            };
            k.params.len()
        ],
        loops: Vec::new(),
        steps: Vec::new(),
        scalars: k.params.iter().map(scalar_sign).collect(),
        pointees: k.params.iter().map(|p| pointee_size(scanned, p)).collect(),
    };
    let toks: Vec<(Kind, &str)> = scanned
        .tokens
        .iter()
        .filter(|t| t.span.start > k.body.start && t.span.end < k.body.end)
        .filter_map(|t| Some((t.kind, scanned.src.get(t.span.clone())?)))
        .collect();
    let Some(partner) = partners(&toks) else {
        return unknown();
    };
    let macro_toks = scanned.macros.values().flatten().flatten();
    let mut tainted: HashSet<&str> = HashSet::new();
    for t in macro_toks {
        let text = scanned.src.get(t.span.clone()).unwrap_or("#");
        if text == "#" {
            // Token pasting or stringizing: any name may be made.
            return unknown();
        }
        if t.kind == Kind::Ident {
            tainted.insert(text);
        }
    }
    // Names passed to a macro may be assigned or have their address taken by it, unless
    // its body can do neither and its call is not itself changed (`M(x) = 1`, `++M(x)`).
    for (j, &(kind, w)) in toks.iter().enumerate() {
        if kind == Kind::Ident && scanned.macros.contains_key(w) && at(&toks, j + 1) == "(" {
            let end = partner[j + 1];
            if pure_macro(scanned, w) && !modified(&toks, j) && !modified(&toks, end) {
                continue;
            }
            for &(kind, arg) in &toks[j + 2..end.max(j + 2)] {
                if kind == Kind::Ident {
                    tainted.insert(arg);
                }
            }
        }
    }
    let mut a = Analysis {
        toks: &toks,
        partner: &partner,
        params: &k.params,
        scalars: k.params.iter().map(scalar_sign).collect(),
        tainted,
        bindings: Vec::new(),
        loops: Vec::new(),
        steps: Vec::new(),
        scanned,
        body_start: k.body.start,
        stable_params: Vec::new(),
    };
    // Scalar parameters the body never changes nor declares again.
    a.stable_params = (k.params.iter())
        .map(|p| (0..toks.len()).all(|q| toks[q].1 != p.name || !a.changes_or_declares(q)))
        .collect();
    a.walk();
    let params = (k.params.iter())
        .map(|p| match p.is_pointer {
            true => a.uses(&p.name, None),
            false => Uses::default(),
        })
        .collect();
    Footprint {
        params,
        loops: a.loops,
        steps: a.steps,
        scalars: a.scalars,
        pointees: (k.params.iter())
            .map(|p| pointee_size(scanned, p))
            .collect(),
    }
}

/// Whether every definition of macro `name` is an expression that can change nothing
/// it is given: no assignment, increment, decrement, address, declaration, block or
/// statement, and no other macro (whose body could).
fn pure_macro(scanned: &Scanned, name: &str) -> bool {
    let defs = scanned.macros.get(name).map_or(&[][..], |d| &d[..]);
    defs.iter().all(|def| {
        let text: Vec<&str> = (def.iter())
            .map(|t| scanned.src.get(t.span.clone()).unwrap_or("#"))
            .collect();
        let changes = |i: usize| match text[i] {
            "=" | "&" | "{" | ";" | "#" => true,
            "+" | "-" => text.get(i + 1) == Some(&text[i]),
            w => is_type_word(w) || scanned.macros.contains_key(w),
        };
        !(0..text.len()).any(changes)
    })
}

/// Whether an integer scalar parameter is signed (`None`: not an integer scalar formulas
/// may use: pointers, floats, vectors, `char`, typedefs).
fn scalar_sign(p: &Param) -> Option<bool> {
    if p.is_pointer {
        return None;
    }
    let words: Vec<&str> = crate::transform::lex::words(&p.text)
        .filter(|w| *w != p.name)
        .collect();
    let ints = [
        "int", "uint", "unsigned", "signed", "long", "ulong", "size_t",
    ];
    let base = ["short", "ushort"];
    let known = |w: &&str| ints.contains(w) || base.contains(w) || QUALIFIERS.contains(w);
    if words.is_empty() || !words.iter().all(known) || words.iter().all(|w| QUALIFIERS.contains(w))
    {
        return None;
    }
    let unsigned = words
        .iter()
        .any(|w| matches!(*w, "uint" | "ulong" | "ushort" | "unsigned" | "size_t"));
    Some(!unsigned)
}

/// Bracket partners of the body's tokens (`usize::MAX` for others); `None` if unbalanced.
fn partners(toks: &[(Kind, &str)]) -> Option<Vec<usize>> {
    let mut out = vec![usize::MAX; toks.len()];
    let mut stack: Vec<usize> = Vec::new();
    for (i, &(_, t)) in toks.iter().enumerate() {
        match t {
            "(" | "[" | "{" => stack.push(i),
            ")" | "]" | "}" => {
                let o = stack.pop()?;
                let want = match t {
                    ")" => "(",
                    "]" => "[",
                    _ => "{",
                };
                if toks[o].1 != want {
                    return None;
                }
                out[o] = i;
                out[i] = o;
            }
            _ => {}
        }
    }
    stack.is_empty().then_some(out)
}

pub(super) fn at<'a>(toks: &[(Kind, &'a str)], i: usize) -> &'a str {
    toks.get(i).map_or("", |t| t.1)
}

/// A name bound to a value over the tokens `region` (`None`: its value is not known).
pub(super) struct Binding<'a> {
    pub(super) name: &'a str,
    pub(super) region: (usize, usize),
    pub(super) value: Option<Poly>,
}

pub(super) struct Analysis<'a, 's> {
    pub(super) toks: &'s [(Kind, &'a str)],
    pub(super) partner: &'s [usize],
    pub(super) params: &'s [Param],
    pub(super) scalars: Vec<Option<bool>>,
    pub(super) tainted: HashSet<&'a str>,
    pub(super) bindings: Vec<Binding<'a>>,
    pub(super) loops: Vec<(Poly, Poly)>,
    pub(super) steps: Vec<Option<Poly>>,
    pub(super) scanned: &'s Scanned<'s>,
    /// The byte offset of the body's `{`.
    pub(super) body_start: usize,
    /// Per parameter: never changed nor declared again in the body.
    pub(super) stable_params: Vec<bool>,
}

impl<'a> Analysis<'a, '_> {
    pub(super) fn t(&self, i: usize) -> &'a str {
        at(self.toks, i)
    }

    pub(super) fn is_ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.0 == Kind::Ident)
    }

    /// Registers the loops and declarations of the body, in order.
    fn walk(&mut self) {
        for j in 0..self.toks.len() {
            if self.t(j) == "for" && self.t(j + 1) == "(" {
                self.for_loop(j);
            }
            let starts_decl = is_type_word(self.t(j))
                && (j == 0 || matches!(self.t(j - 1), ";" | "{" | "}" | "("));
            if starts_decl {
                self.declaration(j);
            }
        }
    }

    /// The end of the innermost block containing token `j` (the body's end at top level).
    fn block_end(&self, j: usize) -> usize {
        let mut depth = 0usize;
        for q in (0..j).rev() {
            match self.t(q) {
                "}" => depth += 1,
                "{" if depth == 0 => return self.partner[q],
                "{" => depth -= 1,
                _ => {}
            }
        }
        self.toks.len()
    }

    /// The end of the expression starting at `i`: the first `,` or `;` outside brackets
    /// (or a closing bracket, or the end).
    pub(super) fn expr_end(&self, mut i: usize) -> usize {
        while i < self.toks.len() {
            match self.t(i) {
                "," | ";" | ")" | "]" | "}" => return i,
                "(" | "[" | "{" => i = self.partner[i] + 1,
                _ => i += 1,
            }
        }
        i
    }

    /// `T a = E, b, c = F;` at `j` (the first type word).
    fn declaration(&mut self, j: usize) {
        let mut i = j;
        while is_type_word(self.t(i)) {
            i += 1;
        }
        if (j..i).all(|q| QUALIFIERS.contains(&self.t(q))) {
            return;
        }
        loop {
            if !self.is_ident(i) || is_type_word(self.t(i)) {
                return;
            }
            let name = self.t(i);
            match (self.t(i + 1), self.t(i + 2)) {
                ("=", next) if next != "=" => {
                    let end = self.expr_end(i + 2);
                    let value = self.expr(i + 2, end);
                    let region = (end, self.block_end(j));
                    self.bind(name, region, value, &[i]);
                    i = end;
                }
                ("," | ";", _) => i += 1,
                _ => return,
            }
            match self.t(i) {
                "," => i += 1,
                _ => return,
            }
        }
    }

    /// Binds `name` over `region` to `value`, unless something in the region (other than
    /// the tokens `own`) may change it or declare another `name`, or, in a source with `#if`
    /// (whose branches may each declare it), anything else in the body declares a `name`.
    fn bind(&mut self, name: &'a str, region: (usize, usize), value: Option<Poly>, own: &[usize]) {
        let others = |q: usize| !own.contains(&q) && self.t(q) == name;
        let twice = self.scanned.has_conditionals()
            && (0..self.toks.len()).any(|q| others(q) && self.declared(q));
        let stable = !self.tainted.contains(name)
            && !twice
            && (region.0..region.1.min(self.toks.len()))
                .all(|q| !others(q) || !self.changes_or_declares(q));
        let value = value.filter(|_| stable);
        self.bindings.push(Binding {
            name,
            region,
            value,
        });
    }

    /// Whether the identifier at `q` is assigned, incremented, decremented, has its address
    /// taken, or is declared (an identifier or `*` before it) there.
    pub(super) fn changes_or_declares(&self, q: usize) -> bool {
        modified(self.toks, q) || self.declared(q)
    }

    /// Whether an identifier before token `q`, or before the parentheses around it, may
    /// declare it (`float q`, `idx_t q`, `int (q)`; `f(q);` too, as it may be `T (q);`).
    pub(super) fn declared(&self, q: usize) -> bool {
        let keyword = ["return", "else", "do", "case", "sizeof"];
        let mut q = q;
        while q > 0 && self.t(q - 1) == "(" {
            q -= 1;
        }
        let control = ["if", "while", "for", "switch"];
        let statement = q < 2 || matches!(self.t(q - 2), ";" | "{" | "}") || self.is_ident(q - 2);
        let through_parens =
            q == 0 || self.t(q) != "(" || statement && !control.contains(&self.t(q - 1));
        q > 0 && self.is_ident(q - 1) && !keyword.contains(&self.t(q - 1)) && through_parens
    }

    /// `for ([T] k = A; k < B; k++) BODY` at `j`.
    fn for_loop(&mut self, j: usize) {
        let (open, close) = (j + 1, self.partner[j + 1]);
        let mut semis = Vec::new();
        let mut i = open + 1;
        while i < close {
            match self.t(i) {
                ";" => {
                    semis.push(i);
                    i += 1;
                }
                "(" | "[" | "{" => i = self.partner[i] + 1,
                _ => i += 1,
            }
        }
        let &[s1, s2] = &semis[..] else { return };
        // init
        let mut i = open + 1;
        let declared = is_type_word(self.t(i));
        while is_type_word(self.t(i)) {
            i += 1;
        }
        if !self.is_ident(i) || self.t(i + 1) != "=" || self.t(i + 2) == "=" {
            return;
        }
        let (name, name_at) = (self.t(i), i);
        if declared && (open + 1..i).all(|q| QUALIFIERS.contains(&self.t(q))) {
            return;
        }
        let mentions = |a: usize, b: usize| (a..b).any(|q| self.t(q) == name);
        if mentions(i + 2, s1) || !(declared || self.declared_as_int(name)) {
            return;
        }
        let lo = self.expr(i + 2, s1);
        // condition
        let strict = match (self.t(s1 + 1) == name, self.t(s1 + 2), self.t(s1 + 3)) {
            (true, "<", "=") => false,
            (true, "<", t) if t != "<" => true,
            _ => return,
        };
        let b_at = if strict { s1 + 3 } else { s1 + 4 };
        if mentions(b_at, s2) {
            return;
        }
        let hi = self.expr(b_at, s2).and_then(|b| match strict {
            true => b.sub(&Poly::constant(1)),
            false => Some(b),
        });
        // increment
        let incr: Vec<&str> = (s2 + 1..close).map(|q| self.t(q)).collect();
        // A positive step (a literal, or a size, as grid-stride loops take): every value is
        // in [A, B - 1].
        let sizes = ["get_global_size", "get_local_size", "get_num_groups"];
        let step_ok = match incr[..] {
            [v, "+", "+"] | ["+", "+", v] => v == name,
            [v, "+", "=", c] => v == name && parse_c_integer(c).is_some_and(|c| c > 0),
            [v, "+", "=", f, "(", d, ")"] => {
                v == name && sizes.contains(&f) && parse_c_integer(d).is_some_and(|d| d < 3)
            }
            _ => false,
        };
        if !step_ok {
            return;
        }
        // The step where it is more than 1 (its values then lie on a progression).
        let step = match incr[..] {
            [_, "+", "=", c] => {
                parse_c_integer(c).and_then(|c| Some(Poly::constant(c.try_into().ok()?)))
            }
            [_, "+", "=", "get_global_size", "(", d, ")"] => {
                parse_c_integer(d).map(|d| Poly::sym(Sym::GlobalSize(d as u8)))
            }
            [_, "+", "=", "get_local_size", "(", d, ")"] => {
                parse_c_integer(d).map(|d| Poly::sym(Sym::LocalSize(d as u8)))
            }
            _ => None,
        };
        let body_end = match self.t(close + 1) {
            "{" => self.partner[close + 1] + 1,
            _ => {
                let end = self.expr_end(close + 1);
                let nested = (close + 1..end).any(|q| {
                    matches!(
                        self.t(q),
                        "if" | "for" | "while" | "do" | "else" | "switch" | "{"
                    )
                });
                if nested || self.t(end) != ";" {
                    return;
                }
                end + 1
            }
        };
        let value = match (lo, hi) {
            (Some(lo), Some(hi)) if self.loops.len() < usize::from(u16::MAX) => {
                self.loops.push((lo, hi));
                self.steps.push(step);
                Some(Poly::sym(Sym::Loop((self.loops.len() - 1) as u16)))
            }
            _ => None,
        };
        let mut own: Vec<usize> = (s2 + 1..close).collect();
        own.push(name_at);
        // From the condition's `k` on: after the init's own declaration (if any) of `k`.
        self.bind(name, (s1 + 1, body_end.min(self.toks.len())), value, &own);
    }

    /// Whether the first occurrence of `name` in the body is in a declaration list of
    /// integer type words (`int i, j, k;`), so that an undeclared loop init sets an integer.
    fn declared_as_int(&self, name: &str) -> bool {
        let Some(first) = (0..self.toks.len()).find(|&q| self.t(q) == name) else {
            return false;
        };
        let mut q = first;
        while q > 0 && !matches!(self.t(q - 1), ";" | "{" | "}") {
            q -= 1;
        }
        let mut i = q;
        while is_type_word(self.t(i)) {
            i += 1;
        }
        i > q
            && !(q..i).all(|w| QUALIFIERS.contains(&self.t(w)))
            && (i..=first).all(|w| self.t(w) == "," || self.is_ident(w) && !is_type_word(self.t(w)))
            && matches!(self.t(first + 1), "," | ";")
    }
}

/// The tokens `(first, last)` of the operand `toks[q..=end]` with the parentheses around it
/// (`((j))`), unless they are a call's or a statement's (`f(j)`, `while (j)`).
pub(super) fn parenthesized(toks: &[(Kind, &str)], q: usize, end: usize) -> (usize, usize) {
    let (mut first, mut last) = (q, end);
    while first >= 1 && at(toks, first - 1) == "(" && at(toks, last + 1) == ")" {
        let before = first.checked_sub(2).and_then(|b| toks.get(b));
        let opens_expr = before.is_none_or(|&(kind, w)| {
            kind != Kind::Ident || matches!(w, "else" | "do" | "return" | "case")
        });
        if !opens_expr {
            break;
        }
        (first, last) = (first - 1, last + 1);
    }
    (first, last)
}

/// Whether the identifier at `q` is assigned, incremented, decremented or has its address
/// taken there, parenthesized or not (punctuation tokens are single characters).
pub(super) fn modified(toks: &[(Kind, &str)], q: usize) -> bool {
    let t = |i: usize| at(toks, i);
    let (first, q) = parenthesized(toks, q, q);
    let (n1, n2, n3) = (t(q + 1), t(q + 2), t(q + 3));
    let p = |k: usize| first.checked_sub(k).map_or("", t);
    (n1 == "=" && n2 != "=")
        || (matches!(n1, "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^") && n2 == "=")
        || (n1 == "+" && n2 == "+")
        || (n1 == "-" && n2 == "-")
        || matches!((n1, n2, n3), ("<", "<", "=") | (">", ">", "="))
        || (p(1) == "+" && p(2) == "+")
        || (p(1) == "-" && p(2) == "-")
        || address_of(toks, first)
}

/// Whether the `&` before token `q` takes its address (not `a & q`, nor `a && q`).
pub(super) fn address_of(toks: &[(Kind, &str)], q: usize) -> bool {
    let p = |k: usize| q.checked_sub(k).map_or("", |i| at(toks, i));
    let operand = |k: usize| {
        q.checked_sub(k)
            .and_then(|i| toks.get(i))
            .is_some_and(|t| t.0 != Kind::Punct)
            || matches!(p(k), ")" | "]")
    };
    let logical_and = p(2) == "&" && p(3) != "&" && (operand(3) || p(3).is_empty());
    p(1) == "&" && !operand(2) && !logical_and
}
