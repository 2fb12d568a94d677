//! Plain-range launches ([`Launch::range`]): the rounding plan, bulk + tail splits, and
//! kernels with a required work-group size, prepared (every piece checked) before the first
//! is enqueued.

use super::prepare::{Piece, Prepared};
use super::{Arg, Event, KernelArg, Launch, LocalSize};
use crate::error::Result;
use crate::plan::rounding::Variant;
use crate::plan::work_group::choose;
use crate::plan::{rounding, split};
use crate::range::Range;

impl Launch<'_> {
    /// Enqueues over a plain range (no work-groups promised to the kernel): rounded up and
    /// guarded when the range is awkward, per `plan::rounding` (its
    /// `pieces` are enqueued in order). A kernel without rounded variants runs as bulk +
    /// tail launches where `plan::split` allows it (not when rounding is disabled),
    /// else unrounded. A kernel with `reqd_work_group_size` runs in exactly those groups.
    /// Kernels that ask for the work-group shape (`get_group_id`, `get_local_size`,
    /// `get_local_id`, ...) are never rounded: their plain range is the plain OpenCL launch it
    /// stands for (the driver's local size), or bulk + tail launches of exactly the range.
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
        let prepared = self.prepare_range(global.into())?;
        // SAFETY: this function's contract, for the range that was prepared (rounded pieces
        // run guarded variants whose extra work-items exit at once).
        unsafe { self.execute(prepared) }
    }

    /// Prepares a plain-range launch of `user`.
    pub(crate) fn prepare_range(&self, user: Range) -> Result<Prepared> {
        self.check_common(user)?;
        let k = self.kernel;
        let name = k.name();
        let can_round = k.rounding_support().is_ok();
        if k.constraints().required.is_some() {
            return self.prepare_required(user, can_round);
        }
        // Rounding would change the work-group shape the kernel asks for.
        let can_round = match k.shape_dependence() {
            Some(why) if can_round => {
                log::debug!("kernel `{name}`: not rounded: {why}");
                false
            }
            _ => can_round,
        };
        let base = self.base(user);
        let (cfg, lim) = (k.program().rounding(), k.limits());
        let mut plan = rounding::plan(user, cfg, lim, can_round);
        let mut pieces = self.placed_pieces(&plan, base);
        if let (Err(why), true) = (&pieces, plan.rounded_variant) {
            log::debug!("kernel `{name}`: not rounded: {why}");
            plan = rounding::plan(user, cfg, lim, false);
            pieces = self.placed_pieces(&plan, base);
        }
        let pieces = pieces.map_err(|why| self.invalid(user, None, why))?;
        log::debug!("kernel `{name}`: rounding plan {plan:?}");
        if cfg.trace {
            for line in plan.trace_lines() {
                println!("{line}");
            }
        }
        if !plan.rounded_variant {
            if let Some(prepared) = self.prepare_unrounded(user, plan.local)? {
                return Ok(prepared);
            }
        }
        let extra = match plan.rounded_variant {
            true => user_range_args(user, base).collect(),
            false => Vec::new(),
        };
        self.prepared(pieces, extra, user)
    }

    /// A plain range of a kernel without a rounded launch: a bulk + tail split where the kernel
    /// allows it and it gives larger work-groups ([`crate::plan::split`]); layer kernels on
    /// PoCL's `khr` backend never get a work-group of one work-item (PoCL 6.0 aborts the process:
    /// `undefined symbol: __pocl_work_group_alloca`). `None`: launch as planned.
    fn prepare_unrounded(&self, user: Range, planned: Option<Range>) -> Result<Option<Prepared>> {
        let k = self.kernel;
        let min = k.constraints().min_group;
        let no_single = min > 1;
        let why =
            (k.rounding_support().err()).map_or("rounding did not help".into(), |o| o.to_string());
        let base = self.base(user);
        // Launch-time conditions are kept uniform by one launch with a local size of their own.
        if k.program().splittable() && k.id_conditions().is_empty() {
            if let Some(parts) = split::split(user, k.limits(), no_single) {
                log::debug!(
                    "kernel `{}`: not rounded ({why}); bulk + tail launches",
                    k.name()
                );
                let pieces = parts
                    .iter()
                    .map(|p| {
                        let (offset, local) = self
                            .place(base, p.offset, p.global, Some(p.local))
                            .map_err(|r| self.invalid(user, Some(p.local), r))?;
                        Ok(Piece {
                            variant: Variant::Original,
                            global: p.global,
                            local,
                            offset,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                return self.prepared(pieces, Vec::new(), user).map(Some);
            }
        }
        if !no_single || planned.is_some_and(|l| l.len() >= min) {
            return Ok(None);
        }
        // Launch-time conditions get a local size that keeps them uniform (`check_uniform`).
        let chosen = match k.id_conditions().is_empty() {
            true => choose(user, LocalSize::Auto, k.constraints()),
            false => Ok(None),
        };
        let local = chosen.map_err(|r| {
            self.invalid(
                user,
                None,
                format!(
                    "{r}; no bulk + tail split avoids it (a single work-item, or the kernel \
                     asks for its global size, offset or group ids): pad the range"
                ),
            )
        })?;
        let local = self.checked_piece(user, local, base)?;
        let piece = Piece {
            variant: Variant::Original,
            global: user,
            local,
            offset: base,
        };
        self.prepared(vec![piece], Vec::new(), user).map(Some)
    }

    /// A plain range of a kernel with `reqd_work_group_size`: in exactly those work-groups,
    /// rounded up to a multiple of them where they do not divide the range and the kernel has a
    /// rounded variant, or else a wrapper ([`crate::kernel::Kernel::wrapped`]).
    fn prepare_required(&self, user: Range, can_round: bool) -> Result<Prepared> {
        let k = self.kernel;
        let base = self.base(user);
        let required = k
            .constraints()
            .required
            .and_then(|r| split::at_rank(r, user.rank()));
        let launch = match required {
            Some(req) if !split::fits_required(user, req) => {
                // Without a rounded variant, a wrapper written from the driver's argument
                // info runs the guard (issue 20, item 4).
                let wrapped = (!can_round).then(|| k.wrapped());
                if let Some(Err(wrap)) = wrapped {
                    let round = (k.rounding_support().err()).map_or("?".into(), |o| o.to_string());
                    let why = match k.rounding_support().err() == Some(&wrap) {
                        true => format!("it cannot be rounded nor wrapped ({round})"),
                        false => format!("it cannot be rounded ({round}) nor wrapped ({wrap})"),
                    };
                    return Err(self.invalid(
                        user,
                        Some(req),
                        format!(
                            "the kernel requires work-groups of {:?} (reqd_work_group_size), \
                             which do not divide the range, and {why}",
                            req.as_slice(),
                        ),
                    ));
                }
                if wrapped.is_some() {
                    log::debug!("kernel `{}`: rounded up through its wrapper", k.name());
                }
                split::round_to_required(user, req)
            }
            _ => user,
        };
        let local = choose(launch, LocalSize::Auto, k.constraints())
            .map_err(|r| self.invalid(user, None, r))?;
        let rounded = launch != user;
        log::debug!(
            "kernel `{}`: plain range {user:?} in required groups {local:?} (launch {launch:?})",
            k.name()
        );
        let (offset, local) = self
            .place(base, user.zeros_like(), launch, local)
            .map_err(|r| self.invalid(user, local, r))?;
        let extra = match rounded {
            true => user_range_args(user, base).collect(),
            false => Vec::new(),
        };
        let piece = Piece {
            variant: if rounded {
                Variant::Rounded
            } else {
                Variant::Original
            },
            global: launch,
            local,
            offset,
        };
        self.prepared(vec![piece], extra, user)
    }

    /// The pieces of `plan` at their absolute offsets, each within the device's bounds and
    /// its launch-time conditions, or why not.
    fn placed_pieces(
        &self,
        plan: &rounding::RoundingPlan,
        base: Range,
    ) -> std::result::Result<Vec<Piece>, String> {
        rounding::within_slack(plan)?;
        // Rounded kernels never ask for group ids (a rounding obstacle), which a tail piece at
        // a global offset would renumber.
        plan.pieces()
            .into_iter()
            .map(|piece| {
                let (offset, local) = self.place(base, piece.offset, piece.global, plan.local)?;
                Ok(Piece {
                    variant: piece.variant,
                    global: piece.global,
                    local,
                    offset,
                })
            })
            .collect()
    }

    /// The absolute offset `base + delta` of a piece of `global` work-items in groups of
    /// `local`, checked against the device's bounds (overflow, address bits, group counts) and
    /// launch-time id conditions, with the piece's local size.
    fn place(
        &self,
        base: Range,
        delta: Range,
        global: Range,
        local: Option<Range>,
    ) -> std::result::Result<(Range, Option<Range>), String> {
        let dims = (0..base.rank())
            .map(|d| base.get(d).checked_add(delta.get(d)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("offset {base:?} + {delta:?} overflows"))?;
        let offset = Range::new(&dims).map_err(|e| e.to_string())?;
        super::bounds::check_global(global, offset, self.queue.device().limits().address_bits)?;
        Ok((offset, self.piece_local(global, local, offset)?))
    }
}

/// The trailing arguments of a rounded variant: the user's range and offset, padded to 3.
fn user_range_args(user: Range, base: Range) -> impl Iterator<Item = Arg> {
    let sizes = user.padded().into_iter();
    let offsets = base.padded().into_iter().take(user.rank());
    let offsets = offsets.chain(std::iter::repeat(0)).take(3);
    sizes.chain(offsets).map(|n| KernelArg::to_arg(&(n as u64)))
}
