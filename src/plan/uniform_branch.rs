//! Whether a branch on `get_global_id(d) OP n` is uniform over every work-group of a launch.
//!
//! On the emulated sub-group backend every collective is a work-group barrier, which every
//! work-item of the work-group must reach. A kernel whose collectives sit under
//! `if (get_global_id(0) < n)` (or `size_t i = get_global_id(0); if (i < n)`, `n` a scalar
//! kernel argument) is fine exactly when each work-group lies entirely on one side of the
//! threshold: the scanner records such conditions ([`IdCondition`]) and the launch decides with
//! the argument's value, the local size it enqueues and the global offset ([`uniform_branch`]).
//! Where the driver would pick the local size, [`uniform_local`] picks one that keeps every
//! recorded branch uniform.
//!
//! ```
//! use clgroups::plan::uniform_branch::{uniform_branch, IdCmp, IdCondition};
//! use clgroups::Range;
//! let cond = IdCondition { param: 2, dim: 0, op: IdCmp::Lt, full_width: true, signed: false,
//!     text: "i < n".into() };
//! let (global, local, offset) = (Range::d1(1024), Range::d1(64), Range::d1(0));
//! assert!(uniform_branch(&cond, 512, global, local, offset)); // groups end at 512
//! assert!(!uniform_branch(&cond, 500, global, local, offset)); // group 7 straddles 500
//! assert!(uniform_branch(&cond, 5000, global, local, offset)); // every id is below n
//! ```

use crate::plan::gcd;
use crate::plan::local_size::{tuned, Limits};
use crate::range::Range;
use std::fmt;

/// Why a device's sub-group collectives are work-group barriers that every work-item of a
/// work-group must reach ([`crate::Device::group_uniform_reason`]); `Display` words it.
///
/// ```
/// use clgroups::plan::uniform_branch::GroupBarriers;
/// assert!(GroupBarriers::PoclCpu.to_string().contains("PoCL"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupBarriers {
    /// The `emulated` backend's sub-groups.
    Emulated,
    /// PoCL's native sub-group collectives on a CPU device.
    PoclCpu,
}

impl fmt::Display for GroupBarriers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GroupBarriers::Emulated => {
                "the emulated sub-groups are work-group barriers that every work-item must reach"
            }
            GroupBarriers::PoclCpu => {
                "PoCL's native sub-group collectives on CPU devices are work-group barriers that \
                 every work-item must reach"
            }
        })
    }
}

/// A comparison of a global id (on the left) with a kernel argument `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdCmp {
    /// `id < n`
    Lt,
    /// `id <= n`
    Le,
    /// `id > n`
    Gt,
    /// `id >= n`
    Ge,
}

/// A condition `get_global_id(dim) op n` of a kernel, `n` its scalar integer argument `param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdCondition {
    /// The argument's position in the kernel's signature.
    pub param: usize,
    /// The id's dimension (0, 1 or 2).
    pub dim: usize,
    /// The comparison, with the id on the left (`n > i` is recorded as `i < n`).
    pub op: IdCmp,
    /// Whether the id is compared at its full width (`get_global_id` itself, or a `size_t`,
    /// `ulong` or `long` variable); a 32-bit variable (`int i = get_global_id(0)`) would wrap
    /// for ids beyond `i32::MAX`, so such launches are never called uniform.
    pub full_width: bool,
    /// Whether the argument is of a signed type.
    pub signed: bool,
    /// The condition as written, with its line (for messages).
    pub text: String,
}

/// The threshold `t` such that the condition is `id < t` or its negation.
fn threshold(op: IdCmp, n: i128) -> i128 {
    match op {
        IdCmp::Lt | IdCmp::Ge => n,
        IdCmp::Le | IdCmp::Gt => n + 1,
    }
}

/// Whether `cond`, with the argument's value `n`, takes one value in each work-group of `local`
/// over `global` work-items at `offset`: the threshold lies outside the ids of the launch, or on
/// a work-group boundary. A negative `n` is uniform too (every id compares the same way, signed
/// or converted to unsigned).
///
/// ```
/// use clgroups::plan::uniform_branch::{uniform_branch, IdCmp, IdCondition};
/// use clgroups::Range;
/// let cond = IdCondition { param: 0, dim: 1, op: IdCmp::Le, full_width: true, signed: true,
///     text: "get_global_id(1) <= n".into() };
/// // Rows 100..164 in groups of 16 rows: `id <= 131` splits at 132 = 100 + 2 * 16.
/// let (g, l, o) = (Range::d2(8, 64), Range::d2(8, 16), Range::d2(0, 100));
/// assert!(uniform_branch(&cond, 131, g, l, o));
/// assert!(!uniform_branch(&cond, 132, g, l, o));
/// ```
pub fn uniform_branch(
    cond: &IdCondition,
    n: i128,
    global: Range,
    local: Range,
    offset: Range,
) -> bool {
    let d = cond.dim;
    if d >= 3 {
        return false;
    }
    let (g, l, o) = (global.padded()[d], local.padded()[d], offset.padded()[d]);
    let (start, end) = (o as i128, o as i128 + g as i128);
    if !cond.full_width && end > i32::MAX as i128 {
        return false;
    }
    let t = threshold(cond.op, n);
    t <= start || t >= end || (l > 0 && (t - start) % l as i128 == 0)
}

/// A local size for a launch whose driver would pick one (NULL local size) that keeps every
/// branch of `conds` (each with its argument's value) uniform: the tuned local size
/// ([`tuned`]) of the range whose conditioned dimensions shrink to the greatest common divisor
/// of their size and the threshold's distance from the offset. It divides `global`, so it may
/// be small (1 for an awkward `n`), never wrong.
///
/// ```
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::uniform_branch::{uniform_local, IdCmp, IdCondition};
/// use clgroups::Range;
/// let lim = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: false };
/// let cond = IdCondition { param: 2, dim: 0, op: IdCmp::Lt, full_width: true, signed: false,
///     text: "i < n".into() };
/// let local = uniform_local(&[(&cond, 96)], Range::d1(1024), Range::d1(0), &lim);
/// assert_eq!(96 % local.len(), 0);
/// ```
pub fn uniform_local(
    conds: &[(&IdCondition, i128)],
    global: Range,
    offset: Range,
    lim: &Limits,
) -> Range {
    let mut shape = global.padded();
    for &(cond, n) in conds {
        let d = cond.dim.min(2);
        let start = offset.padded()[d] as i128;
        let end = start + global.padded()[d] as i128;
        let t = threshold(cond.op, n);
        if t > start && t < end {
            shape[d] = gcd(shape[d], (t - start) as usize);
        }
    }
    let shaped = Range::new(&shape[..global.rank()]).unwrap_or(global);
    let local = tuned(shaped, lim);
    log::debug!("uniform branches {conds:?}: global {global:?} at {offset:?} -> local {local:?}");
    local
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::local_size::DeviceKind;

    fn cond(dim: usize, op: IdCmp) -> IdCondition {
        IdCondition {
            param: 0,
            dim,
            op,
            full_width: true,
            signed: false,
            text: String::new(),
        }
    }

    #[test]
    fn thresholds_on_group_boundaries_or_outside_the_range_are_uniform() {
        let c = |op| cond(0, op);
        let (g, l, z) = (Range::d1(256), Range::d1(64), Range::d1(0));
        for n in [0, 64, 128, 192, 256, 1000, -5] {
            assert!(uniform_branch(&c(IdCmp::Lt), n, g, l, z), "< {n}");
            assert!(uniform_branch(&c(IdCmp::Ge), n, g, l, z), ">= {n}");
        }
        for n in [1, 63, 65, 255] {
            assert!(!uniform_branch(&c(IdCmp::Lt), n, g, l, z), "< {n}");
            assert!(!uniform_branch(&c(IdCmp::Ge), n, g, l, z), ">= {n}");
        }
        // `<=` and `>` split one later.
        for op in [IdCmp::Le, IdCmp::Gt] {
            assert!(uniform_branch(&c(op), 63, g, l, z));
            assert!(uniform_branch(&c(op), -1, g, l, z));
            assert!(uniform_branch(&c(op), 255, g, l, z));
            assert!(!uniform_branch(&c(op), 64, g, l, z));
            assert!(!uniform_branch(&c(op), 0, g, l, z));
        }
        // Extreme values do not overflow.
        assert!(uniform_branch(&c(IdCmp::Le), u64::MAX as i128, g, l, z));
        assert!(uniform_branch(&c(IdCmp::Lt), i64::MIN as i128, g, l, z));
    }

    #[test]
    fn the_offset_moves_the_group_boundaries() {
        let c = cond(0, IdCmp::Lt);
        let (g, l) = (Range::d1(256), Range::d1(64));
        let o = Range::d1(10);
        assert!(uniform_branch(&c, 74, g, l, o));
        assert!(!uniform_branch(&c, 64, g, l, o));
        assert!(uniform_branch(&c, 10, g, l, o)); // the range's start
        assert!(uniform_branch(&c, 5, g, l, o)); // below it
        assert!(uniform_branch(&c, 266, g, l, o)); // its end
    }

    #[test]
    fn each_dimension_is_decided_by_its_own_sizes() {
        let (g, l, z) = (
            Range::d3(64, 32, 8),
            Range::d3(16, 8, 2),
            Range::d3(0, 0, 0),
        );
        assert!(uniform_branch(&cond(1, IdCmp::Lt), 16, g, l, z));
        assert!(!uniform_branch(&cond(1, IdCmp::Lt), 12, g, l, z));
        assert!(uniform_branch(&cond(2, IdCmp::Ge), 4, g, l, z));
        assert!(!uniform_branch(&cond(2, IdCmp::Ge), 3, g, l, z));
        // A dimension beyond the range's rank: every id is 0.
        let one = (Range::d1(64), Range::d1(16), Range::d1(0));
        assert!(uniform_branch(&cond(2, IdCmp::Lt), 1, one.0, one.1, one.2));
    }

    #[test]
    fn narrow_variables_are_not_trusted_beyond_i32() {
        let mut c = cond(0, IdCmp::Lt);
        c.full_width = false;
        let (l, z) = (Range::d1(64), Range::d1(0));
        assert!(uniform_branch(&c, 64, Range::d1(1 << 20), l, z));
        assert!(!uniform_branch(&c, 64, Range::d1(1 << 31), l, z));
    }

    #[test]
    fn uniform_local_divides_the_range_and_keeps_branches_uniform() {
        let lim = Limits {
            kind: DeviceKind::Cpu,
            max_work_group_size: 4096,
            max_work_item_sizes: [4096; 3],
            preferred_multiple: 8,
            non_uniform: false,
        };
        let c0 = cond(0, IdCmp::Lt);
        let c1 = cond(1, IdCmp::Gt);
        type Case<'a> = (&'a [(&'a IdCondition, i128)], Range, Range);
        let cases: [Case; 5] = [
            (&[(&c0, 96)], Range::d1(1024), Range::d1(0)),
            (&[(&c0, 1000)], Range::d1(1024), Range::d1(0)),
            (&[(&c0, 2000)], Range::d1(1024), Range::d1(0)),
            (&[(&c0, 517)], Range::d1(1024), Range::d1(512)),
            (&[(&c0, 30), (&c1, 11)], Range::d2(64, 64), Range::d2(0, 0)),
        ];
        for (conds, g, o) in cases {
            let l = uniform_local(conds, g, o, &lim);
            assert!(
                crate::plan::local_size::validate(g, l, &lim).is_ok(),
                "{l:?}"
            );
            for &(c, n) in conds {
                assert!(uniform_branch(c, n, g, l, o), "{conds:?} {g:?} {l:?}");
            }
        }
        // Nothing to keep uniform: the tuned size.
        let g = Range::d1(2000);
        let l = uniform_local(&[(&c0, 2000)], g, Range::d1(0), &lim);
        assert_eq!(l, tuned(g, &lim));
    }
}
