//! Deeper margins (ghost-zone expansion: Ding & He 2001; Physis, SC11; Holewinski et al.,
//! ICS 2012): where every colored argument of a launch split by footprints keeps margins
//! ([`super::margins`]), a device may run its part widened by `w` work-groups on each side,
//! computing its neighbours' elements next to its own redundantly into its own copies. A
//! chain of launches then needs its halos fetched once every `k` launches: at an exchange a
//! device fetches the margins that a part widened by `k - 1` reads, and each later launch runs
//! the widest part whose reads are all current in its copies. [`plan`] decides, without a
//! device, from what the footprints say each widened part reads and writes.
//!
//! Bit for bit: an element a device computes redundantly is computed by the same kernel from
//! the same (current) inputs as by its owner. A written margin element stays current only
//! where it was current before the launch (the kernel may leave an element it could write
//! unchanged) and no work-item outside the widened part may write it.

pub(super) use super::margins::Span;
use super::margins::{mark_valid, stale, Keep};
use std::fmt;

/// Elements `[lo, hi)` of a buffer, or none.
pub(super) type Run = Option<Span>;

/// One colored argument as one device sees it before a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct View {
    /// The device's own elements.
    pub(super) own: Span,
    /// The buffer's length.
    pub(super) len: usize,
    /// The sub-buffer alignment, in elements.
    pub(super) step: usize,
    /// The elements its allocation with margins holds, once made.
    pub(super) held: Option<Span>,
    /// The margin elements that are current.
    pub(super) valid: Vec<Span>,
}

/// What a device's part widened by some work-groups reaches of one argument: what it reads
/// and writes, and what the launch's work-items outside it may write.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Reach {
    pub(super) read: Run,
    pub(super) write: Run,
    pub(super) outside: Vec<Span>,
}

/// A device's deeper-margins plan for a launch: its part widened by `widen` work-groups, per
/// argument its margins ([`Keep`]: the allocation, the stale elements fetched) and, for those
/// written, the margin elements current after the launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Deep {
    pub(super) widen: usize,
    pub(super) keep: Vec<Keep>,
    pub(super) after: Vec<Option<Vec<Span>>>,
}

/// Why a device runs no widened part ([`plan`]: the launch keeps margins as with depth 1);
/// `Display` words it for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoDeep {
    /// The depth is 1.
    DepthOne,
    /// An argument is read and written.
    ReadAndWritten,
    /// The widened part's footprint is not known.
    Unknown,
    /// A margin would be as wide as the device's own elements.
    TooWide,
    /// The margins kept are narrower than the widened part reaches.
    KeptNarrower,
    /// No start aligned to the sub-buffer alignment leaves room.
    NoAlignedStart,
}

impl fmt::Display for NoDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NoDeep::DepthOne => "a depth of 1",
            NoDeep::ReadAndWritten => "an argument is read and written",
            NoDeep::Unknown => "the widened part's footprint is not known",
            NoDeep::TooWide => "a margin would be as wide as the device's own elements",
            NoDeep::KeptNarrower => "the margins kept are narrower than the widened part reaches",
            NoDeep::NoAlignedStart => "no aligned start leaves room",
        })
    }
}

/// The plan of a device with depth `k` (an exchange every `k` launches) for arguments
/// `views`, `reach(w)` saying what its part widened by `w` work-groups reaches of each
/// (`None`: not known). The widest `w < k` whose reads are all current runs without fetching;
/// where there is none, an exchange: the part widened by `k - 1`, its margins allocated (a
/// written argument's as wide as the launch's reads, for its turn as the input) and the stale
/// elements fetched. `Err`: why not (the launch keeps margins as with `k = 1`).
pub(super) fn plan<R: std::ops::Deref<Target = [Reach]>>(
    k: usize,
    views: &[View],
    reach: impl Fn(usize) -> Option<R>,
) -> std::result::Result<Deep, NoDeep> {
    if k < 2 {
        return Err(NoDeep::DepthOne);
    }
    // What each device holds current, once for every widening tried.
    let current: Vec<Vec<Span>> = views.iter().map(current).collect();
    for w in (0..k).rev() {
        let Some(rs) = reach(w) else { continue };
        if rs.iter().any(|r| r.read.is_some() && r.write.is_some()) {
            return Err(NoDeep::ReadAndWritten);
        }
        let fits = (views.iter().zip(&current).zip(rs.iter())).all(|((v, c), r)| {
            v.held
                .is_some_and(|h| within(r.read, h) && within(r.write, h))
                && r.read.is_none_or(|x| stale(x, c).is_empty())
        });
        if fits {
            let keep = (views.iter())
                .map(|v| Keep {
                    alloc: false,
                    held: v.held.unwrap_or(v.own),
                    fetch: Vec::new(),
                })
                .collect();
            return Ok(Deep {
                widen: w,
                keep,
                after: after(views, &rs, &[]),
            });
        }
    }
    let rs = reach(k - 1).ok_or(NoDeep::Unknown)?;
    let reads = (rs.iter().filter_map(|r| r.read)).reduce(hull);
    let mut keep = Vec::with_capacity(views.len());
    for (v, r) in views.iter().zip(rs.iter()) {
        let sizing = r.write.and(reads).map(|x| (x.0, x.1.min(v.len)));
        let need = [r.read, r.write, sizing]
            .into_iter()
            .flatten()
            .fold(v.own, hull);
        let width = v.own.1 - v.own.0;
        if need.1 > v.len || v.own.0 - need.0 >= width || need.1 - v.own.1 >= width {
            return Err(NoDeep::TooWide);
        }
        let held = match v.held {
            Some(h) if h.0 <= need.0 && need.1 <= h.1 => h,
            Some(_) => return Err(NoDeep::KeptNarrower),
            None => {
                let below = (v.own.0 - need.0).div_ceil(v.step.max(1)) * v.step.max(1);
                let lo = (v.own.0.checked_sub(below)).ok_or(NoDeep::NoAlignedStart)?;
                (lo, need.1)
            }
        };
        let fetch = [r.read, r.write]
            .into_iter()
            .flatten()
            .flat_map(|x| beyond(x, v.own))
            .flat_map(|m| stale(m, &v.valid))
            .fold(Vec::new(), |mut out: Vec<Span>, m| {
                mark_valid(&mut out, m);
                out
            });
        keep.push(Keep {
            alloc: v.held.is_none(),
            held,
            fetch,
        });
    }
    let fetched: Vec<&[Span]> = keep.iter().map(|k| k.fetch.as_slice()).collect();
    Ok(Deep {
        widen: k - 1,
        after: after(views, &rs, &fetched),
        keep,
    })
}

/// Per argument written, its margin elements current after the launch: those current before
/// (or `fetched` now) that the widened part may write and no other work-item may.
fn after(views: &[View], rs: &[Reach], fetched: &[&[Span]]) -> Vec<Option<Vec<Span>>> {
    (views.iter().zip(rs).enumerate())
        .map(|(i, (v, r))| {
            let w = r.write?;
            let mut now = v.valid.clone();
            for &f in fetched.get(i).copied().unwrap_or_default() {
                mark_valid(&mut now, f);
            }
            let mut out = Vec::new();
            for m in beyond(w, v.own) {
                for (a, b) in now.iter().map(|&(a, b)| (a.max(m.0), b.min(m.1))) {
                    for piece in minus((a, b), &r.outside) {
                        mark_valid(&mut out, piece);
                    }
                }
            }
            Some(out)
        })
        .collect()
}

/// The margin elements of `v` and its own, which a device holds current.
fn current(v: &View) -> Vec<Span> {
    let mut c = v.valid.clone();
    mark_valid(&mut c, v.own);
    c
}

fn within(r: Run, h: Span) -> bool {
    r.is_none_or(|r| h.0 <= r.0 && r.1 <= h.1)
}

fn hull(a: Span, b: Span) -> Span {
    (a.0.min(b.0), a.1.max(b.1))
}

/// The parts of `r` outside `own`.
fn beyond(r: Span, own: Span) -> Vec<Span> {
    [(r.0, r.1.min(own.0)), (r.0.max(own.1), r.1)]
        .into_iter()
        .filter(|(a, b)| a < b)
        .collect()
}

/// `r` less every span of `cut`.
fn minus(r: Span, cut: &[Span]) -> Vec<Span> {
    let mut sorted = cut.to_vec();
    sorted.sort_unstable();
    stale(r, &sorted)
}

#[cfg(test)]
mod tests;
