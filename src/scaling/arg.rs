//! The arguments of a [`RootLaunch`](super::RootLaunch): [`RootArg`] and what a launch sees of
//! a colored buffer.

use super::{Access, Placement};
use crate::launch::{Arg, KernelArg};
use crate::plan::partition::Partition;
use crate::range::Range;

/// An argument of a [`RootLaunch`](super::RootLaunch): `&ColoredBuffer<T>`, or anything a single-device launch
/// takes ([`KernelArg`]: `&Buffer<T>` of the root device's context, a scalar,
/// [`crate::launch::Local`]). Sealed, like [`KernelArg`].
pub trait RootArg: sealed::Sealed {
    /// The argument's value for every device.
    fn to_root_arg(&self) -> RootArgValue;
}

/// The value of a [`RootArg`] (opaque).
#[derive(Clone, Debug)]
pub struct RootArgValue(pub(super) Value);

#[derive(Clone, Debug)]
pub(super) enum Value {
    Plain(Arg),
    Colored(std::sync::Arc<ColoredArg>),
}

/// A colored buffer as a launch sees it.
#[derive(Clone, Debug)]
pub(super) struct ColoredArg {
    pub(super) elem: crate::buffer::ElemType,
    pub(super) elem_size: usize,
    pub(super) len: usize,
    pub(super) placement: Placement,
    pub(super) whole: Option<Arg>,
    pub(super) parts: Vec<Option<Arg>>,
    pub(super) starts: Vec<usize>,
    pub(super) chunks: Vec<usize>,
    pub(super) access: Access,
    pub(super) stored: Vec<(usize, usize)>,
    pub(super) tiling: Option<Tiling>,
    /// Per device, the runs of elements it owns.
    pub(super) owned: Vec<Vec<(usize, usize)>>,
    /// The parts that keep their halos, and which of their elements are current.
    pub(super) margins: Option<std::sync::Arc<dyn super::margins::Coherence>>,
    /// Where the valid data is: the parts, or whole on one device ([`super::resident`]).
    pub(super) residence: Option<std::sync::Arc<super::residence::Residence>>,
}

impl ColoredArg {
    /// Device `d`'s part now (inside its allocation with margins once it keeps them: a launch
    /// may have moved it since this argument was taken).
    pub(super) fn part(&self, d: usize) -> Option<Arg> {
        (self.margins.as_ref().and_then(|m| m.own_arg(d)))
            .or_else(|| self.parts.get(d).cloned().flatten())
    }

    /// How a launch must order itself for this buffer ([`super::launch::Held::Colored`]):
    /// whether every command on its parts so far ran on the part's own queue or is ordered
    /// before its next use by events (a part lent out with `part()` may be used anywhere).
    pub(super) fn own_queues(&self) -> bool {
        let lent = self.margins.as_ref().is_none_or(|m| m.lent());
        let crossed = self.residence.as_ref().is_none_or(|r| r.crossed());
        !lent && !crossed
    }

    /// The buffer may be written: every margin element is stale, and where it is held whole
    /// its parts are.
    pub(super) fn written(&self) {
        if let Some(m) = &self.margins {
            m.written();
        }
        if let Some(r) = &self.residence {
            r.dirty();
        }
    }
}

/// The launch whose partition a colored buffer follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Tiling {
    pub(super) global: Range,
    pub(super) local: Range,
    pub(super) partition: Partition,
}

pub(super) mod sealed {
    pub trait Sealed {}
}

impl<A: KernelArg> sealed::Sealed for A {}

impl<A: KernelArg> RootArg for A {
    fn to_root_arg(&self) -> RootArgValue {
        RootArgValue(Value::Plain(self.to_arg()))
    }
}
