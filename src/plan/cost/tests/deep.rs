//! The halo depth of a split: estimated from the depth-1 figures, then measured in windows
//! of launches where worth it.

use super::super::watch::Timing;
use super::*;

#[test]
fn halo_depth_weighs_the_dependency_against_redundant_rows() {
    // No latency, or no rows to spare: depth 1.
    assert_eq!(halo_depth(0.0, 1e-3, 64, 16), 1);
    assert_eq!(halo_depth(1e-3, 2e-3, 64, 1), 1);
    // H200-like heat 4096^2: 200 us a dependency, 70 us of compute over 128 rows: the
    // continuous optimum sqrt(200 x 128 / 70) ~ 19, capped at 16.
    assert_eq!(halo_depth(200e-6, 270e-6, 128, 16), 16);
    // PoCL-like: 20 us a dependency, 250 us over 32 rows: sqrt(20 x 32 / 250) ~ 1.6.
    assert_eq!(halo_depth(20e-6, 270e-6, 32, 16), 2);
    // Never above the cap; the cost at the choice is the least of 1..=max.
    for (l, t, g) in [(5e-5, 1e-4, 8), (1e-5, 1e-2, 1000), (3e-4, 4e-4, 3)] {
        let k = halo_depth(l, t, g, 8);
        let cost = |k: usize| l / k as f64 + (t - l) * (k - 1) as f64 / g as f64;
        assert!((1..=8).all(|j| cost(k) <= cost(j)), "{l} {t} {g}: {k}");
    }
}

/// Inputs whose split keeps deeper margins of `rows` work-group rows, up to depth `max`.
fn deep(split: f64, one: f64, rows: usize, max: usize) -> Inputs {
    let mut i = inputs(warm(split), warm(one));
    i.gather = vec![0, 0];
    i.depth = Depth::Chosen {
        rows,
        max,
        kept: None,
    };
    i
}

#[test]
fn a_deeper_halo_can_make_the_split_pay() {
    // 270 us split, 50 us of it the dependency, 128 rows; one device 265 us: at depth 1 one
    // device wins, at the chosen depth (about 237 us) the split does, by more than the margin.
    let mut i = deep(270e-6, 265e-6, 128, 1);
    assert_eq!(price(&i, SpreadPolicy::Model).choice, Choice::OneDevice(0));
    i.depth = Depth::Chosen {
        rows: 128,
        max: 16,
        kept: None,
    };
    let p = price(&i, SpreadPolicy::Model);
    assert_eq!((p.choice, p.why), (Choice::Split, Why::Cheaper));
    assert!(p.depth > 1 && matches!(p.deep, Some(Time::Estimated(s)) if s < 240e-6));
    assert_eq!(p.split, Some(Time::Measured(270e-6)));
    let text = format!("estimated at halo depth {}", p.depth);
    assert!(p.to_string().contains(&text), "{p}");
    // A depth kept for the shape is priced, not chosen again (its launches move no bytes
    // between exchanges).
    i.between = 0;
    i.depth = Depth::Chosen {
        rows: 128,
        max: 16,
        kept: Some(Kept::new(4, Default::default())),
    };
    assert_eq!(price(&i, SpreadPolicy::Model).depth, 4);
    // No bytes between devices: nothing to save, depth 1.
    i.depth = Depth::Chosen {
        rows: 128,
        max: 16,
        kept: None,
    };
    assert_eq!(price(&i, SpreadPolicy::Model).depth, 1);
}

proptest! {
    /// At depth 1 the model prices as without depths; a deeper choice stays within its
    /// bounds, never prices the split above depth 1, and a split it picks is one its own
    /// figures price below one device.
    #[test]
    fn depths_price_within_bounds_and_only_pick_cheaper_splits(
        split in 1e-6f64..1e-2, one in 1e-6f64..1e-2, rows in 0usize..600, max in 0usize..20,
        between in 0u64..1 << 20, latency in 0f64..1e-3, n in 0u32..7, m in 0u32..7,
        g in 0u64..1 << 24, scatter in 0u64..1 << 24, forced in 1usize..8,
    ) {
        let mut i = inputs(Sample::steady(n, split), Sample::steady(m, one));
        (i.between, i.link.latency, i.gather, i.scatter) = (between, latency, vec![g, g / 2], scatter);
        let flat = price(&i, SpreadPolicy::Model);
        prop_assert_eq!(flat.depth, 1);
        i.depth = Depth::Chosen { rows, max: 1, kept: None };
        prop_assert_eq!(&price(&i, SpreadPolicy::Model), &flat);
        prop_assert_eq!(split_at_depth(split, latency, rows, 1), split);
        i.depth = Depth::Chosen { rows, max, kept: None };
        let p = price(&i, SpreadPolicy::Model);
        prop_assert!((1..=max.max(1)).contains(&p.depth), "{}", p);
        prop_assert_eq!(p.split, flat.split);
        if let (Some(deep), Some(s1)) = (p.deep, flat.split) {
            prop_assert!(p.depth > 1 && deep.secs() <= s1.secs(), "{} vs {}", p, flat);
        }
        if p.why == Why::Cheaper && p.choice == Choice::Split {
            let s = p.deep.map_or(p.split.unwrap().secs(), Time::secs);
            let o = p.one.unwrap().secs();
            let moved = |b: u64| i.link.seconds(b) / AMORTISE;
            prop_assert!(s + moved(p.scatter) < o + moved(p.gather), "{}", p);
        }
        i.depth = Depth::Fixed(forced);
        prop_assert_eq!(price(&i, SpreadPolicy::Model).depth, forced);
    }
}

/// A chain of `launches` of a shape whose split may keep deeper margins (256 rows, up to depth
/// 16, the depth kept at the first decision from warm figures as the launch code keeps it),
/// run through the model with a clock: one device takes `one` seconds a launch, the split
/// `split(depth)`. Returns the figures and every launch's decision.
fn deep_replay(launches: usize, one: f64, split: impl Fn(usize) -> f64) -> (Figures, Vec<Priced>) {
    deep_replay_moving(launches, one, split, |_, _| 4096)
}

/// [`deep_replay`], launch `i` moving `between(i, last choice)` bytes between devices.
fn deep_replay_moving(
    launches: usize,
    one: f64,
    split: impl Fn(usize) -> f64,
    between: impl Fn(usize, Option<Choice>) -> u64,
) -> (Figures, Vec<Priced>) {
    let (mut f, mut kept, mut clock) = (Figures::default(), None::<usize>, 0.0);
    let mut all: Vec<Priced> = Vec::with_capacity(launches);
    for n in 0..launches {
        let mut i = inputs(f.split, f.one);
        i.between = between(n, all.last().map(|p| p.choice));
        (i.seen, i.last, i.gather, i.resample) = (f.seen, f.last, vec![0, 0], f.resample);
        let depth = |k| Kept::new(k, f.deep);
        i.depth = Depth::Chosen {
            rows: 256,
            max: 16,
            kept: kept.map(depth),
        };
        let p = price(&i, SpreadPolicy::Model);
        f.seen += 1;
        kept = kept.or(p.depth_to_keep(&i));
        // The launch runs at the depth kept before it (its plan is made first).
        let secs = match p.choice {
            Choice::OneDevice(_) => one,
            _ => split(if p.depth > 1 { p.depth } else { 1 }),
        };
        let timing = f.timing(&p);
        if let Some(Timing::Open(_)) = timing {
            f.opened(clock);
        }
        clock += secs;
        match timing {
            Some(Timing::Sample(c)) => f.record(c, secs),
            Some(Timing::Observe(c)) => {
                f.observe(c, secs);
            }
            Some(Timing::Close(_)) => {
                f.closed(clock);
            }
            Some(Timing::Open(_)) | None => {}
        }
        all.push(p);
    }
    (f, all)
}

#[test]
fn a_kept_depth_is_measured_where_its_estimate_is_near_one_device() {
    // Two H200s, heat 4096^2: the split at depth 1 80 us (its exchange every launch), one
    // device 75 us, the split at depth 16 50 us; the estimate (about 68 us: it saves only the
    // link's 50 us latency here less the redundant rows) does not beat one device by the
    // margin, the measured depth does.
    let (f, all) = deep_replay(400, 75e-6, |k| if k > 1 { 50e-6 } else { 80e-6 });
    let last = all.last().unwrap();
    assert_eq!(
        (last.choice, last.why),
        (Choice::Split, Why::Cheaper),
        "{last}"
    );
    assert!(
        matches!(last.deep, Some(Time::Measured(t)) if (t - 50e-6).abs() < 1e-9),
        "{last}"
    );
    assert_eq!(f.deep.0, last.depth);
    // Measured in windows of `depth` launches: some launches measured at the depth first.
    let explored = all
        .iter()
        .filter(|p| p.why == Why::Measuring && p.depth > 1)
        .count();
    assert!(explored >= WARM as usize * last.depth, "{explored}");
    // Where the depth measures slower than one device, one device runs the chain.
    let (_, all) = deep_replay(400, 75e-6, |k| if k > 1 { 90e-6 } else { 95e-6 });
    let last = all.last().unwrap();
    assert_eq!(
        (last.choice, last.why),
        (Choice::OneDevice(0), Why::Cheaper),
        "{last}"
    );
    assert!(matches!(last.deep, Some(Time::Measured(_))), "{last}");
    // Far from one device (a short launch: the estimate above 1.5 times one device): never
    // measured at depth.
    let (f, all) = deep_replay(400, 20e-6, |k| if k > 1 { 50e-6 } else { 80e-6 });
    assert!(all
        .iter()
        .all(|p| !(p.why == Why::Measuring && p.depth > 1)));
    assert_eq!(f.deep.1.count, 0);
}

#[test]
fn a_window_is_dropped_when_the_chain_leaves_the_split() {
    let mut f = Figures::default();
    let deep = Priced {
        choice: Choice::Split,
        why: Why::Measuring,
        split: Some(Time::Measured(80e-6)),
        depth: 4,
        deep: Some(Time::Estimated(60e-6)),
        one: Some(Time::Measured(75e-6)),
        device: 0,
        gather: 0,
        scatter: 0,
        between: 0,
        link: Some(LINK),
        measure: true,
    };
    assert_eq!(f.timing(&deep), Some(Timing::Open(4)));
    f.opened(0.0);
    assert_eq!(f.timing(&deep), None);
    // One launch on one device in between: the window is dropped, nothing recorded.
    let one = Priced {
        choice: Choice::OneDevice(0),
        depth: 1,
        measure: false,
        why: Why::Cheaper,
        ..deep.clone()
    };
    f.timing(&one);
    assert_eq!(f.window, None);
    assert_eq!(f.closed(1.0), None);
    assert_eq!(f.deep.1.count, 0);
    // The next split opens a new one.
    assert_eq!(f.timing(&deep), Some(Timing::Open(4)));
}

#[test]
fn a_depth_is_kept_only_from_a_launch_that_exchanges() {
    // Two H200s, heat 4096^2: while one device holds the buffers whole, every other launch's
    // plan moves nothing between devices (its margins current); a depth kept from such a
    // launch was 1, and the chain stayed on one device (0.98x) where depth 16 measures 45 us.
    let moving = |n: usize, last: Option<Choice>| match (last, n % 2) {
        (Some(Choice::OneDevice(_)), 1) => 0,
        _ => 32768,
    };
    let (f, all) = deep_replay_moving(400, 76e-6, |k| if k > 1 { 45e-6 } else { 90e-6 }, moving);
    let last = all.last().unwrap();
    assert_eq!(f.deep.0, 16, "{last}");
    assert_eq!(
        (last.choice, last.why, last.depth),
        (Choice::Split, Why::Cheaper, 16),
        "{last}"
    );
}
