//! Tests of [`super`]: a 1-D blur ping-pong simulated on host copies, one per device and
//! buffer, checked against one device after every launch.

use super::*;

/// The blur of `x` at `i` over `n` elements (ends kept), as `tests/cl/stencils.cl`.
fn blur_at(x: &[i64], i: usize, n: usize) -> i64 {
    match i {
        0 => x[0],
        i if i + 1 == n => x[i],
        i => (x[i - 1] + x[i] + x[i + 1]) / 3,
    }
}

/// What a device owning `own` widened by `w` groups of `g` reaches of `[input, output]`.
fn blur_reach(own: Span, w: usize, g: usize, n: usize) -> Vec<Reach> {
    let (lo, hi) = (own.0.saturating_sub(w * g), (own.1 + w * g).min(n));
    let outside = [(0, lo), (hi, n)].into_iter().filter(|(a, b)| a < b);
    vec![
        Reach {
            read: Some((lo.saturating_sub(1), (hi + 1).min(n))),
            ..Reach::default()
        },
        Reach {
            write: Some((lo, hi)),
            outside: outside.collect(),
            ..Reach::default()
        },
    ]
}

/// Simulates `steps` launches of the blur ping-pong on devices owning `owns` with depth `k`;
/// returns the launches that fetched.
fn simulate(n: usize, g: usize, owns: &[Span], k: usize, steps: usize) -> Vec<usize> {
    let init: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000).collect();
    let mut truth = [init.clone(), vec![0; n]];
    // Per device, per buffer: its copy (garbage outside what it holds), held, valid.
    let mut copy = vec![[vec![-1; n], vec![-1; n]]; owns.len()];
    let mut held = vec![[None, None]; owns.len()];
    let mut valid = vec![[Vec::new(), Vec::new()]; owns.len()];
    for (d, &(a, b)) in owns.iter().enumerate() {
        copy[d][0][a..b].copy_from_slice(&init[a..b]);
    }
    let mut fetched = Vec::new();
    for step in 0..steps {
        let (src, dst) = (step % 2, 1 - step % 2);
        let want: Vec<i64> = (0..n).map(|i| blur_at(&truth[src], i, n)).collect();
        for (d, &own) in owns.iter().enumerate() {
            let views: Vec<View> = [src, dst]
                .map(|b| View {
                    own,
                    len: n,
                    step: 4,
                    held: held[d][b],
                    valid: valid[d][b].clone(),
                })
                .to_vec();
            let p = plan(k, &views, |w| Some(blur_reach(own, w, g, n))).unwrap();
            for (j, b) in [src, dst].into_iter().enumerate() {
                held[d][b] = Some(p.keep[j].held);
                for &(a, e) in &p.keep[j].fetch {
                    copy[d][b][a..e].copy_from_slice(&truth[b][a..e]);
                    fetched.push(step);
                }
            }
            let r = blur_reach(own, p.widen, g, n);
            let (lo, hi) = r[1].write.unwrap();
            let input = copy[d][src].clone();
            for (i, out) in copy[d][dst].iter_mut().enumerate().take(hi).skip(lo) {
                *out = blur_at(&input, i, n);
            }
            valid[d][dst] = p.after[1].clone().unwrap();
            assert_eq!(p.after[0], None);
            for &f in &p.keep[0].fetch {
                mark_valid(&mut valid[d][src], f);
            }
        }
        truth[dst] = want;
        // Every device's own elements and current margins are one device's, bit for bit.
        for (d, &own) in owns.iter().enumerate() {
            for b in 0..2 {
                for (a, e) in current(&View {
                    own,
                    len: n,
                    step: 4,
                    held: held[d][b],
                    valid: valid[d][b].clone(),
                }) {
                    assert_eq!(copy[d][b][a..e], truth[b][a..e], "step {step} device {d}");
                }
            }
        }
    }
    fetched.dedup();
    fetched
}

#[test]
fn a_ping_pong_chain_exchanges_once_every_k_launches() {
    let owns = [(0, 200), (200, 400)];
    for k in 2..=4 {
        let every: Vec<usize> = (0..20).filter(|s| s % k == 0).collect();
        assert_eq!(simulate(400, 10, &owns, k, 20), every, "k = {k}");
    }
    // Three devices, groups of 8.
    let owns = [(0, 96), (96, 192), (192, 288)];
    assert_eq!(simulate(288, 8, &owns, 3, 12), [0, 3, 6, 9]);
}

#[test]
fn margins_wider_than_the_part_are_refused() {
    let own = (100, 120);
    let views = vec![
        View {
            own,
            len: 400,
            step: 1,
            held: None,
            valid: Vec::new(),
        };
        2
    ];
    // Widened by 3 groups of 10: 31 elements either side of a part of 20.
    let r = plan(4, &views, |w| Some(blur_reach(own, w, 10, 400)));
    assert!(r.is_err());
    assert!(plan(2, &views, |w| Some(blur_reach(own, w, 10, 400))).is_ok());
    assert_eq!(
        plan(1, &views, |_| None::<Vec<Reach>>),
        Err(NoDeep::DepthOne)
    );
    // Read and written.
    let both = |_| {
        Some(vec![
            Reach {
                read: Some((0, 9)),
                write: Some((0, 9)),
                outside: vec![]
            };
            2
        ])
    };
    assert!(plan(2, &views, both).is_err());
}

#[test]
fn a_margin_element_not_current_before_stays_stale() {
    // The output's old margin [95, 100) was never fetched and the exchange fetches it now;
    // outside writes cut it.
    let own = (100, 200);
    let v = View {
        own,
        len: 400,
        step: 1,
        held: Some((80, 220)),
        valid: vec![(90, 95)],
    };
    let rs = vec![Reach {
        read: None,
        write: Some((90, 210)),
        outside: vec![(0, 92), (205, 400)],
    }];
    assert_eq!(
        after(std::slice::from_ref(&v), &rs, &[]),
        [Some(vec![(92, 95)])]
    );
    assert_eq!(
        after(&[v], &rs, &[&[(95, 100), (200, 210)]]),
        [Some(vec![(92, 100), (200, 205)])]
    );
}
