//! The index expressions of [`super::parse`]: `+`, `-`, `*`, parentheses, integer casts,
//! literals, work-item built-ins and the names [`Analysis::resolve`] binds.

use super::parse::{is_type_word, Analysis, MAX_DEPTH};
use super::{Poly, Sym};
use crate::builtins::{self, Query};
use crate::transform::lex::{parse_c_integer, Kind};

impl Analysis<'_, '_> {
    /// What a use of identifier `name` at token `pos` stands for.
    pub(super) fn resolve(&self, name: &str, pos: usize) -> Option<Poly> {
        let bound = (self.bindings.iter())
            .filter(|b| b.name == name && b.region.0 <= pos && pos < b.region.1)
            .max_by_key(|b| b.region.0);
        if let Some(b) = bound {
            return b.value.clone();
        }
        if self.tainted.contains(name) {
            return None;
        }
        if let Some(i) = self.params.iter().position(|p| p.name == name) {
            self.scalars.get(i).copied().flatten()?;
            let stable = self.stable_params.get(i).copied().unwrap_or(false);
            return stable.then(|| Poly::sym(Sym::Param(i as u16)));
        }
        // An object-like macro of one integer literal, defined once before the body, never
        // `#undef`ined and not under `#if` (where a build option's `-D` may win instead).
        let defs = self.scanned.macros.get(name)?;
        let [def] = &defs[..] else { return None };
        let [tok] = &def[..] else { return None };
        let scanned = self.scanned;
        if scanned.undefs.iter().any(|u| u == name)
            || tok.span.start > self.body_start
            || scanned.under_conditional(tok.span.start)
        {
            return None;
        }
        let text = self.scanned.src.get(tok.span.clone())?;
        let v = i64::try_from(parse_c_integer(text)?).ok()?;
        Some(Poly::constant(v))
    }

    /// The expression of tokens `[a, b)`, all of them.
    pub(super) fn expr(&self, a: usize, b: usize) -> Option<Poly> {
        let mut i = a;
        let p = self.sum(&mut i, b, 0)?;
        (i == b).then_some(p)
    }

    fn sum(&self, i: &mut usize, end: usize, depth: usize) -> Option<Poly> {
        let mut acc = self.product(i, end, depth)?;
        while *i < end {
            let (op, next) = (self.t(*i), self.t(*i + 1));
            let binary = matches!(op, "+" | "-") && !matches!(next, "+" | "-" | "=" | ">");
            if !binary {
                break;
            }
            *i += 1;
            let rhs = self.product(i, end, depth)?;
            acc = if op == "+" {
                acc.add(&rhs)
            } else {
                acc.sub(&rhs)
            }?;
        }
        Some(acc)
    }

    fn product(&self, i: &mut usize, end: usize, depth: usize) -> Option<Poly> {
        let mut acc = self.unary(i, end, depth)?;
        while *i < end && self.t(*i) == "*" && self.t(*i + 1) != "=" {
            *i += 1;
            acc = acc.mul(&self.unary(i, end, depth)?)?;
        }
        Some(acc)
    }

    fn unary(&self, i: &mut usize, end: usize, depth: usize) -> Option<Poly> {
        if depth > MAX_DEPTH || *i >= end {
            return None;
        }
        match self.t(*i) {
            "-" if !matches!(self.t(*i + 1), "-" | "=") => {
                *i += 1;
                self.unary(i, end, depth + 1)?.neg()
            }
            "+" if !matches!(self.t(*i + 1), "+" | "=") => {
                *i += 1;
                self.unary(i, end, depth + 1)
            }
            "(" => {
                let close = self.partner[*i];
                if close >= end {
                    return None;
                }
                let words = *i + 1..close;
                if !words.is_empty() && words.clone().all(|q| is_type_word(self.t(q))) {
                    // An integer cast (values beyond 32 bits are refused at launch).
                    *i = close + 1;
                    return self.unary(i, end, depth + 1);
                }
                let inner = self.expr_depth(*i + 1, close, depth + 1)?;
                *i = close + 1;
                Some(inner)
            }
            _ => self.primary(i, end),
        }
    }

    fn expr_depth(&self, a: usize, b: usize, depth: usize) -> Option<Poly> {
        let mut i = a;
        let p = self.sum(&mut i, b, depth)?;
        (i == b).then_some(p)
    }

    fn primary(&self, i: &mut usize, end: usize) -> Option<Poly> {
        let (kind, w) = *self.toks.get(*i)?;
        match kind {
            Kind::Number => {
                *i += 1;
                Some(Poly::constant(i64::try_from(parse_c_integer(w)?).ok()?))
            }
            Kind::Ident if self.t(*i + 1) == "(" => {
                let close = self.partner[*i + 1];
                if close >= end {
                    return None;
                }
                let args: Vec<&str> = (*i + 2..close).map(|q| self.t(q)).collect();
                *i = close + 1;
                builtin(w, &args)
            }
            Kind::Ident => {
                if matches!(self.t(*i + 1), "[" | ".")
                    || self.t(*i + 1) == "-" && self.t(*i + 2) == ">"
                {
                    return None;
                }
                *i += 1;
                self.resolve(w, *i - 1)
            }
            _ => None,
        }
    }
}

/// The value of work-item built-in `f` called with the tokens `args`.
fn builtin(f: &str, args: &[&str]) -> Option<Poly> {
    let dim = || match args {
        [d] => u8::try_from(parse_c_integer(d)?).ok().filter(|&d| d < 3),
        _ => None,
    };
    let s = match builtins::query(f)? {
        Query::GlobalId => Sym::GlobalId(dim()?),
        Query::LocalId => Sym::LocalId(dim()?),
        Query::GroupId => Sym::GroupId(dim()?),
        Query::GlobalSize => Sym::GlobalSize(dim()?),
        Query::LocalSize => Sym::LocalSize(dim()?),
        Query::GlobalOffset => Sym::GlobalOffset(dim()?),
        Query::GlobalLinearId if args.is_empty() => {
            let id = |d: u8| Poly::sym(Sym::GlobalId(d)).sub(&Poly::sym(Sym::GlobalOffset(d)));
            let (g0, g1) = (Poly::sym(Sym::GlobalSize(0)), Poly::sym(Sym::GlobalSize(1)));
            let z = g0.mul(&g1)?.mul(&id(2)?)?;
            let y = g0.mul(&id(1)?)?;
            return id(0)?.add(&y)?.add(&z);
        }
        _ => return None,
    };
    Some(Poly::sym(s))
}
