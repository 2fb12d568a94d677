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

impl<'a> Launch<'a> {
    /// This launch prepared by `prepare`, or, where that refuses work-groups too small for
    /// the kernel's native collectives, the same launch of its emulated build.
    pub(super) fn or_emulated(
        self,
        prepare: impl Fn(&Launch<'a>) -> Result<Prepared>,
    ) -> Result<(Launch<'a>, Prepared)> {
        let refused = match prepare(&self) {
            Ok(p) => return Ok((self, p)),
            Err(e) if too_small(&e) => e,
            Err(e) => return Err(e),
        };
        let name = self.kernel.name();
        let kernel = match self.kernel.emulated() {
            Ok(k) => k,
            Err(why) => {
                log::debug!("kernel `{name}`: refused (no emulated build: {why}): {refused}");
                return Err(refused);
            }
        };
        log::debug!("kernel `{name}`: runs its emulated build ({refused})");
        let launch = Launch { kernel, ..self };
        let prepared = prepare(&launch)?;
        Ok((launch, prepared))
    }
}

/// Whether `e` refuses work-groups too small for PoCL's native sub-group collectives.
fn too_small(e: &Error) -> bool {
    let Error::InvalidLaunch { reason, .. } = e else {
        return false;
    };
    match &**reason {
        Refusal::GroupTooSmall { .. } | Refusal::UniformTooSmall { .. } => true,
        Refusal::PadTheRange(r) => matches!(**r, Refusal::GroupTooSmall { .. }),
        _ => false,
    }
}
