//! [`pointee_size`]: the bytes of what a pointer parameter points to, read from the source,
//! so that footprints counted in pointees (`pair_t *p`, `p[i]`) convert to the elements of
//! buffers of any element type ([`super::in_elements`]).
//!
//! Read: built-in scalars and vectors, and structs defined once as `typedef struct [T] {
//! ... } N;` or `struct T { ... };` whose members are built-in scalars or vectors (arrays of
//! a literal length too), laid out as C does (each member at a multiple of its size, the
//! whole a multiple of its largest member). Anything else (attributes, packing pragmas,
//! nested structs, unions, typedef chains, definitions under several `#if` branches) is
//! unknown.

use crate::buffer::builtin;
use crate::transform::lex::{parse_c_integer, Kind};
use crate::transform::source::{Param, Scanned};

/// Words of a parameter's type that do not name it.
const SKIP: &[&str] = &[
    "global",
    "__global",
    "constant",
    "__constant",
    "local",
    "__local",
    "const",
    "__const",
    "restrict",
    "__restrict",
    "volatile",
    "*",
];

/// The size in bytes of pointer parameter `p`'s pointee (`None`: not known).
pub(super) fn pointee_size(scanned: &Scanned, p: &Param) -> Option<usize> {
    if !p.is_pointer || scanned.src.contains("pack") {
        return None;
    }
    let words: Vec<&str> = crate::transform::lex::words(&p.text)
        .filter(|w| *w != p.name && !SKIP.contains(w))
        .collect();
    if p.text.matches('*').count() != 1 {
        return None;
    }
    let toks: Vec<(Kind, &str)> = (scanned.tokens.iter())
        .filter_map(|t| Some((t.kind, scanned.src.get(t.span.clone())?)))
        .collect();
    let t = |i: usize| toks.get(i).map_or("", |t| t.1);
    let close_of = |open: usize| {
        let mut depth = 0usize;
        for (i, &(_, w)) in toks.iter().enumerate().skip(open) {
            match w {
                "{" => depth += 1,
                "}" if depth == 1 => return Some(i),
                "}" => depth -= 1,
                _ => {}
            }
        }
        None
    };
    let open_of = |close: usize| {
        let mut depth = 0usize;
        for i in (0..=close).rev() {
            match t(i) {
                "}" => depth += 1,
                "{" if depth == 1 => return Some(i),
                "{" => depth -= 1,
                _ => {}
            }
        }
        None
    };
    // The braces of every definition of the type, then its members' layout.
    let bodies: Vec<(usize, usize)> = match words[..] {
        [w] if builtin(w).is_some() => return builtin(w).map(|b| b.1),
        ["struct", tag] => (0..toks.len())
            .filter(|&i| t(i) == "struct" && t(i + 1) == tag && t(i + 2) == "{")
            .filter(|&i| i == 0 || t(i - 1) != "typedef")
            .filter_map(|i| Some((i + 2, close_of(i + 2)?)))
            .filter(|&(_, c)| t(c + 1) == ";")
            .collect(),
        [name] => (0..toks.len())
            .filter(|&i| t(i) == name && t(i + 1) == ";" && i > 0 && t(i - 1) == "}")
            .filter_map(|i| Some((open_of(i - 1)?, i - 1)))
            .filter(|&(o, _)| {
                let tagged = o >= 3 && toks[o - 1].0 == Kind::Ident && t(o - 2) == "struct";
                let head = if tagged { o - 2 } else { o - 1 };
                t(head) == "struct" && head > 0 && t(head - 1) == "typedef"
            })
            .collect(),
        _ => return None,
    };
    let &[(open, close)] = &bodies[..] else {
        return None;
    };
    layout(&toks[open + 1..close])
}

/// The C layout's size of struct members `toks` (`T a, b[4]; U c;`), or `None`.
fn layout(toks: &[(Kind, &str)]) -> Option<usize> {
    let (mut size, mut align, mut i) = (0usize, 1usize, 0usize);
    while i < toks.len() {
        let (_, unit) = builtin(toks[i].1)?;
        i += 1;
        loop {
            if toks.get(i)?.0 != Kind::Ident {
                return None;
            }
            i += 1;
            let mut count = 1usize;
            if toks.get(i)?.1 == "[" {
                count = parse_c_integer(toks.get(i + 1)?.1)?;
                (toks.get(i + 2)?.1 == "]").then_some(())?;
                i += 3;
            }
            size = size
                .next_multiple_of(unit)
                .checked_add(unit.checked_mul(count)?)?;
            align = align.max(unit);
            i += 1;
            match toks.get(i - 1)?.1 {
                "," => {}
                ";" => break,
                _ => return None,
            }
        }
    }
    (size > 0).then(|| size.next_multiple_of(align))
}
