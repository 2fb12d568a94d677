//! `if` conditions on a global id that a launch can decide ([`IdCondition`]): exactly
//! `get_global_id(D) OP n` or `n OP get_global_id(D)`, or the same through a local variable
//! assigned once from `get_global_id(D)`, with `OP` one of `<`, `<=`, `>`, `>=`, `D` a literal
//! 0, 1 or 2, and `n` a scalar integer parameter of the kernel that the body never assigns,
//! redeclares or takes the address of. Anything else (`&&`, casts, arithmetic, macros) is not
//! recognised, and stays refused by [`super::divergence`].

use super::lex::Kind;
use super::source::{FunctionDef, Scanned};
use crate::plan::uniform_branch::{IdCmp, IdCondition};

/// One side of a comparison.
enum Operand {
    /// `get_global_id(dim)`, or a variable assigned once from it (`full_width`: its type keeps
    /// every id).
    Id { dim: usize, full_width: bool },
    /// A kernel parameter: its index and whether its type is signed.
    Param { index: usize, signed: bool },
}

/// The launch-time condition that tokens `cond` of kernel `f` (an `if`'s parentheses'
/// content) are, if recognised.
pub(super) fn recognise(
    s: &Scanned<'_>,
    f: &FunctionDef,
    cond: (usize, usize),
) -> Option<IdCondition> {
    if !f.is_kernel {
        return None;
    }
    let (mut a, mut b) = cond;
    while b > a + 1 && s.text(a) == "(" && s.partner(a) == b - 1 {
        (a, b) = (a + 1, b - 1);
    }
    let (left, at) = operand(s, f, a, cond.0)?;
    let (op, at) = match (s.text(at), s.text(at + 1)) {
        ("<", "=") => (IdCmp::Le, at + 2),
        (">", "=") => (IdCmp::Ge, at + 2),
        ("<", w) if w != "<" => (IdCmp::Lt, at + 1),
        (">", w) if w != ">" => (IdCmp::Gt, at + 1),
        _ => return None,
    };
    let (right, end) = operand(s, f, at, cond.0)?;
    if end != b {
        return None;
    }
    let (dim, full_width, index, signed, op) = match (left, right) {
        (Operand::Id { dim, full_width }, Operand::Param { index, signed }) => {
            (dim, full_width, index, signed, op)
        }
        (Operand::Param { index, signed }, Operand::Id { dim, full_width }) => {
            let flipped = match op {
                IdCmp::Lt => IdCmp::Gt,
                IdCmp::Le => IdCmp::Ge,
                IdCmp::Gt => IdCmp::Lt,
                IdCmp::Ge => IdCmp::Le,
            };
            (dim, full_width, index, signed, flipped)
        }
        _ => return None,
    };
    let span = s.tokens[a].span.start..s.tokens[b - 1].span.end;
    let text = format!("`{}` at line {}", &s.src[span.clone()], s.line(span.start));
    Some(IdCondition {
        param: index,
        dim,
        op,
        full_width,
        signed,
        text,
    })
}

/// The operand starting at token `at` and the token after it. `before`: the condition's
/// first token (a variable must be declared before it, in a block that contains it).
fn operand(s: &Scanned<'_>, f: &FunctionDef, at: usize, before: usize) -> Option<(Operand, usize)> {
    if s.tokens[at].kind != Kind::Ident || s.macros.contains_key(s.text(at)) {
        return None;
    }
    if let Some(dim) = global_id(s, at) {
        return Some((
            Operand::Id {
                dim,
                full_width: true,
            },
            at + 4,
        ));
    }
    let name = s.text(at);
    if let Some((index, signed)) = int_param(s, f, name) {
        return untouched(s, f, name, None).then_some((Operand::Param { index, signed }, at + 1));
    }
    let (dim, full_width) = id_variable(s, f, name, before)?;
    Some((Operand::Id { dim, full_width }, at + 1))
}

/// `D` when tokens from `at` are `get_global_id ( D )`, `D` a literal 0, 1 or 2.
fn global_id(s: &Scanned<'_>, at: usize) -> Option<usize> {
    let call =
        s.text(at) == "get_global_id" && s.text(at + 1) == "(" && s.partner(at + 1) == at + 3;
    match (call, s.text(at + 2)) {
        (true, "0") => Some(0),
        (true, "1") => Some(1),
        (true, "2") => Some(2),
        _ => None,
    }
}

const INTEGER_WORDS: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "unsigned", "signed",
];

/// The index of `f`'s parameter called `name` and whether it is signed, when it is a scalar
/// of an integer type spelled with OpenCL's words (no typedefs, pointers or arrays).
fn int_param(s: &Scanned<'_>, f: &FunctionDef, name: &str) -> Option<(usize, bool)> {
    let close = s.partner(f.open_paren);
    let mut params = vec![Vec::new()];
    let mut t = f.open_paren + 1;
    while t < close {
        match s.text(t) {
            "," => params.push(Vec::new()),
            "(" | "[" => return None, // attributes or arrays: not read here
            w => params.last_mut()?.push(w),
        }
        t += 1;
    }
    let index = params.iter().position(|p| p.last() == Some(&name))?;
    let words = &params[index][..params[index].len() - 1];
    let allowed =
        |w: &&str| INTEGER_WORDS.contains(w) || matches!(*w, "const" | "private" | "__private");
    if !words.iter().all(allowed) || !words.iter().any(|w| INTEGER_WORDS.contains(w)) {
        return None;
    }
    let unsigned = words
        .iter()
        .any(|w| matches!(*w, "unsigned" | "uchar" | "ushort" | "uint" | "ulong"));
    Some((index, !unsigned))
}

/// The dimension and width of a variable of `f` declared once as `T name = get_global_id(D);`
/// (a statement of its own, before token `before` and in a block containing it) and never
/// changed afterwards.
fn id_variable(
    s: &Scanned<'_>,
    f: &FunctionDef,
    name: &str,
    before: usize,
) -> Option<(usize, bool)> {
    let (open, close) = f.body;
    let decl = (open + 1..close)
        .find(|&i| s.text(i) == name && s.text(i + 1) == "=" && s.text(i + 2) != "=")?;
    let dim = global_id(s, decl + 2)?;
    if s.text(decl + 6) != ";" || decl >= before {
        return None;
    }
    // The type: one or two words after a statement's start, `const` allowed first.
    let mut first = decl;
    while first - 1 > open && s.tokens[first - 1].kind == Kind::Ident {
        first -= 1;
    }
    if !matches!(s.text(first - 1), ";" | "{" | "}") {
        return None;
    }
    let words: Vec<&str> = (first..decl)
        .map(|i| s.text(i))
        .filter(|&w| w != "const")
        .collect();
    let full_width = match words.as_slice() {
        ["size_t" | "ulong" | "long"] | ["unsigned" | "signed", "long"] => true,
        ["uint" | "int" | "unsigned"] | ["unsigned" | "signed", "int"] => false,
        _ => return None,
    };
    let block = (open..=decl)
        .rev()
        .find(|&i| s.text(i) == "{" && s.partner(i) > decl)?;
    (s.partner(block) > before && untouched(s, f, name, Some(decl))).then_some((dim, full_width))
}

/// Whether `f`'s body never assigns, increments, redeclares or takes the address of `name`
/// (other than at its declaration `decl`).
fn untouched(s: &Scanned<'_>, f: &FunctionDef, name: &str, decl: Option<usize>) -> bool {
    let (open, close) = f.body;
    // Tokens around `i`, "" past either end (a body cut off by the end of the text).
    let at = |k: Option<usize>| k.filter(|&k| k < s.tokens.len()).map_or("", |k| s.text(k));
    (open + 1..close)
        .filter(|&i| s.text(i) == name && Some(i) != decl)
        .all(|i| {
            let (prev, next, next2) = (s.text(i - 1), at(Some(i + 1)), at(Some(i + 2)));
            let prev2 = at(i.checked_sub(2));
            let assigned = (next == "=" && next2 != "=")
                || (next2 == "=" && matches!(next, "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^"))
                || (matches!(next, "<" | ">") && next2 == next && at(Some(i + 3)) == "=");
            let stepped = matches!((next, next2), ("+", "+") | ("-", "-"))
                || matches!((prev, prev2), ("+", "+") | ("-", "-"));
            let address = prev == "&" && prev2 != "&";
            let declared = s.tokens[i - 1].kind == Kind::Ident
                && !matches!(prev, "return" | "case" | "sizeof");
            !(assigned || stepped || address || declared)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (param, dim, op, full width, signed).
    type Found = (usize, usize, IdCmp, bool, bool);

    /// The conditions of every `if` of the first kernel of `src`, recognised or not.
    fn found(src: &str) -> Vec<Option<Found>> {
        let s = Scanned::new(src).unwrap();
        let f = s.functions.iter().find(|f| f.is_kernel).unwrap();
        (f.body.0..f.body.1)
            .filter(|&k| s.text(k) == "if")
            .map(|k| {
                let c = recognise(&s, f, (k + 2, s.partner(k + 1)))?;
                Some((c.param, c.dim, c.op, c.full_width, c.signed))
            })
            .collect()
    }

    #[test]
    fn the_exact_forms_are_recognised() {
        let src = "kernel void k(global float *x, const uint n, int m) {
            size_t i = get_global_id(0); const int j = get_global_id(1);
            if (get_global_id(0) < n) x[0] = 1; if (n > get_global_id(2)) x[0] = 1;
            if (i <= m) x[0] = 1; if ((m >= j)) x[0] = 1; if (get_global_id(1) > n) x[0] = 1; }";
        use IdCmp::*;
        let want = [
            Some((1, 0, Lt, true, false)),
            Some((1, 2, Lt, true, false)),
            Some((2, 0, Le, true, true)),
            Some((2, 1, Le, false, true)),
            Some((1, 1, Gt, true, false)),
        ];
        assert_eq!(found(src), want);
    }

    #[test]
    fn a_variable_as_the_last_token_of_the_text_is_read_safely() {
        // The body's last statement cut off after the variable (found by the source fuzz: the
        // tokens after it were read past the end).
        let src = "kernel void k(global float *x, uint n) {\n\
                   size_t i = get_global_id(0); if (i < n) x[0] = 1; i }";
        assert_eq!(found(src), [Some((1, 0, IdCmp::Lt, true, false))]);
    }

    #[test]
    fn anything_else_is_not() {
        let src = "#define N n
        kernel void k(global float *x, uint n, float f, global uint *p, idx_t t) {
            size_t i = get_global_id(0); size_t i2 = get_global_id(0); i2 += 1;
            uint l = get_local_id(0); size_t w = get_global_id(0) + 1;
            if (get_local_id(0) < n) x[0] = 1; if (i < n && n > 2) x[0] = 1;
            if (i < N) x[0] = 1; if (i < f) x[0] = 1; if (i < p[0]) x[0] = 1; if (i < t) x[0] = 1;
            if (i2 < n) x[0] = 1; if (l < n) x[0] = 1; if (w < n) x[0] = 1; if (i << n) x[0] = 1;
            if (get_global_id(3) < n) x[0] = 1; if ((size_t)i < n) x[0] = 1; if (i == n) x[0] = 1; }
        kernel void m(global float *x, uint n) { n = n / 2; if (get_global_id(0) < n) x[0] = 1; }
        kernel void v(global float *x, uint n) { if (get_global_id(0) < n) x[0] = 1; }";
        assert!(found(src).iter().all(Option::is_none), "{:?}", found(src));
        let s = Scanned::new(src).unwrap();
        let ok: Vec<bool> = s
            .functions
            .iter()
            .map(|f| {
                let k = (f.body.0..f.body.1).find(|&k| s.text(k) == "if").unwrap();
                recognise(&s, f, (k + 2, s.partner(k + 1))).is_some()
            })
            .collect();
        assert_eq!(
            ok,
            [false, false, true],
            "a modified parameter is not trusted"
        );
    }
}
