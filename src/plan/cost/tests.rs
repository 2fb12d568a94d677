use super::watch::{Timing, BACKOFF, BURST, EVERY, MARGIN, SHARE, SLOW, SPAN};
use super::*;
use proptest::prelude::*;

mod deep;

const LINK: Link = Link {
    bandwidth: 1e9,
    latency: 50e-6,
};

fn inputs(split: Sample, one: Sample) -> Inputs {
    Inputs {
        devices: 2,
        seen: 1,
        right: Right::Split,
        split,
        one,
        between: 4096,
        gather: vec![1 << 20, 1 << 20],
        scatter: 0,
        link: LINK,
        depth: Depth::Fixed(1),
        last: None,
        resample: Resample::default(),
    }
}

/// A warm sample whatever `secs` ([`KEEP`] launches).
fn warm(secs: f64) -> Sample {
    Sample::steady(KEEP as u32, secs)
}

#[test]
fn samples_keep_the_median_of_the_latest() {
    assert_eq!(Sample::default().time(), None);
    let s = Sample::default().with(3.0);
    assert_eq!(s.time(), Some(3.0));
    // Of two, the slower.
    let s = s.with(1.0);
    assert_eq!(s.time(), Some(3.0));
    let s = s.with(2.0);
    assert_eq!((s.count, s.time()), (3, Some(2.0)));
    // One outlier among five moves nothing.
    let s = s.with(0.5).with(40.0);
    assert_eq!((s.count, s.time()), (5, Some(2.0)));
    // Only the latest KEEP count: five launches of 7 s replace all of them.
    let s = (0..KEEP).fold(s, |s, _| s.with(7.0));
    assert_eq!((s.count, s.time()), (10, Some(7.0)));
}

#[test]
fn cheap_launches_are_sampled_more_before_the_model_trusts_them() {
    // Slow launches: WARM suffice.
    assert!(!Sample::steady(WARM - 1, 1.0).warm());
    assert!(Sample::steady(WARM, 1.0).warm());
    // Cheap ones: KEEP.
    assert!(!Sample::steady(WARM, CHEAP / 2.0).warm());
    assert!(Sample::steady(KEEP as u32, CHEAP / 2.0).warm());
    let p = price(
        &inputs(Sample::steady(WARM, 1e-4), Sample::default()),
        SpreadPolicy::Model,
    );
    assert_eq!(
        (p.choice, p.why, p.measure),
        (Choice::Split, Why::Measuring, true)
    );
}

#[test]
fn a_new_shape_measures_the_split_then_one_device() {
    let p = price(
        &inputs(Sample::default(), Sample::default()),
        SpreadPolicy::Model,
    );
    assert_eq!(
        (p.choice, p.why, p.measure),
        (Choice::Split, Why::Measuring, true)
    );
    let p = price(
        &inputs(Sample::default().with(1e-3), Sample::default()),
        SpreadPolicy::Model,
    );
    assert_eq!((p.choice, p.why), (Choice::Split, Why::Measuring));
    // Warm split: one device is measured next (moving 1 MiB: 1.1 ms <= 32 x 1 ms).
    let p = price(&inputs(warm(1e-3), Sample::default()), SpreadPolicy::Model);
    assert_eq!((p.choice, p.why), (Choice::OneDevice(0), Why::Measuring));
    assert!(matches!(p.one, Some(Time::Estimated(_))));
}

#[test]
fn one_device_is_not_tried_where_moving_costs_too_much() {
    let mut i = inputs(warm(1e-4), Sample::default());
    i.gather = vec![1 << 30, 1 << 30];
    let p = price(&i, SpreadPolicy::Model);
    // Estimated one device: (100 - 54) us x 2 = 92 us, but a 1 GiB move amortised is more.
    assert_eq!(
        (p.choice, p.why, p.measure),
        (Choice::Split, Why::Cheaper, false)
    );
}

#[test]
fn the_faster_option_wins_once_measured() {
    // Small sizes: the split pays the link, one device is faster.
    let p = price(&inputs(warm(300e-6), warm(100e-6)), SpreadPolicy::Model);
    assert_eq!((p.choice, p.why), (Choice::OneDevice(0), Why::Cheaper));
    // Large sizes: the split halves the compute.
    let p = price(&inputs(warm(10e-3), warm(19e-3)), SpreadPolicy::Model);
    assert_eq!((p.choice, p.why), (Choice::Split, Why::Cheaper));
    assert_eq!(p.split, Some(Time::Measured(10e-3)));
}

#[test]
fn buffers_already_whole_stay_unless_the_split_pays_the_move_back() {
    let mut i = inputs(warm(1e-3), warm(1.05e-3));
    // Held whole on device 1: the one-device option uses it and moves nothing.
    i.gather = vec![8 << 20, 0];
    i.scatter = 8 << 20;
    let p = price(&i, SpreadPolicy::Model);
    assert_eq!(p.choice, Choice::OneDevice(1));
    assert_eq!(p.gather, 0);
    // Much faster split: worth moving back.
    i.split = warm(0.2e-3);
    i.one = warm(2e-3);
    assert_eq!(price(&i, SpreadPolicy::Model).choice, Choice::Split);
}

#[test]
fn forced_policies_and_the_only_right_option() {
    let i = inputs(warm(300e-6), warm(100e-6));
    let p = price(&i, SpreadPolicy::Split);
    assert_eq!(
        (p.choice, p.why),
        (Choice::Split, Why::Forced(SpreadPolicy::Split))
    );
    let p = price(&inputs(warm(1e-6), warm(1.0)), SpreadPolicy::OneDevice);
    assert_eq!(p.choice, Choice::OneDevice(0));
    let mut only = i.clone();
    only.right = Right::OneOnly;
    for policy in [
        SpreadPolicy::Model,
        SpreadPolicy::Split,
        SpreadPolicy::OneDevice,
    ] {
        let p = price(&only, policy);
        assert_eq!((p.choice, p.why), (Choice::OneDevice(0), Why::OnlyRight));
    }
    let mut merge = i;
    merge.right = Right::Merge;
    assert_eq!(price(&merge, SpreadPolicy::Split).choice, Choice::Merge);
}

#[test]
fn display_names_the_figures() {
    let p = price(&inputs(warm(300e-6), warm(100e-6)), SpreadPolicy::Model);
    let s = p.to_string();
    assert!(
        s.contains("device 0 alone (the least time per launch)"),
        "{s}"
    );
    assert!(
        s.contains("300.0 us measured") && s.contains("1.00 GB/s"),
        "{s}"
    );
}

proptest! {
    /// The model only ever chooses a right execution, and with both options measured and
    /// nothing to move it chooses the faster.
    #[test]
    fn chooses_only_right_executions(
        split in 1e-6f64..1.0, one in 1e-6f64..1.0, n in 0u32..7, m in 0u32..7,
        g0 in 0u64..1 << 32, g1 in 0u64..1 << 32, scatter in 0u64..1 << 32,
        right in 0usize..3, policy in 0usize..3,
    ) {
        let right = [Right::Split, Right::Merge, Right::OneOnly][right];
        let policy = [SpreadPolicy::Model, SpreadPolicy::Split, SpreadPolicy::OneDevice][policy];
        let mut i = inputs(Sample::steady(n, split), Sample::steady(m, one));
        i.right = right;
        i.gather = vec![g0, g1];
        i.scatter = scatter;
        let p = price(&i, policy);
        match p.choice {
            Choice::Split => prop_assert_eq!(right, Right::Split),
            Choice::Merge => prop_assert_eq!(right, Right::Merge),
            Choice::OneDevice(d) => prop_assert!(d < 2),
        }
        if policy == SpreadPolicy::Model && right == Right::Split && i.split.warm() && i.one.warm() {
            i.gather = vec![0, 0];
            i.scatter = 0;
            let p = price(&i, policy);
            // The split only where faster by more than the margin.
            let faster = if one <= split * (1.0 + MARGIN) { Choice::OneDevice(0) } else { Choice::Split };
            prop_assert_eq!(p.choice, faster);
        }
    }
}

/// Runs `launches` launches of one shape through the model as the launch code does (price,
/// then sample or observe), each option taking `truth(choice, launch)` seconds; returns the
/// figures and every launch's decision.
fn replay_all(
    launches: usize,
    mut truth: impl FnMut(Choice, usize) -> f64,
) -> (Figures, Vec<Priced>) {
    let mut f = Figures::default();
    let mut all = Vec::with_capacity(launches);
    for n in 0..launches {
        let mut i = inputs(f.split, f.one);
        (i.seen, i.last, i.gather) = (f.seen, f.last, vec![0, 0]);
        i.resample = f.resample;
        let p = price(&i, SpreadPolicy::Model);
        f.seen += 1;
        match f.timing(&p) {
            Some(Timing::Sample(c)) => f.record(c, truth(c, n)),
            Some(Timing::Observe(c)) => {
                f.observe(c, truth(c, n));
            }
            Some(Timing::Open(_) | Timing::Close(_)) | None => {}
        }
        all.push(p);
    }
    (f, all)
}

/// [`replay_all`], and the last decision.
fn replay(launches: usize, truth: impl FnMut(Choice, usize) -> f64) -> (Figures, Priced) {
    let (f, mut all) = replay_all(launches, truth);
    (f, all.pop().expect("a launch"))
}

#[test]
fn launches_are_timed_to_sample_then_every_so_often_to_observe() {
    let mut f = Figures::default();
    // Launches of SPAN / EVERY or more: every EVERY-th observed.
    let t = 1.01 * SPAN / EVERY as f64;
    let mut p = price(&inputs(warm(3.0 * t), warm(t)), SpreadPolicy::Model);
    assert_eq!(p.why, Why::Cheaper);
    let timings: Vec<_> = (0..2 * EVERY).map(|_| f.timing(&p)).collect();
    let observed = |t: &Option<Timing>| *t == Some(Timing::Observe(Choice::OneDevice(0)));
    assert_eq!(timings.iter().filter(|t| observed(t)).count(), 2);
    assert!(observed(&timings[EVERY as usize - 1]));
    assert_eq!(f.last, Some(Choice::OneDevice(0)));
    // Launches ten times shorter: one in every 10 x EVERY.
    let short = price(&inputs(warm(0.3 * t), warm(0.1 * t)), SpreadPolicy::Model);
    let mut g = Figures::default();
    let n = (0..20 * EVERY)
        .filter(|_| observed(&g.timing(&short)))
        .count();
    assert_eq!(n, 2);
    // Measuring: a sample, and no decision kept.
    let mut g = Figures::default();
    let m = price(
        &inputs(Sample::default().with(1e-3), Sample::default()),
        SpreadPolicy::Model,
    );
    assert_eq!(g.timing(&m), Some(Timing::Sample(Choice::Split)));
    assert_eq!(g.last, None);
    // Forced, or a split at a halo depth above 1: never observed.
    let forced = price(&inputs(warm(1e-3), warm(1e-3)), SpreadPolicy::Split);
    assert!((0..3 * EVERY).all(|_| g.timing(&forced).is_none()));
    assert_eq!(g.last, Some(Choice::Split));
    p.depth = 2;
    assert!((0..3 * EVERY).all(|_| g.timing(&p).is_none()));
}

#[test]
fn a_steady_observation_resets_the_slow_count() {
    let mut f = Figures {
        split: warm(1e-3),
        one: warm(2e-3),
        ..Figures::default()
    };
    for _ in 0..4 * SLOW {
        // Slow, then steady (within the margin): never measured again.
        for secs in [(SLOW - 1) as f64 * 1e-3 + 2.5e-3, 2.1e-3] {
            assert_ne!(
                std::mem::discriminant(&f.observe(Choice::Split, secs)),
                std::mem::discriminant(&Observed::Remeasure { against: 0.0 })
            );
        }
    }
    assert_eq!(f.observe(Choice::Split, 2.1e-3), Observed::Steady);
    // Nothing measured to compare with: steady.
    let mut g = Figures {
        split: warm(1e-3),
        ..Figures::default()
    };
    assert!((0..2 * SLOW).all(|_| g.observe(Choice::Split, 1.0) == Observed::Steady));
    let text = f.observe(Choice::Split, 1.0).to_string();
    assert!(text.contains("2000.0 us (1 of 3 in a row)"), "{text}");
}

#[test]
fn a_choice_made_under_load_is_measured_again_and_switched() {
    // Heat-like: one device truly 2 ms, the split 4 ms; while the one-device option was
    // sampled the host was loaded (6 ms), so the split was chosen.
    let truth = |c: Choice, n: usize| match c {
        Choice::OneDevice(_) if n < 16 => 6e-3,
        Choice::OneDevice(_) => 2e-3,
        _ => 4e-3,
    };
    let (_, early) = replay(16, truth);
    assert_eq!((early.choice, early.why), (Choice::Split, Why::Cheaper));
    // Observed at 4 ms against 6 ms: steady, until the load is gone and one device is
    // measured again ... it never is unless the split runs slower than its price. The split
    // now runs slower than one device's 6 ms figure: after SLOW observations both are
    // measured again and one device wins.
    let slower = |c: Choice, n: usize| match c {
        Choice::OneDevice(_) if n < 16 => 6e-3,
        Choice::OneDevice(_) => 2e-3,
        _ if n < 16 => 4e-3,
        _ => 8e-3,
    };
    let bound = 16 + (SLOW * EVERY) as usize + 4 * KEEP;
    let (f, p) = replay(bound, slower);
    assert_eq!(
        (p.choice, p.why),
        (Choice::OneDevice(0), Why::Cheaper),
        "{f:?}"
    );
    assert_eq!(p.one, Some(Time::Measured(2e-3)));
}

proptest! {
    /// Whatever the noise of the first samples (a loaded host only slows launches), once it is
    /// gone the model never stays on an option that runs clearly slower than the other
    /// option's figure: within SLOW observations it measures both again, and with true
    /// figures it takes the faster option.
    #[test]
    fn the_model_never_sticks_to_a_clearly_slower_option(
        split in 1e-5f64..1e-1, one in 1e-5f64..1e-1,
        noise in proptest::collection::vec(1f64..4.0, 16),
    ) {
        let quiet = 2 * noise.len();
        let truth = |c: Choice, n: usize| {
            let t = match c { Choice::OneDevice(_) => one, _ => split };
            t * noise.get(n).copied().unwrap_or(1.0)
        };
        // Observed once in every EVERY launches and SPAN seconds.
        let every = (EVERY as usize).max((SPAN / split.min(one)) as usize + 1);
        let launches = quiet + SLOW as usize * every + 4 * KEEP + 1;
        let (f, p) = replay(launches, truth);
        let (mine, other) = match p.choice {
            Choice::OneDevice(_) => (one, f.split.time()),
            _ => (split, f.one.time()),
        };
        if let Some(other) = other.filter(|_| p.why == Why::Cheaper) {
            prop_assert!(mine <= other * (1.0 + MARGIN) + 1e-12, "{} {:?}", p, f);
        }
        // Re-measured with true figures, or never noisy: the faster option.
        if f.split.time() == Some(split) && f.one.time() == Some(one) && p.why == Why::Cheaper {
            // The split only where faster by more than the margin.
            let faster = if one <= split * (1.0 + MARGIN) { Choice::OneDevice(0) } else { Choice::Split };
            prop_assert_eq!(p.choice, faster);
        }
    }
}

#[test]
fn a_stale_figure_of_the_option_not_running_is_sampled_again() {
    // The split truly 4 ms, one device 5 ms; while the split was sampled the host was loaded
    // (12 ms), so one device was chosen, and observing it at 5 ms against 12 never measures
    // both again. Sampled again after BACKOFF launches and 1 / SHARE times its cost (3 x 12
    // ms): the split wins, and one more re-sample (of one device) keeps it.
    let truth = |c: Choice, n: usize| match c {
        Choice::OneDevice(_) => 5e-3,
        _ if n < 8 => 12e-3,
        _ => 4e-3,
    };
    let (_, early) = replay(64, truth);
    assert_eq!(
        (early.choice, early.why),
        (Choice::OneDevice(0), Why::Cheaper)
    );
    let wait = (BACKOFF as usize).max((BURST as f64 * 12e-3 / SHARE / 5e-3) as usize + 1);
    let (f, all) = replay_all(16 + wait + 2 * BURST as usize, truth);
    let p = all.last().expect("a launch");
    assert_eq!((p.choice, p.why), (Choice::Split, Why::Cheaper), "{f:?}");
    assert_eq!(p.split, Some(Time::Measured(4e-3)));
    let resampled = all.iter().filter(|p| p.why == Why::Resampling).count();
    assert_eq!(resampled, BURST as usize);
    // The decision changed: the wait starts again at BACKOFF.
    assert_eq!(f.resample.gap, BACKOFF);
}

proptest! {
    /// With steady figures the option not running is sampled again in at most 2 % of the
    /// launches and about SHARE of the time, the wait doubles each time, and the decision
    /// stays.
    #[test]
    fn re_samples_take_a_bounded_share_and_back_off(
        split in 1e-5f64..1e-1, one in 1e-5f64..1e-1,
    ) {
        let truth = |c: Choice, _| match c { Choice::OneDevice(_) => one, _ => split };
        let launches = 3000;
        let (f, all) = replay_all(launches, truth);
        let last = all.last().expect("a launch");
        let chosen = all.iter().filter(|p| p.why == Why::Cheaper).map(|p| truth(p.choice, 0));
        let again = all.iter().filter(|p| p.why == Why::Resampling);
        let (n, secs) = again.fold((0, 0.0), |(n, s), p| (n + 1, s + truth(p.choice, 0)));
        prop_assert!(n as f64 <= 0.02 * launches as f64, "{} re-samples", n);
        prop_assert!(secs <= SHARE * chosen.sum::<f64>() + 1e-12, "{} s", secs);
        prop_assert_eq!(f.resample.gap, BACKOFF << (n / BURST as usize));
        if last.why == Why::Cheaper {
            let faster = if one <= split * (1.0 + MARGIN) { Choice::OneDevice(0) } else { Choice::Split };
            prop_assert_eq!(last.choice, faster);
        }
    }
}

#[test]
fn a_long_chain_shares_a_move_over_its_launches() {
    // Two H200s, a blur of 2^28 floats held whole on device 0: split 0.59 ms a launch, one
    // device 0.87 ms, 2 GiB to move back to the parts (1.8 ms on the link).
    let link = Link {
        bandwidth: 1.2e12,
        latency: 15e-6,
    };
    let mut i = inputs(warm(586e-6), warm(865e-6));
    (i.link, i.between, i.scatter, i.gather) = (link, 8, 2 << 30, vec![0, 2 << 30]);
    i.last = Some(Choice::OneDevice(0));
    // Early in a chain the move weighs an eighth: one device.
    i.seen = 3;
    assert_eq!(price(&i, SpreadPolicy::Model).choice, Choice::OneDevice(0));
    // Sixteen launches in, a sixteenth: the split pays.
    i.seen = 16;
    assert_eq!(price(&i, SpreadPolicy::Model).choice, Choice::Split);
    // And a split twice as slow never does, however long the chain.
    i.split = warm(1.8e-3);
    i.seen = 10_000;
    assert_eq!(price(&i, SpreadPolicy::Model).choice, Choice::OneDevice(0));
}
