//! The one chooser of a launch's work-group: from the [`LocalSize`] asked for and what the
//! kernel and its device impose ([`Constraints`]: required and hinted sizes, whole warps,
//! limits), the local size a launch enqueues, or why there is none. Single-device launches and
//! each device's part of a multi-device launch ask it the same question.
//!
//! ```
//! use clgroups::plan::local_size::{DeviceKind, Limits};
//! use clgroups::plan::work_group::{choose, Constraints};
//! use clgroups::{LocalSize, Range};
//! let lim = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
//!     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
//! let kernel = Constraints::new(lim);
//! assert_eq!(choose(Range::d1(4096), LocalSize::Auto, &kernel), Ok(None)); // NULL
//! assert_eq!(choose(Range::d1(4096), LocalSize::Tuned, &kernel), Ok(Some(Range::d1(1024))));
//! // A kernel with reqd_work_group_size(64, 1, 1) gets exactly that, or an error naming it.
//! let required = Constraints { required: Some(Range::d1(64)), ..kernel.clone() };
//! assert_eq!(choose(Range::d1(4096), LocalSize::Auto, &required), Ok(Some(Range::d1(64))));
//! assert!(choose(Range::d1(4000), LocalSize::Auto, &required).unwrap_err().to_string().contains("reqd_work_group_size"));
//! ```

use super::local_size::{self, Limits};
use super::split;
use super::Refusal;
use crate::range::Range;

/// The local size of an ND-range launch.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, "kernel void one(global int *x) { x[get_global_id(0)] = 1; }")?;
/// let k = p.kernel("one")?;
/// let x = Buffer::<i32>::new(&queue, 256)?;
/// for local in [LocalSize::Auto, LocalSize::Tuned, LocalSize::Exact(Range::d1(64))] {
///     // SAFETY: work-item i writes x[i] for i < 256 = x.len().
///     unsafe { k.launch().arg(&x).nd_range(Range::d1(256), local)? }.wait()?;
/// }
/// // A local size that does not divide the global range is an error before anything runs.
/// // SAFETY: as above (nothing is enqueued).
/// let err = unsafe { k.launch().arg(&x).nd_range(Range::d1(256), Range::d1(48).into()) };
/// assert!(err.is_err());
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalSize {
    /// The implementation chooses (OpenCL: a NULL local size; SYCL's `auto_range` from
    /// `sycl_ext_oneapi_auto_local_range`). The global range is never changed.
    Auto,
    /// Exactly this local range.
    Exact(Range),
    /// The largest work-group that divides the global range and suits the kernel's preferred
    /// multiple and maximum (the "kernel query" approach of `sycl_ext_oneapi_auto_local_range`,
    /// built in).
    Tuned,
}

impl From<Range> for LocalSize {
    fn from(local: Range) -> Self {
        LocalSize::Exact(local)
    }
}

/// The smallest work-group PoCL's native backend runs sub-group collectives in: work-groups of
/// one or two work-items abort the process (PoCL 6.0: `undefined symbol:
/// __pocl_work_group_alloca`; measured with `sg_reduce_add` and `sub_group_reduce_add` over
/// local sizes 1..24: 1 and 2 abort, 3 and above run).
pub const MIN_POCL_COLLECTIVE_GROUP: usize = 3;

/// What a kernel on its device imposes on its work-groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraints {
    /// The kernel's limits on its device (for several devices: the tightest).
    pub limits: Limits,
    /// `reqd_work_group_size`: the only local size the kernel runs with.
    pub required: Option<Range>,
    /// `work_group_size_hint`: [`LocalSize::Tuned`] takes it where it divides the range.
    pub hint: Option<Range>,
    /// The kernel's sub-groups are warps of this many work-items (sub-group kernels on
    /// NVIDIA): [`LocalSize::Auto`] and [`LocalSize::Tuned`] pick whole warps where a size of
    /// whole warps divides the range (the driver is not asked); other sizes run too (the last
    /// warp of each work-group is a partial sub-group).
    pub warp: Option<usize>,
    /// The fewest work-items a work-group may have: smaller ones are refused and never chosen
    /// (1: any; PoCL's native sub-group collectives abort the process in work-groups of one or
    /// two work-items: a launch refused for it runs the kernel's emulated build instead, where
    /// there is one).
    pub min_group: usize,
}

impl Constraints {
    /// Only the limits: no required size, hint, or unit (for tests and the internals).
    #[cfg(any(test, feature = "unstable-internals"))]
    pub fn new(limits: Limits) -> Self {
        Constraints {
            limits,
            required: None,
            hint: None,
            warp: None,
            min_group: 1,
        }
    }

    /// The required size at `rank` dimensions, or why it cannot be used for `global` with
    /// `exact` asked for.
    fn required_at(&self, global: Range, exact: Option<Range>) -> Result<Option<Range>, Refusal> {
        let Some(required) = self.required else {
            return Ok(None);
        };
        let Some(at_rank) = split::at_rank(required, global.rank()) else {
            return Err(Refusal::RequiredRank { required });
        };
        if exact.is_some_and(|l| l.padded() != required.padded()) {
            return Err(Refusal::RequiredExact { required });
        }
        if !split::fits_required(global, required) {
            return Err(Refusal::RequiredNotDividing { required });
        }
        Ok(Some(at_rank))
    }
}

/// The local size a launch of `global` enqueues for `asked` (`None`: NULL, the driver's
/// choice), checked against everything `kernel` imposes; or why there is none.
pub fn choose(
    global: Range,
    asked: LocalSize,
    kernel: &Constraints,
) -> Result<Option<Range>, Refusal> {
    let exact = match asked {
        LocalSize::Exact(l) => Some(l),
        _ => None,
    };
    if let Some(req) = kernel.required_at(global, exact)? {
        check(global, req, kernel)?;
        log::debug!("{asked:?} over {global:?} -> required {req:?}");
        return Ok(Some(req));
    }
    let lim = &kernel.limits;
    let chosen = match (asked, kernel.warp) {
        (LocalSize::Exact(l), _) => Some(l),
        (LocalSize::Auto | LocalSize::Tuned, Some(unit)) => Some(
            local_size::tuned_whole(global, lim, unit)
                .unwrap_or_else(|| local_size::tuned(global, lim)),
        ),
        (LocalSize::Auto, None) if kernel.min_group > 1 => Some(local_size::tuned(global, lim)),
        (LocalSize::Auto, None) => None,
        (LocalSize::Tuned, None) => {
            Some(hinted(global, kernel).unwrap_or_else(|| local_size::tuned(global, lim)))
        }
    };
    match chosen {
        Some(l) => check(global, l, kernel)?,
        None if global.len() < kernel.min_group => {
            return Err(Refusal::GroupTooSmall {
                min: kernel.min_group,
            })
        }
        None => {}
    }
    log::debug!("{asked:?} over {global:?} -> {chosen:?}");
    Ok(chosen)
}

/// `local` against the limits and the smallest work-group.
fn check(global: Range, local: Range, kernel: &Constraints) -> Result<(), Refusal> {
    local_size::validate(global, local, &kernel.limits)?;
    match local.len() < kernel.min_group {
        true => Err(Refusal::GroupTooSmall {
            min: kernel.min_group,
        }),
        false => Ok(()),
    }
}

/// The kernel's `work_group_size_hint` when it divides `global` and fits the kernel.
fn hinted(global: Range, kernel: &Constraints) -> Option<Range> {
    let hint = split::at_rank(kernel.hint?, global.rank())?;
    let fits = split::fits_required(global, hint)
        && local_size::validate(global, hint, &kernel.limits).is_ok();
    log::debug!("work_group_size_hint {hint:?} fits {global:?}: {fits}");
    fits.then_some(hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::local_size::fixtures::gpu;

    fn warp() -> Constraints {
        Constraints {
            warp: Some(32),
            ..Constraints::new(gpu())
        }
    }

    #[test]
    fn required_sizes_win_and_are_checked() {
        let k = Constraints {
            required: Some(Range::d1(64)),
            ..Constraints::new(gpu())
        };
        for asked in [
            LocalSize::Auto,
            LocalSize::Tuned,
            LocalSize::Exact(Range::d1(64)),
        ] {
            assert_eq!(choose(Range::d1(256), asked, &k), Ok(Some(Range::d1(64))));
        }
        let other = choose(Range::d1(256), LocalSize::Exact(Range::d1(32)), &k);
        assert!(other.unwrap_err().to_string().contains("must be that"));
        assert!(choose(Range::d1(100), LocalSize::Auto, &k).is_err());
        let k3 = Constraints {
            required: Some(Range::d2(8, 8)),
            ..Constraints::new(gpu())
        };
        assert!(choose(Range::d1(64), LocalSize::Auto, &k3)
            .unwrap_err()
            .to_string()
            .contains("more dimensions"));
    }

    #[test]
    fn whole_warps_are_preferred_partial_ones_allowed() {
        let k = warp();
        let (auto, tuned) = (LocalSize::Auto, LocalSize::Tuned);
        assert_eq!(choose(Range::d1(4096), auto, &k), Ok(Some(Range::d1(1024))));
        assert_eq!(choose(Range::d1(480), tuned, &k), Ok(Some(Range::d1(480))));
        // No size of whole warps divides 100: the tuned size, whose last warp is partial.
        assert_eq!(choose(Range::d1(100), tuned, &k), Ok(Some(Range::d1(100))));
        let exact = LocalSize::Exact(Range::d1(48));
        assert_eq!(choose(Range::d1(96), exact, &k), Ok(Some(Range::d1(48))));
    }

    #[test]
    fn hints_are_taken_where_they_divide() {
        let k = Constraints {
            hint: Some(Range::d1(128)),
            ..Constraints::new(gpu())
        };
        assert_eq!(
            choose(Range::d1(1024), LocalSize::Tuned, &k),
            Ok(Some(Range::d1(128)))
        );
        assert_ne!(
            choose(Range::d1(1000), LocalSize::Tuned, &k),
            Ok(Some(Range::d1(128)))
        );
    }

    #[test]
    fn too_small_groups_are_avoided_or_refused() {
        let k = Constraints {
            min_group: 3,
            ..Constraints::new(gpu())
        };
        assert_eq!(
            choose(Range::d1(64), LocalSize::Auto, &k),
            Ok(Some(Range::d1(64)))
        );
        // 1031 is a prime above the largest work-group: tuned would be one work-item.
        assert!(choose(Range::d1(1031), LocalSize::Auto, &k).is_err());
        assert!(choose(Range::d1(1), LocalSize::Exact(Range::d1(1)), &k).is_err());
    }
}
