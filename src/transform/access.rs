//! What the library can prove about how a kernel indexes a buffer parameter (pure text
//! analysis of the kernel's source; the driver's argument info comes first where it exists).
//!
//! A colored argument of kind [`Access::Auto`](super::Access::Auto) may run in partitioned
//! placement only when [`own_id_index`] proves that every access is at the work-item's own
//! global id; everything else must be declared by the user or is refused.

use super::source::{KernelDecl, Kind, Scanned};

/// The global-id forms one parameter is indexed with (see [`own_id_index`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IdIndex {
    /// Some access is `p[get_global_id(0)]` (through a variable or directly).
    pub(crate) global_id0: bool,
    /// Some access is `p[get_global_linear_id()]`.
    pub(crate) linear_id: bool,
}

impl IdIndex {
    /// Whether every such access lands on the launch's global linear id as
    /// [`Span`](super::launch) counts it (offset included): `get_global_id(0)` only in 1-D
    /// launches, `get_global_linear_id()` (which subtracts the offset) only without an offset.
    pub(crate) fn matches(&self, rank: usize, offset_is_zero: bool) -> bool {
        (!self.global_id0 || rank == 1) && (!self.linear_id || offset_is_zero)
    }
}

/// The id forms with which kernel `k` indexes its parameter `name`, when every use of `name` in
/// `k`'s body is `name[ID]`, `ID` being `get_global_id(0)`, `get_global_linear_id()` (each
/// optionally cast to an integer type) or a variable initialised to one of them exactly once
/// and never changed afterwards (no assignment, increment or address-of). `None` when some use
/// is anything else, or when a macro mentions `name` (its uses cannot be seen).
pub(crate) fn own_id_index(scanned: &Scanned, k: &KernelDecl, name: &str) -> Option<IdIndex> {
    if scanned
        .macros
        .values()
        .flatten()
        .flatten()
        .any(|t| t.kind == Kind::Ident && &scanned.src[t.span.clone()] == name)
    {
        return None;
    }
    let toks: Vec<(Kind, &str)> = scanned
        .tokens
        .iter()
        .filter(|t| t.span.start > k.body.start && t.span.end < k.body.end)
        .map(|t| (t.kind, &scanned.src[t.span.clone()]))
        .collect();
    let text: Vec<&str> = toks.iter().map(|t| t.1).collect();
    let mut vars = id_variables(&toks);
    // A parameter of that name may be what an earlier or inner-scope use reads.
    vars.retain(|(v, _)| k.params.iter().all(|p| p.name != *v));
    let mut found = IdIndex::default();
    for (q, &(kind, t)) in toks.iter().enumerate() {
        if kind != Kind::Ident || t != name {
            continue;
        }
        if q > 0 && text[q - 1] == "&" || text.get(q + 1) != Some(&"[") {
            return None;
        }
        let inner = &text[q + 2..];
        let form = match id_expr(inner) {
            Some((form, len)) if inner.get(len) == Some(&"]") => form,
            _ => {
                let v = inner.first()?;
                if inner.get(1) != Some(&"]") {
                    return None;
                }
                vars.iter().find(|(n, _)| n == v)?.1
            }
        };
        found.global_id0 |= form.global_id0;
        found.linear_id |= form.linear_id;
    }
    Some(found)
}

/// `get_global_id(0)` or `get_global_linear_id()` at the start of `t`, optionally after an
/// integer cast: its form and token count.
fn id_expr(t: &[&str]) -> Option<(IdIndex, usize)> {
    let cast = match t {
        ["(", ty, ")", ..] if matches!(*ty, "size_t" | "int" | "uint" | "long" | "ulong") => 3,
        _ => 0,
    };
    match &t[cast..] {
        ["get_global_id", "(", "0", ")", ..] => Some((
            IdIndex {
                global_id0: true,
                linear_id: false,
            },
            cast + 4,
        )),
        ["get_global_linear_id", "(", ")", ..] => Some((
            IdIndex {
                global_id0: false,
                linear_id: true,
            },
            cast + 3,
        )),
        _ => None,
    }
}

/// Variables of a body that hold an id for good: `v = ID` followed by `,` or `;`, and no other
/// assignment, increment, decrement or address-of of `v` anywhere in the body.
fn id_variables<'a>(toks: &[(Kind, &'a str)]) -> Vec<(&'a str, IdIndex)> {
    let text: Vec<&str> = toks.iter().map(|t| t.1).collect();
    let mut out = Vec::new();
    for (j, &(kind, v)) in toks.iter().enumerate() {
        if kind != Kind::Ident || text.get(j + 1) != Some(&"=") {
            continue;
        }
        let Some((form, len)) = id_expr(&text[j + 2..]) else {
            continue;
        };
        if !matches!(text.get(j + 2 + len), Some(&",") | Some(&";")) {
            continue;
        }
        let changed_elsewhere = toks
            .iter()
            .enumerate()
            .any(|(q, &(k, t))| q != j && k == Kind::Ident && t == v && modified(&text, q));
        // A use before the assignment would read another `v` (a parameter, an outer one).
        let used_before = text[..j].contains(&v);
        if !changed_elsewhere && !used_before && !out.iter().any(|(n, _)| *n == v) {
            out.push((v, form));
        }
    }
    // A name initialised twice (two declarations, or a reassignment) is not trusted.
    out.retain(|(v, _)| {
        (0..toks.len())
            .filter(|&q| text[q] == *v && modified(&text, q))
            .count()
            == 1
    });
    out
}

/// Whether the identifier at `q` is assigned, incremented, decremented or has its address
/// taken there (punctuation tokens are single characters).
fn modified(text: &[&str], q: usize) -> bool {
    let at = |i: usize| text.get(i).copied().unwrap_or("");
    let (n1, n2, n3) = (at(q + 1), at(q + 2), at(q + 3));
    let (p1, p2) = match q {
        0 => ("", ""),
        1 => (at(0), ""),
        _ => (at(q - 1), at(q - 2)),
    };
    (n1 == "=" && n2 != "=")
        || (matches!(n1, "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^") && n2 == "=")
        || (n1 == "+" && n2 == "+")
        || (n1 == "-" && n2 == "-")
        || (matches!((n1, n2, n3), ("<", "<", "=") | (">", ">", "=")))
        || (p1 == "+" && p2 == "+")
        || (p1 == "-" && p2 == "-")
        || p1 == "&"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::source::scan_kernels;

    fn index(src: &str, name: &str) -> Option<IdIndex> {
        let k = &scan_kernels(src).unwrap()[0];
        own_id_index(&Scanned::new(src).unwrap(), k, name)
    }

    const GID0: IdIndex = IdIndex {
        global_id0: true,
        linear_id: false,
    };

    #[test]
    fn own_id_accesses_are_proven() {
        let saxpy = "kernel void s(global float *y, global const float *x, float a) {\n\
                     size_t i = get_global_id(0);\n if (i < 10) y[i] += a * x[i]; }";
        assert_eq!(index(saxpy, "y"), Some(GID0));
        assert_eq!(index(saxpy, "x"), Some(GID0));
        let direct = "kernel void k(global int *y) { y[get_global_id(0)] = 1; }";
        assert_eq!(index(direct, "y"), Some(GID0));
        let linear =
            "kernel void k(global int *y) { int j = (int)get_global_linear_id(); y[j] = j; }";
        assert_eq!(
            index(linear, "y"),
            Some(IdIndex {
                global_id0: false,
                linear_id: true
            })
        );
        let unused = "kernel void k(global int *y, global int *z) { z[get_global_id(0)] = 0; }";
        assert_eq!(index(unused, "y"), Some(IdIndex::default()));
    }

    #[test]
    fn anything_else_is_not_proven() {
        let cases = [
            // stencil, gather, scatter
            "kernel void k(global int *y) { size_t i = get_global_id(0); y[i] = y[i + 1]; }",
            "kernel void k(global int *y, global int *ix) { size_t i = get_global_id(0); y[i] = y[ix[i]]; }",
            // the index changes
            "kernel void k(global int *y) { size_t i = get_global_id(0); i += 1; y[i] = 0; }",
            "kernel void k(global int *y) { size_t i = get_global_id(0); y[i++] = 0; }",
            "kernel void k(global int *y) { size_t i = get_global_id(0); f(&i); y[i] = 0; }",
            "kernel void k(global int *y) { size_t i = get_global_id(0); { size_t i = 3; y[i] = 0; } }",
            "kernel void k(global int *y, uint i) { y[i] = 0; { size_t i = get_global_id(0); } }",
            "kernel void k(global int *y, uint i) { { size_t i = get_global_id(0); } y[i] = 0; }",
            "kernel void k(global int *y) { int i = 0; { size_t i = get_global_id(0); y[i] = 0; } }",
            // another dimension, the pointer escapes, a macro may use it
            "kernel void k(global int *y) { y[get_global_id(1)] = 0; }",
            "kernel void k(global int *y) { atomic_inc(y); }",
            "kernel void k(global int *y) { *(y + get_global_id(0)) = 0; }",
            "#define AT(i) y[i + 1]\nkernel void k(global int *y) { AT(get_global_id(0)) = 0; }",
            // grid-stride loop
            "kernel void k(global int *y) { for (size_t i = get_global_id(0); i < 9; i += get_global_size(0)) y[i] = 0; }",
        ];
        for src in cases {
            assert_eq!(index(src, "y"), None, "{src}");
        }
    }

    #[test]
    fn index_forms_match_launches() {
        assert!(GID0.matches(1, false));
        assert!(!GID0.matches(2, true));
        let linear = IdIndex {
            global_id0: false,
            linear_id: true,
        };
        assert!(linear.matches(3, true));
        assert!(!linear.matches(1, false));
    }

    #[test]
    fn const_pointees_from_source() {
        let is_const_pointee = |text: &str| {
            let k = crate::transform::source::scan_kernels(&format!("kernel void k({text}) {{}}"));
            k.unwrap()[0].params[0].const_pointee
        };
        assert!(is_const_pointee("global const float *x"));
        assert!(is_const_pointee("const global float* restrict x"));
        assert!(!is_const_pointee("global float * const x"));
        assert!(!is_const_pointee("global float *x"));
    }
}
