//! What the hoist ([`super::hoist`]) and the mask ([`super::nu_mask`]) share: the statement
//! and operands around a collective, whether they may move, and the edits that move them.

use super::edit::Edits;
use super::lex::Kind;
use super::source::{adjacent, assigns, statement_end, Conditional, FunctionDef, Scanned};
use super::variant::GENERATED;
use crate::builtins::{self, Flags};
use crate::obstacle::NoRewrite;
use std::collections::{HashMap, HashSet};

/// Whether token `t` is `++` or `--`.
pub(crate) fn increments(s: &Scanned<'_>, t: usize) -> bool {
    matches!(s.text(t), "+" | "-") && adjacent(s, t) && s.text(t + 1) == s.text(t)
}

/// Whether the operand tokens `range` are free of side effects and safe to evaluate anywhere.
pub(crate) fn pure(
    s: &Scanned<'_>,
    range: (usize, usize),
    collective: fn(&str) -> bool,
) -> Result<(), NoRewrite> {
    for t in range.0..range.1 {
        let w = s.text(t);
        let unsafe_ = |what: &str| Err(unsafe_at(s, t, what));
        let prev_op = t == range.0 || OPERATORS.contains(&s.text(t - 1));
        if let Some(what) = hazard(s, t, prev_op) {
            return unsafe_(what);
        }
        match w {
            _ if assigns(s, t) || increments(s, t) => return unsafe_(w),
            _ if s.is_call(t) => known_call(s, t, collective)?,
            _ if s.macros.contains_key(w) => return unsafe_(w),
            _ => {}
        }
    }
    Ok(())
}

/// Why call `t` may not be evaluated where the source does not evaluate it, if it may not:
/// a `non_uniform` built-in (its work-items would change), or a function that is neither a
/// collective `collective` tells (not a barrier), a query, a known side-effect-free one nor a
/// [`pure_helper`] without collectives.
pub(crate) fn known_call(
    s: &Scanned<'_>,
    t: usize,
    collective: fn(&str) -> bool,
) -> Result<(), NoRewrite> {
    if builtins::flags(s.text(t)).has(Flags::NAMES_NON_UNIFORM) {
        return Err(NoRewrite::NonUniform);
    }
    let w = s.text(t);
    match known_built_in(s, t, collective) || pure_helper(s, w) == Some(false) {
        true => Ok(()),
        false => Err(unsafe_at(s, t, w)),
    }
}

/// Whether call `t` is of a collective `collective` tells (not a barrier, not one defined over
/// the work-items that reach it: `non_uniform`, clustered, `sub_group_elect`), a query or a
/// known side-effect-free built-in.
fn known_built_in(s: &Scanned<'_>, t: usize, collective: fn(&str) -> bool) -> bool {
    known_built_in_word(s.text(t), collective)
}

/// [`known_built_in`] by name.
fn known_built_in_word(w: &str, collective: fn(&str) -> bool) -> bool {
    let flags = builtins::flags(w);
    !flags.has(Flags::NAMES_NON_UNIFORM | Flags::NON_UNIFORM)
        && ((collective(w) && !flags.has(Flags::BARRIER)) || flags.has(Flags::QUERY | Flags::PURE))
}

/// Whether `name` is a helper function (not a kernel) or function-like macro that any
/// work-item may call where the source does not, and whether it calls collectives (which every
/// work-item then reaches): [`pure_helpers`], once per scan.
pub(crate) fn pure_helper(s: &Scanned<'_>, name: &str) -> Option<bool> {
    s.pure_helpers
        .get_or_init(|| pure_helpers(s))
        .get(name)
        .copied()
}

/// The helpers free of side effects and safe to call with any arguments: a value returned, no
/// pointer parameters, no loads, stores but to its own names, address taken, loop, jump,
/// program-scope variable but a `constant` one, macro or division but by a non-zero literal,
/// and calls only of known side-effect-free built-ins, other such helpers and collectives; one
/// that calls collectives calls each under no condition and before any `return` (reached
/// wherever it is: `int s = sub_group_reduce_add(v); if (lane == 0) return s; return 0;`).
/// A round over the functions per level of calls, at most [`HELPER_DEPTH`] (a deeper one
/// counts as impure); then the function-like macros ([`pure_macro`]).
fn pure_helpers(s: &Scanned<'_>) -> HashMap<String, bool> {
    let globals = program_scope_names(s);
    let collective: fn(&str) -> bool = super::layer::is_sub_group_collective;
    let mut pure: HashMap<String, bool> = HashMap::new();
    for _ in 0..HELPER_DEPTH {
        let mut found = Vec::new();
        for f in s
            .functions
            .iter()
            .filter(|f| !f.is_kernel && !pure.contains_key(&f.name))
        {
            let params = (f.open_paren + 1..s.partner(f.open_paren))
                .all(|t| !matches!(s.text(t), "*" | "[") && !s.macros.contains_key(s.text(t)));
            if f.returns_void(s) || !params {
                continue;
            }
            // Its calls of collectives (and of helpers calling them), each reached wherever
            // the helper is: under no `if`, `?:`, `&&`, `||` and before the end of any `return`.
            let (mut calls, mut always) = (false, true);
            let conditionals = s.syntax(f).conditionals(f.body.0..f.body.1);
            let first_return = (f.body.0..f.body.1).find(|&t| s.text(t) == "return");
            let first_return = first_return.and_then(|r| (r..f.body.1).find(|&t| s.text(t) == ";"));
            let mut collective_at = |t: usize| {
                let under = |c: &Conditional| (c.body.0..c.body.1).contains(&t);
                calls = true;
                always &= first_return.is_none_or(|r| t < r) && !conditionals.iter().any(under);
            };
            let body = f.body.0 + 1..f.body.1;
            let safe = body.clone().all(|t| {
                let w = s.text(t);
                let unary = t == f.body.0 + 1 || OPERATORS.contains(&s.text(t - 1));
                let and_or = |u: usize| s.text(u) == w && adjacent(s, t.min(u));
                match w {
                    "for" | "while" | "do" | "goto" | "switch" | "static" | "volatile" => false,
                    "local" | "__local" | "global" | "__global" | "asm" | "__asm__" => false,
                    "&" if unary && !and_or(t - 1) => false,
                    _ if hazard(s, t, unary).is_some() => false,
                    _ if globals.contains(w) || s.macros.contains_key(w) => false,
                    // Keywords a `(` follows, not calls.
                    "if" | "return" => true,
                    _ if s.is_call(t) => match pure.get(w) {
                        Some(&c) => {
                            if c {
                                collective_at(t);
                            }
                            true
                        }
                        None => {
                            if collective(w) {
                                collective_at(t);
                            }
                            known_built_in(s, t, collective)
                        }
                    },
                    _ => true,
                }
            });
            if safe && always {
                found.push((f.name.clone(), calls));
            }
        }
        if found.is_empty() {
            break;
        }
        pure.extend(found);
    }
    let macros = (s.macros.keys())
        .filter(|m| s.is_fn_macro(m) && !pure.contains_key(*m))
        .filter_map(|m| Some((m.clone(), pure_macro(s, m, &globals, &pure)?)))
        .collect::<Vec<_>>();
    pure.extend(macros);
    pure
}

/// Whether function-like macro `name` may be evaluated by any work-item where the source does
/// not, and whether it calls collectives (moved like them: `#define WARP_SUM(x)
/// sub_group_reduce_add(x)`): each of its replacement lists one call or one parenthesized
/// expression (so that no operator at the call site binds into it), free of loads, stores,
/// address taken, macros, program-scope names `globals`, `#`, divisions but by a non-zero
/// literal, and calling only known side-effect-free built-ins, collectives and `helpers`.
fn pure_macro(
    s: &Scanned<'_>,
    name: &str,
    globals: &HashSet<&str>,
    helpers: &HashMap<String, bool>,
) -> Option<bool> {
    let collective: fn(&str) -> bool = super::layer::is_sub_group_collective;
    let mut calls = false;
    for body in s.macros.get(name)? {
        let w: Vec<&str> = body.iter().map(|t| &s.src[t.span.clone()]).collect();
        // Its parameters: the only variables it may name (a caller's local it names could
        // change between where the call stood and where it moves).
        let head = &s.src[..body.first()?.span.start];
        let close = head.rfind(')')?;
        let params: Vec<&str> = head[head[..close].rfind('(')? + 1..close]
            .split(',')
            .map(str::trim)
            .collect();
        let joined = |i: usize| body[i].span.end == body[i + 1].span.start;
        // One call or one parenthesized expression: its first `(` closes at its end.
        let open = match w.first() {
            Some(&"(") => 0,
            Some(_) if w.get(1) == Some(&"(") && body[0].kind == Kind::Ident => 1,
            _ => return None,
        };
        let mut depth = 0i32;
        for (i, &x) in w.iter().enumerate().skip(open) {
            depth += i32::from(x == "(") - i32::from(x == ")");
            if depth == 0 && i + 1 != w.len() {
                return None;
            }
        }
        for (i, &x) in w.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| w[p]);
            let unary = prev.is_none_or(|p| OPERATORS.contains(&p));
            let next = w.get(i + 1).copied();
            let after_op = |ops: &[&str]| prev.is_some_and(|p| ops.contains(&p) && joined(i - 1));
            let doubled = i >= 2 && w[i - 2] == w[i - 1] && joined(i - 2);
            let safe = match x {
                "=" => {
                    next == Some("=") || after_op(&["=", "!"]) || after_op(&["<", ">"]) && !doubled
                }
                "+" | "-" if next == Some(x) && joined(i) => false,
                "-" if next == Some(">") && joined(i) => false,
                "[" | "#" | ";" | "{" | "}" => false,
                "*" | "&" if unary => false,
                "/" | "%" => next.is_some_and(|n| n.parse::<u64>().is_ok_and(|v| v != 0)),
                _ if globals.contains(x) || s.macros.contains_key(x) => false,
                _ if next == Some("(") && body[i].kind == Kind::Ident => match helpers.get(x) {
                    Some(&c) => {
                        calls |= c;
                        true
                    }
                    None => {
                        calls |= collective(x);
                        known_built_in_word(x, collective) || builtins::flags(x).has(Flags::ID)
                    }
                },
                _ if body[i].kind == Kind::Ident => {
                    params.contains(&x) || type_word(x) || prev == Some(".")
                }
                _ => true,
            };
            if !safe {
                return None;
            }
        }
    }
    Some(calls)
}

/// Whether `w` names a built-in scalar or vector type, or qualifies one (a cast's words).
fn type_word(w: &str) -> bool {
    let base = w.trim_end_matches(|c: char| c.is_ascii_digit());
    let vector = base.len() == w.len() || matches!(&w[base.len()..], "2" | "3" | "4" | "8" | "16");
    let scalar = base.strip_prefix('u').unwrap_or(base);
    vector
        && (matches!(scalar, "char" | "short" | "int" | "long")
            || matches!(
                base,
                "float" | "double" | "half" | "bool" | "size_t" | "ptrdiff_t"
            )
            || matches!(w, "unsigned" | "signed" | "const" | "sizeof"))
}

/// How deep [`pure_helpers`] follows calls of helpers (a chain of thousands took a round each).
const HELPER_DEPTH: usize = 16;

/// Tokens after which `*` and `&` are unary (in [`pure`]'s operands and helpers' bodies).
const OPERATORS: [&str; 21] = [
    "(", ",", "+", "-", "*", "/", "%", "<", ">", "=", "!", "&", "|", "^", "?", ":", "~", ";", "{",
    "}", "return",
];

/// The names of program-scope variables a kernel may change (declared outside every function,
/// not by `typedef`, not in the `constant` address space: those any work-item may read).
fn program_scope_names<'s>(s: &Scanned<'s>) -> HashSet<&'s str> {
    let mut names = HashSet::new();
    let mut functions = s.functions.iter().map(|f| f.tokens()).peekable();
    let (mut t, mut typedef, mut constant) = (0, false, false);
    while t < s.tokens.len() {
        if let Some(&(_, b)) = functions.peek().filter(|r| r.0 <= t) {
            functions.next();
            t = t.max(b);
            continue;
        }
        let w = s.text(t);
        let next = s.tokens.get(t + 1).map(|_| s.text(t + 1));
        match w {
            "{" | "(" => {
                t = s.partner(t) + 1;
                continue;
            }
            ";" => (typedef, constant) = (false, false),
            "typedef" => typedef = true,
            "constant" | "__constant" => constant = true,
            _ if !typedef
                && !constant
                && s.tokens[t].kind == Kind::Ident
                && matches!(next, Some("=" | ";" | "," | "[")) =>
            {
                names.insert(w);
            }
            _ => {}
        }
        t += 1;
    }
    names
}

/// The load or trap at token `t`, named, if it is one (`unary`: a `*` there dereferences): an
/// index, `->`, a dereference, a division but by a non-zero literal.
fn hazard<'s>(s: &Scanned<'s>, t: usize, unary: bool) -> Option<&'s str> {
    match s.text(t) {
        "[" => Some("["),
        w @ ("/" | "%") if !nonzero_literal(s, t + 1) => Some(w),
        "-" if adjacent(s, t) && s.text(t + 1) == ">" => Some("->"),
        "*" if unary => Some("*"),
        _ => None,
    }
}

/// The refusal of an operand for token `t` (`what`), naming its line.
pub(crate) fn unsafe_at(s: &Scanned<'_>, t: usize, what: &str) -> NoRewrite {
    NoRewrite::Unsafe {
        token: what.to_string(),
        line: Some(s.line(s.tokens[t].span.start)),
    }
}

/// Whether token `t` is a number literal other than zero (a divisor that cannot trap).
fn nonzero_literal(s: &Scanned<'_>, t: usize) -> bool {
    let w = s.text(t);
    let digits = w
        .strip_prefix("0x")
        .or_else(|| w.strip_prefix("0X"))
        .unwrap_or(w);
    let hex = digits.len() != w.len();
    let mantissa = digits.split(['e', 'E', 'p', 'P']).next().unwrap_or("");
    let mantissa = if hex { digits } else { mantissa };
    s.tokens[t].kind == Kind::Number
        && mantissa
            .chars()
            .any(|c| c.is_ascii_digit() && c != '0' || hex && c.is_ascii_hexdigit() && c != '0')
}

/// The first token of the statement that holds expression token `k` (an `if` whose condition
/// holds it included); an error inside a loop's or `switch`'s header or after a label.
pub(crate) fn statement_start(
    s: &Scanned<'_>,
    f: &FunctionDef,
    k: usize,
) -> Result<usize, NoRewrite> {
    let mut j = k;
    while j > f.body.0 + 1 {
        let t = j - 1;
        match s.text(t) {
            ")" | "]" => j = s.partner(t),
            ";" | "{" | "}" | "else" | "do" => return Ok(j),
            ":" => return Err(NoRewrite::Statement),
            "(" => match s.text(t - 1) {
                "if" => return Ok(t - 1),
                "for" | "while" | "switch" => return Err(NoRewrite::Loop),
                _ => j = t,
            },
            _ => j = t,
        }
    }
    Ok(j)
}

/// Whether token `b` lies in the expression that starts at token `a` and ends where a `)`
/// or `]` closes what is open before `a` (`(w = 1)) r = call(w)`: not), a `;`, a brace or a
/// top-level `,`.
fn same_expression(s: &Scanned<'_>, a: usize, b: usize) -> bool {
    let mut depth = 0i32;
    for t in a..b {
        match s.text(t) {
            "(" | "[" => depth += 1,
            ")" | "]" if depth == 0 => return false,
            ")" | "]" => depth -= 1,
            ";" | "{" | "}" => return false,
            "," if depth == 0 => return false,
            _ => {}
        }
    }
    true
}

/// Whether the variables read in `ranges` are neither written nor declared between statement
/// token `start` and call `i` of `f` (the statement's condition included); else the first
/// that is. A variable whose address `f` takes is taken as written by any store that may go
/// through a pointer ([`indirect_write`]) between them.
pub(crate) fn unwritten(
    s: &Scanned<'_>,
    f: &FunctionDef,
    start: usize,
    i: usize,
    ranges: &[(usize, usize)],
) -> Result<(), NoRewrite> {
    let indirect = indirect_write(s, start, i);
    let vars = ranges
        .iter()
        .flat_map(|&(a, b)| a..b)
        .filter(|&t| s.tokens[t].kind == Kind::Ident && !s.is_call(t));
    for v in vars {
        let var = s.text(v);
        let touched = (start..i).filter(|&t| s.text(t) == var).any(|t| {
            let prev = s.text(t.saturating_sub(1));
            let declared = t > 0
                && (s.tokens[t - 1].kind == Kind::Ident && prev != "return"
                    || matches!(prev, "*" | ","));
            // `v = f(call(v))`: the store follows the call.
            let stored_after = assigns(s, t + 1) && same_expression(s, t, i);
            declared
                || (assigns(s, t + 1) && !stored_after)
                || increments(s, t + 1)
                || (t > 1 && increments(s, t - 2))
                // `&v` (its address taken), not `a && v`.
                || (prev == "&" && !(t > 1 && s.text(t - 2) == "&" && adjacent(s, t - 2)))
                // `v.x = 1`
                || (s.text(t + 1) == "." && assigns(s, t + 3))
        });
        if touched || indirect && address_taken(s, f, var) {
            return Err(NoRewrite::Written(var.to_string()));
        }
    }
    Ok(())
}

/// Whether `f` takes the address of variable `var` anywhere (`&var`, `&var.x`, `&(var)`):
/// a pointer may then write it.
fn address_taken(s: &Scanned<'_>, f: &FunctionDef, var: &str) -> bool {
    (f.body.0 + 1..f.body.1).any(|t| {
        let named = s.text(t + 1) == var || s.text(t + 1) == "(" && s.text(t + 2) == var;
        // Not `a & v`, `a[0] & v`, `a && v`; after `)`, a cast's or an operand's: taken as one.
        let prev = &s.tokens[t - 1];
        let operand = matches!(prev.kind, Kind::Ident | Kind::Number) && s.text(t - 1) != "return"
            || s.text(t - 1) == "]"
            || s.text(t - 1) == "&" && adjacent(s, t - 1);
        named && s.text(t) == "&" && !operand
    })
}

/// Whether tokens `a..b` hold a store that may go through a pointer: an assignment or
/// increment of anything but a plain name (`*p = 1`, `p[0]++`, `q->x = 1`, `s.x += 1`), a
/// call of a function not known to be free of side effects, or a macro.
fn indirect_write(s: &Scanned<'_>, a: usize, b: usize) -> bool {
    let ident = |t: usize| s.tokens[t].kind == Kind::Ident;
    // The name before token `t` is a whole target (not `p->x`, `s.x`, `*p`).
    let plain_before = |t: usize| ident(t - 1) && !matches!(s.text(t - 2), "." | ">" | "*");
    let plain_after = |t: usize| ident(t) && !matches!(s.text(t + 1), "[" | "." | "-");
    (a..b).any(|t| {
        let w = s.text(t);
        if assigns(s, t) {
            return !plain_before(t);
        }
        if increments(s, t) {
            let postfix = t > a && adjacent(s, t - 1) && matches!(s.text(t - 1), ")" | "]")
                || ident(t - 1) && !matches!(s.text(t - 1), "return");
            return !if postfix {
                plain_before(t)
            } else {
                plain_after(t + 2)
            };
        }
        let keyword = matches!(w, "if" | "while" | "for" | "switch" | "return" | "sizeof");
        let collective: fn(&str) -> bool = super::layer::is_sub_group_collective;
        (s.is_call(t) && !keyword && !type_word(w) && known_call(s, t, collective).is_err())
            || s.macros.contains_key(w)
    })
}

/// The text of tokens `a..b` on one line: a space where the source has any.
pub(crate) fn tokens_text(s: &Scanned<'_>, a: usize, b: usize) -> String {
    let mut out = String::new();
    for t in a..b {
        if t > a && !adjacent(s, t - 1) {
            out.push(' ');
        }
        out.push_str(s.text(t));
    }
    out
}

/// A name `__clg_{kind}{n}` the source does not hold.
pub(crate) fn temporary(s: &Scanned<'_>, kind: char, n: usize) -> String {
    let mut temp = format!("{}{kind}{n}", GENERATED);
    while s.src.contains(&temp) {
        temp.push('_');
    }
    temp
}

/// The edit replacing tokens `a..b` with `text`, followed by the line breaks the tokens spanned
/// that `text` lacks (a call written over several lines, a comment between operands), so the
/// text keeps its lines (inside a macro's definition, as `\` line continuations).
pub(crate) fn replaced_by(
    s: &Scanned<'_>,
    (a, b): (usize, usize),
    text: String,
) -> (usize, usize, String) {
    let (start, end) = (s.tokens[a].span.start, s.tokens[b - 1].span.end);
    let spanned = &s.src[start..end];
    let lost = spanned
        .matches('\n')
        .count()
        .saturating_sub(text.matches('\n').count());
    let continued = (spanned.match_indices('\n'))
        .any(|(at, _)| spanned[..at].trim_end_matches('\r').ends_with('\\'));
    let mut text = text;
    for _ in 0..lost {
        text.push_str(if continued { "\\\n" } else { "\n" });
    }
    (start, end, text)
}

/// The edits that declare `__typeof__(typed) __clg_uN = value;` in front of statement `start`
/// (in braces where it is the body of an `if`, `else`, loop or `do`), after `before` (other
/// declarations), and put the temporary in place of the call `i` (whose `)` is `close`).
pub(crate) fn place(
    s: &Scanned<'_>,
    f: &FunctionDef,
    start: usize,
    (i, close): (usize, usize),
    (typed, value, before): (&str, &str, &str),
    n: usize,
) -> Edits {
    let temp = temporary(s, 'u', n);
    let wrap = start > 0 && matches!(s.text(start - 1), ")" | "else" | "do");
    let at = s.tokens[start].span.start;
    let decl = format!(
        "{}{before}__typeof__({typed}) {temp} = {value}; ",
        if wrap { "{ " } else { "" }
    );
    let mut edits = vec![replaced_by(s, (i, close + 1), temp), (at, at, decl)];
    if wrap {
        let end = statement_end(s, start, f.body.1);
        let end = s.tokens[end - 1].span.end;
        edits.push((end, end, " }".into()));
    }
    edits
}
