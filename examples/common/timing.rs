//! Medians of host timings, shared by the bench examples (each uses part of it).
#![allow(dead_code)]

use std::time::{Duration, Instant};

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The median of `v` (sorted in place; the upper one of an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median of `runs` timings of `call` after 3 warm-up calls; `call` returns seconds.
pub fn median_of(runs: usize, mut call: impl FnMut() -> AnyResult<f64>) -> AnyResult<f64> {
    for _ in 0..3 {
        call()?;
    }
    let mut t = (0..runs).map(|_| call()).collect::<AnyResult<Vec<f64>>>()?;
    Ok(median(&mut t))
}

/// Median host wall time of each of `cases` (timed by `run`) over `runs` rounds after two
/// warm-up rounds; each round runs every case once, in turn, so that a busy machine slows all
/// of them alike.
pub fn interleaved<C, E>(
    runs: usize,
    cases: &mut [C],
    mut run: impl FnMut(&mut C) -> Result<(), E>,
) -> Result<Vec<Duration>, E> {
    let mut walls = vec![Vec::with_capacity(runs); cases.len()];
    for round in 0..runs + 2 {
        for (i, case) in cases.iter_mut().enumerate() {
            let t = Instant::now();
            run(case)?;
            if round >= 2 {
                walls[i].push(t.elapsed());
            }
        }
    }
    Ok(medians(walls))
}

/// The median of each list of wall times (the upper one of an even count).
pub fn medians(walls: Vec<Vec<Duration>>) -> Vec<Duration> {
    walls
        .into_iter()
        .map(|mut w| {
            w.sort();
            w[w.len() / 2]
        })
        .collect()
}
