//! Preparing a launch: the plan of [`crate::plan::launch::plan`] (every decision: local size,
//! rounding, pieces), then the checks of the arguments, into a [`Prepared`] that
//! [`Launch::execute`](super::Launch::execute) only carries out. Nothing here enqueues a
//! kernel, so an error leaves the queue untouched; a multi-device launch prepares every
//! device's part before it enqueues the first.

use super::{bounds, uniform, Arg, Launch, LocalSize, WrongArgument};
use crate::error::{Error, Result};
use crate::event;
use crate::plan::launch::{plan, DeviceFacts, KernelFacts, Piece, Plan, Request, Shape};
use crate::plan::Refusal;
use crate::range::Range;

/// A launch with every check done: the pieces enqueued in order, each with the launch's own
/// arguments followed by `extra`.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) pieces: Vec<Piece>,
    /// After the user's arguments (which stay in the launch: a launch copies none): the
    /// rounded variants' user range (when a piece needs it), then checked mode's hidden
    /// arguments (when the kernel is instrumented).
    pub(crate) extra: Vec<Arg>,
}

impl Launch<'_> {
    /// Prepares an ND-range launch of `global` in work-groups of `asked`.
    pub(crate) fn prepare_nd(&self, global: Range, asked: LocalSize) -> Result<Prepared> {
        let plan = self.plan(global, Shape::NdRange(asked))?;
        self.prepared(plan.pieces, Vec::new(), global)
    }

    /// The host work of [`Launch::nd_range`] (`local: Some`) or [`Launch::range`] (`None`)
    /// short of setting the arguments and enqueueing: the plan and every check. The number of
    /// pieces; for `examples/bench_launch_host`, which times it without a GPU.
    #[cfg(feature = "unstable-internals")]
    #[doc(hidden)]
    pub fn prepare_only(self, global: impl Into<Range>, local: Option<LocalSize>) -> Result<usize> {
        let global = global.into();
        let (_, prepared) = self.or_emulated(|l| match local {
            Some(asked) => l.prepare_nd(global, asked),
            None => l.prepare_range(global),
        })?;
        Ok(prepared.pieces.len())
    }

    /// The plan of this launch of `global` ([`crate::plan::launch::plan`] with the kernel's
    /// facts on the queue's device), or the refusal as an error.
    pub(super) fn plan(&self, global: Range, shape: Shape) -> Result<Plan> {
        let k = self.kernel;
        k.check_sub_group_size()?;
        let wrap = || k.wrapped();
        let choose = |g, asked| k.local_size(g, asked);
        let facts = KernelFacts {
            name: k.name(),
            constraints: k.constraints().clone(),
            rounding: *k.program().rounding(),
            round: k.rounding_support(),
            shape: k.shape_dependence(),
            wrap: &wrap,
            splittable: k.program().splittable(),
            conditions: uniform::values(k, &self.args),
            choose: Some(&choose),
        };
        let device = DeviceFacts {
            limits: k.limits().clone(),
            address_bits: self.queue.device().limits().address_bits,
            uniform_reason: uniform::reason(k),
        };
        let request = Request {
            offset: self.offset,
            ..Request::new(&facts, std::slice::from_ref(&device), global, shape)
        };
        plan(&request).map_err(|r| self.invalid(r.global, r.local, r.reason))
    }

    /// Finishes a preparation: the arguments against the kernel's signature and the device
    /// (local memory for each piece's work-group), then checked mode's hidden arguments after
    /// `extra` (the arguments that follow the user's).
    pub(super) fn prepared(
        &self,
        pieces: Vec<Piece>,
        mut extra: Vec<Arg>,
        user: Range,
    ) -> Result<Prepared> {
        self.check_arguments(user)?;
        for p in &pieces {
            self.check_local_mem(p.global, p.local)?;
        }
        match self.kernel.checked_pointers() {
            Ok(pointers) => extra.extend(self.hidden_args(pointers)?),
            Err(why) if crate::checked::enabled() => {
                log::debug!(
                    "kernel `{}`: not instrumented ({why}): guard regions only",
                    self.kernel.name()
                );
            }
            Err(_) => {}
        }
        Ok(Prepared { pieces, extra })
    }

    /// The user's arguments against the signature (once per kinds and types of arguments:
    /// a launch like the last asks nothing again), buffers and events against the queue's
    /// context.
    fn check_arguments(&self, global: Range) -> Result<()> {
        let name = self.kernel.name();
        let mut last = self.kernel.last_args();
        let same = last.as_ref().is_some_and(|keys| {
            keys.len() == self.args.len() && keys.iter().zip(&self.args).all(|(k, a)| *k == a.key())
        });
        if !same {
            *last = None;
            super::check_args(name, self.kernel.args(), &self.args)?;
            *last = Some(self.args.iter().map(Arg::key).collect());
        }
        drop(last);
        let context = self.queue.context().key();
        if let Some(reason) = event::foreign_wait(&self.waits, context) {
            return Err(self.invalid(global, None, reason));
        }
        for (index, a) in self.args.iter().enumerate() {
            if let Arg::Buffer { mem, .. } = a {
                if mem.context() != context {
                    return Err(Error::InvalidArgument {
                        kernel: name.to_string(),
                        index,
                        reason: Box::new(WrongArgument::OtherContext {
                            device: self.queue.device().to_string(),
                        }),
                    });
                }
            }
        }
        Ok(())
    }

    /// Local memory (arguments and the emulated sub-group scratch) against the device's.
    fn check_local_mem(&self, global: Range, local: Option<Range>) -> Result<()> {
        let mut bytes: Vec<usize> = self
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Local(n) => Some(*n),
                _ => None,
            })
            .collect();
        if self.kernel.hidden_scratch() {
            bytes.push(self.scratch_bytes(local));
        }
        let device = self.queue.device().limits().local_mem_size;
        bounds::check_local_mem(&bytes, device).map_err(|r| self.invalid(global, local, r))
    }

    /// Bytes of the emulated sub-group scratch: one `ulong` per work-item of the work-group (of
    /// the largest one the kernel allows when the driver picks the local size).
    pub(super) fn scratch_bytes(&self, local: Option<Range>) -> usize {
        let items = local.map_or(self.kernel.limits().max_work_group_size, |l| l.len());
        items.saturating_mul(std::mem::size_of::<u64>())
    }

    pub(super) fn invalid(&self, global: Range, local: Option<Range>, reason: Refusal) -> Error {
        Error::InvalidLaunch {
            kernel: self.kernel.name().to_string(),
            device: self.queue.device().to_string(),
            global: global.as_slice().to_vec(),
            local: local.map(|l| l.as_slice().to_vec()).unwrap_or_default(),
            reason: Box::new(reason),
        }
    }
}
