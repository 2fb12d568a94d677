//! The several-device case of [`plan`](super::plan): the launch rounded (a plain range, per
//! `plan::rounding`) and its local size chosen for the most limited device, split over the
//! devices in whole work-groups (`plan::partition`, or `plan::weighted`), each device's part
//! running the guarded variant where it leaves the user's range; [`spread`] then makes the
//! cost model's choice (`plan::cost`) part of the plan.

use super::{Piece, Plan, Refused, Request, Shape};
use crate::plan::bounds::check_global;
use crate::plan::cost::{price, Choice, Inputs, Priced, SpreadPolicy};
use crate::plan::local_size::Limits;
use crate::plan::partition::{guarded_pieces, inside, partition, Partition};
use crate::plan::refusal::Refusal;
use crate::plan::rounding::{self, Variant};
use crate::plan::split;
use crate::plan::weighted::weighted;
use crate::plan::work_group::LocalSize;
use crate::range::Range;

/// The plan of `r` over its devices.
pub(super) fn plan(r: &Request) -> Result<Plan, Box<Refused>> {
    let user = r.global;
    let (launch, local) = match r.shape {
        Shape::NdRange(asked) => (user, nd_local(r, user, asked)?),
        Shape::Plain => range_plan(r)?,
    };
    let refuse = |why| Refused::new(launch, Some(local), why);
    if let Some(d) = (0..launch.rank()).find(|&d| launch.get(d) % local.get(d) != 0) {
        let (local, global) = (local.get(d), launch.get(d));
        return Err(refuse(Refusal::NotDividing {
            dim: d,
            local,
            global,
        }));
    }
    let split = match r.weights {
        Some(w) => weighted(launch, local, w),
        None => partition(launch, local, r.devices.len()),
    };
    let split = split.map_err(|e| {
        log::debug!("kernel `{}`: no partition: {e}", r.kernel.name);
        refuse(Refusal::NoPartition)
    })?;
    if let Some(offset) = r.offset.filter(|o| o.rank() != launch.rank()) {
        return Err(refuse(Refusal::OffsetRank { offset }));
    }
    let bits = r.devices.iter().map(|d| d.address_bits).min().unwrap_or(32);
    check_global(launch, r.base(), bits).map_err(refuse)?;
    let guarded = r.kernel.round.is_ok();
    let pieces =
        split_pieces(user, launch, local, r.base(), &split, &[], guarded).map_err(refuse)?;
    Ok(Plan {
        user,
        launch,
        local: Some(local),
        pieces,
        user_args: launch != user,
        rounding: None,
        partition: Some(Several {
            partition: split,
            priced: None,
        }),
    })
}

/// What a plan over several devices adds to the pieces.
#[derive(Clone, Debug, PartialEq)]
pub struct Several {
    /// Work-groups per device in one dimension (the whole launch on one device where the cost
    /// model chose one).
    pub partition: Partition,
    /// The cost model's choice with the figures it used ([`spread`]); `None`: not priced (the
    /// execution the analysis proved right runs).
    pub priced: Option<Priced>,
}

/// `plan` (over several devices, from [`plan`](super::plan)) as the cost model chooses for
/// `inputs` under `policy` ([`price`]): split or merged as planned, or the whole launch on
/// one device, its pieces and partition all on that device. The choice and its figures are
/// logged at `info` where a decision is made or changes ([`Priced::decided`]), else at
/// `debug`; a plan without a partition is returned as it is.
///
/// ```
/// use clgroups::plan::cost::{Depth, Inputs, Link, Right, Sample, SpreadPolicy};
/// use clgroups::plan::launch::{plan, spread, DeviceFacts, KernelFacts, Request, Shape};
/// use clgroups::plan::local_size::{DeviceKind, Limits};
/// use clgroups::plan::work_group::Constraints;
/// use clgroups::Range;
/// let limits = Limits { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///     max_work_item_sizes: [4096; 3], preferred_multiple: 8, non_uniform: false };
/// let kernel = KernelFacts::plain("saxpy", Constraints::new(limits.clone()));
/// let devices = vec![DeviceFacts { limits, address_bits: 64, barriers: None }; 2];
/// let mut request = Request::new(&kernel, &devices, Range::d1(1 << 16), Shape::Plain);
/// request.root = true;
/// let split = plan(&request).unwrap();
/// let inputs = Inputs { devices: 2, seen: 0, right: Right::Split, split: Sample::default(),
///     one: Sample::default(), between: 0, gather: vec![0, 0], scatter: 0,
///     link: Link { bandwidth: 1e9, latency: 1e-5 }, depth: Depth::Fixed(1), last: None,
///     resample: Default::default() };
/// let one = spread(split, &inputs, SpreadPolicy::OneDevice, "saxpy");
/// assert!(one.pieces.iter().all(|p| p.device == 0));
/// # assert_eq!(one.pieces.iter().map(|p| p.global.len()).sum::<usize>(), 1 << 16);
/// ```
pub fn spread(mut plan: Plan, inputs: &Inputs, policy: SpreadPolicy, kernel: &str) -> Plan {
    let (user, launch, local) = (plan.user, plan.launch, plan.local);
    let (Some(several), Some(local)) = (plan.partition.as_mut(), local) else {
        return plan;
    };
    let priced = price(inputs, policy);
    let level = match priced.decided(inputs.last) {
        true => log::Level::Info,
        false => log::Level::Debug,
    };
    log::log!(
        level,
        "kernel `{kernel}` over {} devices, global {:?}: {priced}",
        inputs.devices,
        launch.as_slice()
    );
    if let Choice::OneDevice(d) = priced.choice {
        // The region the pieces tile, from them: its corner, and whether one leaves the user's
        // range (then the kernel has a guarded variant).
        let base = (0..launch.rank()).fold(launch.zeros_like(), |b, dim| {
            let least = plan.pieces.iter().map(|p| p.offset.get(dim)).min();
            b.with(dim, least.unwrap_or(0))
        });
        let guarded = plan.pieces.iter().any(|p| p.variant == Variant::Rounded);
        let dim = several.partition.dim;
        let mut chunks = vec![0; several.partition.chunks.len().max(d + 1)];
        chunks[d] = launch.get(dim) / local.get(dim);
        let whole = Partition { dim, chunks };
        match split_pieces(user, launch, local, base, &whole, &[], guarded) {
            Ok(pieces) => (plan.pieces, several.partition) = (pieces, whole),
            // The split's pieces tile the same region: each runs on `d` as it is.
            Err(_) => plan.pieces.iter_mut().for_each(|p| p.device = d),
        }
    }
    several.priced = Some(priced);
    plan
}

/// The local size of an ND-range over the devices: the split needs whole work-groups, so
/// [`LocalSize::Auto`] is [`LocalSize::Tuned`].
fn nd_local(r: &Request, global: Range, asked: LocalSize) -> Result<Range, Box<Refused>> {
    let asked = match asked {
        LocalSize::Auto => LocalSize::Tuned,
        other => other,
    };
    let refuse = |why| Refused::new(global, None, why);
    r.kernel
        .local_size(global, asked)
        .map_err(refuse)?
        .ok_or_else(|| refuse(Refusal::NoLocalSize))
}

/// The launched range and local size of a plain range: rounded up per `plan::rounding`
/// (when the kernel may be rounded) for the most limited device; a kernel with
/// `reqd_work_group_size` gets that local size, the range rounded up to a multiple of it
/// where the kernel may be rounded (else it must divide the range).
fn range_plan(r: &Request) -> Result<(Range, Range), Box<Refused>> {
    let (k, global) = (r.kernel, r.global);
    let c = &k.constraints;
    // Rounding keeps a required work-group shape; others it would change.
    let guarded = k.round.is_ok() && (c.required.is_some() || k.shape.is_none());
    if let Some(req) = c.required {
        let launch = match (split::at_rank(req, global.rank()), guarded) {
            (Some(req), true) => split::round_to_required(global, req),
            _ => global,
        };
        return Ok((launch, nd_local(r, launch, LocalSize::Auto)?));
    }
    let lim = shared_out(&c.limits, global, r.devices.len());
    let mut planned = rounding::plan(global, &k.rounding, &lim, guarded);
    if let Err(why) = rounding::within_slack(&planned) {
        log::debug!("kernel `{}`: not rounded: {why}", k.name);
        planned = rounding::plan(global, &k.rounding, &lim, false);
    }
    let asked = planned.local.map_or(LocalSize::Tuned, LocalSize::Exact);
    let local = nd_local(r, planned.launch, asked)?;
    log::debug!(
        "kernel `{}` over {} devices: range {global:?} -> launch {:?}, local {local:?}",
        k.name,
        r.devices.len(),
        planned.launch
    );
    Ok((planned.launch, local))
}

/// `lim` with work-groups no larger than an even share of `global` over `devices` (the largest
/// power of two within it): rounding for one CPU device makes a range of 1024 work-items one
/// group of 4096, which no split can share.
fn shared_out(lim: &Limits, global: Range, devices: usize) -> Limits {
    let share = (global.len() / devices.max(1)).max(1);
    let cap = match share >= lim.max_work_group_size {
        true => lim.max_work_group_size,
        false => 1 << share.ilog2(),
    };
    Limits {
        max_work_group_size: cap,
        ..lim.clone()
    }
}

/// Each device's pieces of the launch `launch` (work-groups of `local`, at offset `base`)
/// split by `split`, for the user's range `user`: a part inside `user` runs as it is, one
/// leaving it runs its whole work-groups inside `user` unguarded and the rest in the guarded
/// variant (`guarded`: the kernel has one). Device `d`'s part is widened by `groups[d]`
/// work-groups on each side ([`widened`]; none past the end of `groups`).
///
/// ```
/// use clgroups::plan::launch::split_pieces;
/// use clgroups::plan::partition::partition;
/// use clgroups::plan::rounding::Variant;
/// use clgroups::Range;
/// let (user, launch, local) = (Range::d1(1000), Range::d1(1024), Range::d1(64));
/// let split = partition(launch, local, 2)?;
/// let pieces = split_pieces(user, launch, local, Range::d1(0), &split, &[], true)?;
/// assert_eq!(pieces.len(), 3); // device 0 inside; device 1: 448 unguarded + 64 guarded
/// assert_eq!(pieces[2].variant, Variant::Rounded);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn split_pieces(
    user: Range,
    launch: Range,
    local: Range,
    base: Range,
    split: &Partition,
    groups: &[usize],
    guarded: bool,
) -> Result<Vec<Piece>, Refusal> {
    let mut pieces = Vec::new();
    for (device, sub) in widened(split, launch, local, groups)
        .into_iter()
        .enumerate()
    {
        let Some((off, size)) = sub else { continue };
        let parts = match guarded {
            _ if inside(off, size, user) => vec![(false, off, size)],
            true => guarded_pieces(off, size, user, local),
            false => return Err(Refusal::NoGuardedVariant),
        };
        for (guard, off, size) in parts {
            let mut offset = off;
            for d in 0..off.rank() {
                let at = (off.get(d).checked_add(base.get(d)))
                    .ok_or(Refusal::OffsetOverflow { base, delta: off })?;
                offset = offset.with(d, at);
            }
            pieces.push(Piece {
                device,
                variant: if guard {
                    Variant::Rounded
                } else {
                    Variant::Original
                },
                global: size,
                local: Some(local),
                offset,
            });
        }
    }
    Ok(pieces)
}

/// Each device's sub-range of `launch` split by `split`, widened by `groups[d]` work-groups
/// (of `local`) on each side in the split dimension and clamped to the launch (devices past
/// the end of `groups`: not widened). A widened part computes its neighbours' elements next
/// to it redundantly (deeper margins, `scaling`).
///
/// ```
/// use clgroups::plan::launch::widened;
/// use clgroups::plan::partition::partition;
/// use clgroups::Range;
/// let (launch, local) = (Range::d2(64, 96), Range::d2(16, 4));
/// let split = partition(launch, local, 2)?; // rows 0..48 and 48..96
/// let subs = widened(&split, launch, local, &[1, 2]);
/// assert_eq!(subs[0], Some((Range::d2(0, 0), Range::d2(64, 52))));
/// assert_eq!(subs[1], Some((Range::d2(0, 40), Range::d2(64, 56))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn widened(
    split: &Partition,
    launch: Range,
    local: Range,
    groups: &[usize],
) -> Vec<Option<(Range, Range)>> {
    let (dim, step) = (split.dim, local.get(split.dim));
    (split.sub_ranges(launch, local).into_iter().enumerate())
        .map(|(d, sub)| {
            let (off, size) = sub?;
            let by = groups.get(d).copied().unwrap_or(0).saturating_mul(step);
            let lo = off.get(dim).saturating_sub(by);
            let hi = (off.get(dim) + size.get(dim))
                .saturating_add(by)
                .min(launch.get(dim));
            Some((off.with(dim, lo), size.with(dim, hi - lo)))
        })
        .collect()
}
