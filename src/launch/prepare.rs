//! Preparing a launch: the plan of [`crate::plan::launch::plan`] (every decision: local size,
//! rounding, pieces; a launch like a recent one of the kernel reuses its plan), then the
//! checks of the arguments, into a [`Prepared`] that
//! [`Launch::execute`](super::Launch::execute) only carries out. Nothing here enqueues a
//! kernel, so an error leaves the queue untouched; a multi-device launch prepares every
//! device's part before it enqueues the first.

use super::{bounds, uniform, Arg, Launch, LocalSize, WrongArgument};
use crate::error::{Error, Result};
use crate::event;
use crate::kernel::PlanKey;
use crate::plan::launch::{plan, DeviceFacts, KernelFacts, Plan, Request, Shape};
use crate::plan::uniform_branch::IdCondition;
use crate::plan::Refusal;
use crate::range::Range;
use std::sync::Arc;

/// A launch with every check done: the plan's pieces enqueued in order, each with the
/// launch's own arguments (which stay in the launch: a launch copies none), then
/// `user_range`, then `hidden`.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) plan: Arc<Plan>,
    /// The rounded variants' trailing arguments where the plan passes them: the user's range
    /// and offset, padded to 3 (`ulong`s).
    pub(crate) user_range: Option<[u64; 6]>,
    /// Checked mode's hidden arguments (when the kernel is instrumented).
    pub(crate) hidden: Vec<Arg>,
}

impl Launch<'_> {
    /// Prepares an ND-range launch of `global` in work-groups of `asked`.
    pub(crate) fn prepare_nd(&self, global: Range, asked: LocalSize) -> Result<Prepared> {
        let plan = self.plan(global, Shape::NdRange(asked))?;
        self.prepared(plan, global)
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
        Ok(prepared.plan.pieces.len())
    }

    /// The plan of this launch of `global` ([`crate::plan::launch::plan`] with the kernel's
    /// facts on the queue's device), or the refusal as an error. The planner is pure: a launch
    /// with the key of a recent one of the kernel (range, shape, offset, id conditions'
    /// values) gets that one's plan, logged at debug.
    pub(super) fn plan(&self, global: Range, shape: Shape) -> Result<Arc<Plan>> {
        let k = self.kernel;
        k.check_sub_group_size()?;
        let key = match uniform::values(k, &self.args) {
            Ok(values) => PlanKey {
                global,
                shape,
                offset: self.offset,
                values,
            },
            // Refused by the planner: nothing to keep.
            Err(why) => return self.planned(global, shape, Err(why)).map(Arc::new),
        };
        if let Some(plan) = k.plans().get(&key) {
            log::debug!(
                "kernel `{}`: {shape:?} of {global:?}, offset {:?}: the plan of a launch like \
                 this one ({} piece(s))",
                k.name(),
                self.offset,
                plan.pieces.len()
            );
            return Ok(plan);
        }
        let conditions = uniform::with_values(k, &key.values);
        let plan = Arc::new(self.planned(global, shape, Ok(conditions))?);
        k.plans().put(key, Arc::clone(&plan));
        Ok(plan)
    }

    /// The plan of this launch of `global` with the id conditions' `conditions`, planned.
    fn planned(
        &self,
        global: Range,
        shape: Shape,
        conditions: std::result::Result<Vec<(IdCondition, i128)>, Refusal>,
    ) -> Result<Plan> {
        let k = self.kernel;
        let wrap = || k.wrapped();
        let facts = KernelFacts {
            name: k.name(),
            constraints: k.constraints().clone(),
            rounding: *k.program().rounding(),
            round: k.rounding_support(),
            shape: k.shape_dependence(),
            wrap: &wrap,
            splittable: k.splittable(),
            conditions,
        };
        let device = DeviceFacts {
            limits: k.limits().clone(),
            address_bits: self.queue.device().limits().address_bits,
            barriers: k.program().device().group_uniform_reason(),
        };
        let request = Request {
            offset: self.offset,
            ..Request::new(&facts, std::slice::from_ref(&device), global, shape)
        };
        plan(&request).map_err(|r| self.invalid(r.global, r.local, r.reason))
    }

    /// Finishes the preparation of `plan`, the plan of the user's range `user`: the arguments
    /// against the kernel's signature and the device (local memory for each piece's
    /// work-group), the user's range and offset where the plan passes them, checked mode's
    /// hidden arguments.
    pub(super) fn prepared(&self, plan: Arc<Plan>, user: Range) -> Result<Prepared> {
        self.check_arguments(user)?;
        for p in &plan.pieces {
            self.check_local_mem(p.global, p.local)?;
        }
        let base = self.offset.unwrap_or(user.zeros_like());
        let user_range = plan.user_args.then(|| user_range(user, base));
        let mut hidden = Vec::new();
        match self.kernel.checked_pointers() {
            Ok(pointers) => hidden = self.hidden_args(pointers)?,
            Err(why) if crate::checked::enabled() => {
                log::debug!(
                    "kernel `{}`: not instrumented ({why}): guard regions only",
                    self.kernel.name()
                );
            }
            Err(_) => {}
        }
        Ok(Prepared {
            plan,
            user_range,
            hidden,
        })
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

/// The trailing arguments of a rounded variant: the user's range and its offset `base`,
/// padded to 3 (sizes with 1, offsets with 0).
fn user_range(user: Range, base: Range) -> [u64; 6] {
    let mut args = [1, 1, 1, 0, 0, 0];
    for d in 0..user.rank() {
        (args[d], args[3 + d]) = (user.get(d) as u64, base.get(d) as u64);
    }
    args
}
