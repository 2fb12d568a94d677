//! The preprocessor's `#if` decisions, without running a preprocessor: which lines of a text
//! the compiler keeps, given the macros a build defines (the `-D` options, the backend's
//! defines clgroups prepends, the extension and feature macros of the device's compiler).
//!
//! [`evaluate`] walks `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif` (and `#define`/`#undef` of
//! object-like macros on the way) and says, per line, whether it is compiled, not compiled, or
//! unknown, with the macro it depends on. Expressions have C's preprocessor meaning:
//! `defined`, integer literals (signed and unsigned), character literals, unary `+ - ~ !`, the
//! binary operators down to `||`, `?:` and `,`; object-like macros expand, undefined names are
//! 0. What cannot be told (a function-like macro in a condition, a macro the compiler may define
//! that clgroups does not know, an `#include` it cannot see) makes the condition unknown, never
//! guessed. Any text is accepted: malformed lines count as unknown, expansions and nesting are
//! bounded.

use super::lex::leading_word;
pub(crate) use crate::obstacle::Undecided;
use std::collections::{BTreeMap, BTreeSet};

/// What a macro name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Def {
    /// An object-like macro with its replacement text.
    Object(String),
    /// A function-like macro (conditions that use it are unknown).
    Function,
    /// Defined or not, with what value, clgroups cannot tell.
    Unknown,
}

/// The macros at one point of a text: those defined, those known not to be, and the rule for
/// every other name.
#[derive(Clone, Debug, Default)]
pub(crate) struct PpState {
    defs: BTreeMap<String, Def>,
    undefined: BTreeSet<String>,
    /// After an `#include` clgroups cannot see, any name may have been defined.
    opaque: bool,
}

/// Whether the compiler may define `name` without telling clgroups: reserved names (`__X`,
/// `_X`), `FP_FAST_FMA*`, `CL_VERSION_*` and clgroups' own headers' names. Extension and
/// feature macros (`cl_*`, `__opencl_c_*`) are known from the device's lists.
fn compiler_may_define(name: &str) -> bool {
    if name.starts_with("cl_") || name.starts_with("__opencl_c_") {
        return false;
    }
    let reserved = name.starts_with("__")
        || (name.starts_with('_') && name[1..].starts_with(|c: char| c.is_ascii_uppercase()));
    reserved
        || name.starts_with("FP_FAST_FMA")
        || name.starts_with("CL_VERSION_")
        || ["CLG", "clg_", "sg_"].iter().any(|p| name.starts_with(p))
}

impl PpState {
    /// Defines object-like macro `name` as `value`.
    pub(crate) fn define(&mut self, name: &str, value: &str) {
        self.undefined.remove(name);
        self.defs
            .insert(name.to_string(), Def::Object(value.to_string()));
    }

    /// Makes `name` not defined (`-U`, `#undef`).
    pub(crate) fn undefine(&mut self, name: &str) {
        self.defs.remove(name);
        self.undefined.insert(name.to_string());
    }

    /// Makes `name` unknown: it may or may not be defined, with any value.
    pub(crate) fn forget(&mut self, name: &str) {
        self.undefined.remove(name);
        self.defs.insert(name.to_string(), Def::Unknown);
    }

    fn lookup(&self, name: &str) -> Option<Def> {
        if let Some(d) = self.defs.get(name) {
            return Some(d.clone());
        }
        let unknown = !self.undefined.contains(name) && (self.opaque || compiler_may_define(name));
        unknown.then_some(Def::Unknown)
    }
}

/// Whether a line is compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LineState {
    /// Compiled.
    Active,
    /// Not compiled.
    Inactive,
    /// Compiled or not, depending on what clgroups cannot tell (a macro, a malformed `#if`).
    Unknown(Undecided),
}

/// A condition's value as far as it is known.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tri {
    Yes,
    No,
    Unknown(Undecided),
}

impl Tri {
    fn and(&self, o: &Tri) -> Tri {
        match (self, o) {
            (Tri::No, _) | (_, Tri::No) => Tri::No,
            (Tri::Unknown(m), _) | (_, Tri::Unknown(m)) => Tri::Unknown(m.clone()),
            _ => Tri::Yes,
        }
    }
    fn or(&self, o: &Tri) -> Tri {
        match (self, o) {
            (Tri::Yes, _) | (_, Tri::Yes) => Tri::Yes,
            (Tri::Unknown(m), _) | (_, Tri::Unknown(m)) => Tri::Unknown(m.clone()),
            _ => Tri::No,
        }
    }
    fn not(&self) -> Tri {
        match self {
            Tri::Yes => Tri::No,
            Tri::No => Tri::Yes,
            u => u.clone(),
        }
    }
    fn line(&self) -> LineState {
        match self {
            Tri::Yes => LineState::Active,
            Tri::No => LineState::Inactive,
            Tri::Unknown(m) => LineState::Unknown(m.clone()),
        }
    }
}

/// One open conditional: the state around it, whether an earlier branch was taken, and the
/// state of the current branch.
struct Open {
    outer: Tri,
    taken: Tri,
    current: Tri,
}

/// The text with comments blanked (newlines kept), so directives are read without them.
fn strip_comments(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut quote) = (0, None::<char>);
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match quote {
            Some(q) => {
                out.push(c);
                if c == '\\' && next.is_some_and(|n| n != '\n') {
                    out.push(b[i + 1]);
                    i += 1;
                } else if c == q || c == '\n' {
                    quote = None;
                }
            }
            None if c == '/' && next == Some('/') => {
                while i < b.len() && b[i] != '\n' {
                    // A continued `//` comment goes on to the next line.
                    if b[i] == '\\' && b.get(i + 1) == Some(&'\n') {
                        out.push('\n');
                        i += 1;
                    } else {
                        out.push(' ');
                    }
                    i += 1;
                }
                continue;
            }
            None if c == '/' && next == Some('*') => {
                out.push(' ');
                i += 2;
                while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                    out.push(if b[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                i += 2;
                continue;
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// Per line of `text` (0-based), whether the compiler keeps it, starting from the macros of
/// `state`, which ends as the macros after the text. Directive lines take the state of the
/// region they sit in.
pub(crate) fn evaluate(text: &str, state: &mut PpState) -> Vec<LineState> {
    let stripped = strip_comments(text);
    let lines: Vec<&str> = stripped.split('\n').collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A logical line: physical lines joined at a trailing backslash.
        let mut logical = lines[i].to_string();
        let mut n = 1;
        while logical.ends_with('\\') && i + n < lines.len() {
            logical.pop();
            logical.push_str(lines[i + n]);
            n += 1;
        }
        let here = stack.last().map_or(Tri::Yes, |o| o.current.clone());
        let enclosing = stack.last().map_or(Tri::Yes, |o| o.outer.clone());
        let shown = match directive(&logical) {
            Some((word, rest)) => step(word, rest, state, &mut stack, &here, &enclosing),
            None => here,
        };
        out.extend(std::iter::repeat_n(shown.line(), n));
        i += n;
    }
    out
}

/// The directive name and the rest of a directive line, if it is one.
fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    Some(leading_word(rest))
}

/// Applies directive `word` (with its text `rest`) to the open conditionals and the macros;
/// returns the state its own line is shown in.
fn step(
    word: &str,
    rest: &str,
    state: &mut PpState,
    stack: &mut Vec<Open>,
    here: &Tri,
    enclosing: &Tri,
) -> Tri {
    let cond = |state: &PpState, live: &Tri| match live {
        Tri::No => Tri::No,
        _ => condition(word, rest, state),
    };
    match word {
        "if" | "ifdef" | "ifndef" => {
            let c = cond(state, here);
            stack.push(Open {
                outer: here.clone(),
                current: here.and(&c),
                taken: c,
            });
            here.clone()
        }
        "elif" | "elifdef" | "elifndef" | "else" => {
            if let Some(top) = stack.last_mut() {
                let open = top.outer.and(&top.taken.not());
                let c = match word {
                    "else" => Tri::Yes,
                    _ => cond(state, &open),
                };
                top.current = open.and(&c);
                top.taken = top.taken.or(&c);
            }
            enclosing.clone()
        }
        "endif" => {
            stack.pop();
            enclosing.clone()
        }
        "define" | "undef" if *here != Tri::No => {
            let (name, after) = leading_word(rest.trim_start());
            match (here, word) {
                (Tri::Unknown(_), _) => state.forget(name),
                (_, "undef") => state.undefine(name),
                _ if after.starts_with('(') => {
                    state.undefined.remove(name);
                    state.defs.insert(name.to_string(), Def::Function);
                }
                _ => state.define(name, after.trim()),
            }
            here.clone()
        }
        "include" if *here != Tri::No => {
            if !rest.trim_start().starts_with("<clgroups/") {
                state.opaque = true;
            }
            here.clone()
        }
        _ => here.clone(),
    }
}

/// The value of the condition of directive `word` with text `rest`.
fn condition(word: &str, rest: &str, state: &PpState) -> Tri {
    let name = rest.trim();
    let defined = |name: &str| match state.lookup(name) {
        Some(Def::Unknown) => Tri::Unknown(Undecided::Macro(name.to_string())),
        Some(_) => Tri::Yes,
        None => Tri::No,
    };
    match word {
        "ifdef" | "elifdef" => defined(name),
        "ifndef" | "elifndef" => defined(name).not(),
        _ => match expr::eval(rest, state) {
            Ok(0) => Tri::No,
            Ok(_) => Tri::Yes,
            Err(why) => Tri::Unknown(why),
        },
    }
}

/// `text` with every line whose state is not kept replaced by spaces (byte offsets and line
/// numbers stay): `Active` lines are kept, `Unknown` ones where `keep_unknown`.
pub(crate) fn blank(text: &str, lines: &[LineState], keep_unknown: bool) -> String {
    let kept = |s: Option<&LineState>| match s {
        Some(LineState::Active) | None => true,
        Some(LineState::Inactive) => false,
        Some(LineState::Unknown(_)) => keep_unknown,
    };
    text.split('\n')
        .enumerate()
        .map(|(i, l)| match kept(lines.get(i)) {
            true => l.to_string(),
            false => " ".repeat(l.len()),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

mod expr;

#[cfg(test)]
mod tests;
