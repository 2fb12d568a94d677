//! A benchmark of tests/scaling_implicit.rs's real-world kernels: each on one device against
//! the root device with the cost model.

use super::cases::everyday_and_real;
use super::*;
use clgroups::scaling::SpreadPolicy;
use common::partitioned::spread_words;

/// A benchmark, not a check of speed (issue 36's target: every corpus kernel at least 0.95x
/// of one device): each case on device 0 alone (a queue of the root's context) and over the
/// root device with the cost model, each launch waited for, after 64 launches of warm-up
/// (the model explores, then keeps its decision); medians of `CLGROUPS_CORPUS_RUNS` (101)
/// launches in alternating rounds. Their outputs are checked by
/// `kernels_are_right_without_declarations`.
#[test]
#[ignore = "a benchmark: cargo test --release --test scaling_implicit -- --ignored --nocapture"]
fn corpus_against_one_device() {
    let Some(root) = partitioned("corpus_against_one_device") else {
        return;
    };
    let root = root.with_spread(SpreadPolicy::Model);
    let runs: usize = (std::env::var("CLGROUPS_CORPUS_RUNS").ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(101);
    let q = &root.queues()[0];
    let (one, all) = (
        Program::from_source(q, SOURCE).unwrap(),
        root.program(SOURCE).unwrap(),
    );
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let mut ratios = Vec::new();
    eprintln!("| kernel | one device (us) | root device (us) | one / root | root launch |");
    eprintln!("|---|---|---|---|---|");
    for c in everyday_and_real() {
        let (k1, kn) = (one.kernel(c.kernel).unwrap(), all.kernel(c.kernel).unwrap());
        let (b1, bn) = (one_device_buffers(q, &c), root_buffers(&root, &c));
        root.finish().unwrap();
        let run1 = || launch_one(&k1, &c, &b1).wait().unwrap();
        let runn = || {
            let ev = launch_root(&kn, &c, &bn).unwrap();
            ev.wait().unwrap();
            ev.spread().clone()
        };
        (0..64).for_each(|_| {
            run1();
            runn();
        });
        let (mut t1, mut tn, mut spread) = (Vec::new(), Vec::new(), None);
        for round in 0..10 {
            for _ in 0..runs.div_ceil(10) {
                let start = std::time::Instant::now();
                match round % 2 {
                    0 => {
                        run1();
                        t1.push(start.elapsed().as_secs_f64());
                    }
                    _ => {
                        spread = Some(runn());
                        tn.push(start.elapsed().as_secs_f64());
                    }
                }
            }
        }
        let (t1, tn) = (median(t1) * 1e6, median(tn) * 1e6);
        let how = spread.as_ref().map_or("not run", spread_words);
        eprintln!(
            "| {} | {t1:.1} | {tn:.1} | {:.2}x | {how} |",
            c.kernel,
            t1 / tn
        );
        ratios.push(t1 / tn);
    }
    let least = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let at_least = ratios.iter().filter(|&&r| r >= 0.95).count();
    eprintln!(
        "{at_least} of {} kernels at least 0.95x of one device; the least {least:.2}x",
        ratios.len()
    );
}
