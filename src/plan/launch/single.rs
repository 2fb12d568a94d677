//! The one-device case of [`plan`](super::plan): an ND-range in the chosen work-groups, or a
//! plain range rounded up and guarded (`plan::rounding`), in required work-groups (rounded or
//! wrapped), as bulk + tail launches (`plan::split`), or as it is.

use super::{DeviceFacts, Piece, Plan, Refused, Request, Shape};
use crate::plan::bounds::{check_global, check_groups};
use crate::plan::refusal::{GroupSplit, Refusal};
use crate::plan::rounding::{self, RoundingPlan, Variant};
use crate::plan::split;
use crate::plan::uniform_branch::{uniform_branch, uniform_local};
use crate::plan::work_group::LocalSize;
use crate::range::Range;
use std::sync::Arc;

/// The plan of `r` on its one device.
pub(super) fn plan(r: &Request) -> Result<Plan, Box<Refused>> {
    let global = r.global;
    if global.is_empty() {
        return Err(Refused::new(global, None, Refusal::EmptyRange));
    }
    if let Some(offset) = r.offset.filter(|o| o.rank() != global.rank()) {
        return Err(Refused::new(global, None, Refusal::OffsetRank { offset }));
    }
    check_global(global, r.base(), r.devices[0].address_bits)
        .map_err(|why| Refused::new(global, None, why))?;
    match r.shape {
        Shape::NdRange(asked) => nd_range(r, asked),
        Shape::Plain => plain(r),
    }
}

/// An ND-range in work-groups of `asked`.
fn nd_range(r: &Request, asked: LocalSize) -> Result<Plan, Box<Refused>> {
    let (k, global) = (r.kernel, r.global);
    let shown = match asked {
        LocalSize::Exact(l) => Some(l),
        _ => None,
    };
    let c = &k.constraints;
    // Launch-time id conditions on PoCL's native collectives: `checked_local` picks a size that
    // keeps them uniform (and is not too small) where the driver would choose.
    let uniform_picks =
        asked == LocalSize::Auto && k.has_conditions() && c.min_group > 1 && c.required.is_none();
    let local = match uniform_picks {
        true => None,
        false => (k.local_size(global, asked)).map_err(|why| Refused::new(global, shown, why))?,
    };
    let offset = r.base();
    let local =
        checked_local(r, global, local, offset).map_err(|why| Refused::new(global, local, why))?;
    Ok(one_piece(global, global, Variant::Original, local, offset))
}

/// A plan of one piece of `launch` for the user's `user`.
fn one_piece(
    user: Range,
    launch: Range,
    variant: Variant,
    local: Option<Range>,
    offset: Range,
) -> Plan {
    Plan {
        user,
        launch,
        local,
        pieces: vec![Piece {
            device: 0,
            variant,
            global: launch,
            local,
            offset,
        }],
        user_args: variant == Variant::Rounded,
        rounding: None,
        #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
        partition: None,
    }
}

/// A plain range: rounded per `plan::rounding`, else bulk + tail or as it is; in required
/// work-groups where the kernel has them.
fn plain(r: &Request) -> Result<Plan, Box<Refused>> {
    let (k, user) = (r.kernel, r.global);
    let name = k.name;
    let can_round = k.round.is_ok();
    if k.constraints.required.is_some() {
        return required(r, can_round);
    }
    // Rounding would change the work-group shape the kernel asks for.
    let can_round = match &k.shape {
        Some(why) if can_round => {
            log::debug!("kernel `{name}`: not rounded: {why}");
            false
        }
        _ => can_round,
    };
    let (cfg, lim) = (&k.rounding, &r.devices[0].limits);
    let mut planned = rounding::plan(user, cfg, lim, can_round);
    let mut pieces = placed_pieces(r, &planned);
    if let (Err(why), true) = (&pieces, planned.rounded_variant) {
        log::debug!("kernel `{name}`: not rounded: {why}");
        planned = rounding::plan(user, cfg, lim, false);
        pieces = placed_pieces(r, &planned);
    }
    let pieces = pieces.map_err(|why| Refused::new(user, None, why))?;
    log::debug!("kernel `{name}`: rounding plan {planned:?}");
    if !planned.rounded_variant {
        if let Some(plan) = unrounded(r, planned.local)? {
            return Ok(Plan {
                rounding: Some(planned),
                ..plan
            });
        }
    }
    Ok(Plan {
        user,
        launch: planned.launch,
        local: planned.local,
        pieces,
        user_args: planned.rounded_variant,
        rounding: Some(planned),
        #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
        partition: None,
    })
}

/// A plain range of a kernel without a rounded launch: a bulk + tail split where the kernel
/// allows it and it gives larger work-groups (`plan::split`); layer kernels on PoCL's `khr`
/// backend never get a work-group of one work-item (PoCL 6.0 aborts the process: `undefined
/// symbol: __pocl_work_group_alloca`). `None`: launch as planned.
fn unrounded(r: &Request, planned: Option<Range>) -> Result<Option<Plan>, Box<Refused>> {
    let (k, user, base) = (r.kernel, r.global, r.base());
    let min = k.constraints.min_group;
    let no_single = min > 1;
    // Launch-time conditions are kept uniform by one launch with a local size of their own.
    if k.splittable && !k.has_conditions() {
        if let Some(parts) = split::split(user, &r.devices[0].limits, no_single) {
            let why: &dyn std::fmt::Display = match &k.round {
                Err(why) => why,
                Ok(()) => &"rounding did not help",
            };
            log::debug!(
                "kernel `{}`: not rounded ({why}); bulk + tail launches",
                k.name
            );
            let pieces = (parts.iter())
                .map(|p| {
                    let (offset, local) = place(r, base, p.offset, p.global, Some(p.local))
                        .map_err(|why| Refused::new(user, Some(p.local), why))?;
                    Ok(Piece {
                        device: 0,
                        variant: Variant::Original,
                        global: p.global,
                        local,
                        offset,
                    })
                })
                .collect::<Result<Vec<_>, Box<Refused>>>()?;
            return Ok(Some(Plan {
                user,
                launch: user,
                local: None,
                pieces,
                user_args: false,
                rounding: None,
                #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
                partition: None,
            }));
        }
    }
    if !no_single || planned.is_some_and(|l| l.len() >= min) {
        return Ok(None);
    }
    // Launch-time conditions get a local size that keeps them uniform (`checked_local`).
    let chosen = match k.has_conditions() {
        false => crate::plan::work_group::choose(user, LocalSize::Auto, &k.constraints),
        true => Ok(None),
    };
    let local = chosen.map_err(|why| Refused::new(user, None, Refusal::PadTheRange(why.into())))?;
    let local =
        checked_local(r, user, local, base).map_err(|why| Refused::new(user, local, why))?;
    Ok(Some(one_piece(user, user, Variant::Original, local, base)))
}

/// A plain range of a kernel with `reqd_work_group_size`: in exactly those work-groups,
/// rounded up to a multiple of them where they do not divide the range and the kernel has a
/// rounded variant, or else a wrapper.
fn required(r: &Request, can_round: bool) -> Result<Plan, Box<Refused>> {
    let (k, user, base) = (r.kernel, r.global, r.base());
    let required = (k.constraints.required).and_then(|q| split::at_rank(q, user.rank()));
    let launch = match required {
        Some(req) if !split::fits_required(user, req) => {
            // Without a rounded variant, a wrapper written from the driver's argument info
            // runs the guard (issue 20, item 4).
            let wrapped = (!can_round).then(|| (k.wrap)());
            if let Some(Err(wrap)) = wrapped {
                let round = k.round.err().map(|o| Arc::new(o.clone()));
                let why = Refusal::Unroundable {
                    required: req,
                    round,
                    wrap: Arc::new(wrap),
                };
                return Err(Refused::new(user, Some(req), why));
            }
            if wrapped.is_some() {
                log::debug!("kernel `{}`: rounded up through its wrapper", k.name);
            }
            split::round_to_required(user, req)
        }
        _ => user,
    };
    let local = crate::plan::work_group::choose(launch, LocalSize::Auto, &k.constraints)
        .map_err(|why| Refused::new(user, None, why))?;
    log::debug!(
        "kernel `{}`: plain range {user:?} in required groups {local:?} (launch {launch:?})",
        k.name
    );
    let (offset, local) = place(r, base, user.zeros_like(), launch, local)
        .map_err(|why| Refused::new(user, local, why))?;
    let variant = match launch != user {
        true => Variant::Rounded,
        false => Variant::Original,
    };
    Ok(one_piece(user, launch, variant, local, offset))
}

/// The pieces of `planned` at their absolute offsets, each within the device's bounds and
/// the launch-time conditions, or why not.
fn placed_pieces(r: &Request, planned: &RoundingPlan) -> Result<Vec<Piece>, Refusal> {
    rounding::within_slack(planned)?;
    // Rounded kernels never ask for group ids (a rounding obstacle), which a tail piece at a
    // global offset would renumber.
    (planned.pieces().into_iter())
        .map(|piece| {
            let (offset, local) = place(r, r.base(), piece.offset, piece.global, planned.local)?;
            Ok(Piece {
                device: 0,
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
    r: &Request,
    base: Range,
    delta: Range,
    global: Range,
    local: Option<Range>,
) -> Result<(Range, Option<Range>), Refusal> {
    let mut offset = base;
    for d in 0..base.rank() {
        let at = (base.get(d).checked_add(delta.get(d)))
            .ok_or(Refusal::OffsetOverflow { base, delta })?;
        offset = offset.with(d, at);
    }
    check_global(global, offset, r.devices[0].address_bits)?;
    Ok((offset, checked_local(r, global, local, offset)?))
}

/// A piece's local size: `local`, or, where the driver would pick one (`None`) for a kernel
/// with launch-time id conditions, one that keeps them uniform (`plan::uniform_branch`);
/// checked against group counts and those conditions.
pub(super) fn checked_local(
    r: &Request,
    global: Range,
    local: Option<Range>,
    offset: Range,
) -> Result<Option<Range>, Refusal> {
    check_groups(global, local)?;
    let conds = r.kernel.conditions.clone()?;
    if conds.is_empty() {
        return Ok(local);
    }
    let device: &DeviceFacts = &r.devices[0];
    let values: Vec<_> = conds.iter().map(|(c, n)| (c, *n)).collect();
    let picked = local.is_none();
    let local = local.unwrap_or_else(|| uniform_local(&values, global, offset, &device.limits));
    let min = r.kernel.constraints.min_group;
    if picked && local.len() < min {
        return Err(Refusal::UniformTooSmall {
            condition: values[0].0.text.clone(),
            items: local.len(),
            min,
        });
    }
    for &(c, n) in &values {
        let uniform = uniform_branch(c, n, global, local, offset);
        log::debug!(
            "kernel `{}`: {} with argument {} = {n}, global {global:?}, local {local:?}, \
             offset {offset:?}: uniform over every work-group: {uniform}",
            r.kernel.name,
            c.text,
            c.param
        );
        if !uniform {
            return Err(Refusal::SplitsGroup(Box::new(GroupSplit {
                condition: c.text.clone(),
                param: c.param,
                value: n,
                local,
                offset,
                why: device.barriers,
            })));
        }
    }
    Ok(Some(local))
}
