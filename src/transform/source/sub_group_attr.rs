//! Kernels' sub-group size attributes, read from their declarations: clgroups' own
//! (`CLG_REQD_SUB_GROUP_SIZE(n)`, `CLG_NAMED_SUB_GROUP_SIZE(..)`) and the kernel's own
//! `intel_reqd_sub_group_size(n)`, written out or through object-like macros
//! (`#define REQD __attribute__((intel_reqd_sub_group_size(16)))`, `#define SIMD_SIZE 16`).
//! What cannot be told (a function-like macro's parameter, several definitions, an expression)
//! is reported, never guessed.

use super::{FunctionDef, Kind, Obstacle, Scanned, SubGroupSizeAttr};
use crate::error::{Error, InputFault, Result};
use crate::transform::lex::parse_c_integer;
use std::collections::{BTreeSet, HashMap};

/// What `Scanned::size_value` and `Scanned::macro_attrs` found, by name and depth (a macro
/// defined many times, or naming others many times, took time exponential in the depth).
#[derive(Default)]
struct Memo {
    values: HashMap<(String, usize), Option<usize>>,
    attrs: HashMap<(String, usize), Option<BTreeSet<usize>>>,
}

impl Scanned<'_> {
    /// The sub-group size attribute in kernel `f`'s header, if any, whether the kernel has its
    /// own `intel_reqd_sub_group_size` (written out, or through object-like macros before or in
    /// the declaration), and, when it has one whose size the scanner cannot tell, where.
    #[allow(clippy::type_complexity)]
    pub(super) fn sub_group_size(
        &self,
        f: &FunctionDef,
    ) -> Result<(Option<SubGroupSizeAttr>, bool, Option<Obstacle>)> {
        let mut found: Option<(SubGroupSizeAttr, usize)> = None;
        // Own attributes: each size found, or the description of one that cannot be told.
        let mut own: Vec<std::result::Result<usize, Obstacle>> = Vec::new();
        let memo = &mut Memo::default();
        for i in f.item..f.body.0 {
            let is_call = i + 1 < f.body.0 && self.is_punct(i + 1, "(");
            let word = self.text(i);
            let line = self.line(self.tokens[i].span.start);
            if word == "intel_reqd_sub_group_size" && is_call {
                let close = self.partner[i + 1];
                let arg: Vec<&str> = (i + 2..close).map(|t| self.text(t)).collect();
                let shown = Obstacle::UnreadSize {
                    argument: arg.join(" "),
                    line,
                };
                own.push(self.size_value(&arg, 0, memo).ok_or(shown));
                continue;
            }
            if self.tokens[i].kind == Kind::Ident && self.macros.contains_key(word) {
                if let Some(attrs) = self.macro_attrs(word, 0, memo) {
                    own.extend(attrs.into_iter().map(Ok));
                } else {
                    own.push(Err(Obstacle::UnreadSizeMacro {
                        name: word.to_string(),
                        line,
                    }));
                }
                continue;
            }
            if !is_call || !matches!(word, "CLG_REQD_SUB_GROUP_SIZE" | "CLG_NAMED_SUB_GROUP_SIZE") {
                continue;
            }
            let attr = self.sub_group_arg(f, i, line)?;
            if let Some((_, first)) = found {
                return Err(Error::input(InputFault::TwoSubGroupSizes {
                    kernel: f.name.clone(),
                    first: Some(first),
                    line,
                }));
            }
            found = Some((attr, line));
        }
        if own.is_empty() {
            return Ok((found.map(|(a, _)| a), false, None));
        }
        if let Some((_, line)) = found {
            return Err(Error::input(InputFault::TwoSubGroupSizes {
                kernel: f.name.clone(),
                first: None,
                line,
            }));
        }
        let sizes: BTreeSet<usize> = own
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        let unresolved = own.iter().find_map(|r| r.as_ref().err().cloned());
        let unresolved =
            unresolved.or_else(|| (sizes.len() > 1).then(|| Obstacle::SeveralSizes(sizes.clone())));
        if let Some(why) = &unresolved {
            log::debug!(
                "kernel `{}`: {why}: the driver applies it; clgroups cannot read it",
                f.name
            );
            return Ok((None, true, unresolved));
        }
        let size = sizes.into_iter().next().map(SubGroupSizeAttr::Exact);
        Ok((size, true, None))
    }

    /// The integer that tokens `arg` stand for: a literal, parenthesised or not, or an
    /// object-like macro whose every definition stands for the same integer (transitively).
    fn size_value(&self, arg: &[&str], depth: usize, memo: &mut Memo) -> Option<usize> {
        let mut arg = arg;
        while arg.len() > 2 && arg[0] == "(" && arg[arg.len() - 1] == ")" {
            arg = &arg[1..arg.len() - 1];
        }
        let [word] = arg else { return None };
        if let Some(n) = parse_c_integer(word).filter(|&n| n > 0) {
            return Some(n);
        }
        if depth > 8 || self.fn_macros.contains(*word) {
            return None;
        }
        if let Some(known) = memo.values.get(&(word.to_string(), depth)) {
            return *known;
        }
        let values: BTreeSet<Option<usize>> = self
            .macros
            .get(*word)?
            .iter()
            .map(|body| {
                let toks: Vec<&str> = body.iter().map(|t| &self.src[t.span.clone()]).collect();
                self.size_value(&toks, depth + 1, memo)
            })
            .collect();
        let value = match values.into_iter().collect::<Vec<_>>()[..] {
            [Some(n)] => Some(n),
            _ => None,
        };
        memo.values.insert((word.to_string(), depth), value);
        value
    }

    /// The `intel_reqd_sub_group_size` sizes macro `name` expands to (through the macros its
    /// replacement names), the same for each of its definitions; `None` when some size cannot
    /// be told or the definitions differ. Empty when it expands to none.
    fn macro_attrs(&self, name: &str, depth: usize, memo: &mut Memo) -> Option<BTreeSet<usize>> {
        let key = (name.to_string(), depth);
        if let Some(known) = memo.attrs.get(&key) {
            return known.clone();
        }
        let attrs = self.macro_attrs_read(name, depth, memo);
        memo.attrs.insert(key, attrs.clone());
        attrs
    }

    fn macro_attrs_read(
        &self,
        name: &str,
        depth: usize,
        memo: &mut Memo,
    ) -> Option<BTreeSet<usize>> {
        let defs = self.macros.get(name)?;
        let function_like = self.fn_macros.contains(name);
        let mut views: BTreeSet<BTreeSet<usize>> = BTreeSet::new();
        for body in defs {
            let toks: Vec<&str> = body.iter().map(|t| &self.src[t.span.clone()]).collect();
            let mut sizes = BTreeSet::new();
            let mut j = 0;
            while j < toks.len() {
                let w = toks[j];
                if w == "intel_reqd_sub_group_size" && toks.get(j + 1) == Some(&"(") {
                    let (mut k, mut level) = (j + 1, 0);
                    while k < toks.len() {
                        level += match toks[k] {
                            "(" => 1,
                            ")" => -1,
                            _ => 0,
                        };
                        if level == 0 {
                            break;
                        }
                        k += 1;
                    }
                    let arg = &toks[(j + 2).min(k)..k.min(toks.len())];
                    // A function-like macro's parameters are not the file's macros.
                    let literal = arg
                        .iter()
                        .all(|w| !w.starts_with(|c: char| c.is_alphabetic() || c == '_'));
                    match self.size_value(arg, 0, memo) {
                        Some(n) if literal || !function_like => sizes.insert(n),
                        _ => return None,
                    };
                    j = k + 1;
                    continue;
                }
                if depth < 8 && w != name && self.macros.contains_key(w) {
                    sizes.extend(self.macro_attrs(w, depth + 1, memo)?);
                }
                j += 1;
            }
            views.insert(sizes);
        }
        match views.len() {
            0 | 1 => Some(views.into_iter().next().unwrap_or_default()),
            _ => None,
        }
    }

    /// Parses the argument of the sub-group size macro at token `i`.
    fn sub_group_arg(&self, f: &FunctionDef, i: usize, line: usize) -> Result<SubGroupSizeAttr> {
        let close = self.partner[i + 1];
        let arg = if close == i + 3 { self.text(i + 2) } else { "" };
        let shown = self.joined_or_empty(i + 2, close);
        let bad = |want: &'static str| {
            Error::input(InputFault::SubGroupSizeArgument {
                kernel: f.name.clone(),
                line,
                attribute: self.text(i).into(),
                argument: shown.clone(),
                want,
            })
        };
        if self.text(i) == "CLG_NAMED_SUB_GROUP_SIZE" {
            return match arg {
                "primary" => Ok(SubGroupSizeAttr::Primary),
                "automatic" => Ok(SubGroupSizeAttr::Automatic),
                _ => Err(bad("`primary` or `automatic`")),
            };
        }
        match parse_c_integer(arg) {
            Some(n) if n > 0 => Ok(SubGroupSizeAttr::Exact(n)),
            _ => Err(bad("a positive integer literal")),
        }
    }

    fn joined_or_empty(&self, first: usize, end: usize) -> String {
        if first < end {
            self.joined(first, end - 1)
        } else {
            String::new()
        }
    }
}
