//! How a launch over several devices runs a kernel that has no partitioned variant (one the
//! scanner cannot rewrite: a name made by a macro, conditional code it cannot follow, ...).
//!
//! Such a kernel runs as written, so it sees each sub-launch as a launch of its own: global
//! ids stay right (sub-launches run at their global offset), but the words of
//! [`splittable`](super::split::splittable) (global size and offset, linear ids,
//! group ids and counts) would describe one device's part. And in partitioned placement each
//! device holds only its chunk of a colored buffer, which the kernel as written would index as
//! the whole array. So:
//!
//! * [`RootFallback::PerDevice`]: in shared placement (every device sees whole buffers), when
//!   no word of the source is split-sensitive (the whole-source check plain ranges use) and no
//!   buffer would be written by several devices that do not share the host's memory, each
//!   device runs its part of the launch at that part's global offset;
//! * [`RootFallback::OneDevice`] otherwise: device 0 runs the whole launch as a single-device
//!   launch. In partitioned placement the colored buffers are first *gathered* into one whole
//!   buffer each on device 0, and those the kernel may write are copied back to every device's
//!   part afterwards (its chunk and whatever copies its access kind holds).
//!
//! ```
//! use clgroups::plan::root_fallback::{root_fallback, RootFallback};
//! let (how, _why) = root_fallback(true, true, false);
//! assert_eq!(how, RootFallback::PerDevice);
//! let (how, why) = root_fallback(false, true, false);
//! assert_eq!(how, RootFallback::OneDevice { gather: true });
//! println!("{why}");
//! ```

use super::partition::partition;
use crate::range::Range;
use std::fmt;

/// How a launch over several devices runs a kernel as written (see the [module docs](self)).
///
/// ```
/// use clgroups::plan::root_fallback::RootFallback;
/// let how = RootFallback::OneDevice { gather: false };
/// assert_ne!(how, RootFallback::PerDevice);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootFallback {
    /// Every device runs its part of the launch, at the part's global offset.
    PerDevice,
    /// Device 0 runs the whole launch; `gather`: colored buffers are gathered there first and
    /// copied back after (partitioned placement).
    OneDevice {
        /// Whether colored buffers must be gathered (each device holds only its chunk).
        gather: bool,
    },
}

/// Why a launch over several devices runs a kernel as written so ([`root_fallback`]);
/// `Display` words it for the debug log.
///
/// ```
/// use clgroups::plan::root_fallback::FallbackWhy;
/// assert!(FallbackWhy::SplitSensitive.to_string().contains("get_global_size"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackWhy {
    /// Partitioned placement: each device holds only its chunks.
    Partitioned,
    /// The source asks for split-sensitive built-ins.
    SplitSensitive,
    /// Several devices that do not share the host's memory would write one buffer.
    LossyWrites,
    /// Shared placement and a source that never asks for whole-launch values.
    Splittable,
}

impl fmt::Display for FallbackWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FallbackWhy::Partitioned => f.write_str(
                "partitioned placement: each device holds only its chunks, which the kernel as \
                 written would index as whole arrays; colored buffers are gathered on device 0",
            ),
            FallbackWhy::SplitSensitive => {
                let words = crate::builtins::listed(crate::builtins::Flags::SPLIT);
                write!(
                    f,
                    "the source asks for {words}, which would describe one device's part"
                )
            }
            FallbackWhy::LossyWrites => f.write_str(
                "a buffer would be written by several devices that do not share the host's memory",
            ),
            FallbackWhy::Splittable => f.write_str(
                "shared placement and a source that never asks for whole-launch values: each \
                 device runs its part at its global offset",
            ),
        }
    }
}

/// The fallback for a launch in shared (`shared`) or partitioned placement, of a source that
/// never asks for split-sensitive values (`splittable`, [`super::split::splittable`]), where
/// `lossy_writes` says that several devices not sharing the host's memory would write one
/// buffer. Returns the decision and why, for the debug log.
///
/// ```
/// use clgroups::plan::root_fallback::{root_fallback, FallbackWhy, RootFallback};
/// // A grid-stride loop asks for get_global_size: the whole launch on device 0.
/// let (how, why) = root_fallback(true, false, false);
/// assert_eq!(how, RootFallback::OneDevice { gather: false });
/// assert_eq!(why, FallbackWhy::SplitSensitive);
/// ```
pub fn root_fallback(
    shared: bool,
    splittable: bool,
    lossy_writes: bool,
) -> (RootFallback, FallbackWhy) {
    match (shared, splittable, lossy_writes) {
        (false, _, _) => (
            RootFallback::OneDevice { gather: true },
            FallbackWhy::Partitioned,
        ),
        (true, false, _) => (
            RootFallback::OneDevice { gather: false },
            FallbackWhy::SplitSensitive,
        ),
        (true, true, true) => (
            RootFallback::OneDevice { gather: false },
            FallbackWhy::LossyWrites,
        ),
        (true, true, false) => (RootFallback::PerDevice, FallbackWhy::Splittable),
    }
}

/// Per device, the `(offset, size)` of its part of a plain range `user` (in whole `unit`s:
/// ones, or a required work-group size) for [`RootFallback::PerDevice`], or `None` when the
/// range does not split so that every part has at least two work-items (a part of one could
/// need a work-group of one work-item, which PoCL 6.0 cannot run for sub-group kernels) or
/// `unit` does not divide it: then device 0 runs it all.
///
/// ```
/// use clgroups::plan::root_fallback::per_device_parts;
/// use clgroups::Range;
/// let parts = per_device_parts(Range::d1(1009), Range::d1(1), 2).unwrap();
/// // 1009 work-items in units of 4 (plan::shares): 127 units and 126 (the last one partial).
/// assert_eq!(parts, vec![Some((Range::d1(0), Range::d1(508))), Some((Range::d1(508), Range::d1(501)))]);
/// assert_eq!(per_device_parts(Range::d1(3), Range::d1(1), 2), None);
/// ```
pub fn per_device_parts(
    user: Range,
    unit: Range,
    devices: usize,
) -> Option<Vec<Option<(Range, Range)>>> {
    let plan = partition(user, unit, devices).ok()?;
    let parts = plan.sub_ranges(user, unit);
    let small = parts.iter().flatten().any(|(_, size)| size.len() < 2);
    (!small).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shared_splittable_launches_without_lossy_writes_run_per_device() {
        for shared in [false, true] {
            for splittable in [false, true] {
                for lossy in [false, true] {
                    let (how, why) = root_fallback(shared, splittable, lossy);
                    assert!(!why.to_string().is_empty());
                    let per_device = shared && splittable && !lossy;
                    assert_eq!(how == RootFallback::PerDevice, per_device);
                    if !per_device {
                        assert_eq!(how, RootFallback::OneDevice { gather: !shared });
                    }
                }
            }
        }
    }

    #[test]
    fn parts_tile_the_range_with_two_items_or_more() {
        let user = Range::d2(31, 1031);
        let parts = per_device_parts(user, Range::d2(1, 1), 2).unwrap();
        let total: usize = parts.iter().flatten().map(|(_, s)| s.len()).sum();
        assert_eq!(total, user.len());
        // Whole required groups, or none when they do not divide the range.
        let parts = per_device_parts(Range::d1(64 * 37), Range::d1(64), 2).unwrap();
        assert!(parts
            .iter()
            .flatten()
            .all(|(o, s)| o.get(0) % 64 == 0 && s.get(0) % 64 == 0));
        assert_eq!(per_device_parts(Range::d1(1009), Range::d1(64), 2), None);
        assert_eq!(per_device_parts(Range::d2(1, 3), Range::d2(1, 1), 2), None);
        // One device: the whole range.
        let one = per_device_parts(Range::d1(7), Range::d1(1), 1).unwrap();
        assert_eq!(one, vec![Some((Range::d1(0), Range::d1(7)))]);
    }
}
