//! A kernel's emulated build: the same kernel on the `emulated` backend, which runs the
//! work-groups of one or two work-items that abort PoCL 6.0's process with native sub-group
//! collectives ([`MIN_POCL_COLLECTIVE_GROUP`]). In such work-groups a sub-group is the whole
//! work-group on both backends, so both give the same answers.

use super::Kernel;
#[cfg(doc)]
use crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP;

impl Kernel {
    /// The same kernel built (once) on the emulated backend, for launches in work-groups
    /// smaller than the kernel's `min_group`; or why there is none (the kernel needs no such
    /// build, or the emulated backend refuses it).
    pub(crate) fn emulated(&self) -> Result<&Kernel, &str> {
        self.inner
            .emulated
            .get_or_init(|| {
                let made = self.make_emulated();
                match &made {
                    Ok(_) => log::debug!("kernel `{}`: emulated build ready", self.name()),
                    Err(why) => log::debug!("kernel `{}`: no emulated build: {why}", self.name()),
                }
                made
            })
            .as_ref()
            .map_err(String::as_str)
    }

    fn make_emulated(&self) -> Result<Kernel, String> {
        if self.constraints().min_group <= 1 {
            return Err("its work-groups may have any size".into());
        }
        let program = self.program().emulated().map_err(|e| e.to_string())?;
        program.kernel(self.name()).map_err(|e| e.to_string())
    }
}
