//! Plain-range launches ([`Launch::range`]): the rounding plan, bulk + tail splits, and
//! kernels with a required work-group size, every piece checked before the first is enqueued.

use super::{bounds, Arg, Event, KernelArg, Launch};
use crate::error::Result;
use crate::plan::rounding::Variant;
use crate::plan::{local_size, rounding, split};
use crate::range::Range;

/// Extra work-items a rounded plain range may add beyond twice the user's range; a plan that
/// adds more (e.g. from abusive `CLGROUPS_RANGE_ROUNDING_PARAMS`) runs unrounded instead.
pub const ROUNDING_SLACK: usize = 1 << 20;

impl Launch<'_> {
    /// Enqueues over a plain range (no work-groups promised to the kernel): rounded up and
    /// guarded when the range is awkward, per [`crate::plan::rounding`] (its
    /// [`pieces`](rounding::RoundingPlan::pieces) are enqueued in order; one rounded launch
    /// when the source asks for group ids). A kernel without rounded variants runs as bulk +
    /// tail launches where [`crate::plan::split`] allows it (not when rounding is disabled),
    /// else unrounded. A kernel with `reqd_work_group_size` runs in exactly those groups.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::nd_range`], for the work-items of `global` (shifted by the
    /// offset). Rounding adds work-items only outside `global`, and the generated guard makes
    /// them exit before the kernel's body runs, so they make no accesses; bulk + tail launches
    /// run exactly the work-items of `global`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     kernel void sq(global int *x) { size_t i = get_global_id(0); x[i] = (int)(i * i); }
    /// "#)?;
    /// let n = 1009; // prime: no good work-group divides it, so the range is rounded and guarded
    /// let x = Buffer::<i32>::new(&queue, n)?;
    /// // SAFETY: work-item i < n writes x[i], inside x (n elements).
    /// unsafe { p.kernel("sq")?.launch().arg(&x).range(Range::d1(n))? }.wait()?;
    /// assert_eq!(x.read(&queue)?[1008], 1008 * 1008);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub unsafe fn range(self, global: impl Into<Range>) -> Result<Event> {
        let user = global.into();
        self.check_common(user, None)?;
        let name = self.kernel.name();
        let can_round = self.kernel.rounding_support().is_ok();
        if let Some(req) = self.kernel.required_work_group_size() {
            let at_rank = split::at_rank(req, user.rank()).ok_or_else(|| {
                self.invalid(
                    user,
                    Some(req),
                    format!(
                        "the kernel requires work-groups of {:?} (reqd_work_group_size), more \
                         dimensions than the range",
                        req.as_slice()
                    ),
                )
            })?;
            // SAFETY: this function's contract, for the same `user` range.
            return unsafe { self.range_required(user, at_rank, can_round) };
        }
        let base = self.offset.unwrap_or(user.zeros_like());
        let cfg = self.kernel.program().rounding();
        let lim = self.kernel.limits();
        let mut plan = rounding::plan(user, cfg, lim, can_round);
        let mut pieces = self.checked_pieces(&plan, base);
        if let (Err(why), true) = (&pieces, plan.rounded_variant) {
            log::debug!("kernel `{name}`: not rounded: {why}");
            plan = rounding::plan(user, cfg, lim, false);
            pieces = self.checked_pieces(&plan, base);
        }
        let pieces = pieces.map_err(|why| self.invalid(user, None, why))?;
        log::debug!("kernel `{name}`: rounding plan {plan:?}");
        if cfg.trace {
            for line in plan.trace_lines() {
                println!("{line}");
            }
        }
        if !plan.rounded_variant {
            // SAFETY: this function's contract, for the same `user` range.
            if let Some(ev) = unsafe { self.range_fallback(user, plan.local)? } {
                return Ok(ev);
            }
        }
        let mut args = self.args.clone();
        self.check_args(&args, user, plan.local)?;
        if plan.rounded_variant {
            args.extend(user_range_args(user, base));
        }
        let mut events = Vec::new();
        for (piece, offset) in pieces {
            log::debug!("kernel `{name}`: {piece:?} at offset {offset:?}");
            // SAFETY: the pieces tile `user` at `base` (sized/original variants run only
            // work-items inside it, rounded ones are guarded by the user sizes passed above),
            // so the caller's contract for `user` covers every access.
            let ev =
                unsafe { self.enqueue(piece.variant, &args, piece.global, plan.local, offset)? };
            events.extend(ev.raw);
        }
        self.verified(self.event(events), &args)
    }

    /// A plain range of a kernel without a rounded launch: a bulk + tail split where the kernel
    /// allows it and it gives larger work-groups ([`crate::plan::split`]); layer kernels on
    /// PoCL's `khr` backend never get a work-group of one work-item (PoCL 6.0 aborts the process:
    /// `undefined symbol: __pocl_work_group_alloca`). `None`: launch as planned.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::range`] for `user`.
    unsafe fn range_fallback(&self, user: Range, planned: Option<Range>) -> Result<Option<Event>> {
        let k = self.kernel;
        let no_single = self.single_item_groups_abort();
        let why = k
            .rounding_support()
            .err()
            .unwrap_or("rounding did not help");
        let base = self.offset.unwrap_or(user.zeros_like());
        // Launch-time conditions are kept uniform by one launch with a local size of their own.
        if k.program().splittable() && k.id_conditions().is_empty() {
            if let Some(pieces) = split::split(user, k.limits(), no_single) {
                log::debug!(
                    "kernel `{}`: not rounded ({why}); bulk + tail launches",
                    k.name()
                );
                // Every piece is checked before the first is enqueued.
                let mut placed = Vec::with_capacity(pieces.len());
                for p in &pieces {
                    let offset = self
                        .place(base, p.offset, p.global, Some(p.local))
                        .map_err(|r| self.invalid(user, Some(p.local), r))?;
                    self.check_args(&self.args, p.global, Some(p.local))?;
                    placed.push((p, offset));
                }
                let mut events = Vec::new();
                for (p, offset) in placed {
                    // SAFETY: the pieces tile `user` at `base` exactly (plan::split), so the
                    // caller's contract for `user` covers every work-item enqueued.
                    let ev = unsafe {
                        self.enqueue(
                            Variant::Original,
                            &self.args,
                            p.global,
                            Some(p.local),
                            offset,
                        )?
                    };
                    events.extend(ev.raw);
                }
                return self.verified(self.event(events), &self.args).map(Some);
            }
        }
        let tiny = |n: usize| n < super::uniform::MIN_POCL_COLLECTIVE_GROUP;
        if !no_single || planned.is_some_and(|l| !tiny(l.len())) {
            return Ok(None);
        }
        // Launch-time conditions get a local size that keeps them uniform (`check_uniform`).
        let local = match self.uniform_local(user, None, base)? {
            Some(l) => l,
            None => local_size::tuned(user, k.limits()),
        };
        if tiny(local.len()) {
            return Err(self.invalid(
                user,
                Some(local),
                "this kernel with sub-group collectives would run in work-groups of one or two \
                 work-items, which aborts PoCL's process (undefined symbol __pocl_work_group_alloca), and no \
                 bulk + tail split avoids it (a single work-item, or the kernel asks for its \
                 global size, offset or group ids); pad the range"
                    .into(),
            ));
        }
        bounds::check_groups(user, Some(local)).map_err(|r| self.invalid(user, Some(local), r))?;
        self.check_args(&self.args, user, Some(local))?;
        // SAFETY: exactly the work-items of `user` at `base`: the caller's contract.
        let ev = unsafe { self.enqueue(Variant::Original, &self.args, user, Some(local), base)? };
        self.verified(ev, &self.args).map(Some)
    }

    /// A plain range of a kernel with `reqd_work_group_size(required)`: rounded up to a
    /// multiple of it (guarded variant) where the kernel has one, else run as is when it fits.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::range`] for `user`.
    unsafe fn range_required(
        &self,
        user: Range,
        required: Range,
        can_round: bool,
    ) -> Result<Event> {
        let name = self.kernel.name();
        let base = self.offset.unwrap_or(user.zeros_like());
        if split::fits_required(user, required) {
            log::debug!("kernel `{name}`: plain range {user:?} in required groups {required:?}");
            bounds::check_groups(user, Some(required))
                .map_err(|r| self.invalid(user, Some(required), r))?;
            self.check_args(&self.args, user, Some(required))?;
            // SAFETY: exactly the work-items of `user` at `base`: the caller's contract.
            let ev =
                unsafe { self.enqueue(Variant::Original, &self.args, user, Some(required), base)? };
            return self.verified(ev, &self.args);
        }
        let launch = split::round_to_required(user, required);
        if !can_round || !split::fits_required(launch, required) {
            return Err(self.invalid(
                user,
                Some(required),
                format!(
                    "the kernel requires work-groups of {:?} (reqd_work_group_size), which do not \
                     divide the range, and it cannot be rounded ({})",
                    required.as_slice(),
                    self.kernel.rounding_support().err().unwrap_or("?")
                ),
            ));
        }
        log::debug!(
            "kernel `{name}`: plain range {user:?} rounded to {launch:?} for required groups \
             {required:?}"
        );
        let offset = self
            .place(base, user.zeros_like(), launch, Some(required))
            .map_err(|r| self.invalid(user, Some(required), r))?;
        let mut args = self.args.clone();
        self.check_args(&args, user, Some(required))?;
        args.extend(user_range_args(user, base));
        // SAFETY: the rounded variant runs the body only for work-items inside `user` (its
        // guard compares with the user sizes passed above): the caller's contract covers them.
        let ev = unsafe { self.enqueue(Variant::Rounded, &args, launch, Some(required), offset)? };
        self.verified(ev, &args)
    }

    /// The pieces of `plan` with their absolute offsets, each within the device's bounds (all
    /// checked before the first is enqueued), or why not. A rounded plan must also stay within
    /// [`ROUNDING_SLACK`] of the user's range.
    fn checked_pieces(
        &self,
        plan: &rounding::RoundingPlan,
        base: Range,
    ) -> std::result::Result<Vec<(rounding::Piece, Range)>, String> {
        let (user, launch) = (plan.user.len(), plan.launch.len());
        if plan.rounded_variant && launch > user.saturating_mul(2).max(user + ROUNDING_SLACK) {
            return Err(format!(
                "the rounded range {:?} has {launch} work-items, far more than the {user} \
                 asked for (check CLGROUPS_RANGE_ROUNDING_PARAMS)",
                plan.launch
            ));
        }
        let pieces = if plan.rounded_variant && self.kernel.program().uses_group_ids() {
            // A tail piece at a global offset would renumber its groups from 0.
            vec![rounding::Piece {
                variant: Variant::Rounded,
                offset: plan.user.zeros_like(),
                global: plan.launch,
            }]
        } else {
            plan.pieces()
        };
        pieces
            .into_iter()
            .map(|piece| {
                let offset = self.place(base, piece.offset, piece.global, plan.local)?;
                Ok((piece, offset))
            })
            .collect()
    }

    /// The absolute offset `base + delta` of a piece of `global` work-items in groups of
    /// `local`, checked against the device's bounds (overflow, address bits, group counts).
    fn place(
        &self,
        base: Range,
        delta: Range,
        global: Range,
        local: Option<Range>,
    ) -> std::result::Result<Range, String> {
        let dims = (0..base.rank())
            .map(|d| base.get(d).checked_add(delta.get(d)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("offset {base:?} + {delta:?} overflows"))?;
        let offset = Range::new(&dims).map_err(|e| e.to_string())?;
        bounds::check_global(global, offset, self.queue.device().limits().address_bits)?;
        bounds::check_groups(global, local)?;
        super::uniform::check_uniform(self.kernel, &self.args, global, local, offset)?;
        Ok(offset)
    }
}

/// The trailing arguments of a rounded variant: the user's range and offset, padded to 3.
fn user_range_args(user: Range, base: Range) -> impl Iterator<Item = Arg> {
    let sizes = user.padded().into_iter();
    let offsets = base.padded().into_iter().take(user.rank());
    let offsets = offsets.chain(std::iter::repeat(0)).take(3);
    sizes.chain(offsets).map(|n| KernelArg::to_arg(&(n as u64)))
}
