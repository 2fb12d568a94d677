//! Access footprints: which elements of each buffer parameter a kernel's work-items read and
//! write, as formulas (polynomials over the work-item ids, loop variables, scalar arguments
//! and launch sizes) read from the kernel's source ([`footprint`]), and evaluated at launch
//! time with the launch's own argument values into element intervals per device part
//! ([`Footprint::reach`]).
//!
//! Everything here is an optimisation that may only fall back: what the analysis does not
//! prove is unknown (`None`), and the launch then replicates (an unknown read) or does not
//! split (an unknown write). Hulls are supersets: bounds checks (`if (x < w)`) are ignored,
//! which only widens them.

mod consts;
mod expr;
mod parse;
mod pointee;
#[cfg(test)]
mod tests;
mod uses;

pub(crate) use consts::const_dropped;
pub(crate) use parse::footprint;

/// What an index may depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Sym {
    /// `get_global_id(d)` (the global offset included).
    GlobalId(u8),
    /// `get_local_id(d)`.
    LocalId(u8),
    /// `get_group_id(d)` (of the whole launch, as the partitioned variant reports it).
    GroupId(u8),
    /// `get_global_size(d)` (the user's range).
    GlobalSize(u8),
    /// `get_local_size(d)`.
    LocalSize(u8),
    /// `get_global_offset(d)`.
    GlobalOffset(u8),
    /// The value of scalar parameter `i` (an integer never changed in the body).
    Param(u16),
    /// Loop variable `i` of [`Footprint::loops`].
    Loop(u16),
}

/// The most monomials and the highest degree a formula may have (beyond: unknown).
const MAX_TERMS: usize = 48;
const MAX_DEGREE: usize = 4;

/// A polynomial with integer coefficients over [`Sym`]s: monomials (coefficient, sorted
/// symbols), each monomial once, no zero coefficient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Poly(Vec<(i64, Vec<Sym>)>);

impl Poly {
    pub(crate) fn constant(c: i64) -> Poly {
        Poly::normal(vec![(c, Vec::new())]).unwrap_or_default()
    }

    pub(crate) fn sym(s: Sym) -> Poly {
        Poly(vec![(1, vec![s])])
    }

    /// Merges equal monomials and drops zeros; `None` beyond the size limits or on overflow.
    fn normal(mut terms: Vec<(i64, Vec<Sym>)>) -> Option<Poly> {
        for t in &mut terms {
            t.1.sort();
        }
        terms.sort_by(|a, b| a.1.cmp(&b.1));
        let mut out: Vec<(i64, Vec<Sym>)> = Vec::with_capacity(terms.len());
        for (c, m) in terms {
            match out.last_mut() {
                Some(last) if last.1 == m => last.0 = last.0.checked_add(c)?,
                _ => out.push((c, m)),
            }
        }
        out.retain(|t| t.0 != 0);
        let fits = out.len() <= MAX_TERMS && out.iter().all(|t| t.1.len() <= MAX_DEGREE);
        fits.then_some(Poly(out))
    }

    pub(crate) fn add(&self, o: &Poly) -> Option<Poly> {
        Poly::normal(self.0.iter().chain(&o.0).cloned().collect())
    }

    pub(crate) fn neg(&self) -> Option<Poly> {
        let terms = self
            .0
            .iter()
            .map(|(c, m)| Some((c.checked_neg()?, m.clone())));
        Poly::normal(terms.collect::<Option<Vec<_>>>()?)
    }

    pub(crate) fn sub(&self, o: &Poly) -> Option<Poly> {
        self.add(&o.neg()?)
    }

    pub(crate) fn mul(&self, o: &Poly) -> Option<Poly> {
        if self.0.len() * o.0.len() > MAX_TERMS * 4 {
            return None;
        }
        let mut terms = Vec::with_capacity(self.0.len() * o.0.len());
        for (a, ma) in &self.0 {
            for (b, mb) in &o.0 {
                let m: Vec<Sym> = ma.iter().chain(mb).copied().collect();
                terms.push((a.checked_mul(*b)?, m));
            }
        }
        Poly::normal(terms)
    }

    /// The symbols the polynomial mentions.
    pub(crate) fn syms(&self) -> impl Iterator<Item = Sym> + '_ {
        self.0.iter().flat_map(|t| t.1.iter().copied())
    }

    /// The smallest and largest value over the symbols' inclusive intervals `of` (interval
    /// arithmetic: exact for formulas affine in the ranging symbols, a superset otherwise);
    /// `None` when a symbol has no interval or a value leaves `±LIMIT`.
    pub(crate) fn hull(&self, of: &dyn Fn(Sym) -> Option<(i128, i128)>) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (0i128, 0i128);
        for (c, m) in &self.0 {
            let (mut a, mut b) = (i128::from(*c), i128::from(*c));
            for s in m {
                let (x, y) = of(*s)?;
                // (Checked: a coefficient near 2^63 times an id near 2^64 overflowed.)
                let p = [
                    a.checked_mul(x)?,
                    a.checked_mul(y)?,
                    b.checked_mul(x)?,
                    b.checked_mul(y)?,
                ];
                a = *p.iter().min()?;
                b = *p.iter().max()?;
                if a.abs() > LIMIT || b.abs() > LIMIT {
                    return None;
                }
            }
            lo += a;
            hi += b;
        }
        (lo.abs() <= LIMIT && hi.abs() <= LIMIT).then_some((lo, hi))
    }
}

/// Values beyond this are not trusted: a kernel computing in 32-bit integers would wrap.
pub(crate) const LIMIT: i128 = (1 << 31) - 1;

/// What a kernel reaches of one parameter: every index of its reads and of its writes, or
/// `None` where some use is not understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Uses {
    pub(crate) reads: Option<Vec<Poly>>,
    pub(crate) writes: Option<Vec<Poly>>,
}

impl Default for Uses {
    fn default() -> Self {
        Uses {
            reads: Some(Vec::new()),
            writes: Some(Vec::new()),
        }
    }
}

/// A kernel's footprint: per parameter its [`Uses`], the inclusive bounds of its loop
/// variables (each in terms of the symbols and earlier loops), and which parameters are
/// integer scalars (signed or not) whose values formulas may use, and the bytes of each
/// pointer parameter's pointee where the source says ([`in_elements`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub(crate) params: Vec<Uses>,
    pub(crate) loops: Vec<(Poly, Poly)>,
    /// Per loop: its step where more than 1 (`i += get_global_size(0)`), else `None`.
    pub(crate) steps: Vec<Option<Poly>>,
    pub(crate) scalars: Vec<Option<bool>>,
    pub(crate) pointees: Vec<Option<usize>>,
}

/// Pointees `lo..hi` of `pointee` bytes each as the elements of `elem` bytes they touch
/// (every element holding one of their bytes).
pub(crate) fn in_elements((lo, hi): (i128, i128), pointee: usize, elem: usize) -> (i128, i128) {
    let (p, e) = (pointee as i128, elem.max(1) as i128);
    ((lo * p).div_euclid(e), -((-hi * p).div_euclid(e)))
}

/// One device's part of a launch, as the formulas see it (OpenCL order, padded with the
/// values of dimensions beyond the rank: size 1, id 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// The user's range (what `get_global_size` reports).
    pub(crate) global: [u64; 3],
    pub(crate) local: [u64; 3],
    /// The launch's global offset.
    pub(crate) base: [u64; 3],
    /// The first global id of the part (offset included) and its size, clipped to the
    /// user's range (work-items beyond it run no body).
    pub(crate) first: [u64; 3],
    pub(crate) size: [u64; 3],
}

/// Whether an interval is of reads or of writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Read,
    Write,
}

/// What one part reaches of one parameter: `None` unknown (anything), `Some(None)`
/// nothing, `Some(Some((lo, hi)))` elements `lo..hi` (not clamped to the buffer).
pub(crate) type Reach = Option<Option<(i128, i128)>>;

impl Footprint {
    /// The elements part `p` reaches of parameter `i` in direction `dir`, with scalar
    /// argument values `scalars` (`None` for arguments that are not integer scalars).
    pub(crate) fn reach(&self, i: usize, dir: Dir, p: &Part, scalars: &[Option<i128>]) -> Reach {
        self.reach_with(i, dir, p, scalars, None)
    }

    /// [`Footprint::reach`] with loop `fix.0`'s values taken as the interval `fix.1`.
    fn reach_with(
        &self,
        i: usize,
        dir: Dir,
        p: &Part,
        scalars: &[Option<i128>],
        fix: Option<(usize, (i128, i128))>,
    ) -> Reach {
        let uses = self.params.get(i)?;
        let polys = match dir {
            Dir::Read => uses.reads.as_ref()?,
            Dir::Write => uses.writes.as_ref()?,
        };
        if polys.is_empty() {
            return Some(None);
        }
        if p.size.contains(&0) {
            return Some(None);
        }
        let mut loops: Vec<(i128, i128)> = Vec::with_capacity(self.loops.len());
        let mut out: Option<(i128, i128)> = None;
        for poly in polys {
            // Loops are evaluated once, when a formula first needs them.
            if loops.is_empty() && !self.loops.is_empty() && poly.syms().any(is_loop) {
                for (l, (a, b)) in self.loops.iter().enumerate() {
                    if let Some((_, fixed)) = fix.filter(|f| f.0 == l) {
                        loops.push(fixed);
                        continue;
                    }
                    let of = |s: Sym| bounds(s, p, scalars, &self.scalars, &loops);
                    let (lo, _) = a.hull(&of)?;
                    let (_, hi) = b.hull(&of)?;
                    // A loop that never runs: its accesses do not happen; kept as a point.
                    loops.push((lo, hi.max(lo)));
                }
            }
            let of = |s: Sym| bounds(s, p, scalars, &self.scalars, &loops);
            let (lo, hi) = poly.hull(&of)?;
            out = Some(match out {
                None => (lo, hi + 1),
                Some((a, b)) => (a.min(lo), b.max(hi + 1)),
            });
        }
        Some(out)
    }
}

/// At most this many rows are evaluated apart, and this many ranges kept ([`Footprint::pieces`]).
const PIECES: u64 = 1024;

impl Footprint {
    /// What part `p` reaches of parameter `i`, as sorted disjoint ranges (`None` unknown):
    /// the hull of [`Footprint::reach`], or, where tighter, the union of the reaches of the
    /// part's rows along one dimension (every work-item lies in one row, so the union holds
    /// every element it reaches: a column band of `out[y * w + x]` is one range per row).
    pub(crate) fn pieces(
        &self,
        i: usize,
        dir: Dir,
        p: &Part,
        scalars: &[Option<i128>],
    ) -> Option<Vec<(i128, i128)>> {
        let hull: Vec<(i128, i128)> = self.reach(i, dir, p, scalars)?.into_iter().collect();
        let mut best = hull.clone();
        let width = |v: &[(i128, i128)]| v.iter().map(|(a, b)| b - a).sum::<i128>();
        for along in 0..3 {
            let rows: u64 = (0..3).filter(|&d| d != along).map(|d| p.size[d]).product();
            if !(2..=PIECES).contains(&rows) {
                continue;
            }
            let mut got = Vec::new();
            for r in 0..rows {
                let (mut row, mut rest) = (*p, r);
                for d in (0..3).filter(|&d| d != along) {
                    row.first[d] = p.first[d] + rest % p.size[d];
                    row.size[d] = 1;
                    rest /= p.size[d];
                }
                got.extend(self.reach(i, dir, &row, scalars)?);
            }
            let got = merged(got);
            if got.len() as u64 <= PIECES && width(&got) < width(&best) {
                best = got;
            }
        }
        for l in 0..self.loops.len() {
            let Some(got) = self.strides(i, dir, p, scalars, l) else {
                continue;
            };
            if width(&got) < width(&best) {
                best = got;
            }
        }
        Some(best)
    }

    /// The union of the reaches of part `p` with loop `l`'s values on one stretch each of
    /// its progression: a loop of fixed step `s` above 1 (`i += get_global_size(0)`) and
    /// top-level bounds (no other loop's) starting in `[a, b]` takes only values in
    /// `[a + k s, b + k s]` (its variable changes nowhere else: [`Footprint::loops`]).
    /// `None` where that does not hold or does not help.
    fn strides(
        &self,
        i: usize,
        dir: Dir,
        p: &Part,
        scalars: &[Option<i128>],
        l: usize,
    ) -> Option<Vec<(i128, i128)>> {
        let (a, b) = self.loops.get(l)?;
        let step = self.steps.get(l)?.as_ref()?;
        let outer = |q: &Poly| q.syms().any(is_loop);
        if outer(a) || outer(b) || outer(step) {
            return None;
        }
        let of = |s: Sym| bounds(s, p, scalars, &self.scalars, &[]);
        let ((lo, first_hi), (_, hi)) = (a.hull(&of)?, b.hull(&of)?);
        let (s, s_hi) = step.hull(&of)?;
        if s != s_hi || s <= first_hi - lo + 1 || hi < lo {
            return None;
        }
        let stretches = (hi - lo) / s + 1;
        if stretches > i128::from(PIECES) {
            return None;
        }
        let mut got = Vec::new();
        for k in 0..stretches {
            let stretch = (lo + k * s, (first_hi + k * s).min(hi));
            got.extend(self.reach_with(i, dir, p, scalars, Some((l, stretch)))?);
        }
        Some(merged(got))
    }
}

/// `v` sorted, overlapping and touching ranges joined.
fn merged(mut v: Vec<(i128, i128)>) -> Vec<(i128, i128)> {
    v.sort_unstable();
    let mut out: Vec<(i128, i128)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn is_loop(s: Sym) -> bool {
    matches!(s, Sym::Loop(_))
}

/// The inclusive interval of symbol `s` over part `p`.
fn bounds(
    s: Sym,
    p: &Part,
    values: &[Option<i128>],
    scalars: &[Option<bool>],
    loops: &[(i128, i128)],
) -> Option<(i128, i128)> {
    let at = |v: [u64; 3], d: u8| v.get(usize::from(d)).map(|&x| i128::from(x));
    let fixed = |x: i128| Some((x, x));
    // A work-group's facts in dimension `d`: first id, size, base (offset) and local size.
    let group = |d| {
        Some((
            at(p.first, d)?,
            at(p.size, d)?,
            at(p.base, d)?,
            at(p.local, d)?,
        ))
    };
    match s {
        Sym::GlobalId(d) => {
            let (f, n) = (at(p.first, d)?, at(p.size, d)?);
            Some((f, f + n - 1))
        }
        // Within one work-group (a row of a part), only the ids it spans.
        Sym::LocalId(d) => {
            let (f, n, b, l) = group(d)?;
            let (a, z) = (f - b, f - b + n - 1);
            match l > 0 && a / l == z / l {
                true => Some((a % l, z % l)),
                false => Some((0, l - 1)),
            }
        }
        Sym::GroupId(d) => {
            let (f, n, b, l) = group(d)?;
            (l > 0).then(|| ((f - b) / l, (f - b + n - 1) / l))
        }
        Sym::GlobalSize(d) => fixed(at(p.global, d)?),
        Sym::LocalSize(d) => fixed(at(p.local, d)?),
        Sym::GlobalOffset(d) => fixed(at(p.base, d)?),
        Sym::Param(i) => {
            let i = usize::from(i);
            scalars.get(i).copied().flatten()?;
            fixed((*values.get(i)?)?)
        }
        Sym::Loop(i) => loops.get(usize::from(i)).copied(),
    }
}

/// The value of an integer scalar argument from its bytes (little-endian, as OpenCL
/// devices of this crate store them), `signed` or not; `None` for other sizes.
pub(crate) fn scalar_value(bytes: &[u8], signed: bool) -> Option<i128> {
    let v = match (bytes.len(), signed) {
        (1, true) => i128::from(i8::from_le_bytes(bytes.try_into().ok()?)),
        (1, false) => i128::from(bytes[0]),
        (2, true) => i128::from(i16::from_le_bytes(bytes.try_into().ok()?)),
        (2, false) => i128::from(u16::from_le_bytes(bytes.try_into().ok()?)),
        (4, true) => i128::from(i32::from_le_bytes(bytes.try_into().ok()?)),
        (4, false) => i128::from(u32::from_le_bytes(bytes.try_into().ok()?)),
        (8, true) => i128::from(i64::from_le_bytes(bytes.try_into().ok()?)),
        (8, false) => i128::from(u64::from_le_bytes(bytes.try_into().ok()?)),
        _ => return None,
    };
    Some(v)
}
