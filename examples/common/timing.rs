//! Medians of host timings, shared by the bench examples.

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The median of `v` (sorted in place; the upper one of an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median of `runs` timings of `call` after 3 warm-up calls; `call` returns seconds.
#[allow(dead_code)] // not every example that shares this file times calls this way
pub fn median_of(runs: usize, mut call: impl FnMut() -> AnyResult<f64>) -> AnyResult<f64> {
    for _ in 0..3 {
        call()?;
    }
    let mut t = (0..runs).map(|_| call()).collect::<AnyResult<Vec<f64>>>()?;
    Ok(median(&mut t))
}
