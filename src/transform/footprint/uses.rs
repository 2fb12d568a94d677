//! The uses of a pointer parameter ([`Analysis::uses`]): `p[E]` reads and writes, members
//! (`p[i].x`), and those of pointers declared once as `global T *a = p + E;` (or `= p;`)
//! and used only as `a[F]` (read as `p[E + F]`).

use super::parse::{address_of, parenthesized, Analysis};
use super::{Poly, Uses};
use crate::transform::lex::Kind;

impl Analysis<'_, '_> {
    /// The uses of pointer `name`: a parameter (`from: None`, its aliases' uses included),
    /// or an alias declared at token `from`.
    pub(super) fn uses(&self, name: &str, from: Option<usize>) -> Uses {
        let unknown = Uses {
            reads: None,
            writes: None,
        };
        if self.tainted.contains(name) {
            return unknown;
        }
        let (mut reads, mut writes) = (Some(Vec::new()), Some(Vec::new()));
        for q in 0..self.toks.len() {
            if self.toks[q].0 != Kind::Ident || self.t(q) != name || from == Some(q) {
                continue;
            }
            let prev = |k: usize| q.checked_sub(k).map_or("", |p| self.t(p));
            if prev(1) == "." || prev(1) == ">" && prev(2) == "-" {
                continue; // a member of that name
            }
            if self.t(q + 1) != "[" || self.declared(q) {
                let Some(more) = self.alias(q).filter(|_| from.is_none()) else {
                    return unknown;
                };
                for (list, more) in [(&mut reads, more.reads), (&mut writes, more.writes)] {
                    match (list.as_mut(), more) {
                        (Some(l), Some(m)) => l.extend(m),
                        _ => *list = None,
                    }
                }
                continue;
            }
            let close = self.partner[q + 1];
            let index = self.expr(q + 2, close);
            // `(p[i]) = v` writes as `p[i] = v` does.
            let (first, close) = parenthesized(self.toks, q, close);
            let prev = |k: usize| first.checked_sub(k).map_or("", |p| self.t(p));
            // `&p[i]` lets the element escape; `a & p[i]` and `a && p[i]` only read it.
            if address_of(self.toks, first) {
                return unknown;
            }
            // A member (`p[i].x = v` writes, `p[i].x` reads) counts as the element.
            let member = self.t(close + 1) == "." && self.is_ident(close + 2);
            let after = if member { close + 2 } else { close };
            let (n1, n2, n3) = (self.t(after + 1), self.t(after + 2), self.t(after + 3));
            let (read, write) = match (n1, n2, n3) {
                ("[", _, _) if !member => return unknown,
                ("[", _, _) | ("-", ">", _) if member => (true, true),
                ("=", n, _) if n != "=" => (false, true),
                ("+" | "-" | "*" | "/" | "%" | "&" | "|" | "^", "=", _) => (true, true),
                ("<", "<", "=") | (">", ">", "=") => (true, true),
                ("+", "+", _) | ("-", "-", _) | (".", _, _) => (true, true),
                _ if matches!((prev(1), prev(2)), ("+", "+") | ("-", "-")) => (true, true),
                _ => (true, false),
            };
            for (on, list) in [(read, &mut reads), (write, &mut writes)] {
                if on {
                    match (list.as_mut(), &index) {
                        (Some(l), Some(p)) => l.push(p.clone()),
                        _ => *list = None,
                    }
                }
            }
        }
        Uses { reads, writes }
    }

    /// The uses through an alias `global T *a = p + E;` (or `= p;`) that parameter `p`
    /// (token `q`) initialises there, as indices of `p`; `None` if `q` is not one.
    fn alias(&self, q: usize) -> Option<Uses> {
        let prev = |k: usize| q.checked_sub(k).map_or("", |p| self.t(p));
        let space = ["global", "__global", "const", "__const"];
        // Of the parameter's pointee type (`global char *a = p;` over floats is not).
        let param = self.params.iter().find(|p| p.name == self.t(q))?;
        let pointee = param.text.split('*').next()?.split_whitespace().last()?;
        let declares = prev(1) == "="
            && prev(3) == "*"
            && self.is_ident(q.checked_sub(2)?)
            && prev(4) == pointee
            && space.contains(&prev(5));
        if !declares {
            return None;
        }
        let end = self.expr_end(q + 1);
        if !matches!(self.t(end), ";" | ",") {
            return None;
        }
        let offset = match self.t(q + 1) {
            "+" => self.expr(q + 2, end)?,
            ";" | "," => Poly::constant(0),
            _ => return None,
        };
        let shift = |l: Option<Vec<Poly>>| {
            l?.iter()
                .map(|p| p.add(&offset))
                .collect::<Option<Vec<_>>>()
        };
        let u = self.uses(self.t(q - 2), Some(q - 2));
        Some(Uses {
            reads: shift(u.reads),
            writes: shift(u.writes),
        })
    }
}
