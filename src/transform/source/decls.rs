//! The public declarations ([`KernelDecl`]) of a scanned text's kernels: parameters, spans,
//! size attributes and why a variant could not be proven correct.

use super::super::lex::Directive;
use super::{FunctionDef, KernelDecl, Kind, Param, Scanned};
use crate::error::{Error, InputFault, Result};
use crate::obstacle::Obstacle;
use std::ops::Range;

impl Scanned<'_> {
    /// Every kernel definition, in source order.
    pub(crate) fn kernel_decls(&self) -> Result<Vec<KernelDecl>> {
        self.functions
            .iter()
            .filter(|f| f.is_kernel)
            .map(|f| self.kernel_decl(f))
            .collect()
    }

    fn kernel_decl(&self, f: &FunctionDef) -> Result<KernelDecl> {
        let close_paren = self.partner[f.open_paren];
        let decl_start = self.tokens[f.decl].span.start;
        let body = self.tokens[f.body.0].span.start..self.tokens[f.body.1].span.end;
        let (params, params_obstacle) = match self.params(f, f.open_paren + 1, close_paren) {
            Ok(p) => (p, None),
            Err(e) => (Vec::new(), Some(Obstacle::Unscanned(Box::new(e)))),
        };
        let (sub_group_size, own_sub_group_attr, unresolved_sub_group_attr) =
            self.sub_group_size(f)?;
        let rewrite_obstacle = params_obstacle.or_else(|| self.rewrite_obstacle(f, &body));
        if let Some(why) = &rewrite_obstacle {
            log::debug!("kernel `{}` will not be rewritten: {why}", f.name);
        }
        Ok(KernelDecl {
            name: f.name.clone(),
            params,
            decl_start,
            line: self.line(decl_start),
            name_span: self.tokens[f.name_tok].span.clone(),
            params_span: self.tokens[f.open_paren].span.start..self.tokens[close_paren].span.end,
            body,
            sub_group_size,
            own_sub_group_attr,
            unresolved_sub_group_attr,
            reqd_work_group_size: self.size_attr(f, "reqd_work_group_size"),
            work_group_size_hint: self.size_attr(f, "work_group_size_hint"),
            rewrite_obstacle,
        })
    }

    /// The integer literals of attribute `attr(x, y, z)` in kernel `f`'s declaration (before
    /// its body), if it is written so.
    fn size_attr(&self, f: &FunctionDef, attr: &str) -> Option<Vec<usize>> {
        let at = (f.decl..f.body.0).find(|&i| self.text(i) == attr)?;
        let open = at + 1;
        if self.text(open) != "(" {
            return None;
        }
        let close = self.partner(open);
        let toks: Vec<&str> = (open + 1..close).map(|i| self.text(i)).collect();
        let dims: Vec<usize> = toks
            .split(|t| *t == ",")
            .map(|d| match d {
                [n] => super::super::lex::parse_c_integer(n),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (!dims.is_empty() && dims.len() <= 3 && !dims.contains(&0)).then_some(dims)
    }

    /// Why copying kernel `f`'s text into a variant might not compile or mean the same.
    fn rewrite_obstacle(&self, f: &FunctionDef, body: &Range<usize>) -> Option<Obstacle> {
        if f.decl != f.item {
            return Some(Obstacle::BeforeDeclaration {
                token: self.text(f.item).to_string(),
            });
        }
        let header = self.tokens[f.item].span.start..body.start;
        if let Some((at, _)) = self.directives.iter().find(|(at, _)| header.contains(at)) {
            return Some(Obstacle::DirectiveInDeclaration {
                line: self.line(*at),
            });
        }
        self.body_directive_obstacle(body)
    }

    /// Why the body `body` (a byte span, braces included) may not be what the compiler sees
    /// as one block: a conditional directive it does not open and close itself.
    pub(crate) fn body_directive_obstacle(&self, body: &Range<usize>) -> Option<Obstacle> {
        let mut depth = 0usize;
        for &(at, d) in self.directives.iter().filter(|(at, _)| body.contains(at)) {
            let unbalanced = match d {
                Directive::If => {
                    depth += 1;
                    false
                }
                Directive::Else => depth == 0,
                Directive::EndIf => depth.checked_sub(1).map(|d| depth = d).is_none(),
                Directive::Other => false,
            };
            if unbalanced {
                return Some(Obstacle::DirectiveOpenedOutside {
                    line: self.line(at),
                });
            }
        }
        (depth > 0).then_some(Obstacle::UnclosedIf)
    }

    /// The names of `f`'s parameters (`None` where one has no name).
    pub(crate) fn param_names(&self, f: &FunctionDef) -> Option<Vec<String>> {
        Some(self.params_of(f)?.into_iter().map(|p| p.name).collect())
    }

    /// `f`'s parameters (`None` where one has no name).
    pub(crate) fn params_of(&self, f: &FunctionDef) -> Option<Vec<Param>> {
        let close = self.partner(f.open_paren);
        self.params(f, f.open_paren + 1, close).ok()
    }

    /// The arguments of the call at token `call` (its name): each one's tokens.
    pub(crate) fn arguments(&self, call: usize) -> Vec<(usize, usize)> {
        let close = self.partner(call + 1);
        let mut out = Vec::new();
        let mut from = call + 2;
        for i in self.top_level(from, close) {
            if self.is_punct(i, ",") {
                out.push((from, i));
                from = i + 1;
            }
        }
        if from < close {
            out.push((from, close));
        }
        out
    }

    /// The parameters in tokens `from..to` (inside the parentheses).
    fn params(&self, f: &FunctionDef, from: usize, to: usize) -> Result<Vec<Param>> {
        if from == to || (to == from + 1 && self.text(from) == "void") {
            return Ok(Vec::new());
        }
        let mut groups = vec![Vec::new()];
        for i in self.top_level(from, to) {
            if self.is_punct(i, ",") {
                groups.push(Vec::new());
            } else if let Some(g) = groups.last_mut() {
                g.push(i);
            }
        }
        groups
            .iter()
            .enumerate()
            .map(|(n, g)| self.param(f, n, g))
            .collect()
    }

    /// One parameter from its top-level token indices.
    fn param(&self, f: &FunctionDef, n: usize, toks: &[usize]) -> Result<Param> {
        let missing = || {
            let at = self.tokens[f.open_paren].span.start;
            Error::input(InputFault::UnnamedParameter {
                kernel: f.name.clone(),
                line: self.line(at),
                index: n,
            })
        };
        let mut end = toks.len();
        while end >= 2 && self.is_punct(toks[end - 1], "(") && self.is_attribute_name(toks[end - 2])
        {
            end -= 2;
        }
        while end >= 1 && self.is_punct(toks[end - 1], "[") {
            end -= 1;
        }
        let last = *toks[..end].last().ok_or_else(missing)?;
        if self.tokens[last].kind != Kind::Ident {
            return Err(missing());
        }
        let first = toks[0];
        let last_tok = self.partner_or_self(*toks.last().ok_or_else(missing)?);
        let address_space = toks.iter().find_map(|&i| match self.text(i) {
            "global" | "__global" => Some("global"),
            "local" | "__local" => Some("local"),
            "constant" | "__constant" => Some("constant"),
            "private" | "__private" => Some("private"),
            _ => None,
        });
        let star = toks.iter().rposition(|&i| self.is_punct(i, "*"));
        Ok(Param {
            text: self.joined(first, last_tok),
            name: self.text(last).to_string(),
            is_pointer: star.is_some(),
            const_pointee: star.is_some_and(|star| {
                (toks[..star].iter()).any(|&i| matches!(self.text(i), "const" | "__const"))
            }),
            address_space: address_space.map(str::to_string),
        })
    }

    /// `i`'s closing partner when `i` opens a bracket, else `i`.
    fn partner_or_self(&self, i: usize) -> usize {
        if self.is_punct(i, "(") || self.is_punct(i, "[") {
            self.partner[i]
        } else {
            i
        }
    }

    /// Tokens `first..=last` joined with one space where the source separates them.
    pub(super) fn joined(&self, first: usize, last: usize) -> String {
        let mut s = String::new();
        for i in first..=last {
            if i > first && self.tokens[i - 1].span.end < self.tokens[i].span.start {
                s.push(' ');
            }
            s.push_str(self.text(i));
        }
        s
    }
}
