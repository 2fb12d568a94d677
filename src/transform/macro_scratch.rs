//! The emulated scratch inside `#define` replacement lists (see [`super::layer`]): kernels a
//! macro writes (kernels stamped out per type, `##`-pasted names, multi-line macros with `\`)
//! get the hidden parameter, and calls to threaded helpers made in macros get the argument. A
//! replacement list is edited like code: its tokens' spans are bytes of the source.
//!
//! Which kernels a macro writes is only known after preprocessing, so every kernel keyword in
//! a replacement list whose parameter list the same list writes gets the parameter when the
//! source uses the layer at all (the macro's arguments may bring the collectives); the
//! driver's argument info tells the host which kernels take it. A function-like macro that
//! writes the keyword without the list (`#define HEAD(n) kernel void n`) gets it where it is
//! used, in the list that follows `HEAD(k)`; a use that no list follows is reported as
//! unreached, and a function other than a kernel that a macro writes while using the layer
//! (its name, and so its calls, cannot be told) as unthreadable.

use super::edit::Threading;
use super::lex::{Kind, Token};
use super::source::Scanned;
use crate::obstacle::Obstacle;
use std::collections::{BTreeMap, BTreeSet};

/// The hidden parameter, as kernels and helpers declare it.
const PARAM: &str = "__local ulong *clg_sg_scratch";

/// The edits inside the replacement lists of `s`: calls to the `threaded` helpers get the
/// scratch and, with `used` (a word of the source or of its macros uses the layer), every
/// kernel a macro writes gets the parameter. `layer_macros` are the macros that use the layer
/// and `users` the functions: what they reach that the edits cannot is reported.
pub(crate) fn edits(
    s: &Scanned<'_>,
    threaded: &BTreeSet<&str>,
    layer_macros: &BTreeSet<String>,
    users: &BTreeSet<String>,
    used: bool,
) -> Threading {
    let mut out = Threading::default();
    // The first of each kind in the source, so that the message does not depend on hashing.
    let mut unreached: Option<(usize, Obstacle)> = None;
    let mut unthreadable: Option<(usize, Obstacle)> = None;
    let note = |slot: &mut Option<(usize, Obstacle)>, at: usize, why: Obstacle| {
        if slot.as_ref().is_none_or(|(first, _)| at < *first) {
            *slot = Some((at, why));
        }
    };
    // Function-like macros that write a kernel keyword without the parameter list (`#define
    // HEAD(name) __kernel void name`): the list follows where they are used, `HEAD(k)(...)`.
    let mut heads: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, bodies) in (s.macros.iter()).filter(|(name, _)| s.is_fn_macro(name)) {
        for tokens in bodies {
            let m = Body::new(s, tokens);
            for (i, token) in tokens.iter().enumerate() {
                if matches!(m.text(i), "kernel" | "__kernel") && m.params_after(i).is_none() {
                    heads.insert(name.as_str(), token.span.start);
                }
            }
        }
    }
    let head_why = |name: &str, at: usize| Obstacle::MacroKernelKeyword {
        name: name.to_string(),
        line: s.line(at),
    };
    for (name, bodies) in &s.macros {
        for tokens in bodies {
            let m = Body::new(s, tokens);
            let mut headers = BTreeSet::new();
            for (i, token) in tokens.iter().enumerate() {
                let w = m.text(i);
                if matches!(w, "kernel" | "__kernel") {
                    // (An object-like macro cannot name the kernel: the header goes on where it
                    // is used, which the scanner reads as a function, threaded if it uses the
                    // layer.)
                    if let Some((open, close)) = m.params_after(i) {
                        headers.insert(open);
                        if used {
                            out.edits.push(m.param_edit(open, close));
                        }
                    }
                } else if let Some(&head) = heads.get(w).filter(|_| m.is_call(i)) {
                    match m.partner[i + 1].map(|c| c + 1).filter(|&p| m.is(p, "(")) {
                        Some(open) if m.partner[open].is_some() => {
                            headers.insert(open);
                            if used {
                                out.edits
                                    .push(m.param_edit(open, m.partner[open].unwrap_or(open)));
                            }
                        }
                        _ => note(&mut unreached, token.span.start, head_why(w, head)),
                    }
                } else if threaded.contains(w) && m.is_call(i) {
                    out.edits.push(m.arg_edit(i + 1));
                }
            }
            // A function other than a kernel defined here (`T total_##T(T v) {`, or a name a
            // macro makes, `CAT(a, b)(T v) {`) that uses the layer cannot be threaded.
            if layer_macros.contains(name) {
                if let Some(open) = m.defined_function(&headers) {
                    let at = tokens[open].span.start;
                    let why = Obstacle::MacroFunction {
                        name: name.clone(),
                        line: s.line(at),
                        function: m.pasted_name(open - 1),
                    };
                    note(&mut unthreadable, at, why);
                }
            }
        }
    }
    // Heads used in the code: `HEAD(k)(global int *x) { ... }`.
    for i in (0..s.tokens.len()).filter(|&i| s.is_call(i)) {
        let Some(&head) = heads.get(s.text(i)) else {
            continue;
        };
        let open = s.partner(i + 1) + 1;
        if open < s.tokens.len() && s.text(open) == "(" {
            let close = s.partner(open);
            if used {
                out.edits.push(param_edit(s, &s.tokens, open, close));
            }
        } else {
            note(
                &mut unreached,
                s.tokens[i].span.start,
                head_why(s.text(i), head),
            );
        }
    }
    // Functions whose header is a macro's call (`HEAD(float) { ... }`): a kernel's when the
    // macro writes a kernel keyword (its parameter list edited above), else a helper whose
    // name nobody can tell.
    for f in (s.functions.iter()).filter(|f| s.is_fn_macro(&f.name) && users.contains(&f.name)) {
        let kernel = (s.macros.get(&f.name).into_iter().flatten().flatten())
            .any(|t| matches!(&s.src[t.span.clone()], "kernel" | "__kernel"));
        if !kernel {
            let at = s.tokens[f.open_paren].span.start;
            let why = Obstacle::HeaderMacroFunction {
                name: f.name.clone(),
                line: s.line(at),
            };
            note(&mut unthreadable, at, why);
        }
    }
    out.unreached = unreached.map(|(_, why)| why);
    out.unthreadable = unthreadable.map(|(_, why)| why);
    out
}

/// The edit giving the parameter list `(open, close)` of `tokens` the scratch.
fn param_edit(
    s: &Scanned<'_>,
    tokens: &[Token],
    open: usize,
    close: usize,
) -> (usize, usize, String) {
    let at = tokens[close].span.start;
    let text = |i: usize| &s.src[tokens[i].span.clone()];
    if close == open + 1 || (close == open + 2 && text(open + 1) == "void") {
        (tokens[open].span.end, at, PARAM.to_string())
    } else {
        (at, at, format!(", {PARAM}"))
    }
}

/// One replacement list: its tokens and their bracket partners within it (a bracket the list
/// does not close has none).
struct Body<'s, 'a> {
    s: &'s Scanned<'a>,
    tokens: &'s [Token],
    partner: Vec<Option<usize>>,
}

impl<'s, 'a> Body<'s, 'a> {
    fn new(s: &'s Scanned<'a>, tokens: &'s [Token]) -> Self {
        let mut partner = vec![None; tokens.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, t) in tokens.iter().enumerate() {
            let text = &s.src[t.span.clone()];
            let want = match text {
                "(" | "[" | "{" => {
                    open.push(i);
                    continue;
                }
                ")" => "(",
                "]" => "[",
                "}" => "{",
                _ => continue,
            };
            if open
                .last()
                .is_some_and(|&o| &s.src[tokens[o].span.clone()] == want)
            {
                let o = open.pop().unwrap_or(i);
                (partner[o], partner[i]) = (Some(i), Some(o));
            }
        }
        Body { s, tokens, partner }
    }

    fn text(&self, i: usize) -> &'a str {
        &self.s.src[self.tokens[i].span.clone()]
    }

    fn is(&self, i: usize, text: &str) -> bool {
        i < self.tokens.len() && self.text(i) == text
    }

    /// Whether token `i` is an identifier followed by a parenthesised list the body closes.
    fn is_call(&self, i: usize) -> bool {
        self.tokens[i].kind == Kind::Ident && self.is(i + 1, "(") && self.partner[i + 1].is_some()
    }

    /// The first bracketed list here, other than the kernel parameter lists `headers`, that
    /// a body follows (`name(...) {`, `CAT(a, b)(...) {`): a function's definition; not a
    /// statement's condition.
    fn defined_function(&self, headers: &BTreeSet<usize>) -> Option<usize> {
        const STATEMENTS: [&str; 4] = ["if", "for", "while", "switch"];
        (1..self.tokens.len()).find(|&j| {
            self.is(j, "(")
                && !headers.contains(&j)
                && !STATEMENTS.contains(&self.text(j - 1))
                && self.partner[j].is_some_and(|close| self.is(close + 1, "{"))
        })
    }

    /// The parameter list `(open, close)` of the kernel whose keyword is token `kw`: the first
    /// bracketed list after its name, which follows the return type (`void`) where the list
    /// writes one after the keyword: a list before it is an attribute's
    /// (`kernel REQD(64) void k(...)`), and a list followed by another makes the name
    /// (`CAT(k, _f)(...)`).
    fn params_after(&self, kw: usize) -> Option<(usize, usize)> {
        let end = (kw + 1..self.tokens.len())
            .find(|&j| matches!(self.text(j), "{" | "}" | ";"))
            .unwrap_or(self.tokens.len());
        let from = (kw + 1..end).find(|&j| self.is(j, "void")).unwrap_or(kw);
        let mut j = from + 1;
        let mut named = false;
        while j < end {
            match self.text(j) {
                "(" => {
                    let close = self.partner[j]?;
                    let name = named
                        || (self.tokens[j - 1].kind == Kind::Ident
                            && !is_attribute(self.text(j - 1))
                            && j - 1 > from);
                    if name && !self.is(close + 1, "(") {
                        return Some((j, close));
                    }
                    named = name;
                    j = close + 1;
                }
                _ => {
                    named = false;
                    j += 1;
                }
            }
        }
        None
    }

    /// The name whose last piece is token `i`, pasted pieces (`total_##T`) included.
    fn pasted_name(&self, i: usize) -> String {
        if self.tokens[i].kind != Kind::Ident {
            return "a name a macro makes".into();
        }
        let mut first = i;
        while first >= 3 && self.is(first - 1, "#") && self.is(first - 2, "#") {
            first -= 3;
        }
        (first..=i).map(|j| self.text(j)).collect()
    }

    /// The edit giving the parameter list `(open, close)` the scratch.
    fn param_edit(&self, open: usize, close: usize) -> (usize, usize, String) {
        param_edit(self.s, self.tokens, open, close)
    }

    /// The edit passing the scratch to the call whose argument list opens at `open`.
    fn arg_edit(&self, open: usize) -> (usize, usize, String) {
        let close = self.partner[open].unwrap_or(open);
        let at = self.tokens[close].span.start;
        let sep = if close == open + 1 { "" } else { ", " };
        (at, at, format!("{sep}clg_sg_scratch"))
    }
}

/// Whether `word` names an attribute-like group in a declaration (`__attribute__`, or a `CLG_`
/// macro such as `CLG_REQD_SUB_GROUP_SIZE`).
fn is_attribute(word: &str) -> bool {
    word == "__attribute__" || word == "__attribute" || word.starts_with("CLG_")
}

#[cfg(test)]
#[path = "macro_scratch_tests.rs"]
mod tests;
