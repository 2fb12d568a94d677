//! The classic baseline: `cl/algorithms/tree_reduce.cl`, a local-memory tree reduction sized
//! like PyOpenCL's `ReductionKernel` (stage after stage until one group is left). Shared by
//! `examples/bench_reduce.rs` and `benches/reduce.rs`.

use clgroups::launch::{Event, Local, LocalSize};
use clgroups::{Buffer, Kernel, Program, Queue, Range, Result};

/// PyOpenCL's `_MAX_GROUP_COUNT`.
const MAX_GROUPS: usize = 1024;
/// PyOpenCL's `SMALL_SEQ_COUNT`.
const SMALL_SEQ: usize = 4;

/// A float tree reduction on one queue with its two ping-pong partial buffers.
pub struct TreeReduce {
    kernel: Kernel,
    local: usize,
    partials: [Buffer<f32>; 2],
    last: usize,
}

impl TreeReduce {
    /// Builds the kernel; `local` (a power of two) is the work-group size.
    pub fn new(queue: &Queue, local: usize) -> Result<Self> {
        let program = Program::builder(include_str!("../../cl/algorithms/tree_reduce.cl"))
            .file_name("tree_reduce.cl")
            .options("-DCLG_T=float")
            .build(queue)?;
        Ok(TreeReduce {
            kernel: program.kernel("tree_reduce")?,
            local,
            partials: [
                Buffer::new(&queue, MAX_GROUPS)?,
                Buffer::new(&queue, MAX_GROUPS)?,
            ],
            last: 0,
        })
    }

    /// PyOpenCL's stage shape for `n` elements: (groups, elements per work-item).
    fn stage(&self, n: usize) -> (usize, usize) {
        if n <= self.local * SMALL_SEQ * MAX_GROUPS {
            (n.div_ceil(SMALL_SEQ * self.local), SMALL_SEQ)
        } else {
            (MAX_GROUPS, n.div_ceil(MAX_GROUPS * self.local))
        }
    }

    /// Enqueues every stage; the sum ends in element 0 of the buffer [`TreeReduce::result`]
    /// reads.
    pub fn enqueue(&mut self, input: &Buffer<f32>) -> Result<Vec<Event>> {
        let mut events = Vec::new();
        let (mut n, mut src, mut dst) = (input.len(), None::<usize>, 0usize);
        loop {
            let (groups, seq) = self.stage(n);
            let from = src.map_or(input, |i| &self.partials[i]);
            let launch = self.kernel.launch().arg(from).arg(&self.partials[dst]);
            let launch = launch.arg(n as u64).arg(seq as u64);
            let launch = launch.arg(Local::<f32>::new(self.local));
            // SAFETY: `tree_reduce` reads `in` below `n` (its length, or the previous stage's
            // group count), writes out[group] for at most MAX_GROUPS groups (the partials'
            // length) and ldata below the work-group size (the `Local` size).
            events.push(unsafe {
                launch.nd_range(
                    Range::d1(groups * self.local),
                    LocalSize::Exact(Range::d1(self.local)),
                )
            }?);
            if groups == 1 {
                self.last = dst;
                return Ok(events);
            }
            (n, src, dst) = (groups, Some(dst), 1 - dst);
        }
    }

    /// The sum of the last [`TreeReduce::enqueue`] (blocking).
    pub fn result(&self, queue: &Queue) -> Result<f32> {
        let mut out = [0f32];
        self.partials[self.last].read_into(queue, 0, &mut out)?;
        Ok(out[0])
    }
}
