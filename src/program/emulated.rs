//! A program rebuilt on the `emulated` backend (the polyfill: sub-group collectives through
//! local memory), for the launches PoCL's native sub-groups cannot run: work-groups of one or
//! two work-items abort PoCL 6.0's process ([`crate::plan::work_group::MIN_POCL_COLLECTIVE_GROUP`]).

use super::Program;
use crate::device::ShuffleBackend;
use crate::error::Result;
use crate::queue::Queue;

impl Program {
    /// The same source, options, default sub-group size and rounding, built for the same
    /// device of the same context on the emulated backend (its buffers and queues serve both).
    pub(crate) fn emulated(&self) -> Result<Program> {
        let device = self.device().with_backend(ShuffleBackend::Emulated)?;
        let queue = Queue::on(self.queue().context(), &device)?;
        let i = &self.inner;
        Program::builder(i.source.clone())
            .options(&i.options)
            .default_sub_group_size(i.default_size)
            .rounding(i.rounding)
            .build(&queue)
    }
}
