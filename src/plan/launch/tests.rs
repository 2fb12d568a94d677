//! Properties of [`plan`] without a device: every piece within its device's limits, the
//! pieces tiling the range exactly once, and one device's plan equal to the rounding and
//! split plans it composes (the single-device launch path before the planner).

use super::*;
use crate::plan::local_size::fixtures::{cpu, gpu};
use crate::plan::local_size::validate;
use crate::plan::rounding::{self, RoundingMode};
use crate::plan::split;
use proptest::prelude::*;

fn device(limits: Limits) -> DeviceFacts {
    DeviceFacts {
        limits,
        address_bits: 64,
        barriers: None,
    }
}

/// A rank-1..3 range of sizes up to `max` (the last dimensions smaller).
fn ranges() -> impl Strategy<Value = Range> {
    prop_oneof![
        (1usize..200_000).prop_map(Range::d1),
        (1usize..2_000, 1usize..300).prop_map(|(x, y)| Range::d2(x, y)),
        (1usize..300, 1usize..60, 1usize..20).prop_map(|(x, y, z)| Range::d3(x, y, z)),
    ]
}

/// Each piece's local size valid on its device and its group count indexable.
fn within_limits(p: &Plan, devices: &[DeviceFacts]) -> Result<(), TestCaseError> {
    for piece in &p.pieces {
        let lim = &devices[piece.device].limits;
        if let Some(local) = piece.local {
            prop_assert_eq!(validate(piece.global, local, lim), Ok(()), "{:?}", piece);
        }
        prop_assert!(crate::plan::bounds::check_groups(piece.global, piece.local).is_ok());
    }
    Ok(())
}

/// The pieces are boxes inside `[base, base + extent)` that do not overlap and whose volumes
/// add up to the region's: they tile it exactly once.
fn tiles(p: &Plan, base: Range, extent: Range) -> Result<(), TestCaseError> {
    let rank = extent.rank();
    let mut volume = 0usize;
    for (i, a) in p.pieces.iter().enumerate() {
        for d in 0..rank {
            prop_assert!(a.offset.get(d) >= base.get(d), "{:?}", a);
            let end = a.offset.get(d) + a.global.get(d);
            prop_assert!(end <= base.get(d) + extent.get(d), "{:?}", a);
        }
        for b in &p.pieces[..i] {
            let apart = (0..rank).any(|d| {
                a.offset.get(d) + a.global.get(d) <= b.offset.get(d)
                    || b.offset.get(d) + b.global.get(d) <= a.offset.get(d)
            });
            prop_assert!(apart, "{:?} overlaps {:?}", a, b);
        }
        volume += a.global.len();
    }
    prop_assert_eq!(volume, extent.len());
    Ok(())
}

/// One device's plan of a plain range as the launch path made it before the planner: the
/// rounding plan (unrounded where its slack is too large), else bulk + tail where it helps.
fn oracle(user: Range, base: Range, lim: &Limits, cfg: &RoundingConfig) -> Vec<Piece> {
    let mut planned = rounding::plan(user, cfg, lim, true);
    if rounding::within_slack(&planned).is_err() {
        planned = rounding::plan(user, cfg, lim, false);
    }
    let at = |delta: Range| {
        let mut o = base;
        for d in 0..base.rank() {
            o = o.with(d, base.get(d) + delta.get(d));
        }
        o
    };
    if !planned.rounded_variant {
        if let Some(parts) = split::split(user, lim, false) {
            return (parts.iter())
                .map(|s| Piece {
                    device: 0,
                    variant: Variant::Original,
                    global: s.global,
                    local: Some(s.local),
                    offset: at(s.offset),
                })
                .collect();
        }
    }
    (planned.pieces().into_iter())
        .map(|s| Piece {
            device: 0,
            variant: s.variant,
            global: s.global,
            local: planned.local,
            offset: at(s.offset),
        })
        .collect()
}

proptest! {
    #[test]
    fn one_device_plain_ranges(user in ranges(), on_gpu: bool, shift in 0usize..1000, mode in 0u8..3) {
        let lim = if on_gpu { gpu() } else { cpu() };
        let mut kernel = KernelFacts::plain("k", Constraints::new(lim.clone()));
        kernel.rounding.mode = [RoundingMode::On, RoundingMode::Force, RoundingMode::Disable][mode as usize];
        let devices = [device(lim.clone())];
        let base = user.zeros_like().with(0, shift);
        let request = Request { offset: Some(base), ..Request::new(&kernel, &devices, user, Shape::Plain) };
        let p = plan(&request).unwrap();
        within_limits(&p, &devices)?;
        tiles(&p, base, p.launch)?;
        prop_assert!((0..user.rank()).all(|d| p.launch.get(d) >= user.get(d)));
        prop_assert_eq!(&p.pieces, &oracle(user, base, &lim, &kernel.rounding));
        prop_assert_eq!(p.user_args, p.pieces.iter().any(|q| q.variant != Variant::Original));
    }

    #[test]
    fn one_device_nd_ranges(groups in (1usize..64, 1usize..8), local in (1usize..33, 1usize..9), tuned: bool) {
        let lim = gpu();
        let (global, l) = (Range::d2(groups.0 * local.0, groups.1 * local.1), Range::d2(local.0, local.1));
        let kernel = KernelFacts::plain("k", Constraints::new(lim.clone()));
        let devices = [device(lim)];
        let asked = if tuned { LocalSize::Tuned } else { LocalSize::Exact(l) };
        let p = plan(&Request::new(&kernel, &devices, global, Shape::NdRange(asked))).unwrap();
        within_limits(&p, &devices)?;
        tiles(&p, global.zeros_like(), global)?;
        prop_assert_eq!(p.pieces.len(), 1);
        if !tuned {
            prop_assert_eq!(p.pieces[0].local, Some(l));
        }
    }

    #[test]
    fn several_devices_split_in_whole_groups(user in ranges(), n in 1usize..5, weighted: bool) {
        let lim = gpu();
        let kernel = KernelFacts::plain("k", Constraints::new(lim.clone()));
        let devices: Vec<DeviceFacts> = (0..n).map(|_| device(lim.clone())).collect();
        let weights: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        let request = Request {
            root: true,
            weights: weighted.then_some(&weights[..]),
            ..Request::new(&kernel, &devices, user, Shape::Plain)
        };
        let p = plan(&request).unwrap();
        within_limits(&p, &devices)?;
        tiles(&p, user.zeros_like(), p.launch)?;
        let local = p.local.unwrap();
        for piece in &p.pieces {
            prop_assert!(piece.device < n);
            prop_assert!((0..user.rank()).all(|d| piece.global.get(d) % local.get(d) == 0));
            // A piece leaving the user's range runs guarded.
            let inside = (0..user.rank()).all(|d| piece.offset.get(d) + piece.global.get(d) <= user.get(d));
            prop_assert!(inside || piece.variant == Variant::Rounded, "{:?}", piece);
        }
        // Device order follows the partition: pieces of device d come before those of d + 1.
        prop_assert!(p.pieces.windows(2).all(|w| w[0].device <= w[1].device));
    }

    /// The cost model's choice is part of the plan: the pieces still tile the launch exactly
    /// once, on the one device chosen (its partition all there), else as planned.
    #[test]
    fn the_cost_models_choice_is_in_the_pieces(
        user in ranges(), n in 2usize..5, split in 1e-6f64..1e-2, one in 1e-6f64..1e-2,
        warm in 0u32..4, policy in 0usize..3, right in 0usize..3, g in 0u64..1 << 24,
    ) {
        use crate::plan::cost::{Choice, Depth, Inputs, Link, Right, Sample, SpreadPolicy};
        let lim = gpu();
        let kernel = KernelFacts::plain("k", Constraints::new(lim.clone()));
        let devices: Vec<DeviceFacts> = (0..n).map(|_| device(lim.clone())).collect();
        let request = Request { root: true, ..Request::new(&kernel, &devices, user, Shape::Plain) };
        let planned = plan(&request).unwrap();
        let sample = |t: f64| (0..warm).fold(Sample::default(), |s, _| s.with(t));
        let inputs = Inputs {
            devices: n,
            seen: warm,
            right: [Right::Split, Right::Merge, Right::OneOnly][right],
            split: sample(split),
            one: sample(one),
            between: g,
            gather: (0..n as u64).map(|d| g >> d).collect(),
            scatter: g / 2,
            link: Link { bandwidth: 1e9, latency: 20e-6 },
            depth: Depth::Fixed(1),
            last: None,
            resample: Default::default(),
        };
        let policy = [SpreadPolicy::Model, SpreadPolicy::Split, SpreadPolicy::OneDevice][policy];
        let p = spread(planned.clone(), &inputs, policy, "k");
        within_limits(&p, &devices)?;
        tiles(&p, user.zeros_like(), p.launch)?;
        let several = p.partition.as_ref().unwrap();
        let priced = several.priced.as_ref().unwrap();
        let local = p.local.unwrap();
        match priced.choice {
            Choice::OneDevice(d) => {
                prop_assert!(d < n && p.pieces.iter().all(|piece| piece.device == d));
                let dim = several.partition.dim;
                let groups = p.launch.get(dim) / local.get(dim);
                prop_assert_eq!(several.partition.chunks[d], groups);
                prop_assert_eq!(several.partition.chunks.iter().sum::<usize>(), groups);
            }
            _ => prop_assert_eq!(&p.pieces, &planned.pieces),
        }
    }
}

/// A plain range of a few groups' worth over several CPU devices gives each device work (one
/// CPU device would round 1024 work-items up to one group of 4096).
#[test]
fn small_plain_ranges_reach_every_device() {
    let lim = cpu();
    let kernel = KernelFacts::plain("k", Constraints::new(lim.clone()));
    for n in 2..5 {
        let devices: Vec<DeviceFacts> = (0..n).map(|_| device(lim.clone())).collect();
        for user in [1024, 1000, 4096, 777] {
            let request = Request {
                root: true,
                ..Request::new(&kernel, &devices, Range::d1(user), Shape::Plain)
            };
            let p = plan(&request).unwrap();
            let reached: std::collections::BTreeSet<usize> =
                p.pieces.iter().map(|piece| piece.device).collect();
            assert_eq!(reached.len(), n, "{user} over {n}: {:?}", p.pieces);
        }
    }
}

#[test]
fn refusals_name_the_ranges() {
    let lim = gpu();
    let devices = [device(lim.clone())];
    let kernel = KernelFacts::plain("k", Constraints::new(lim));
    let nd = |g: Range, l: Range| {
        plan(&Request::new(
            &kernel,
            &devices,
            g,
            Shape::NdRange(LocalSize::Exact(l)),
        ))
    };
    let e = nd(Range::d1(100), Range::d1(8)).unwrap_err();
    assert_eq!((e.global, e.local), (Range::d1(100), Some(Range::d1(8))));
    assert_eq!(
        e.reason,
        Refusal::NotDividing {
            dim: 0,
            local: 8,
            global: 100
        }
    );
    assert!(e
        .reason
        .to_string()
        .contains("8 does not divide global size 100"));
    let empty = plan(&Request::new(&kernel, &devices, Range::d1(0), Shape::Plain)).unwrap_err();
    assert_eq!(empty.reason, Refusal::EmptyRange);
    let offset = Some(Range::d2(0, 0));
    let r = Request {
        offset,
        ..Request::new(&kernel, &devices, Range::d1(64), Shape::Plain)
    };
    assert!(matches!(
        plan(&r).unwrap_err().reason,
        Refusal::OffsetRank { .. }
    ));
}

#[test]
fn required_groups_round_or_refuse_with_both_obstacles() {
    let lim = gpu();
    let devices = [device(lim.clone())];
    let constraints = Constraints {
        required: Some(Range::d1(64)),
        ..Constraints::new(lim)
    };
    let wrap = || Err(Obstacle::NotFound);
    let mut kernel = KernelFacts::plain("k", constraints);
    kernel.round = Err(&Obstacle::NotFound);
    kernel.wrap = &wrap;
    let e = plan(&Request::new(
        &kernel,
        &devices,
        Range::d1(1000),
        Shape::Plain,
    ))
    .unwrap_err();
    let text = e.reason.to_string();
    assert!(
        text.ends_with("cannot be rounded nor wrapped (the scanner did not find the kernel (made by a macro?))"),
        "{text}"
    );
    kernel.round = Ok(());
    let p = plan(&Request::new(
        &kernel,
        &devices,
        Range::d1(1000),
        Shape::Plain,
    ))
    .unwrap();
    assert_eq!((p.launch, p.local), (Range::d1(1024), Some(Range::d1(64))));
    assert!(p.user_args && p.pieces[0].variant == Variant::Rounded);
}
