//! The parts of a [`Refusal`](super::Refusal): how an argument breaks the contract of a
//! launch over several devices ([`Breach`]), why a footprint does not split a launch
//! ([`Unsplit`]), and an id condition that splits a work-group ([`GroupSplit`]).

use crate::plan::uniform_branch::GroupBarriers;
use crate::range::Range;
use std::fmt;

/// An id condition around sub-group collectives that differs between the work-items of a
/// work-group ([`Refusal::SplitsGroup`](super::Refusal::SplitsGroup)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSplit {
    /// The condition, as written.
    pub condition: String,
    /// The argument it compares with.
    pub param: usize,
    /// Its value.
    pub value: i128,
    /// The local range.
    pub local: Range,
    /// The offset.
    pub offset: Range,
    /// Why the device needs uniform collectives (`None`: its collectives are work-group
    /// barriers for no reason clgroups names).
    pub why: Option<GroupBarriers>,
}

/// How an argument breaks the contract of a launch over several devices.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Breach {
    /// Written by several devices that do not share memory (shared placement).
    SharedWrite {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// The busy devices.
        busy: usize,
    },
    /// Written, but declared read-only (gathered on one device).
    DeclaredReadOnly {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// The buffer and its access.
        kind: String,
    },
    /// A colored buffer passed to a parameter other than a `global` pointer.
    NotGlobal {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// Its element type.
        elem: String,
    },
    /// A plain buffer the kernel writes on several devices.
    PlainWritten {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// Its element type.
        elem: String,
        /// The busy devices.
        busy: usize,
    },
    /// A replicated or halo buffer the kernel writes.
    CopiesWritten {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// The buffer and its access.
        kind: String,
    },
    /// An undeclared buffer not proven indexed at each work-item's own id.
    NotOwnId {
        /// The argument.
        arg: usize,
        /// Its parameter's name.
        name: String,
        /// The buffer and its access.
        kind: String,
    },
}

/// Why a kernel's footprint does not split a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsplit {
    /// No footprint was read.
    NoFootprint,
    /// Shared placement.
    Shared,
    /// The argument is neither an undeclared colored buffer nor a plain buffer the launch
    /// writes (in global memory).
    Declared(usize),
    /// The argument's pointee is not known to be its element.
    Pointee(usize),
    /// The argument's writes are not proven.
    Writes(usize),
    /// The argument is written and read at unproven indices.
    Reads(usize),
    /// Two devices may reach an element of the argument, one writing.
    Meet {
        /// The argument.
        arg: usize,
        /// The devices.
        devices: (usize, usize),
    },
    /// Two arguments are one buffer the launch writes.
    SameBuffer(usize, usize),
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Breach::SharedWrite { arg, name, busy } => write!(
                f,
                "argument {arg} (`{name}`) is written by the kernel on {busy} devices that do not \
                 share the host's memory, where one buffer written by several devices loses \
                 writes (measured on two NVIDIA GPUs): use partitioned placement \
                 (CLGROUPS_PLACEMENT=partitioned, the default on such devices)"
            ),
            Breach::DeclaredReadOnly { arg, name, kind } => write!(
                f,
                "argument {arg} (`{name}`, {kind}) is written by the kernel, but it is declared \
                 read-only"
            ),
            Breach::NotGlobal { arg, name, elem } => write!(
                f,
                "argument {arg} (`{name}`, a ColoredBuffer<{elem}>) is not a `global` pointer \
                 parameter, and only those reach a device's chunk: pass a plain Buffer (e.g. \
                 to a `constant` parameter), or use shared placement"
            ),
            Breach::PlainWritten {
                arg,
                name,
                elem,
                busy,
            } => write!(
                f,
                "argument {arg} (`{name}`, a Buffer<{elem}>) is written by the kernel, and in \
                 partitioned placement each of the {busy} devices would write its own copy of \
                 it, losing the others' writes. Pass a ColoredBuffer instead (declared \
                 Access::Partitioned if the kernel writes it only at the global linear id), or \
                 use shared placement (CLGROUPS_PLACEMENT=shared) on devices that share memory; \
                 if the kernel never writes it, declare the parameter `const`"
            ),
            Breach::CopiesWritten { arg, name, kind } => write!(
                f,
                "argument {arg} (`{name}`, {kind}) is written by the kernel, but each device \
                 holds its own copy of the elements it reads there: declare it \
                 Access::Partitioned if the kernel writes it only at the global linear id, or \
                 use shared placement (CLGROUPS_PLACEMENT=shared); if the kernel never writes \
                 it, declare the parameter `const`"
            ),
            Breach::NotOwnId { arg, name, kind } => write!(
                f,
                "argument {arg} (`{name}`, {kind}) cannot be proven to be indexed only at each \
                 work-item's own global id, and in partitioned placement each device holds only \
                 its chunk. Declare how the kernel reaches it with ColoredBuffer::with_access: \
                 Access::Replicated (read-only, any index), Access::Halo(n) (read-only, up to n \
                 elements from the work-item's own), Access::Stencil(n) (read up to n elements \
                 from the own, written at the own id: halos exchanged after each launch), or \
                 Access::Partitioned (every access at the global linear id; checked in debug \
                 builds); or use shared placement (CLGROUPS_PLACEMENT=shared) on devices that \
                 share memory"
            ),
        }
    }
}

impl fmt::Display for Unsplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsplit::NoFootprint => f.write_str("the kernel has no footprint"),
            Unsplit::Shared => f.write_str("footprints split only in partitioned placement"),
            Unsplit::Declared(i) => write!(
                f,
                "argument {i} is neither an undeclared colored buffer nor a written plain buffer \
                 in global memory"
            ),
            Unsplit::Pointee(i) => write!(
                f,
                "argument {i}: its pointee's size is not known to be the buffer's element size"
            ),
            Unsplit::Writes(i) => {
                write!(f, "argument {i}: the kernel's writes to it are not proven")
            }
            Unsplit::Reads(i) => {
                write!(f, "argument {i}: written, and read at indices not proven")
            }
            Unsplit::Meet {
                arg,
                devices: (d, e),
            } => write!(
                f,
                "argument {arg}: devices {d} and {e} may reach the same elements, one of them \
                 writing"
            ),
            Unsplit::SameBuffer(i, j) => {
                write!(
                    f,
                    "arguments {i} and {j} are one buffer, which the launch writes"
                )
            }
        }
    }
}
