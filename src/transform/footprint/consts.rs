//! [`const_dropped`]: the `const` pointer parameters a kernel may write through anyway. The
//! `const` of a pointee is the compiler's check only: `((global int *)x)[i] = v` is valid C,
//! and a pointer variable, a helper's parameter or a macro without the `const` drop it with a
//! warning at most, while the driver still reports the parameter `const`.
//!
//! A use keeps the `const` when it is understood: an element (`x[i]`, `*x`, `x->m`), a
//! condition or a statement of its own, an argument of a built-in that only reads through it
//! (`vload*`, `prefetch`, an asynchronous copy's source), of a user function whose parameter is
//! a `const` pointer (followed there), a `const` pointer variable it initialises or is
//! assigned to (followed), a cast to a `const` pointer. Anything else drops it: another cast,
//! a macro naming it or passed it, any other call, a non-`const` pointer variable, an
//! initializer list. Token pasting in a macro drops every parameter's.

use crate::transform::lex::{words, Kind, Token};
use crate::transform::source::{FunctionDef, KernelDecl, Scanned};
use std::collections::HashSet;

/// Built-ins that only read through their pointer arguments (name prefixes).
const READS: &[&str] = &[
    "vload",
    "prefetch",
    "printf",
    "sub_group_block_read",
    "intel_sub_group_block_read",
];
/// Asynchronous copies: they write through their first argument only.
const COPIES: &[&str] = &["async_work_group_copy", "async_work_group_strided_copy"];
/// Words before `(` that open a condition or an operand that is not evaluated.
const CONDITIONS: &[&str] = &["if", "while", "for", "switch", "sizeof", "vec_step"];
/// Words after which a statement's expression starts.
const STARTS: &[&str] = &["else", "do", "case"];

/// Per parameter of kernel `k`: whether the source may write through it although its pointee
/// is `const` (see the module docs); every one counts where the kernel is not found.
pub(crate) fn const_dropped(s: &Scanned, k: &KernelDecl) -> Vec<bool> {
    let found = s
        .functions
        .iter()
        .find(|f| f.is_kernel && f.name == k.name && s.tokens[f.body.0].span.start == k.body.start);
    let tokens = s.macros.values().flatten().flatten();
    let pasted = tokens
        .clone()
        .any(|t| s.src.get(t.span.clone()).is_none_or(|w| w == "#"));
    // By name: a typedef may hide the `*`.
    (k.params.iter())
        .map(|p| pasted || found.is_none_or(|f| Walk::new(s).drops(f, &p.name)))
        .collect()
}

/// Whether a macro's replacement list names `name` (not as one of its parameters).
fn in_macro(s: &Scanned, name: &str) -> bool {
    s.macros.values().flatten().any(|body| {
        let named = |t: &Token| t.kind == Kind::Ident && s.src.get(t.span.clone()) == Some(name);
        let params = body
            .first()
            .map_or("", |t| macro_params(s.src, t.span.start));
        body.iter().any(named) && !words(params).any(|w| w == name)
    })
}

/// The parameter list of the function-like `#define` whose replacement list starts at byte
/// `body` (`""` for an object-like one).
fn macro_params(src: &str, body: usize) -> &str {
    let head = src.get(..body).unwrap_or("");
    let head = head.trim_end_matches(|c: char| c.is_whitespace() || c == '\\');
    match head.strip_suffix(')') {
        Some(h) => h.rfind('(').map_or("", |open| &h[open + 1..]),
        None => "",
    }
}

/// What takes a pointer expression, found left of it.
enum Taker {
    /// Nothing: a statement of its own.
    Statement,
    /// `return`.
    Return,
    /// The assignment (or initialisation) at this `=`.
    Assign(usize),
    /// The call whose name is this token, as argument number `.1`.
    Call(usize, usize),
    /// A `(` grouping it, at this token.
    Group(usize),
    /// Something it may be written through.
    Unknown,
}

struct Walk<'s, 'a> {
    s: &'s Scanned<'a>,
    /// The (function body, pointer name) pairs followed.
    seen: HashSet<(usize, String)>,
}

impl<'s, 'a> Walk<'s, 'a> {
    fn new(s: &'s Scanned<'a>) -> Self {
        Walk {
            s,
            seen: HashSet::new(),
        }
    }

    fn t(&self, i: usize) -> &'a str {
        match self.s.tokens.get(i) {
            Some(_) => self.s.text(i),
            None => "",
        }
    }

    fn ident(&self, i: usize) -> bool {
        self.s.tokens.get(i).is_some_and(|t| t.kind == Kind::Ident)
    }

    /// Whether function `f` may write through pointer `name` (a parameter or a variable of
    /// `f` with a `const` pointee). A pair followed already counts where it was first.
    fn drops(&mut self, f: &FunctionDef, name: &str) -> bool {
        if !self.seen.insert((f.body.0, name.to_string())) {
            return false;
        }
        let in_macro = in_macro(self.s, name);
        let uses: Vec<usize> = (f.body.0 + 1..f.body.1)
            .filter(|&q| self.t(q) == name && self.ident(q))
            .filter(|&q| self.t(q - 1) != "." && (self.t(q - 1), self.t(q - 2)) != (">", "-"))
            .collect();
        in_macro || uses.into_iter().any(|q| self.use_drops(f, q))
    }

    /// Whether the use of pointer `q` in `f` may write through it.
    fn use_drops(&mut self, f: &FunctionDef, q: usize) -> bool {
        let Some((mut first, mut last)) = self.pointer(q, q) else {
            return false;
        };
        loop {
            let taker = match self.taker(f, first) {
                Ok(taker) => taker,
                Err(drops) => return drops,
            };
            if !matches!(taker, Taker::Group(_)) && self.assigned(last) {
                return false; // the pointer itself is assigned
            }
            match taker {
                Taker::Statement => return false,
                Taker::Return => return f.returned_pointer(self.s) != Some(true),
                Taker::Assign(eq) => {
                    return match self.const_target(f, eq) {
                        Some(alias) => self.drops(f, &alias),
                        None => true,
                    }
                }
                Taker::Call(name, arg) => match self.call_drops(name, arg) {
                    Some(true) => return true,
                    // A helper returning a pointer: what takes the call's value.
                    Some(false) => match self.pointer(name, self.s.partner(name + 1)) {
                        Some(span) => (first, last) = span,
                        None => return false,
                    },
                    None => return false,
                },
                Taker::Group(open) => match self.pointer(open, self.s.partner(open)) {
                    Some(span) => (first, last) = span,
                    None => return false,
                },
                Taker::Unknown => return true,
            }
        }
    }

    /// The pointer expression `first..=last` is, widened over an element's address
    /// (`&x[i]`, `&x->m`); `None` where it is an element (`x[i]`, `x->m`): a value.
    fn pointer(&self, first: usize, last: usize) -> Option<(usize, usize)> {
        let end = match (self.t(last + 1), self.t(last + 2)) {
            ("[", _) => self.s.partner(last + 1),
            ("-", ">") => last + 3,
            _ => return Some((first, last)),
        };
        self.unary(first - 1, "&").then_some((first - 1, end))
    }

    /// Whether `op` at `j` is a unary operator (no operand before it; a cast may be).
    fn unary(&self, j: usize, op: &str) -> bool {
        let before = |i: usize| {
            let w = self.t(i);
            (self.s.tokens[i].kind != Kind::Punct && !matches!(w, "return" | "case" | "else"))
                || w == "]"
                || w == ")" && !self.is_cast(self.s.partner(i), i)
        };
        self.t(j) == op && !before(j - 1)
    }

    /// Whether the `=` at `j` assigns (not `==`, `!=`, `<=`, `>=`; compound ones do).
    fn assigns(&self, j: usize) -> bool {
        let (p, pp) = (self.t(j - 1), self.t(j.saturating_sub(2)));
        self.t(j) == "="
            && self.t(j + 1) != "="
            && (!matches!(p, "=" | "!" | "<" | ">") || (matches!(p, "<" | ">") && pp == p))
    }

    /// Whether the expression ending at `last` is assigned to.
    fn assigned(&self, last: usize) -> bool {
        let mut j = last + 1;
        while j < self.s.tokens.len() {
            match self.t(j) {
                "(" | "[" | "{" => j = self.s.partner(j),
                ")" | "]" | "}" | ";" | "," => return false,
                "=" if self.assigns(j) => return true,
                _ => {}
            }
            j += 1;
        }
        false
    }

    /// What takes the pointer expression starting at `first` in `f`, or `Err(drops)` where
    /// the walk decides: a cast without `const` or a macro-like word drops, a dereference or a
    /// condition does not.
    fn taker(&self, f: &FunctionDef, first: usize) -> Result<Taker, bool> {
        let s = self.s;
        let (mut j, mut commas, mut adjacent) = (first - 1, 0, true);
        loop {
            if j <= f.body.0 {
                return Ok(Taker::Statement);
            }
            let w = self.t(j);
            match w {
                ")" => {
                    let open = s.partner(j);
                    if self.is_cast(open, j) && !self.const_pointer(open + 1, j) {
                        return Err(true);
                    }
                    adjacent &= self.is_cast(open, j);
                    j = open;
                }
                "]" => (j, adjacent) = (s.partner(j), false),
                "*" | "&" if adjacent && self.unary(j, w) => return Err(w == "&"),
                "(" => return Ok(self.opened(j, commas)),
                "[" => return Ok(Taker::Unknown),
                "{" => return Ok(self.braced(f, j)),
                ";" | "}" => return Ok(Taker::Statement),
                "," => (commas, adjacent) = (commas + 1, false),
                "=" if self.assigns(j) => return Ok(Taker::Assign(j)),
                "return" => return Ok(Taker::Return),
                _ if STARTS.contains(&w) => return Ok(Taker::Statement),
                "sizeof" if adjacent => return Err(false),
                // `CAST x`: a macro may cast.
                _ if adjacent && self.ident(j) => return Err(true),
                _ => adjacent &= self.s.tokens[j].kind == Kind::Punct && self.unary(j, w),
            }
            j -= 1;
        }
    }

    /// What an unmatched `(` at `open` makes of the argument or operand inside it.
    fn opened(&self, open: usize, commas: usize) -> Taker {
        let before = self.t(open - 1);
        if CONDITIONS.contains(&before) {
            Taker::Statement
        } else if self.ident(open - 1) && !matches!(before, "return" | "case" | "else") {
            Taker::Call(open - 1, commas)
        } else if commas == 0 {
            Taker::Group(open)
        } else {
            Taker::Unknown // a comma expression
        }
    }

    /// Whether `{` at `j` opens a block (not an initializer list or compound literal).
    fn braced(&self, f: &FunctionDef, j: usize) -> Taker {
        let block = match self.t(j - 1) {
            ")" => {
                let open = self.s.partner(j - 1);
                open == f.open_paren || CONDITIONS.contains(&self.t(open - 1))
            }
            "=" | "," | "(" | "{" => false,
            _ => true,
        };
        match block {
            true => Taker::Statement,
            false => Taker::Unknown,
        }
    }

    /// Whether `open..=close` is a cast: a type-like group before an operand.
    fn is_cast(&self, open: usize, close: usize) -> bool {
        let operand = self.ident(close + 1)
            || matches!(self.t(close + 1), "(" | "&" | "*" | "~" | "!" | "-" | "+")
            || matches!(
                self.s.tokens.get(close + 1).map(|t| t.kind),
                Some(Kind::Number | Kind::Literal)
            );
        let call = self.ident(open - 1) && !matches!(self.t(open - 1), "return" | "case");
        let typed = (open + 1..close).all(|i| self.ident(i) || self.t(i) == "*");
        operand && !call && typed && close > open + 1
    }

    /// Whether tokens `from..to` name a pointer type with a `const` pointee (one `*`).
    fn const_pointer(&self, from: usize, to: usize) -> bool {
        let stars: Vec<usize> = (from..to).filter(|&i| self.t(i) == "*").collect();
        stars.len() == 1 && (from..stars[0]).any(|i| matches!(self.t(i), "const" | "__const"))
    }

    /// Whether the call named at `name` with the pointer as argument `arg` may write
    /// through it: `Some(false)` where it returns a pointer it may be derived from (a user
    /// function), `None` where it does not.
    fn call_drops(&mut self, name: usize, arg: usize) -> Option<bool> {
        let s = self.s;
        let callee = self.t(name);
        if s.macros.contains_key(callee) {
            return Some(true);
        }
        let defs: Vec<&FunctionDef> = s.named(callee).collect();
        if defs.is_empty() {
            let reads = READS.iter().any(|r| callee.starts_with(r))
                || (COPIES.contains(&callee) && arg > 0);
            return (!reads).then_some(true);
        }
        let mut returns = false;
        for def in defs {
            let param = s.params_of(def).and_then(|ps| ps.into_iter().nth(arg));
            let kept = (param.as_ref())
                .is_some_and(|p| p.const_pointee && p.text.matches('*').count() == 1);
            if !kept || self.drops(def, &param.map(|p| p.name).unwrap_or_default()) {
                return Some(true);
            }
            returns |= def.returned_pointer(s).is_some();
        }
        returns.then_some(false)
    }

    /// The `const` pointer variable the `=` at `eq` initialises or assigns (`None`: another
    /// target).
    fn const_target(&self, f: &FunctionDef, eq: usize) -> Option<String> {
        let start = self.declaration_start(eq, false)?;
        let name = eq - 1;
        if !self.ident(name) || name <= start {
            return None;
        }
        if name == start + 1 {
            // An assignment: every declaration of the variable in `f` is of a `const` pointer.
            let w = self.t(name);
            let decls: Vec<(usize, usize)> = (f.open_paren..f.body.1)
                .filter(|&d| self.t(d) == w && matches!(self.t(d - 1), "*" | "restrict"))
                .filter_map(|d| Some((self.declaration_start(d + 1, true)?, d)))
                .filter(|&(b, d)| self.declares(b, d))
                .collect();
            let all = decls.iter().all(|&(b, d)| self.const_pointer(b + 1, d));
            return (!decls.is_empty() && all).then(|| w.to_string());
        }
        (self.declares(start, name) && self.const_pointer(start + 1, name))
            .then(|| self.t(name).to_string())
    }

    /// The token before the declaration or assignment target ending before `end`: a `;`,
    /// brace, `for (`, or in a parameter `list` any `(` or `,` (`None` at another).
    fn declaration_start(&self, end: usize, list: bool) -> Option<usize> {
        let mut j = end - 1;
        loop {
            match self.t(j) {
                ";" | "{" | "}" => return Some(j),
                "(" if list || self.t(j.saturating_sub(1)) == "for" => return Some(j),
                "," if list => return Some(j),
                "(" | "," | "" => return None,
                ")" | "]" => j = self.s.partner(j),
                _ => {}
            }
            j = j.checked_sub(1)?;
        }
    }

    /// Whether `start + 1..=name` declare `name` (words and `*`s).
    fn declares(&self, start: usize, name: usize) -> bool {
        (start + 1..=name).all(|i| self.ident(i) || self.t(i) == "*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `const_dropped` of the first parameter of the source's kernel `k`.
    fn dropped(src: &str) -> bool {
        let s = Scanned::new(src).unwrap();
        let decls = s.kernel_decls().unwrap();
        let k = decls.iter().find(|k| k.name == "k").unwrap();
        const_dropped(&s, k)[0]
    }

    fn kernel(body: &str) -> String {
        format!("kernel void k(global const int *x, global int *y, int n) {{ int i = n; {body} }}")
    }

    #[test]
    fn a_const_cast_away_drops_the_const() {
        // The hunt's `const_cast` kernel: the driver reports `x` const.
        assert!(dropped(&kernel("((global int *)x)[i] = x[i] + 1000;")));
        for body in [
            "*(global int *)(x + 1) = 1;",
            "((global int *)&x[i])[0] = 1;",
            "global int *w = (global int *)(ulong)x; w[i] = 1;",
            "size_t a = (size_t)x;",
            "global int *w = x; w[i] = 1;",
            "global int *w; w = x + 1;",
            "global const int *c = x; ((global int *)c)[i] = 1;",
            "global const int *c = x; global int *w = c;",
            "global int *w = n ? x : y;",
            "struct V { global int *p; } v = { x };",
            "v.p = x;",
            "unknown(x);",
            "atomic_add(&x[i], 1);",
            "async_work_group_copy(x, y, n, 0);",
            "y[i] = (int)x;",
            "CAST x;",
            "(global const int *)x + 0;",
        ] {
            let src = format!("typedef int V;\n{}", kernel(body));
            let kept = ["(global const int *)x + 0;"].contains(&body);
            assert_eq!(dropped(&src), !kept, "{body}");
        }
    }

    #[test]
    fn helpers_and_macros_drop_the_const_where_they_may() {
        let helper = |def: &str, call: &str| dropped(&format!("{def}\n{}", kernel(call)));
        let set = "void set(global int *p, int i) { p[i] = 1; }";
        assert!(helper(set, "set(x, i);"));
        let cast = "void set(global const int *p) { ((global int *)p)[0] = 1; }";
        assert!(helper(cast, "set(x + i);"));
        let back = "global int *drop(global const int *p) { return p; }";
        assert!(helper(back, "drop(x)[i] = 1;"));
        let row = "global const int *row(global const int *p, int r) { return p + r; }";
        assert!(helper(row, "((global int *)row(x, i))[0] = 1;"));
        assert!(!helper(row, "y[i] = row(x, i)[0];"));
        assert!(helper("#define AT(i) x[i]", "y[i] = AT(i);"));
        assert!(helper(
            "#define DROP(p) ((global int *)(p))",
            "DROP(x)[i] = 1;"
        ));
        assert!(helper("#define IP global int *", "((IP)x)[i] = 1;"));
        assert!(helper("#define CAT(a, b) a##b", "y[i] = x[i];"));
    }

    #[test]
    fn reads_keep_the_const() {
        let helper = "float get(global const int *p, int i) { return p[i] * 0.5f; }\n\
                      global const int *row(global const int *p, int r) { return p + r; }\n\
                      #define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))";
        for body in [
            "y[i] = x[i] + x[i + 1] * 2;",
            "y[i] = CLAMP(x[i], 0, 9);",
            "vstore4(vload4(i, x) * 2, i, y);",
            "vstore4(vload4(i + 1, x + 4), i, y);",
            "y[i] = get(x, i) + get(x + 1, i);",
            "y[i] = row(x, i)[0];",
            "global const int *r = x + i * n; y[i] = r[0] + r[1];",
            "global const int4 *v = (global const int4 *)x; y[i] = v[i].x;",
            "const global int *r; r = x; y[i] = *r;",
            "if (x != 0 && x[i] > 0) y[i] = *x;",
            "for (global const int *p = x; p < x + n; p++) y[i] += *p;",
            "y[i] = (int)x[i] + (int)(x[i] & 3) + (n & x[i]);",
            "event_t e = async_work_group_copy(y, x + i, n, 0); wait_group_events(1, &e);",
            "y[i] = sizeof(x) + vec_step(int4);",
            "prefetch(x, n);",
        ] {
            assert!(!dropped(&format!("{helper}\n{}", kernel(body))), "{body}");
        }
    }
}
