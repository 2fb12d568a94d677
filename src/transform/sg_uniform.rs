//! Conditions shown uniform in each sub-group: their work-item-dependent values reach them only
//! through collectives whose result every work-item of a sub-group shares (reductions, votes,
//! broadcasts) or through the sub-group's own id, directly or through variables assigned only
//! such values outside divergent code. Loads from memory count as data, as in
//! [`super::divergence`]. [`super::hoist`] rewrites collectives only under such conditions: the
//! specification requires them there, and an id condition that is not shown uniform
//! (`get_local_id(0) < 5`) stays refused.

use super::divergence::Region;
use super::source::{FunctionDef, Scanned, Syntax};
use crate::builtins;
use std::collections::BTreeSet;

/// What [`uniform`] decides with: the function's tainted words and those of its variables
/// shown uniform in each sub-group.
pub(crate) struct Uniformity<'a> {
    tainted: &'a BTreeSet<Box<str>>,
    uniform: BTreeSet<&'a str>,
    /// Whether values loaded at a work-item's index count too ([`Uniformity::strict`]).
    loads: bool,
}

impl<'a> Uniformity<'a> {
    /// The variables of `f` whose every assignment is uniform in each sub-group and sits in no
    /// region of `regions` whose condition is not.
    pub(crate) fn new(s: &'a Scanned<'_>, f: &FunctionDef, regions: &[Region]) -> Self {
        Self::with(s, f, s.syntax(f), regions, false)
    }

    /// [`Uniformity::new`] with `syntax`'s taint (`Syntax::seeded`: parameters that calls pass
    /// values differing between work-items).
    pub(crate) fn seeded(
        s: &'a Scanned<'_>,
        f: &FunctionDef,
        syntax: &'a Syntax,
        regions: &[Region],
    ) -> Self {
        Self::with(s, f, syntax, regions, false)
    }

    /// [`Uniformity::new`] where a value loaded at a work-item's index (`x[get_global_id(0)]`)
    /// is not uniform either: what a loop run in lockstep must show of its condition and
    /// exits (`transform::lockstep`), since the work-items of a sub-group may differ there.
    pub(crate) fn strict(s: &'a Scanned<'_>, f: &FunctionDef, regions: &[Region]) -> Self {
        Self::with(s, f, s.syntax(f), regions, true)
    }

    fn with(
        s: &'a Scanned<'_>,
        f: &FunctionDef,
        syntax: &'a Syntax,
        regions: &[Region],
        loads: bool,
    ) -> Self {
        let regions: Vec<&Region> = regions.iter().filter(|r| loads || !r.data).collect();
        let tainted = if loads {
            &syntax.deep_tainted
        } else {
            &syntax.tainted
        };
        let assigned = &syntax.assignments;
        let mut u = Uniformity {
            uniform: assigned
                .iter()
                .map(|&(t, _)| s.text(t))
                .filter(|w| tainted.contains(*w))
                .collect(),
            tainted,
            loads,
        };
        loop {
            let before = u.uniform.len();
            // The regions whose condition is not shown uniform, asked once a round (asked per
            // assignment and per `++`, they took time quadratic in a long condition).
            let divergent: Vec<(usize, usize)> = (regions.iter())
                .filter(|r| !u.shows(s, r.cond))
                .map(|r| r.span)
                .collect();
            let under = |t: usize| divergent.iter().any(|&(a, b)| a <= t && t < b);
            for &(target, expr) in assigned {
                if under(target) || !u.shows(s, expr) {
                    u.uniform.remove(s.text(target));
                }
            }
            // `v++` under a divergent condition.
            for t in f.body.0 + 1..f.body.1 {
                let named = s
                    .text(t)
                    .starts_with(|c: char| c.is_alphabetic() || c == '_');
                let bumped =
                    (t > 1 && matches!(s.text(t - 1), "+" | "-") && s.text(t - 2) == s.text(t - 1))
                        || matches!(s.text(t + 1), "+" | "-") && s.text(t + 2) == s.text(t + 1);
                if named && bumped && under(t) {
                    u.uniform.remove(s.text(t));
                }
            }
            if u.uniform.len() == before {
                return u;
            }
        }
    }

    /// Whether the tokens `range` are shown uniform in each sub-group.
    pub(crate) fn shows(&self, s: &Scanned<'_>, range: (usize, usize)) -> bool {
        self.first_divergent(s, range).is_none()
    }

    /// The first token of `range` that keeps it from being shown uniform in each sub-group.
    pub(crate) fn first_divergent(&self, s: &Scanned<'_>, range: (usize, usize)) -> Option<usize> {
        let mut t = range.0;
        while t < range.1 {
            let w = s.text(t);
            if s.is_call(t) && builtins::uniform_in_sub_group(w) {
                t = s.partner(t + 1) + 1;
                continue;
            }
            if w == "[" && !self.loads {
                t = s.partner(t) + 1;
                continue;
            }
            // A private array's element is the work-item's own value, not memory.
            let subscripted = !self.loads
                && t + 1 < s.tokens.len()
                && s.text(t + 1) == "["
                && !s.is_private_array(t);
            if self.tainted.contains(w) && !subscripted && !self.uniform.contains(w) {
                return Some(t);
            }
            t += 1;
        }
        None
    }
}
