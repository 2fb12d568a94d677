//! The function definitions of a scanned text: each top-level item that ends at a body's `}`
//! and whose header names a function (or a function-like macro that writes its name).

use super::{FunctionDef, Kind, Scanned};

impl Scanned<'_> {
    /// Top-level items: each ends at a `;` or at a function body's `}`.
    pub(super) fn find_functions(&self) -> Vec<FunctionDef> {
        let mut out = Vec::new();
        let (mut start, mut j) = (0, 0);
        while j < self.tokens.len() {
            if self.is_punct(j, "(") || self.is_punct(j, "[") {
                j = self.partner[j] + 1;
            } else if self.is_punct(j, ";") {
                start = j + 1;
                j += 1;
            } else if self.is_punct(j, "{") {
                let close = self.partner[j];
                if let Some(f) = self.function_header(start, j) {
                    out.push(f);
                    start = close + 1;
                }
                j = close + 1;
            } else {
                j += 1;
            }
        }
        out
    }

    /// Whether token `i` is an identifier naming an attribute-like group (`__attribute__`, or a
    /// `CLG_` macro such as `CLG_REQD_SUB_GROUP_SIZE`).
    pub(super) fn is_attribute_name(&self, i: usize) -> bool {
        let t = self.text(i);
        self.tokens[i].kind == Kind::Ident
            && (t == "__attribute__" || t == "__attribute" || t.starts_with("CLG_"))
    }

    /// If tokens `start..open_brace` are a function header, the function.
    fn function_header(&self, start: usize, open_brace: usize) -> Option<FunctionDef> {
        let mut end = open_brace; // exclusive
        loop {
            if end <= start + 1 || !self.is_punct(end - 1, ")") {
                return None;
            }
            let open = self.partner[end - 1];
            if open <= start {
                return None;
            }
            // `HEAD(k)(...) {`: a function-like macro writes the name (the function is named
            // after the macro, as for `HEAD(float) {`), the parameters follow.
            let made = (open > start + 1 && self.is_punct(open - 1, ")"))
                .then(|| self.partner[open - 1])
                .filter(|&o| o > start && self.fn_macros.contains(self.text(o - 1)));
            if let Some(o) = made {
                return Some(FunctionDef {
                    name: self.text(o - 1).to_string(),
                    is_kernel: false,
                    decl: start,
                    item: start,
                    name_tok: o - 1,
                    open_paren: open,
                    body: (open_brace, self.partner[open_brace]),
                });
            }
            if self.tokens[open - 1].kind != Kind::Ident {
                return None;
            }
            if self.is_attribute_name(open - 1) {
                end = open - 1;
                continue;
            }
            let name_tok = open - 1;
            let specifiers = self.top_level(start, name_tok);
            if specifiers.iter().any(|&i| self.is_punct(i, "=")) {
                return None;
            }
            let kernel_kw = specifiers
                .iter()
                .copied()
                .find(|&i| matches!(self.text(i), "kernel" | "__kernel"));
            return Some(FunctionDef {
                name: self.text(name_tok).to_string(),
                is_kernel: kernel_kw.is_some(),
                decl: kernel_kw.map_or(start, |kw| self.extend_back(start, kw)),
                item: start,
                name_tok,
                open_paren: open,
                body: (open_brace, self.partner[open_brace]),
            });
        }
    }

    /// Token indices in `from..to` that are not inside brackets.
    pub(super) fn top_level(&self, from: usize, to: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = from;
        while i < to {
            out.push(i);
            i = if self.is_punct(i, "(") || self.is_punct(i, "[") {
                self.partner[i] + 1
            } else {
                i + 1
            };
        }
        out
    }

    /// Extends a declaration back from its `kernel` keyword over attributes and `void`.
    fn extend_back(&self, start: usize, kw: usize) -> usize {
        let mut first = kw;
        while first > start {
            let prev = first - 1;
            if self.text(prev) == "void" {
                first = prev;
            } else if self.is_punct(prev, ")") {
                let open = self.partner[prev];
                if open > start && self.is_attribute_name(open - 1) {
                    first = open - 1;
                } else {
                    break;
                }
            } else {
                break;
            }
        }
        first
    }
}
