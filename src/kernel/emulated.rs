//! A kernel's emulated build: the same kernel on the `emulated` backend, which runs the
//! work-groups of one or two work-items that abort PoCL 6.0's process with native sub-group
//! collectives ([`MIN_POCL_COLLECTIVE_GROUP`]), in the sub-groups the native kernel has there:
//! the whole work-group, or (a kernel whose sub-group size the driver chooses, in work-groups
//! of 1 × 2) sub-groups of one, so both builds give the same answers.

use super::Kernel;
use crate::error::Error;
#[cfg(doc)]
use crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP;
use crate::program::ResolvedSize;
use crate::range::Range;
use std::fmt;

/// Why a kernel has no emulated build ([`Kernel::emulated`]).
#[derive(Clone, Debug)]
pub(crate) enum NoEmulated {
    /// The driver names no sub-group size for the work-groups asked for.
    NoSubGroupSize {
        /// The work-groups.
        local: Range,
        /// What the driver said.
        error: Box<Error>,
    },
    /// Its work-groups may have any size: it needs no emulated build.
    AnySize,
    /// The emulated backend refuses the program or the kernel.
    Refused(Box<Error>),
    /// Its sub-groups there would be `size`, not the native kernel's (single work-items where
    /// `singles`, else whole work-groups).
    SubGroups {
        /// The emulated kernel's sub-group size.
        size: ResolvedSize,
        /// Whether the native kernel's sub-groups are single work-items.
        singles: bool,
    },
}

impl fmt::Display for NoEmulated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoEmulated::NoSubGroupSize { local, error } => {
                write!(f, "no sub-group size for {:?}: {error}", Some(local))
            }
            NoEmulated::AnySize => f.write_str("its work-groups may have any size"),
            NoEmulated::Refused(e) => e.fmt(f),
            NoEmulated::SubGroups { size, singles } => write!(
                f,
                "its sub-groups there would be {size:?}, the native kernel's {}",
                match singles {
                    true => "single work-items",
                    false => "whole work-groups",
                }
            ),
        }
    }
}

impl Kernel {
    /// The same kernel built (once) on the emulated backend, for launches in work-groups
    /// smaller than the kernel's `min_group` (`local`: the one asked for, if any); or why there
    /// is none (the kernel needs no such build, the emulated backend refuses it, or its
    /// sub-groups there would not be the native kernel's).
    pub(crate) fn emulated(&self, local: Option<Range>) -> Result<&Kernel, NoEmulated> {
        // The driver's sub-groups in `local`: the whole work-group, or sub-groups of one.
        let native = local.map(|l| (l.len(), self.sub_groups().max_sub_group_size(l)));
        let singles = match (local, native) {
            (_, Some((n, Ok(s)))) => s < n,
            (Some(local), Some((_, Err(error)))) => {
                return Err(NoEmulated::NoSubGroupSize {
                    local,
                    error: Box::new(error),
                })
            }
            _ => false,
        };
        self.inner.emulated[usize::from(singles)]
            .get_or_init(|| {
                let made = self.make_emulated(singles);
                match &made {
                    Ok(_) => log::debug!("kernel `{}`: emulated build ready", self.name()),
                    Err(why) => log::debug!("kernel `{}`: no emulated build: {why}", self.name()),
                }
                made
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn make_emulated(&self, singles: bool) -> Result<Kernel, NoEmulated> {
        if self.constraints().min_group <= 1 {
            return Err(NoEmulated::AnySize);
        }
        let refused = |e: &Error| NoEmulated::Refused(Box::new(e.clone()));
        let program = self.program().emulated(singles).map_err(refused)?;
        let k = program.kernel(self.name()).map_err(|e| refused(&e))?;
        match (singles, k.resolved_sub_group_size()) {
            (true, ResolvedSize::Size(1)) | (false, ResolvedSize::Size(_)) => Ok(k),
            (_, size) => Err(NoEmulated::SubGroups { size, singles }),
        }
    }
}
