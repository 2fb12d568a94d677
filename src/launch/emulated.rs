//! Launches in work-groups too small for PoCL's native sub-group collectives (one or two
//! work-items abort PoCL 6.0's process: [`MIN_POCL_COLLECTIVE_GROUP`]) run the kernel's
//! emulated build ([`Kernel::emulated`](crate::Kernel)) on the same queue, with the same
//! arguments; where there is none (the emulated backend refuses the kernel), the launch keeps
//! its typed refusal.
//!
//! The switch happens here, not in [`crate::plan::launch`]: the emulated build is another
//! kernel with facts of its own (constraints, launch-time id conditions, rounded and checked
//! variants, the hidden scratch argument), so the planner plans it afresh.

use super::{Launch, Prepared};
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP;
use crate::plan::Refusal;
use crate::range::Range;

impl<'a> Launch<'a> {
    /// This launch prepared by `prepare`, or, where that refuses work-groups too small for
    /// the kernel's native collectives, the same launch of its emulated build.
    pub(crate) fn or_emulated(
        self,
        prepare: impl Fn(&Launch<'a>) -> Result<Prepared>,
    ) -> Result<(Launch<'a>, Prepared)> {
        let (refused, global, local) = match prepare(&self) {
            Ok(p) => return Ok((self, p)),
            Err(e) => match too_small(&e) {
                Some((global, local)) => (e, global, local),
                None => return Err(e),
            },
        };
        let (name, min) = (self.kernel.name(), self.kernel.constraints().min_group);
        let kernel = match self.kernel.emulated(local) {
            Ok(k) => k,
            Err(why) => {
                log::debug!("kernel `{name}`: refused (no emulated build: {why}): {refused}");
                return Err(refused);
            }
        };
        let launch = Launch { kernel, ..self };
        match prepare(&launch) {
            Ok(prepared) => {
                log::debug!(
                    "kernel `{name}`: global {global:?} in work-groups of fewer than {min} \
                     work-items, where PoCL's native collectives abort: runs its emulated build"
                );
                Ok((launch, prepared))
            }
            Err(e) => {
                log::debug!("kernel `{name}`: its emulated build refuses too ({e}): {refused}");
                Err(refused)
            }
        }
    }
}

/// The global range of `e` and its local range (if one was asked or chosen) where it refuses
/// work-groups too small for PoCL's native sub-group collectives.
fn too_small(e: &Error) -> Option<(Vec<usize>, Option<Range>)> {
    let Error::InvalidLaunch {
        reason,
        global,
        local,
        ..
    } = e
    else {
        return None;
    };
    too_small_for_native(reason).then(|| (global.clone(), Range::new(local).ok()))
}

/// Whether `reason` refuses work-groups too small for PoCL's native sub-group collectives
/// (which the kernel's emulated build runs).
pub(crate) fn too_small_for_native(reason: &Refusal) -> bool {
    match reason {
        Refusal::GroupTooSmall { .. } | Refusal::UniformTooSmall { .. } => true,
        Refusal::PadTheRange(r) => matches!(**r, Refusal::GroupTooSmall { .. }),
        _ => false,
    }
}
