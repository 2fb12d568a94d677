//! A kernel's emulated build: the same kernel on the `emulated` backend, which runs the
//! work-groups of one or two work-items that abort PoCL 6.0's process with native sub-group
//! collectives ([`MIN_POCL_COLLECTIVE_GROUP`]), in the sub-groups the native kernel has there:
//! the whole work-group, or (a kernel whose sub-group size the driver chooses, in work-groups
//! of 1 × 2) sub-groups of one, so both builds give the same answers.

use super::Kernel;
#[cfg(doc)]
use crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP;
use crate::program::ResolvedSize;
use crate::range::Range;

impl Kernel {
    /// The same kernel built (once) on the emulated backend, for launches in work-groups
    /// smaller than the kernel's `min_group` (`local`: the one asked for, if any); or why there
    /// is none (the kernel needs no such build, the emulated backend refuses it, or its
    /// sub-groups there would not be the native kernel's).
    pub(crate) fn emulated(&self, local: Option<Range>) -> Result<&Kernel, String> {
        // The driver's sub-groups in `local`: the whole work-group, or sub-groups of one.
        let native = local.map(|l| (l.len(), self.sub_groups().max_sub_group_size(l)));
        let singles = match native {
            Some((n, Ok(s))) => s < n,
            Some((_, Err(e))) => return Err(format!("no sub-group size for {local:?}: {e}")),
            None => false,
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

    fn make_emulated(&self, singles: bool) -> Result<Kernel, String> {
        if self.constraints().min_group <= 1 {
            return Err("its work-groups may have any size".into());
        }
        let program = self.program().emulated(singles)?;
        let k = program.kernel(self.name()).map_err(|e| e.to_string())?;
        match (singles, k.resolved_sub_group_size()) {
            (true, ResolvedSize::Size(1)) | (false, ResolvedSize::Size(_)) => Ok(k),
            (_, s) => Err(format!(
                "its sub-groups there would be {s:?}, the native kernel's {}",
                match singles {
                    true => "single work-items",
                    false => "whole work-groups",
                }
            )),
        }
    }
}
