//! The vocabulary every strategy of a launch over several devices shares: its shape, what
//! the analysis decided ([`Decision`]), and the whole copies devices receive instead of their
//! parts.

use super::super::arg::{ColoredArg, Value};
use super::super::margins::{Keep, Span};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ffi;
use crate::launch::Arg;
use crate::plan::launch::Shape as PlanShape;
use crate::plan::Refusal;
use crate::range::Range;
use opencl3::types::{cl_event, cl_mem};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// What a launch does (see `RootLaunch::decide`).
pub(super) enum Decision {
    /// As the contract says: each device on its chunks.
    Split,
    /// Split as the kernel's footprints prove: each device on its chunks and the ranges it
    /// fetches, why the contract alone did not split it, and whether its parts may be widened
    /// (deeper margins: `RootLaunch::deep_args`); shared with the kernel's kept decisions.
    Fetch(Arc<Fetch>, Arc<Refusal>, bool),
    /// Whole copies of some arguments (how each is fed), and why the split cannot serve them.
    Merge(Vec<Feed>, Refusal),
    /// The whole launch on device 0, and why.
    OneDevice(Refusal),
}

/// How the devices receive one argument of a merged launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Feed {
    /// As the split passes it (its chunk, a scalar, a plain read-only buffer).
    Direct,
    /// A whole copy on every busy device, only read.
    Replicated,
    /// A whole copy on every busy device, merged after.
    Merged,
}

/// A launch's ranges: the user's range, the launched (possibly rounded) one, its
/// work-groups, and its global offset (padded); and whether the user asked for a plain range
/// (no local size: `RootLaunch::range`).
#[derive(Clone, Copy)]
pub(super) struct Shape3 {
    pub(super) user: Range,
    pub(super) global: Range,
    pub(super) local: Range,
    pub(super) base: [usize; 3],
    pub(super) plain: bool,
}

/// How the user asked for a launch: its range, plain or in work-groups, and its offset (the
/// root plan is a function of them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::scaling) struct Request {
    pub(super) global: Range,
    pub(super) shape: PlanShape,
    pub(super) offset: Option<Range>,
}

/// Per argument, per device, the copy that device receives instead of its part (empty:
/// none); arguments that are one buffer share one copy.
pub(super) type Copies = Vec<Vec<Option<Held>>>;

/// A copy of elements `lo..` of an argument on one device (a whole copy: `lo` = 0).
#[derive(Clone)]
pub(super) struct Held {
    pub(super) buf: Arc<Buffer<u8>>,
    pub(super) lo: usize,
}

/// The copy of argument `i` for device `d`, if any.
pub(super) fn copy(copies: &Copies, i: usize, d: usize) -> Option<&Held> {
    copies.get(i)?.get(d)?.as_ref()
}

/// The memory object behind a buffer argument (a colored buffer's first part), to find
/// arguments that are one buffer.
pub(super) fn mem_key(v: &Value) -> Option<usize> {
    let mem = match v {
        Value::Colored(c) => c.whole.iter().chain(c.parts.iter().flatten()).next()?,
        Value::Plain(a) => a,
    };
    match mem {
        Arg::Buffer { mem, .. } => Some(mem.raw() as usize),
        _ => None,
    }
}

/// Elements `[lo, hi)` of an argument, or none.
pub(super) type Run = Option<(usize, usize)>;

/// Sorted disjoint runs of elements `[lo, hi)` of an argument.
pub(super) type Runs = Vec<(usize, usize)>;

/// Per argument, per device: the elements `[lo, hi)` that device fetches into a copy of its
/// own (`None`: its part serves it), the runs of them it reads or writes (the only ones
/// copied in), and the runs it writes there, copied back to their owners after the launch.
#[derive(Debug)]
pub(super) struct Fetch {
    pub(super) fetch: Vec<Vec<Run>>,
    pub(super) fill: Vec<Vec<Option<Runs>>>,
    pub(super) back: Vec<Vec<Option<Runs>>>,
    /// Per argument, per device: where its part keeps its halos instead (nothing copied
    /// within the device, nothing written back; only stale margin elements fetched).
    pub(super) keep: Vec<Vec<Option<Keep>>>,
    /// Per device: work-groups its part is widened by on each side (deeper margins).
    pub(super) widen: Vec<usize>,
    /// Per argument, per device: the margin elements current after the launch, where a
    /// widened part wrote them.
    pub(super) after: Vec<Vec<Option<Vec<Span>>>>,
}

impl Fetch {
    /// A plan that fetches, keeps and writes back nothing, for `args` arguments over
    /// `devices` devices.
    pub(super) fn none(args: usize, devices: usize) -> Fetch {
        Fetch {
            fetch: vec![vec![None; devices]; args],
            fill: vec![vec![None; devices]; args],
            back: vec![vec![None; devices]; args],
            keep: (0..args)
                .map(|_| (0..devices).map(|_| None).collect())
                .collect(),
            widen: vec![0; devices],
            after: vec![vec![None; devices]; args],
        }
    }

    /// Whether the plan moves nothing: no copy, no kept margin, no widened part.
    pub(super) fn moves_nothing(&self) -> bool {
        let none = |v: &Vec<Vec<Option<Runs>>>| v.iter().flatten().all(Option::is_none);
        self.fetch.iter().flatten().all(Option::is_none)
            && none(&self.fill)
            && none(&self.back)
            && self.keep.iter().flatten().all(Option::is_none)
            && self.widen.iter().all(|&w| w == 0)
            && self.after.iter().flatten().all(Option::is_none)
    }
}

/// One side of a copy: a memory object, a byte offset in it, and its size in bytes (known
/// where it was made: no driver query on the hot path).
pub(super) type Side = (cl_mem, usize, usize);

/// Device `d`'s part of `c` (its memory object) and its size in bytes.
pub(super) fn part_sized(c: &ColoredArg, d: usize) -> Option<(cl_mem, usize)> {
    match c.part(d)? {
        Arg::Buffer { mem, .. } => Some((mem.raw(), mem.bytes())),
        _ => None,
    }
}

/// `[x, y)` clipped to `[a, b)`, where anything of it is left.
pub(super) fn clip((x, y): (usize, usize), (a, b): (usize, usize)) -> Option<(usize, usize)> {
    let (x, y) = (x.max(a), y.min(b));
    (x < y).then_some((x, y))
}

/// Owner by owner, the runs of `c`'s elements it owns clipped to `span` (those that meet it),
/// each with its owner and the owner's part and size in bytes ([`part_sized`]; owners without
/// a part are passed over).
pub(super) fn owned_in(
    c: &ColoredArg,
    span: (usize, usize),
) -> impl Iterator<Item = (usize, (cl_mem, usize), (usize, usize))> + '_ {
    (c.owned.iter().enumerate())
        .filter_map(|(e, runs)| Some((e, part_sized(c, e)?, runs)))
        .flat_map(move |(e, part, runs)| {
            (runs.iter()).filter_map(move |&r| Some((e, part, clip(r, span)?)))
        })
}

/// Copies `bytes` from byte `from` of `src` to byte `to` of `dst` on `q` after `waits`, once
/// both ranges are checked to lie in their memory objects (of the sizes given): a plan that
/// sized a copy wrongly (elements for bytes, pointees for elements) is a typed error, never a
/// copy past a buffer.
///
/// # Safety
///
/// `src` and `dst` are live buffers of at least the sizes given; `waits` are events of the
/// queue's context.
pub(super) unsafe fn bounded_copy(
    q: &crate::queue::Queue,
    (src, from, src_size): Side,
    (dst, to, dst_size): Side,
    bytes: usize,
    waits: &[cl_event],
) -> Result<ffi::Owned<opencl3::event::Event>> {
    check_sides((src, from, src_size), (dst, to, dst_size), bytes)?;
    // SAFETY: the caller vouches for the buffers and the waits; both ranges were checked.
    unsafe { ffi::copy_bytes(q.raw(), (src, from), (dst, to), bytes, waits) }
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0, q.device().to_string()))
}

/// Errors unless `bytes` from the source's offset and from the destination's lie in their
/// memory objects (of the sizes given).
pub(super) fn check_sides(
    (_, from, src_size): Side,
    (_, to, dst_size): Side,
    bytes: usize,
) -> Result<()> {
    for (at, size, what) in [(from, src_size, "source"), (to, dst_size, "destination")] {
        if at.checked_add(bytes).is_none_or(|end| end > size) {
            let fault = crate::error::InputFault::CopyOutside {
                bytes,
                at,
                what,
                size,
            };
            return Err(Error::input(fault));
        }
    }
    Ok(())
}

/// The value `key` has in `kept` (a kernel's memo of pure answers: [`super::deepen::Reaches`],
/// [`super::footprint::ArgRuns`]), made by `make` and kept where it has none; the memo is
/// dropped whole once it holds `most` keys.
pub(super) fn kept_or_made<K: Eq + Hash, V: Clone>(
    kept: &Mutex<HashMap<K, V>>,
    key: K,
    most: usize,
    make: impl FnOnce() -> V,
) -> V {
    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(v) = kept.get(&key) {
        return v.clone();
    }
    if kept.len() >= most {
        kept.clear();
    }
    kept.entry(key).or_insert_with(make).clone()
}

#[cfg(test)]
mod tests {
    use super::{clip, Fetch};

    #[test]
    fn a_run_clipped_to_a_span_keeps_what_lies_in_it() {
        assert_eq!(clip((2, 9), (4, 12)), Some((4, 9)));
        assert_eq!(clip((5, 6), (4, 12)), Some((5, 6)));
        assert_eq!(clip((0, 4), (4, 12)), None);
        assert_eq!(clip((12, 20), (4, 12)), None);
    }

    #[test]
    fn a_plan_moves_nothing_until_anything_is_copied_kept_or_widened() {
        let none = Fetch::none(3, 2);
        assert!(none.moves_nothing());
        let each: [fn(&mut Fetch); 5] = [
            |f| f.fetch[2][1] = Some((0, 8)),
            |f| f.fill[0][0] = Some(vec![(0, 4)]),
            |f| f.back[1][1] = Some(vec![(4, 8)]),
            |f| f.widen[1] = 1,
            |f| f.after[0][1] = Some(Vec::new()),
        ];
        for change in each {
            let mut f = Fetch::none(3, 2);
            change(&mut f);
            assert!(!f.moves_nothing());
        }
    }
}
