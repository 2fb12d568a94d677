//! What the driver told of each kernel's required sub-group size ([`super::probe`] asks), and
//! why a kernel whose size neither clgroups reads nor the driver tells is refused.

use crate::device::ShuffleBackend;
use crate::transform::Obstacle;
use std::collections::BTreeMap;

/// The attribute that asks for a sub-group size.
pub(crate) const REQUIRED_SIZE: &str = "intel_reqd_sub_group_size";

/// What the driver told of one kernel's required sub-group size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Told {
    /// `intel_reqd_sub_group_size(S)`.
    Size(usize),
    /// No required sub-group size.
    NoSize,
}

/// Why the driver told nothing of a kernel's required sub-group size.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Untold {
    /// Not asked: the backend's driver applies the attribute itself, or nothing needed asking.
    NotAsked,
    /// The source spells `name` itself (or defines it): the probe could not tell its own
    /// required sizes from the source's.
    Spelled(&'static str),
    /// The probe build failed (the driver's log is at debug level).
    BuildFailed,
    /// The driver listed no such kernel in the probe build.
    Absent,
    /// The driver reported a required size that is not the probe's `(S, 1, 1)`.
    Shape([usize; 3]),
    /// The kernel has its own required work-group size, which the probe that the driver
    /// accepted cannot tell from a required sub-group size.
    OwnWorkGroupSize([usize; 3]),
    /// The probe's own kernel, `intel_reqd_sub_group_size(2)`, was not reported as `(2, 1, 1)`
    /// but as this: the driver does not apply the probe as meant.
    Canary([usize; 3]),
}

impl std::fmt::Display for Untold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untold::NotAsked => f.write_str("the driver was not asked"),
            Untold::Spelled(name) => write!(
                f,
                "the driver was not asked: the source spells or defines `{name}`, which the probe \
                 build redefines"
            ),
            Untold::BuildFailed => f.write_str("the driver's probe build failed"),
            Untold::Absent => f.write_str("the driver's probe build has no such kernel"),
            Untold::Shape(s) => write!(
                f,
                "the driver's probe build reported a required work-group size {s:?}, not the \
                 probe's (S, 1, 1)"
            ),
            Untold::OwnWorkGroupSize(s) => write!(
                f,
                "the kernel's own reqd_work_group_size {s:?} hides the probe's answer"
            ),
            Untold::Canary(s) => write!(
                f,
                "the driver's probe build reported {s:?} for its own kernel of \
                 {REQUIRED_SIZE}(2): it does not apply the probe as meant"
            ),
        }
    }
}

/// Why a kernel is refused: its required sub-group size is neither read by clgroups nor told by
/// the driver, on a backend that fixes the size when it compiles.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeRefusal {
    /// The kernel's own attribute, which the scanner cannot read (`attribute`: what and where).
    Unread {
        /// What the attribute is and where.
        attribute: Obstacle,
        /// The backend.
        backend: ShuffleBackend,
        /// Why the driver told nothing.
        driver: Untold,
    },
    /// The scanner did not find the kernel (made by a macro) in a source that writes the
    /// attribute where the scanner cannot tell which kernel it sizes.
    Unseen {
        /// The backend.
        backend: ShuffleBackend,
        /// Why the driver told nothing.
        driver: Untold,
    },
}

impl std::fmt::Display for SizeRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeRefusal::Unread {
                attribute,
                backend,
                driver,
            } => write!(
                f,
                "its own sub-group size is {attribute}, and {driver}; the {backend} backend fixes \
                 the size when it compiles: write a literal or an object-like macro of one \
                 definition"
            ),
            SizeRefusal::Unseen { backend, driver } => write!(
                f,
                "the scanner did not find the kernel (made by a macro?) in a source that writes \
                 {REQUIRED_SIZE} where the scanner cannot tell which kernel it sizes, and {driver}; \
                 the {backend} backend fixes the sub-group size when it compiles"
            ),
        }
    }
}

/// The driver's answer per kernel name, or why there are none.
pub(crate) type DriverSizes =
    std::result::Result<BTreeMap<String, std::result::Result<Told, Untold>>, Untold>;

/// What the driver tells of a kernel `name`'s required sub-group size.
pub(crate) fn told(sizes: &DriverSizes, name: &str) -> std::result::Result<Told, Untold> {
    match sizes {
        Ok(map) => map.get(name).cloned().unwrap_or(Err(Untold::Absent)),
        Err(why) => Err(why.clone()),
    }
}
