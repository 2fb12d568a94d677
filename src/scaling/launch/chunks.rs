//! The contract's check that each device holds the chunks its part of a launch works on
//! (partitioned placement), in global linear ids.

use super::super::arg::Value;
use super::super::contract::Cover;
use super::RootLaunch;
use crate::error::{Error, Result};
use crate::plan::partition::Partition;
use crate::plan::{Refusal, Unsplit};
use crate::range::Range;

impl RootLaunch<'_> {
    /// Errors unless device `d`'s work lies in the chunk of colored argument `i` when `cover`
    /// says it must hold it (the [contract](super#the-contract)).
    pub(super) fn check_chunk(
        &self,
        (i, d): (usize, usize),
        span: &Span,
        cover: Cover,
        (launched, local): (Range, Range),
        plan: &Partition,
    ) -> Result<()> {
        let Some(Value::Colored(c)) = self.args.get(i) else {
            return Ok(());
        };
        if let (Some(t), false) = (&c.tiling, cover == Cover::Anything) {
            let same = t.global == span.global
                && t.global == launched
                && t.local == local
                && t.partition == *plan
                && span.extent == c.len;
            if same {
                return Ok(());
            }
            let why = Refusal::ColoredFor {
                arg: i,
                elem: c.elem.to_string(),
                global: t.global,
                local: t.local,
            };
            return Err(self.kernel.refused(launched, Some(local), why));
        }
        let m = match cover {
            Cover::Anything => return Ok(()),
            // Own ids index pointees: elements only where they are known to be those.
            Cover::OwnId if self.pointee(i).is_some_and(|p| p != c.elem_size) => {
                let why = Refusal::Footprint(Unsplit::Pointee(i));
                return Err(self.kernel.refused(launched, Some(local), why));
            }
            Cover::OwnId => 1,
            Cover::Multiple if c.len % span.extent == 0 => c.len / span.extent,
            Cover::Multiple => 1,
        };
        let (lo, hi) = (m * span.first, m * span.end);
        let (start, end) = (c.starts[d], c.starts[d] + c.chunks[d]);
        if start <= lo && hi <= end {
            return Ok(());
        }
        let slab = m * span.extent / span.extents[plan.dim] * local.get(plan.dim);
        Err(Error::InvalidLaunch {
            kernel: self.kernel.name().to_string(),
            device: self.kernel.kernels[d].program().device().to_string(),
            global: span.global.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
            reason: Box::new(Refusal::NotHeld {
                device: d,
                arg: i,
                elem: c.elem.to_string(),
                len: c.len,
                works: (lo, hi),
                holds: (start, end),
                dim: plan.dim,
                page: slab * c.elem_size,
            }),
        })
    }
}

/// The global linear ids `[first, end)` one sub-launch covers, over the whole launch's
/// `extent` ids (global offset included).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Span {
    global: Range,
    extents: [usize; 3],
    extent: usize,
    first: usize,
    end: usize,
}

impl Span {
    /// For a launch of `global` at offset `base` whose sub-launch starts at `offset` (base
    /// included) with `size`.
    pub(super) fn new(global: Range, base: [usize; 3], offset: Range, size: Range) -> Self {
        let (g, s, rank) = (global.padded(), size.padded(), global.rank());
        // Offsets beyond the rank are 0 (`Range::padded` pads with 1).
        let zero_padded = |v: [usize; 3]| [0, 1, 2].map(|i| if i < rank { v[i] } else { 0 });
        let (o, base) = (zero_padded(offset.padded()), zero_padded(base));
        let extents = [0, 1, 2].map(|i| g[i] + base[i]);
        let linear = |v: [usize; 3]| v[0] + extents[0] * (v[1] + extents[1] * v[2]);
        let last = [0, 1, 2].map(|i| o[i] + s[i] - 1);
        Span {
            global,
            extents,
            extent: extents.iter().product(),
            first: linear(o),
            end: linear(last) + 1,
        }
    }
}

/// `offset` moved by `base` (padded), keeping `offset`'s rank.
pub(super) fn shift(offset: Range, base: [usize; 3]) -> Range {
    let mut r = offset;
    for (d, b) in base.iter().enumerate().take(offset.rank()) {
        r = r.with(d, offset.get(d) + b);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_shift_by_the_launch_offset() {
        assert_eq!(shift(Range::d2(0, 32), [5, 7, 0]), Range::d2(5, 39));
        assert_eq!(shift(Range::d1(64), [0; 3]), Range::d1(64));
    }

    #[test]
    fn spans_are_global_linear_ids() {
        // 1-D, 64 ids from 128 of a launch of 256 at offset 64: ids 192..256 of 320.
        let s = Span::new(Range::d1(256), [64, 1, 1], Range::d1(192), Range::d1(64));
        assert_eq!((s.extent, s.first, s.end), (320, 192, 256));
        // 3-D 8x4x6, z split at 3: rows z = 3..6 are ids 96..192.
        let s = Span::new(
            Range::d3(8, 4, 6),
            [0; 3],
            Range::d3(0, 0, 3),
            Range::d3(8, 4, 3),
        );
        assert_eq!((s.extents, s.first, s.end), ([8, 4, 6], 96, 192));
        // 2-D 8x4 split in x at 4: ids 4..32, not contiguous but bounded.
        let s = Span::new(Range::d2(8, 4), [0; 3], Range::d2(4, 0), Range::d2(4, 4));
        assert_eq!((s.first, s.end), (4, 32));
    }
}
