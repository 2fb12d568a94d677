//! Tests of [`super`]: DPC++'s rule, the device-aware default, plans and pieces.
use super::*;
use crate::plan::local_size::fixtures::{cpu, gpu};
use crate::plan::local_size::validate;
use proptest::prelude::*;
use std::collections::HashMap;

fn sycl(dims: &[usize]) -> Range {
    Range::from_sycl_order(dims).unwrap()
}

const ENV_PARAMS: &str = "CLGROUPS_RANGE_ROUNDING_PARAMS";
const ENV_DISABLE: &str = "CLGROUPS_DISABLE_RANGE_ROUNDING";
const ENV_TRACE: &str = "CLGROUPS_RANGE_ROUNDING_TRACE";
const ENV_MODE: &str = "CLGROUPS_RANGE_ROUNDING";
const ENV_EXPERIMENTAL: &str = "CLGROUPS_EXP_RANGE_ROUNDING";

fn vars(pairs: &[(&str, &str)]) -> RoundingConfig {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    RoundingConfig::from_lookup(|k| map.get(k).cloned())
}

#[test]
fn params_parse() {
    let p: RoundingParams = "16:32:1024".parse().unwrap();
    assert_eq!(p, RoundingParams::DPCPP_DEFAULT);
    assert_eq!(p.to_string(), "16:32:1024");
    let p: RoundingParams = " 1 : 256 : 0 ".parse().unwrap();
    assert_eq!((p.min_factor, p.good_factor, p.min_range), (1, 256, 0));
    for (bad, why) in [
        ("16:32", "2 field"),
        ("16:32:1024:5", "4 field"),
        ("", "1 field"),
        ("0:32:1024", "above 0"),
        ("16:0:1024", "above 0"),
        ("-1:32:1024", "MinFactor \"-1\""),
        ("16:32:-5", "MinRange \"-5\""),
        ("16abc:32:1024", "MinFactor \"16abc\""),
        ("a:b:c", "MinFactor \"a\""),
    ] {
        let err = bad.parse::<RoundingParams>().unwrap_err().to_string();
        assert!(err.contains(why) && err.contains(bad), "{bad:?}: {err}");
    }
}

#[test]
fn modes_parse() {
    assert_eq!("on".parse::<RoundingMode>().unwrap(), RoundingMode::On);
    assert_eq!(
        " Force ".parse::<RoundingMode>().unwrap(),
        RoundingMode::Force
    );
    assert_eq!(
        "disable".parse::<RoundingMode>().unwrap(),
        RoundingMode::Disable
    );
    let err = "1".parse::<RoundingMode>().unwrap_err().to_string();
    assert!(err.contains("on, force or disable"), "{err}");
    assert_eq!(RoundingMode::default(), RoundingMode::On);
}

#[test]
fn config_from_vars() {
    assert_eq!(vars(&[]), RoundingConfig::default());
    let cfg = vars(&[
        (ENV_PARAMS, "1:256:1"),
        (ENV_MODE, "force"),
        (ENV_TRACE, ""),
        (ENV_EXPERIMENTAL, "0"),
    ]);
    assert_eq!(
        cfg,
        RoundingConfig {
            mode: RoundingMode::Force,
            params: Some(RoundingParams {
                min_factor: 1,
                good_factor: 256,
                min_range: 1
            }),
            experimental: true,
            trace: true,
        }
    );
    // any value disables, even "0", and it beats the mode variable
    let cfg = vars(&[(ENV_DISABLE, "0"), (ENV_MODE, "force")]);
    assert_eq!(cfg.mode, RoundingMode::Disable);
    // malformed values keep the defaults
    let cfg = vars(&[(ENV_PARAMS, "16:0:1024"), (ENV_MODE, "sometimes")]);
    assert_eq!(cfg, RoundingConfig::default());
    assert_eq!(vars(&[(ENV_MODE, "disable")]).mode, RoundingMode::Disable);
}

#[test]
fn dpcpp_default_examples() {
    let d = RoundingParams::DPCPP_DEFAULT;
    let r = |n| dpcpp_rounded_range(Range::d1(n), &d, false, false);
    assert_eq!(r(7727), Range::d1(7744));
    assert_eq!(r(1500), Range::d1(1504));
    assert_eq!(r(1040), Range::d1(1040));
    assert_eq!(r(1000), Range::d1(1000));
    // only the slowest (SYCL dim 0) is rounded: e2e test {1500, 33} -> {1504, 33}
    let r2 = dpcpp_rounded_range(sycl(&[1500, 33]), &d, false, false);
    assert_eq!(r2.to_sycl_order(), vec![1504, 33]);
    let r3 = dpcpp_rounded_range(sycl(&[1500, 33, 64]), &d, false, false);
    assert_eq!(r3.to_sycl_order(), vec![1504, 33, 64]);
}

#[test]
fn dpcpp_experimental_examples() {
    let d = RoundingParams::DPCPP_DEFAULT;
    let e = |dims: &[usize]| dpcpp_rounded_range(sycl(dims), &d, true, false).to_sycl_order();
    assert_eq!(e(&[43]), vec![64]);
    assert_eq!(e(&[43, 79]), vec![48, 80]);
    assert_eq!(e(&[43, 79, 7]), vec![48, 80, 8]);
    assert_eq!(e(&[1500, 33]), vec![1504, 48]);
    assert_eq!(e(&[1500, 33, 64]), vec![1504, 40, 64]);
    assert_eq!(e(&[1]), vec![32]);
    assert_eq!(
        dpcpp_rounded_range(Range::d3(7, 79, 43), &d, true, false),
        Range::d3(8, 80, 48)
    );
    let p: RoundingParams = "1:256:1".parse().unwrap();
    let x = |dims: &[usize]| dpcpp_rounded_range(sycl(dims), &p, true, true).to_sycl_order();
    assert_eq!(x(&[43]), vec![256]);
    assert_eq!(x(&[43, 257]), vec![256, 512]);
    assert_eq!(x(&[43, 257, 7]), vec![256, 512, 256]);
    // without the experimental flag MinFactor 1 divides everything: nothing is rounded
    assert_eq!(
        dpcpp_rounded_range(sycl(&[43, 257, 7]), &p, false, true),
        sycl(&[43, 257, 7])
    );
}

#[test]
fn rounding_never_overflows() {
    let d = RoundingParams::DPCPP_DEFAULT;
    let huge = usize::MAX - 3;
    assert_eq!(
        dpcpp_rounded_range(Range::d1(huge), &d, false, false),
        Range::d1(huge)
    );
    assert_eq!(
        dpcpp_rounded_range(Range::d1(huge), &d, true, false),
        Range::d1(huge)
    );
}

#[test]
fn device_aware_primes() {
    let on = RoundingConfig::default();
    // PoCL CPU: W = 4096
    let p = plan(Range::d1(4_194_319), &on, &cpu(), true);
    assert_eq!(p.launch, Range::d1(4_198_400));
    assert_eq!(p.local, Some(Range::d1(4096)));
    assert!(p.rounded_variant);
    assert_eq!(
        p.adjustments,
        vec![Adjustment {
            dim: 0,
            from: 4_194_319,
            to: 4_198_400
        }]
    );
    // H100-like GPU: W = 256; 67,108,879 is prime -> 67,109,120 = 2^8 * 5 * 13 * 37 * 109,
    // launched in groups of W (the cap), not its larger divisor 962
    let p = plan(Range::d1(67_108_879), &on, &gpu(), true);
    assert_eq!(p.launch, Range::d1(67_109_120));
    assert_eq!(p.local, Some(Range::d1(256)));
    // 7727 -> 31 * 256
    let p = plan(Range::d1(7727), &on, &gpu(), true);
    assert_eq!((p.launch, p.local), (Range::d1(7936), Some(Range::d1(256))));
}

#[test]
fn device_aware_leaves_good_and_small_ranges() {
    let on = RoundingConfig::default();
    // 1500's best divisor within W = 256 is 250 < W: rounded to 1536 = 6 * 256 (DPC++ gives
    // 1504, a multiple of 32); 1536 itself needs nothing
    let p = plan(Range::d1(1500), &on, &gpu(), true);
    assert_eq!((p.launch, p.local), (Range::d1(1536), Some(Range::d1(256))));
    assert!(p.rounded_variant);
    let p = plan(Range::d1(1536), &on, &gpu(), true);
    assert_eq!((p.launch, p.local), (Range::d1(1536), Some(Range::d1(256))));
    assert!(!p.rounded_variant && p.adjustments.is_empty());
    // 1009 is below MinRange: the original kernel
    let p = plan(Range::d1(1009), &on, &gpu(), true);
    assert_eq!((p.local, p.rounded_variant), (None, false));
    // with groups of at most 256 that prime below MinRange gets the original kernel and a
    // NULL local size
    let mut small = gpu();
    small.max_work_group_size = 256;
    let p = plan(Range::d1(1009), &on, &small, true);
    assert_eq!(
        (p.launch, p.local, p.rounded_variant),
        (Range::d1(1009), None, false)
    );
    assert!(p.trace_lines().is_empty());
    // 2^22 on the CPU already gets 4096
    let p = plan(Range::d1(1 << 22), &on, &cpu(), true);
    assert_eq!(
        (p.launch, p.local),
        (Range::d1(1 << 22), Some(Range::d1(4096)))
    );
}

#[test]
fn device_aware_multi_dimensional() {
    let on = RoundingConfig::default();
    // OpenCL (7, 7727): inner 7 within 256 -> f = 36; 7727 -> 7740 = 2^2 * 3^2 * 5 * 43
    let p = plan(Range::d2(7, 7727), &on, &gpu(), true);
    assert_eq!(p.launch, Range::d2(7, 7740));
    assert_eq!(p.local, Some(Range::d2(7, 36)));
    // (64, 7727) on the CPU: inner 64 within 4096 -> f = 64 -> 7744 = 121 * 64
    let p = plan(Range::d2(64, 7727), &on, &cpu(), true);
    assert_eq!(p.launch, Range::d2(64, 7744));
    assert_eq!(p.local, Some(Range::d2(64, 64)));
    // 3-D, dimension 2 capped at 64 on the GPU: (4, 1, 4099) -> f = min(64, 64) = 64
    let p = plan(Range::d3(4, 1, 4099), &on, &gpu(), true);
    assert_eq!(p.launch, Range::d3(4, 1, 4160));
    assert_eq!(p.local, Some(Range::d3(4, 1, 64)));
    // a prime inner dimension with a good slowest one: nothing to gain by rounding
    let p = plan(Range::d2(7727, 2048), &on, &gpu(), true);
    assert_eq!(
        (p.launch, p.rounded_variant),
        (Range::d2(7727, 2048), false)
    );
    assert_eq!(p.local, Some(Range::d2(1, 256)));
}

#[test]
fn modes_and_explicit_params() {
    let lim = gpu();
    let off = RoundingConfig {
        mode: RoundingMode::Disable,
        experimental: true,
        ..RoundingConfig::default()
    };
    let p = plan(Range::d1(7727), &off, &lim, true);
    assert_eq!(
        (p.launch, p.local, p.rounded_variant),
        (Range::d1(7727), None, false)
    );
    let p = plan(Range::d1(7727), &RoundingConfig::default(), &lim, false);
    assert_eq!(
        (p.launch, p.local, p.rounded_variant),
        (Range::d1(7727), None, false)
    );
    // force: the rounded variant even over an unchanged range, without trace lines
    let force = RoundingConfig {
        mode: RoundingMode::Force,
        ..RoundingConfig::default()
    };
    let p = plan(Range::d1(4096), &force, &lim, true);
    assert_eq!((p.launch, p.local), (Range::d1(4096), Some(Range::d1(256))));
    assert!(p.rounded_variant && p.trace_lines().is_empty());
    // explicit DPC++ parameters follow DPC++ exactly
    let explicit = RoundingConfig {
        params: Some(RoundingParams::DPCPP_DEFAULT),
        ..RoundingConfig::default()
    };
    let p = plan(Range::d1(7727), &explicit, &lim, true);
    assert_eq!((p.launch, p.local), (Range::d1(7744), Some(Range::d1(968))));
    assert_eq!(
        p.trace_lines(),
        ["parallel_for range adjusted at dim 0 from 7727 to 7744"]
    );
    let p = plan(Range::d1(1500), &explicit, &lim, true);
    assert_eq!((p.launch, p.rounded_variant), (Range::d1(1504), true));
    // experimental: rank factors without parameters, GoodFactor with them
    let exp = RoundingConfig {
        experimental: true,
        ..RoundingConfig::default()
    };
    let p = plan(Range::d3(7, 79, 43), &exp, &lim, true);
    assert_eq!(p.launch, Range::d3(8, 80, 48));
    assert_eq!(p.adjustments.len(), 3);
    assert_eq!(
        p.trace_lines()[2],
        "parallel_for range adjusted at dim 2 from 43 to 48"
    );
    let exp256 = RoundingConfig {
        params: Some("1:256:1".parse().unwrap()),
        ..exp
    };
    let p = plan(sycl(&[43, 257, 7]), &exp256, &lim, true);
    assert_eq!(p.launch.to_sycl_order(), vec![256, 512, 256]);
    assert_eq!(validate(p.launch, p.local.unwrap(), &lim), Ok(()));
    // an empty range is never rounded
    let p = plan(Range::d2(0, 5000), &force, &lim, true);
    assert_eq!((p.launch, p.rounded_variant), (Range::d2(0, 5000), false));
}

fn any_range() -> impl Strategy<Value = Range> {
    prop::collection::vec(
        prop_oneof![1usize..64, 1usize..5000, 1usize..(1 << 24)],
        1..=3,
    )
    .prop_map(|v| Range::new(&v).unwrap())
}

fn any_limits() -> impl Strategy<Value = Limits> {
    prop_oneof![Just(gpu()), Just(cpu())]
}

/// Properties every plan has, whatever the configuration.
fn check_common(
    user: Range,
    p: &RoundingPlan,
    lim: &Limits,
) -> std::result::Result<(), TestCaseError> {
    prop_assert_eq!(p.user, user);
    for d in 0..user.rank() {
        prop_assert!(p.launch.get(d) >= user.get(d));
    }
    if let Some(local) = p.local {
        prop_assert!(local.len() > 1);
        prop_assert_eq!(validate(p.launch, local, lim), Ok(()));
        for d in 0..user.rank() {
            prop_assert_eq!(p.launch.get(d) % local.get(d), 0);
        }
    }
    prop_assert_eq!(p.rounded_variant, !p.adjustments.is_empty());
    check_pieces(p)
}

/// The pieces tile the launch in order; only the rounded variant runs past the user range.
fn check_pieces(p: &RoundingPlan) -> std::result::Result<(), TestCaseError> {
    let s = p.user.rank() - 1;
    let mut next = 0;
    for piece in p.pieces() {
        prop_assert_eq!(piece.offset.get(s), next);
        for d in 0..s {
            prop_assert_eq!(piece.offset.get(d), 0);
            prop_assert_eq!(piece.global.get(d), p.launch.get(d));
        }
        if let Some(l) = p.local {
            for d in 0..p.user.rank() {
                prop_assert_eq!(piece.global.get(d) % l.get(d), 0);
            }
        }
        let end = next + piece.global.get(s);
        match piece.variant {
            Variant::Original => prop_assert!(!p.rounded_variant),
            Variant::Sized => prop_assert!(end <= p.user.get(s)),
            Variant::Rounded => prop_assert!(p.rounded_variant),
        }
        next = end;
    }
    prop_assert_eq!(next, p.launch.get(s));
    Ok(())
}

proptest! {
    #[test]
    fn default_mode_rounds_only_the_slowest_dimension(user in any_range(), lim in any_limits()) {
        let p = plan(user, &RoundingConfig::default(), &lim, true);
        check_common(user, &p, &lim)?;
        let s = user.rank() - 1;
        for d in 0..s {
            prop_assert_eq!(p.launch.get(d), user.get(d));
        }
        if p.rounded_variant {
            let w = rounding_group_size(&lim);
            prop_assert!(user.get(s) >= 1024);
            prop_assert!(p.launch.get(s) < user.get(s) + w);
            let capped = Limits { max_work_group_size: w, ..lim.clone() };
            let before = tuned(user, &capped).len();
            let after = p.local.unwrap().len();
            let pm = lim.preferred_multiple;
            prop_assert!(
                before < w && group_score(after, pm) > group_score(before, pm),
                "{} -> {}", before, after
            );
            // at least half of W, unless the slowest dimension's own limit caps it
            let reach = w.min(lim.max_work_item_sizes[s]);
            prop_assert!(after * 2 >= reach - pm.min(reach), "{} for W {}", after, w);
        }
    }

    #[test]
    fn explicit_params_follow_dpcpp(user in any_range(), lim in any_limits(),
                                    mf in 1usize..64, gf in 1usize..300, mr in 0usize..4096) {
        let params = RoundingParams { min_factor: mf, good_factor: gf, min_range: mr };
        let cfg = RoundingConfig { params: Some(params), ..RoundingConfig::default() };
        let p = plan(user, &cfg, &lim, true);
        check_common(user, &p, &lim)?;
        let s = user.rank() - 1;
        for a in &p.adjustments {
            prop_assert_eq!(a.dim, s);
            prop_assert_eq!(a.to % gf, 0);
            prop_assert!(a.to - a.from < gf);
            prop_assert!(a.from % mf != 0 && a.from >= mr);
        }
    }

    #[test]
    fn experimental_rounds_every_dimension(user in any_range(), lim in any_limits(),
                                           gf in prop::option::of(1usize..300)) {
        let params = gf.map(|g| RoundingParams { good_factor: g, ..RoundingParams::DPCPP_DEFAULT });
        let cfg = RoundingConfig { params, experimental: true, ..RoundingConfig::default() };
        let p = plan(user, &cfg, &lim, true);
        check_common(user, &p, &lim)?;
        let f = gf.unwrap_or([32, 16, 8][user.rank() - 1]);
        for d in 0..user.rank() {
            prop_assert_eq!(p.launch.get(d) % f, 0);
            prop_assert!(p.launch.get(d) - user.get(d) < f);
        }
    }

    #[test]
    fn disable_and_force(user in any_range(), lim in any_limits(), exp: bool) {
        let off = RoundingConfig { mode: RoundingMode::Disable, experimental: exp, ..RoundingConfig::default() };
        let p = plan(user, &off, &lim, true);
        prop_assert_eq!((p.launch, p.local, p.rounded_variant), (user, None, false));
        let force = RoundingConfig { mode: RoundingMode::Force, experimental: exp, ..RoundingConfig::default() };
        let p = plan(user, &force, &lim, true);
        prop_assert!(p.rounded_variant);
        if let Some(local) = p.local {
            prop_assert_eq!(validate(p.launch, local, &lim), Ok(()));
        }
    }
}

#[test]
fn rounded_plans_far_beyond_the_range_are_outside_the_slack() {
    let plan = |launch| RoundingPlan {
        user: Range::d1(7),
        launch: Range::d1(launch),
        local: None,
        rounded_variant: true,
        adjustments: Vec::new(),
    };
    assert!(within_slack(&plan(8)).is_ok());
    assert!(within_slack(&plan(7 + ROUNDING_SLACK)).is_ok());
    assert!(within_slack(&plan(8 + ROUNDING_SLACK)).is_err());
}

#[test]
fn tuning_knobs_warn_and_keep_the_default() {
    let get = |pairs: &'static [(&'static str, &'static str)]| {
        RoundingConfig::from_lookup(move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    };
    assert_eq!(get(&[]), RoundingConfig::default());
    let cfg = get(&[
        (crate::config::ROUNDING_PARAMS, "16:0:1024"),
        (crate::config::ROUNDING, "sometimes"),
    ]);
    assert_eq!(cfg, RoundingConfig::default());
    let cfg = get(&[
        (crate::config::ROUNDING_DISABLE, ""),
        (crate::config::ROUNDING, "force"),
        (crate::config::ROUNDING_TRACE, "0"),
    ]);
    assert_eq!((cfg.mode, cfg.trace), (RoundingMode::Disable, true));
}
