//! A program rebuilt on the `emulated` backend (the polyfill: sub-group collectives through
//! local memory), for the launches PoCL's native sub-groups cannot run: work-groups of one or
//! two work-items abort PoCL 6.0's process ([`crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP`]).

use super::{Program, SubGroupSize};
use crate::device::ShuffleBackend;
use crate::error::{Error, Result};
use crate::queue::Queue;

impl Program {
    /// The same source, options and rounding, built (once) for the same device of the same
    /// context on the emulated backend (the buffers and queues of the context serve both), with
    /// the program's default sub-group size, or sub-groups of one where `singles`; or why it
    /// could not be.
    pub(crate) fn emulated(&self, singles: bool) -> std::result::Result<&Program, &Error> {
        let made = self.inner.emulated[usize::from(singles)].get_or_init(|| {
            let built = self.build_emulated(singles);
            if let Err(why) = &built {
                log::debug!("{}: no emulated build: {why}", self.device());
            }
            built
        });
        made.as_ref()
    }

    fn build_emulated(&self, singles: bool) -> Result<Program> {
        let device = self.device().with_backend(ShuffleBackend::Emulated)?;
        let queue = Queue::on(self.queue().context(), &device)?;
        let i = &self.inner;
        let size = match singles {
            true => SubGroupSize::Exact(1),
            false => i.default_size,
        };
        Program::builder(i.source.clone())
            .options(&i.options)
            .default_sub_group_size(size)
            .rounding(i.rounding)
            .build(&queue)
    }
}
