//! Parts that keep their halos (partitioned placement, [`Access::Auto`](super::Access::Auto)):
//! where a launch's footprint shows that a device reads a margin beyond its own elements and
//! writes only inside them, its part of the [`ColoredBuffer`](super::ColoredBuffer) moves once
//! into an allocation `[lo, hi)` with room for the margins (its own elements copied in once;
//! the part becomes a sub-buffer of it), and later launches fetch only the margin elements
//! that are stale. A small validity record per device says which margin elements are
//! current; every write of an element (a launch that may write the buffer, a host write or
//! fill, a scan) marks it stale in every device's margins. A buffer whose part was lent out
//! ([`ColoredBuffer::part`](super::ColoredBuffer::part): writes through it are not seen)
//! keeps no margins from then on. [`plan`] decides, without a device; the launch only
//! executes it.

use crate::buffer::{Buffer, Pod};
use crate::error::Result;
use crate::ffi;
use crate::launch::{Arg, KernelArg};
use crate::queue::Queue;
use opencl3::types::{cl_event, cl_mem};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Elements `[lo, hi)` of a buffer.
pub(super) type Span = (usize, usize);

/// What one device does for one argument of a launch split by footprints: keep its part's
/// margins, allocated now (`alloc`) or earlier, holding `held`, and fetch the stale elements
/// `fetch` from their owners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Keep {
    pub(super) alloc: bool,
    pub(super) held: Span,
    pub(super) fetch: Vec<Span>,
}

/// Why a device keeps no margins for an argument of a launch ([`plan`]); `Display` words it
/// for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoMargins {
    /// The device owns no elements.
    OwnsNothing,
    /// It writes beyond its own elements.
    WritesBeyond,
    /// It reads nothing beyond its own elements.
    ReadsNothingBeyond,
    /// Its reads leave the buffer.
    ReadsLeaveBuffer,
    /// A margin would be wider than its own elements.
    TooWide,
    /// The margins it keeps are narrower than this launch reads.
    KeptNarrower,
    /// No start aligned to the sub-buffer alignment leaves room for the margin below.
    NoAlignedStart,
}

impl fmt::Display for NoMargins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NoMargins::OwnsNothing => "the device owns no elements",
            NoMargins::WritesBeyond => "the device writes beyond its own elements",
            NoMargins::ReadsNothingBeyond => "the device reads nothing beyond its own elements",
            NoMargins::ReadsLeaveBuffer => "the reads leave the buffer",
            NoMargins::TooWide => "a margin would be wider than the device's own elements",
            NoMargins::KeptNarrower => "the margins kept are narrower than this launch reads",
            NoMargins::NoAlignedStart => "no aligned start leaves room for the margin below",
        })
    }
}

/// Whether a device owning `own` that reads `read` and writes `write` (element ranges of a
/// buffer of `len`) keeps margins: the part's allocation `have` if it has one, else a new one
/// whose start leaves its own elements at a multiple of `step` elements (sub-buffer
/// alignment), and the stale margin elements it fetches (`valid`: those current). `Err`: why
/// not (the launch then copies as before).
pub(super) fn plan(
    own: Span,
    read: Option<Span>,
    write: Option<Span>,
    len: usize,
    step: usize,
    have: Option<Span>,
    valid: &[Span],
) -> std::result::Result<Keep, NoMargins> {
    if own.0 >= own.1 {
        return Err(NoMargins::OwnsNothing);
    }
    if write.is_some_and(|w| w.0 < own.0 || w.1 > own.1) {
        return Err(NoMargins::WritesBeyond);
    }
    let Some(read) = read.filter(|r| r.0 < own.0 || r.1 > own.1) else {
        return Err(NoMargins::ReadsNothingBeyond);
    };
    if read.1 > len {
        return Err(NoMargins::ReadsLeaveBuffer);
    }
    let (below, above) = (own.0.saturating_sub(read.0), read.1.saturating_sub(own.1));
    if below > own.1 - own.0 || above > own.1 - own.0 {
        return Err(NoMargins::TooWide);
    }
    let margins: Vec<Span> = [(read.0, own.0), (own.1, read.1)]
        .into_iter()
        .filter(|(a, b)| a < b)
        .collect();
    if let Some(held) = have {
        if held.0 > read.0 || read.1 > held.1 {
            return Err(NoMargins::KeptNarrower);
        }
        let fetch = margins.iter().flat_map(|&m| stale(m, valid)).collect();
        return Ok(Keep {
            alloc: false,
            held,
            fetch,
        });
    }
    let step = step.max(1);
    let lo = match below {
        0 => own.0,
        b if b.div_ceil(step) * step <= own.0 => own.0 - b.div_ceil(step) * step,
        _ => return Err(NoMargins::NoAlignedStart),
    };
    Ok(Keep {
        alloc: true,
        held: (lo, read.1.max(own.1)),
        fetch: margins,
    })
}

/// The parts of `want` that `valid` (sorted, disjoint) does not cover.
pub(super) fn stale(want: Span, valid: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut at = want.0;
    for &(a, b) in valid.iter().filter(|&&(a, b)| a < want.1 && b > want.0) {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < want.1 {
        out.push((at, want.1));
    }
    out
}

/// `valid` with `r` added (kept sorted and disjoint).
pub(super) fn mark_valid(valid: &mut Vec<Span>, r: Span) {
    if r.0 >= r.1 {
        return;
    }
    valid.push(r);
    valid.sort_unstable();
    let mut merged: Vec<Span> = Vec::with_capacity(valid.len());
    for &(a, b) in valid.iter() {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    *valid = merged;
}

/// A colored buffer's margins as launches see them (its element type erased).
pub(super) trait Coherence: fmt::Debug + Send + Sync {
    /// Device `d`'s own elements, where it may keep margins (one run, its whole part).
    fn own(&self, d: usize) -> Option<Span>;
    /// The sub-buffer alignment, in elements.
    fn step(&self) -> usize;
    /// Device `d`'s allocation with margins and the elements it holds, once made.
    fn kept(&self, d: usize) -> Option<(Arc<Buffer<u8>>, Span)>;
    /// Device `d`'s own elements inside its allocation with margins (its part now), once made.
    fn own_arg(&self, d: usize) -> Option<Arg>;
    /// Makes device `d`'s allocation holding `held`, its own elements copied in from `old`
    /// (the part until now) on `q` after `waits`; returns the bytes copied.
    fn install(
        &self,
        d: usize,
        held: Span,
        q: &Queue,
        old: cl_mem,
        waits: &[cl_event],
    ) -> Result<u64>;
    /// The margin elements of device `d` that are current.
    fn valid(&self, d: usize) -> Vec<Span>;
    /// Device `d`'s margin elements `r` are current (just fetched).
    fn fetched(&self, d: usize, r: Span);
    /// Device `d`'s current margin elements are `spans` (a widened part wrote them).
    fn set_valid(&self, d: usize, spans: Vec<Span>);
    /// Every margin element is stale (the buffer may have been written anywhere).
    fn written(&self);
    /// Whether a part was lent out ([`ColoredBuffer::part`](super::ColoredBuffer::part)):
    /// writes through it are not seen, so margins are no longer kept nor trusted.
    fn lent(&self) -> bool;
    /// What a launch's margin plans read of these margins now.
    fn state(&self) -> MarginState;
}

/// What a launch's margin plans read of a colored buffer's margins ([`Coherence::state`]):
/// whether a part was lent out, per device the elements its allocation holds (once made)
/// and its current margin elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct MarginState {
    lent: bool,
    held: Vec<Option<Span>>,
    valid: Vec<Vec<Span>>,
}

/// Device `d`'s allocation with margins: its own part inside (a sub-buffer, released first),
/// the bytes, the elements held.
struct Kept<T: Pod> {
    part: Buffer<T>,
    whole: Arc<Buffer<u8>>,
    held: Span,
}

/// The margins of a `ColoredBuffer<T>`'s parts, shared with its launches.
pub(crate) struct Margins<T: Pod> {
    own: Vec<Option<Span>>,
    step: usize,
    kept: Vec<OnceLock<Kept<T>>>,
    valid: Mutex<Vec<Vec<Span>>>,
    lent: AtomicBool,
}

impl<T: Pod + Send + Sync> Margins<T> {
    /// No margins yet; `own[d]` the device's run where it may keep them, `align` the
    /// sub-buffer alignment in bytes.
    pub(super) fn new(own: Vec<Option<Span>>, align: usize) -> Self {
        let es = size_of::<T>().max(1);
        let align = align.max(1);
        let step = align / gcd(align, es);
        let n = own.len();
        Margins {
            own,
            step,
            kept: (0..n).map(|_| OnceLock::new()).collect(),
            valid: Mutex::new(vec![Vec::new(); n]),
            lent: AtomicBool::new(false),
        }
    }

    /// A part was lent out: margins are neither kept nor trusted from now on.
    pub(super) fn lend(&self) {
        self.lent.store(true, Ordering::Relaxed);
        self.written();
    }

    /// Device `d`'s part inside its allocation with margins, once made.
    pub(super) fn part(&self, d: usize) -> Option<&Buffer<T>> {
        Some(&self.kept.get(d)?.get()?.part)
    }

    /// Per device, [`part`](Self::part) to write (the caller holds the only handle).
    pub(super) fn parts_mut(&mut self) -> Vec<Option<&mut Buffer<T>>> {
        (self.kept.iter_mut())
            .map(|k| k.get_mut().map(|k| &mut k.part))
            .collect()
    }

    /// Whether some device keeps margins.
    pub(super) fn any_kept(&self) -> bool {
        self.kept.iter().any(|k| k.get().is_some())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<Span>>> {
        self.valid.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl<T: Pod + Send + Sync> fmt::Debug for Margins<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held: Vec<Option<Span>> = self.kept.iter().map(|k| k.get().map(|k| k.held)).collect();
        write!(f, "margins held {held:?}, valid {:?}", *self.lock())
    }
}

impl<T: Pod + Send + Sync> Coherence for Margins<T> {
    fn own(&self, d: usize) -> Option<Span> {
        self.own.get(d).copied().flatten()
    }

    fn step(&self) -> usize {
        self.step
    }

    fn kept(&self, d: usize) -> Option<(Arc<Buffer<u8>>, Span)> {
        let k = self.kept.get(d)?.get()?;
        Some((k.whole.clone(), k.held))
    }

    fn own_arg(&self, d: usize) -> Option<Arg> {
        self.part(d).map(|p| p.to_arg())
    }

    fn install(
        &self,
        d: usize,
        held: Span,
        q: &Queue,
        old: cl_mem,
        waits: &[cl_event],
    ) -> Result<u64> {
        let (Some(own), Some(slot)) = (self.own(d), self.kept.get(d)) else {
            return Ok(0);
        };
        let es = size_of::<T>();
        let whole = Buffer::<u8>::new(q, (held.1 - held.0) * es)?;
        let (at, bytes) = ((own.0 - held.0) * es, (own.1 - own.0) * es);
        let part = whole.sub_buffer_as::<T>(at, own.1 - own.0)?;
        // SAFETY: `old` holds the device's own elements (`bytes`), the new allocation holds
        // them from byte `at` on; the copy follows `waits` and the queue's earlier commands.
        let ev = unsafe { ffi::copy_bytes(q.raw(), (old, 0), (whole.as_raw(), at), bytes, waits) }
            .map_err(|e| {
                crate::error::Error::cl("clEnqueueCopyBuffer", e.0, q.device().to_string())
            })?;
        drop(ev);
        let kept = Kept {
            part,
            whole: Arc::new(whole),
            held,
        };
        if slot.set(kept).is_err() {
            return Ok(0);
        }
        self.lock()[d].clear();
        log::debug!("colored buffer: device {d} keeps margins, holding {held:?} (own {own:?})");
        Ok(bytes as u64)
    }

    fn valid(&self, d: usize) -> Vec<Span> {
        self.lock().get(d).cloned().unwrap_or_default()
    }

    fn fetched(&self, d: usize, r: Span) {
        if let Some(v) = self.lock().get_mut(d) {
            mark_valid(v, r);
        }
    }

    fn set_valid(&self, d: usize, spans: Vec<Span>) {
        if let Some(v) = self.lock().get_mut(d) {
            *v = spans;
        }
    }

    fn written(&self) {
        self.lock().iter_mut().for_each(Vec::clear);
    }

    fn lent(&self) -> bool {
        self.lent.load(Ordering::Relaxed)
    }

    fn state(&self) -> MarginState {
        MarginState {
            lent: self.lent(),
            held: self.kept.iter().map(|k| k.get().map(|k| k.held)).collect(),
            valid: self.lock().clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_launch_allocates_aligned_margins_and_fetches_them() {
        // A device owning [1000, 2000) that reads one row of 64 either side.
        let k = plan(
            (1000, 2000),
            Some((936, 2064)),
            Some((1000, 2000)),
            4000,
            32,
            None,
            &[],
        );
        // 64 rounded up to the step of 32 is 64: lo = 936.
        assert_eq!(
            k,
            Ok(Keep {
                alloc: true,
                held: (936, 2064),
                fetch: vec![(936, 1000), (2000, 2064)],
            })
        );
        // A margin of 1 below with a step of 32 starts 32 below.
        let k = plan((1000, 2000), Some((999, 2000)), None, 4000, 32, None, &[]).unwrap();
        assert_eq!((k.held, k.fetch), ((968, 2000), vec![(999, 1000)]));
        // Device 0 reads only above.
        let k = plan(
            (0, 1000),
            Some((0, 1001)),
            Some((0, 1000)),
            2000,
            32,
            None,
            &[],
        )
        .unwrap();
        assert_eq!((k.held, k.fetch), ((0, 1001), vec![(1000, 1001)]));
    }

    #[test]
    fn later_launches_fetch_only_what_is_stale() {
        let own = (1000, 2000);
        let read = Some((999, 2001));
        let have = Some((968, 2001));
        let k = plan(
            own,
            read,
            None,
            4000,
            32,
            have,
            &[(968, 1000), (2000, 2001)],
        )
        .unwrap();
        assert_eq!((k.alloc, k.fetch), (false, vec![]));
        let k = plan(own, read, None, 4000, 32, have, &[(2000, 2001)]).unwrap();
        assert_eq!(k.fetch, vec![(999, 1000)]);
        let k = plan(own, read, None, 4000, 32, have, &[]).unwrap();
        assert_eq!(k.fetch, vec![(999, 1000), (2000, 2001)]);
        // A launch reading further than the margins kept copies as before.
        assert!(plan(
            own,
            Some((990, 2001)),
            None,
            4000,
            32,
            Some((999, 2001)),
            &[]
        )
        .is_err());
    }

    #[test]
    fn refuses_what_it_cannot_keep() {
        let own = (1000, 2000);
        // Writes beyond its own elements, reads nothing beyond, margins wider than the part.
        assert!(plan(
            own,
            Some((999, 2000)),
            Some((999, 2000)),
            4000,
            1,
            None,
            &[]
        )
        .is_err());
        assert!(plan(own, Some((1000, 2000)), None, 4000, 1, None, &[]).is_err());
        assert!(plan(own, Some((0, 4000)), None, 4000, 1, None, &[]).is_err());
        assert!(plan((5, 5), Some((4, 6)), None, 10, 1, None, &[]).is_err());
        // No aligned start: own start 10 is not a multiple of 32, and 32 > 10.
        assert!(plan((10, 50), Some((9, 50)), None, 100, 32, None, &[]).is_err());
        // Own start a multiple of the step: the allocation may start at 0.
        let k = plan((128, 256), Some((127, 256)), None, 300, 128, None, &[]).unwrap();
        assert_eq!(k.held, (0, 256));
    }

    #[test]
    fn validity_ranges() {
        let mut v = Vec::new();
        mark_valid(&mut v, (10, 20));
        mark_valid(&mut v, (30, 40));
        mark_valid(&mut v, (20, 25));
        assert_eq!(v, [(10, 25), (30, 40)]);
        assert_eq!(stale((0, 50), &v), [(0, 10), (25, 30), (40, 50)]);
        assert_eq!(stale((12, 24), &v), []);
        mark_valid(&mut v, (5, 5));
        assert_eq!(v, [(10, 25), (30, 40)]);
    }
}
