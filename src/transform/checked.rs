//! Bounds-checked kernel bodies: the instrumentation shared by the checked variants of
//! multi-device launches ([`super::partitioned`], bounds: the elements a device holds)
//! and of single-device launches in [checked mode](crate::launch::checked) (bounds: the whole
//! buffer, `[0, len)`).
//!
//! Every `p[index]` of a checked pointer parameter `p` in a kernel's body becomes
//! `p[clg_checked_index(clg_check, i, (long)(index), lo, hi, spare)]` (`i` the parameter's
//! index): an index outside `[lo, hi)` is replaced by `spare` (an element the access may
//! touch harmlessly) and the first such access is recorded in `clg_check` ([`CHECK_WORDS`]
//! `uint`s: a flag, the parameter, the index, the work-item's global id, `hi`). So are `*p` (as
//! `p[0]`), `*(p + e)` and `*(p - e)` (as `p[e]`, `p[-e]`: `p - a + b` as `p[-a + b]`), and `vloadN(off, p)` /
//! `vstoreN(v, off, p)` (elements `off * N .. off * N + N`, `clg_checked_vindex`). Other uses
//! of `p` are not checked, and `RUST_LOG=debug` names each one: pointer arithmetic kept in a
//! variable or incremented (`q = p + 1`, `p++`), casts (`*(global int4 *)p`), `p` passed to a
//! helper function (its accesses there), `vload_half` and friends, and macros that subscript
//! their arguments.
//!
//! Single-device checked variants ([`with_checked_variants`]) take, after the kernel's own
//! parameters (and before the emulated sub-group scratch, which stays last), per checked
//! pointer `const ulong clg_bytes_p, const ulong clg_spare_p` (the buffer's size in bytes, and
//! the byte offset of the spare element), then `global uint *clg_check`; their bounds are
//! `[0, clg_bytes_p / sizeof(*p))`, so indices count the kernel's own element type. The launch
//! passes `clg_spare_p = clg_bytes_p`: the element right after the end, inside the guard region
//! that checked mode puts after every buffer, so an out-of-bounds write changes no element of
//! any buffer and an out-of-bounds read gives the guard's canary (`0` for a buffer without a
//! guard: element 0 then takes the access).

use super::queries::with_real_queries;
use super::rounded::{self, line_of};
use super::source::{KernelDecl, Kind, Param, Scanned};
use super::variant::VariantKind;
use crate::error::Result;
use std::fmt::Write as _;

/// The index checks, written once before the source: `clg_checked_index` for an element,
/// `clg_checked_vindex` for the `n` elements `off * n ..` of `vloadn(off, p)` / `vstoren(v, off, p)`
/// (an offset out of range becomes the vector at or right after the spare element).
pub(crate) const CHECK_HELPER: &str = "size_t clg_checked_index(global uint *clg_check, \
uint clg_param, long clg_i, ulong clg_lo, ulong clg_hi, ulong clg_spare) { \
if (clg_i >= (long)clg_lo && clg_i < (long)clg_hi) return (size_t)clg_i; \
if (atomic_cmpxchg((volatile global uint *)clg_check, 0u, 1u) == 0u) { \
clg_check[1] = clg_param; clg_check[2] = (uint)((ulong)clg_i); \
clg_check[3] = (uint)((ulong)clg_i >> 32); clg_check[4] = (uint)get_global_id(0); \
clg_check[5] = (uint)get_global_id(1); clg_check[6] = (uint)get_global_id(2); \
clg_check[7] = (uint)clg_hi; clg_check[8] = (uint)(clg_hi >> 32); } \
return (size_t)clg_spare; }
size_t clg_checked_vindex(global uint *clg_check, uint clg_param, long clg_off, uint clg_n, \
ulong clg_lo, ulong clg_hi, ulong clg_spare) { long clg_first = clg_off * (long)clg_n; \
if (clg_first >= (long)clg_lo && clg_first + (long)clg_n <= (long)clg_hi) return (size_t)clg_off; \
clg_checked_index(clg_check, clg_param, clg_first < (long)clg_lo ? clg_first : \
max(clg_first, (long)clg_hi), clg_lo, clg_hi, 0); return (size_t)((clg_spare + clg_n - 1) / clg_n); }";

/// Number of `uint`s in the `clg_check` buffer: a flag (1 once an index was out of range),
/// the parameter index, the index (low and high 32 bits), the global id (dimensions 0 to 2)
/// and the bound `hi` (low, high) of the first out-of-range access.
pub const CHECK_WORDS: usize = 9;

/// The first out-of-range access a checked launch recorded, decoded from its `clg_check`
/// words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    pub param: usize,
    pub index: i64,
    pub global_id: [u32; 3],
    pub hi: u64,
}

impl Violation {
    /// The violation recorded in `w` (`None`: every access was in range).
    pub(crate) fn decode(w: &[u32]) -> Option<Violation> {
        (w.len() >= CHECK_WORDS && w[0] != 0).then(|| Violation {
            param: w[1] as usize,
            index: (u64::from(w[2]) | u64::from(w[3]) << 32) as i64,
            global_id: [w[4], w[5], w[6]],
            hi: u64::from(w[7]) | u64::from(w[8]) << 32,
        })
    }
}

/// Whether single-device checked variants check `p`: a `global` or `constant` pointer.
pub(crate) fn is_checked_pointer(p: &Param) -> bool {
    p.is_pointer && matches!(p.address_space.as_deref(), Some("global" | "constant"))
}

/// `(index, name)` of `k`'s parameters that single-device checked variants check.
pub(crate) fn checked_pointers(k: &KernelDecl) -> Vec<(usize, String)> {
    k.params
        .iter()
        .enumerate()
        .filter(|(_, p)| is_checked_pointer(p))
        .map(|(i, p)| (i, p.name.clone()))
        .collect()
}

/// `k`'s body (between its braces) with every `p[index]` of the pointers `(i, p)` of
/// `pointers` checked: `bounds(p)` gives the `lo, hi, spare` arguments of the check.
pub(crate) fn instrumented(
    scanned: &Scanned,
    k: &KernelDecl,
    pointers: &[(usize, String)],
    bounds: impl Fn(&str) -> String,
) -> String {
    let src = scanned.src;
    let toks: Vec<usize> = (0..scanned.tokens.len())
        .filter(|&t| {
            let span = &scanned.tokens[t].span;
            span.start > k.body.start && span.end < k.body.end
        })
        .collect();
    let text = |n: usize| scanned.text(toks[n]);
    let shadowed: Vec<&str> = pointers
        .iter()
        .map(|(_, name)| name.as_str())
        .filter(|name| (0..toks.len()).any(|n| text(n) == *name && declares(&text, n)))
        .collect();
    if !shadowed.is_empty() {
        log::debug!(
            "kernel `{}`: {shadowed:?} declared again in the body: those are not checked",
            k.name
        );
    }
    // (start, end, text) replacements (insertions when start == end), in source order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let span = |n: usize| scanned.tokens[toks[n]].span.clone();
    let at = |n: usize| toks.get(n).map_or("", |_| text(n));
    for n in 0..toks.len() {
        let Some((param, name)) = pointers.iter().find(|(_, name)| {
            scanned.tokens[toks[n]].kind == Kind::Ident
                && text(n) == name
                && !shadowed.contains(&name.as_str())
        }) else {
            continue;
        };
        let check = |index: &str| format!("clg_checked_index(clg_check, {param}u, {index}");
        let bounds = bounds(name);
        // `*` at token `d` dereferences (rather than multiplies) unless a value ends before it.
        // (After a statement's condition or a keyword it dereferences: `if (c) *p = 1;`.)
        let unary = |d: usize| {
            let Some(b) = d.checked_sub(1) else {
                return true;
            };
            let word = |t: &str| t.starts_with(super::lex::is_word_char);
            match text(b) {
                "]" => false,
                ")" => {
                    let open = scanned.partner(toks[b]);
                    let before = toks
                        .iter()
                        .position(|&t| t == open)
                        .and_then(|o| o.checked_sub(1));
                    before.is_some_and(|o| matches!(text(o), "if" | "while" | "for" | "switch"))
                }
                "return" | "else" | "case" | "do" => true,
                t => !word(t),
            }
        };
        if at(n + 1) == "[" {
            // p[index]
            let close = scanned.partner(toks[n + 1]);
            let (open, close) = (span(n + 1).end, scanned.tokens[close].span.start);
            edits.push((open, open, check("(long)(")));
            edits.push((close, close, format!("), {bounds})")));
        } else if n >= 2
            && at(n - 1) == "("
            && at(n - 2) == "*"
            && unary(n - 2)
            && matches!(at(n + 1), "+" | "-")
        {
            // *(p + e), *(p - e) (the `-` stays with `e`: `p - a + b` is `p + (-a + b)`)
            let sign = if at(n + 1) == "-" { "-" } else { "" };
            let close = scanned.tokens[scanned.partner(toks[n - 1])].span.start;
            edits.push((
                span(n + 1).start,
                span(n + 2).start,
                format!("+ {}", check(&format!("(long)({sign}"))),
            ));
            edits.push((close, close, format!("), {bounds})")));
        } else if n >= 1
            && at(n - 1) == "*"
            && unary(n - 1)
            && !matches!((at(n + 1), at(n + 2)), ("+", "+") | ("-", "-"))
        {
            // *p, as p[0]
            let (from, to) = (span(n - 1).start, span(n).end);
            edits.push((from, to, format!("{name}[{}0L, {bounds})]", check(""))));
        } else if let Some((offset, width)) = vector_offset(scanned, &toks, n) {
            // vloadN(offset, p), vstoreN(v, offset, p)
            let (from, to) = (span(offset.0).start, span(offset.1).start);
            edits.push((
                from,
                from,
                format!("clg_checked_vindex(clg_check, {param}u, (long)("),
            ));
            edits.push((to, to, format!("), {width}, {bounds})")));
        } else {
            log::debug!(
                "kernel `{}` line {}: this use of `{name}` is not checked (pointer arithmetic \
                 kept in a variable, a helper function's parameter, a macro, ...): only the \
                 guard region sees what it writes",
                k.name,
                scanned.line(span(n).start)
            );
        }
    }
    edits.sort_by_key(|e| e.0);
    let mut out = String::new();
    let mut at = k.body.start + 1;
    for (from, to, text) in edits {
        out.push_str(&src[at..from]);
        out.push_str(&text);
        at = to;
    }
    out.push_str(&src[at..k.body.end - 1]);
    out
}

/// If token `n` (of the body tokens `toks`) is the last argument of a `vloadN` / `vstoreN`
/// call, the body-token range of the offset argument and `N`.
fn vector_offset(scanned: &Scanned, toks: &[usize], n: usize) -> Option<((usize, usize), u32)> {
    let text = |m: usize| scanned.text(toks[m]);
    if n < 2 || text(n - 1) != "," || toks.get(n + 1).is_none_or(|_| text(n + 1) != ")") {
        return None;
    }
    let open_tok = scanned.partner(toks[n + 1]);
    let open = toks.iter().position(|&t| t == open_tok)?;
    let call = text(open.checked_sub(1)?);
    let (store, digits) = match call.strip_prefix("vload") {
        Some(d) => (false, d),
        None => (true, call.strip_prefix("vstore")?),
    };
    let width: u32 = digits
        .parse()
        .ok()
        .filter(|w| [2, 3, 4, 8, 16].contains(w))?;
    // The top-level commas of the call.
    let mut commas = Vec::new();
    let mut m = open + 1;
    while m < n {
        match text(m) {
            "(" | "[" | "{" => {
                let close = scanned.partner(toks[m]);
                m = toks.iter().position(|&t| t == close)?;
            }
            "," => commas.push(m),
            _ => {}
        }
        m += 1;
    }
    let offset = match (store, commas.as_slice()) {
        (false, [last]) => (open + 1, *last),
        (true, [first, last]) => (first + 1, *last),
        _ => return None,
    };
    Some((offset, width))
}

/// Words before which an identifier is an expression, not a declared type.
const NOT_TYPES: [&str; 7] = ["return", "case", "sizeof", "else", "do", "goto", "typedef"];

/// Whether token `n` (of tokens `text(0..)`) looks declared there: after a type (one or more
/// words, then any `*`) that starts a statement (`int x[4];`, `global float *x = ...`). Used
/// to leave a parameter alone when the body declares its name again: it may then miss such a
/// redeclaration (`for (int x = ...)`), or take an expression statement for one, which only
/// leaves the parameter unchecked.
fn declares<'t>(text: &impl Fn(usize) -> &'t str, n: usize) -> bool {
    let word = |j: usize| {
        let t = text(j);
        t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && !NOT_TYPES.contains(&t)
    };
    let mut j = n;
    while j > 0 && text(j - 1) == "*" {
        j -= 1;
    }
    if j == 0 || !word(j - 1) {
        return false;
    }
    j -= 1;
    while j > 0 && word(j - 1) {
        j -= 1;
    }
    j == 0 || matches!(text(j - 1), ";" | "{" | "}")
}

/// The bounds of single-device checked variants (see the module docs).
fn whole_buffer(name: &str) -> String {
    format!("0, clg_bytes_{name} / sizeof(*{name}), clg_spare_{name} / sizeof(*{name})")
}

/// The hidden parameters of a single-device checked variant of `k`.
fn check_params(k: &KernelDecl) -> String {
    let mut p: Vec<String> = checked_pointers(k)
        .iter()
        .map(|(_, n)| format!("const ulong clg_bytes_{n}, const ulong clg_spare_{n}"))
        .collect();
    p.push("global uint *clg_check".into());
    p.join(", ")
}

/// `k`'s parameter list (parentheses included) with `extra` parameters after its own, before
/// the emulated sub-group scratch when that is the last one.
fn with_params(src: &str, k: &KernelDecl, extra: &str) -> String {
    let inner = &src[k.params_span.start + 1..k.params_span.end - 1];
    match k.params.last() {
        None => format!("({extra})"),
        Some(last) if last.name == "clg_sg_scratch" => match inner.rfind(',') {
            Some(at) => format!("({}, {extra}{})", &inner[..at], &inner[at..]),
            None => format!("({extra}, {inner})"),
        },
        Some(_) => format!("({inner}, {extra})"),
    }
}

/// Appends `k`'s single-device checked variant: `k`'s declaration renamed, with the hidden
/// parameters, and its body instrumented (spans already checked).
pub(crate) fn write_checked(out: &mut String, scanned: &Scanned, k: &KernelDecl) {
    let src = scanned.src;
    let body = instrumented(scanned, k, &checked_pointers(k), whole_buffer);
    let _ = write!(
        out,
        "\n#line {}\n{}{}{}{}{}\n#line {}\n{body}}}\n#line {}\n",
        line_of(src, k.decl_start),
        &src[k.decl_start..k.name_span.start],
        VariantKind::Checked.name(&k.name),
        &src[k.name_span.end..k.params_span.start],
        with_params(src, k, &check_params(k)),
        &src[k.params_span.end..=k.body.start],
        line_of(src, k.body.start),
        line_of(src, k.body.end - 1),
    );
}

/// Appends `k`'s rounded and sized variants with checked bodies and the hidden parameters of
/// single-device checked variants after the user-range ones.
pub(crate) fn write_checked_rounded(out: &mut String, scanned: &Scanned, k: &KernelDecl) {
    let body = instrumented(scanned, k, &checked_pointers(k), whole_buffer);
    rounded::write_variants(out, scanned.src, k, &body, &check_params(k));
}

/// `src` with checked variants after the kernels of `kernels` (from `scan_kernels(src)`): for
/// those in `round`, checked rounded and sized variants (see [`super::rounded`]);
/// for every one, the checked variant ([`VariantKind::Checked`]). The helper comes first (unless `src`
/// has it).
#[cfg(test)]
pub fn with_checked_variants(
    src: &str,
    kernels: &[KernelDecl],
    round: &[String],
) -> Result<String> {
    with_checked_variants_on(&Scanned::new(src)?, kernels, round)
}

/// [`with_checked_variants`] of an already scanned source.
pub(crate) fn with_checked_variants_on(
    scanned: &Scanned<'_>,
    kernels: &[KernelDecl],
    round: &[String],
) -> Result<String> {
    let src = scanned.src;
    let mut rounded = false;
    let out = rounded::with_variants(src, kernels, true, |out, _, k| {
        if round.contains(&k.name) {
            rounded = true;
            write_checked_rounded(out, scanned, k);
        }
        write_checked(out, scanned, k);
    })?;
    // Rounded variants call the real queries (see `super::queries`).
    let out = if rounded { with_real_queries(out) } else { out };
    log::debug!(
        "wrote checked variants of {} kernel(s) (rounded too: {round:?})",
        kernels.len()
    );
    // Root programs already start with the helper (their partitioned variants use it).
    Ok(match src.contains(CHECK_HELPER) {
        true => out,
        false => format!("{CHECK_HELPER}\n#line 1\n{out}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_with_checked_variants() {
        use crate::transform::source::scan_kernels;
        let src = "kernel void neg(global int *o, constant int *x) { o[get_global_id(0)] = -x[get_global_id(0)]; }\n";
        let out = with_checked_variants(src, &scan_kernels(src).unwrap(), &[]).unwrap();
        assert!(out.contains(
            "kernel void neg__clg_checked(global int *o, constant int *x, \
            const ulong clg_bytes_o, const ulong clg_spare_o, const ulong clg_bytes_x, \
            const ulong clg_spare_x, global uint *clg_check)"
        ));
        assert!(out.contains(
            "o[clg_checked_index(clg_check, 0u, (long)(get_global_id(0)), 0, \
            clg_bytes_o / sizeof(*o), clg_spare_o / sizeof(*o))]"
        ));
    }
    use crate::transform::source::scan_kernels;

    #[test]
    fn violations_decode_from_the_check_words() {
        assert_eq!(Violation::decode(&[0; CHECK_WORDS]), None);
        let w = [1, 2, u32::MAX, u32::MAX, 7, 0, 0, 100, 0];
        let v = Violation::decode(&w).unwrap();
        assert_eq!(
            (v.param, v.index, v.global_id, v.hi),
            (2, -1, [7, 0, 0], 100)
        );
    }

    #[test]
    fn redeclared_parameters_are_left_alone() {
        let src = "kernel void k(global int *x, global int *y, int a) {\n  y[0] = a * x[0];\n                     { int x[2]; x[1] = 0; }\n  return;\n}";
        let ks = scan_kernels(src).unwrap();
        let out = with_checked_variants(src, &ks, &[]).unwrap();
        assert!(out.contains("y[clg_checked_index(clg_check, 1u, (long)(0), "));
        assert!(out.contains("{ int x[2]; x[1] = 0; }"));
        assert!(out.contains("y[clg_checked_index(clg_check, 1u, (long)(0), 0, clg_bytes_y / sizeof(*y), clg_spare_y / sizeof(*y))] = a * x[0];"));
        let words: Vec<&str> = "return a * x ; global float * x".split(' ').collect();
        let text = |n: usize| words[n];
        assert!(!declares(&text, 3));
        assert!(declares(&text, 8));
    }

    #[test]
    fn dereferences_and_vectors_are_checked() {
        let src = "kernel void k(global int *o, constant int *x, global float *f) {\n  *(o + get_global_id(0)) = *x * *(x - 1 + 2);\n  if (*x) *o = 2; else *o = 3;\n  vstore4(vload4(get_global_id(0), f), 2 * get_global_id(0), f);\n  *o++ = 1; helper(o, f + 1);\n}\n";
        let k = &scan_kernels(src).unwrap()[0];
        let s = Scanned::new(src).unwrap();
        let body = instrumented(&s, k, &checked_pointers(k), |n| format!("B{n}"));
        let idx =
            |p: usize, e: &str, n: &str| format!("clg_checked_index(clg_check, {p}u, {e}, B{n})");
        let want = format!(
            "*(o + {}) = x[{}] * *(x + {});",
            idx(0, "(long)(get_global_id(0))", "o"),
            idx(1, "0L", "x"),
            idx(1, "(long)(-1 + 2)", "x")
        );
        assert!(body.contains(&want), "{body}");
        let (o0, x0) = (idx(0, "0L", "o"), idx(1, "0L", "x"));
        assert!(
            body.contains(&format!("if (x[{x0}]) o[{o0}] = 2; else o[{o0}] = 3;")),
            "{body}"
        );
        let want = "vstore4(vload4(clg_checked_vindex(clg_check, 2u, (long)(get_global_id(0)), 4, \
                    Bf), f), clg_checked_vindex(clg_check, 2u, (long)(2 * get_global_id(0)), 4, Bf), f);";
        assert!(body.contains(want), "{body}");
        // Not checked (RUST_LOG=debug says so): `o++`, and pointers passed to a helper.
        assert!(body.contains("*o++ = 1; helper(o, f + 1);"), "{body}");
    }

    #[test]
    fn root_programs_keep_one_helper() {
        let src = "kernel void inc(global int* x) { x[get_global_id(0)] += 1; }\n";
        let root = crate::transform::partitioned::with_partitioned_variants(
            src,
            &scan_kernels(src).unwrap(),
            true,
        )
        .unwrap();
        let user: Vec<KernelDecl> = scan_kernels(&root)
            .unwrap()
            .into_iter()
            .filter(|k| k.name == "inc")
            .collect();
        let out = with_checked_variants(&root, &user, &[]).unwrap();
        assert_eq!(out.matches("size_t clg_checked_index(").count(), 1);
        assert!(out.contains("kernel void inc__clg_checked("));
    }

    #[test]
    fn scratch_stays_the_last_parameter() {
        let src =
            "kernel void k(global float *x, uint n, __local ulong *clg_sg_scratch) { x[0] = n; }";
        let k = &scan_kernels(src).unwrap()[0];
        assert_eq!(
            with_params(src, k, "E"),
            "(global float *x, uint n, E, __local ulong *clg_sg_scratch)"
        );
        let src = "kernel void k(void) { }";
        assert_eq!(with_params(src, &scan_kernels(src).unwrap()[0], "E"), "(E)");
    }

    #[test]
    fn checked_variants_scan_with_their_hidden_parameters() {
        let src = "kernel void k(global int *y, global const int *ix, local int *t, uint n) {\n  y[ix[get_global_id(0)]] = t[0] + n;\n}\n";
        let ks = scan_kernels(src).unwrap();
        let out = with_checked_variants(src, &ks, &["k".into()]).unwrap();
        assert!(out.starts_with(CHECK_HELPER));
        let names: Vec<String> = scan_kernels(&out)
            .unwrap()
            .into_iter()
            .map(|k| k.name)
            .collect();
        assert_eq!(
            names,
            ["k", "k__clg_rounded", "k__clg_sized", "k__clg_checked"]
        );
        assert!(out.contains(
            "y[clg_checked_index(clg_check, 0u, (long)(ix[clg_checked_index(clg_check, 1u, \
             (long)(get_global_id(0)), 0, clg_bytes_ix / sizeof(*ix), clg_spare_ix / sizeof(*ix))]), \
             0, clg_bytes_y / sizeof(*y), clg_spare_y / sizeof(*y))] = t[0] + n;"
        ));
        let rounded = &scan_kernels(&out).unwrap()[1];
        let p: Vec<&str> = rounded.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            p[4..],
            [
                "clg_user_size0",
                "clg_user_size1",
                "clg_user_size2",
                "clg_user_offset0",
                "clg_user_offset1",
                "clg_user_offset2",
                "clg_bytes_y",
                "clg_spare_y",
                "clg_bytes_ix",
                "clg_spare_ix",
                "clg_check"
            ]
        );
    }
}
