//! Bad input never panics, hangs or overflows the stack anywhere in the source pipeline
//! (issue 33): every analysis and transform of [`pipeline::ANALYSES`] runs on token soup, on
//! every truncation of the real kernels of this repository and on the real kernels mutated
//! ([`mutate`]), and must return (a typed error or a fallback) within [`ANALYSIS_LIMIT`] per
//! analysis and [`CASE_LIMIT`] in all.
//!
//! How each case is bounded: the cases run on a worker thread with a 2 MiB stack (what Rust
//! gives a spawned thread; a stack overflow aborts the test binary); each analysis runs under
//! `catch_unwind` (a panic is recorded with its case number and the input is saved under
//! `target/fuzz-failures/`); each analysis and case is timed (the worker thread's CPU time)
//! against its limit, and a watchdog fails the run when one case has not returned after
//! [`HANG`].
//!
//! Two entry points:
//! * `sources_never_break_the_pipeline` (in CI): random cases from a fixed seed for a bounded
//!   time, and the extreme inputs (nesting 20,000 deep, lines of 100,000 characters).
//! * `million_cases` (ignored; run it in release): the extreme inputs 20,000 deep, every
//!   truncation of every corpus source, then random cases, `FUZZ_CASES` cases in all (default 1,000,000) from `FUZZ_SEED`
//!   (default 33), starting at case `FUZZ_FROM` (default 0) to replay one:
//!   `FUZZ_CASES=1000000 cargo test --release --lib transform::fuzz -- --ignored --nocapture`.

mod mutate;
mod pipeline;

pub(super) use mutate::SOUP;

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest one analysis may take on one input in a release build (debug builds are allowed
/// 20 times more).
const ANALYSIS_LIMIT: Duration = Duration::from_secs(1);
/// The longest one case (every analysis, some several times) may take in a release build.
const CASE_LIMIT: Duration = Duration::from_secs(5);
/// A case still running after this long is a hang.
const HANG: Duration = Duration::from_secs(60);
/// How deep the extreme inputs nest in the CI slice (a debug build; the million cases run
/// 20,000 deep).
const EXTREME_DEPTH: usize = 5_000;
/// The worker thread's stack.
const STACK: usize = 2 << 20;

/// `limit` in this build.
fn scaled(limit: Duration) -> Duration {
    match cfg!(debug_assertions) {
        true => limit * 20,
        false => limit,
    }
}

/// What a run found.
#[derive(Debug, Default)]
struct Report {
    cases: u64,
    failures: Vec<String>,
    slowest: (Duration, u64),
    /// Time spent in each analysis of [`pipeline::ANALYSES`].
    per_analysis: Vec<Duration>,
}

/// Runs the cases `range` (`input(case)` makes each), until `budget` is spent if one is given.
fn run<F>(input: F, range: Range<u64>, budget: Option<Duration>, progress: bool) -> Report
where
    F: Fn(u64) -> String + Send + Sync + 'static,
{
    let input = Arc::new(input);
    // The case in progress, when it started (microseconds since `t0`) and its analysis in
    // progress, for the watchdog.
    let current = Arc::new([range.start, 0, 0].map(AtomicU64::new));
    let t0 = Instant::now();
    let worker = {
        let (input, current) = (Arc::clone(&input), Arc::clone(&current));
        std::thread::Builder::new()
            .name("fuzz-worker".into())
            .stack_size(STACK)
            .spawn(move || work(&*input, range, budget, progress, t0, &current))
            .expect("a worker thread")
    };
    while !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(20));
        let [case, since, analysis] = [0, 1, 2].map(|i| current[i].load(Ordering::SeqCst));
        if t0.elapsed().saturating_sub(Duration::from_micros(since)) > HANG {
            let path = save(case, &input(case));
            let name = pipeline::ANALYSES
                .get(analysis as usize)
                .map_or("the scan", |a| a.0);
            panic!("case {case} hangs in {name} (over {HANG:?}); its input is {path}");
        }
    }
    worker.join().expect("the worker catches every panic")
}

fn work(
    input: &dyn Fn(u64) -> String,
    range: Range<u64>,
    budget: Option<Duration>,
    progress: bool,
    t0: Instant,
    current: &[AtomicU64; 3],
) -> Report {
    let analyses = pipeline::ANALYSES;
    let mut report = Report {
        per_analysis: vec![Duration::ZERO; analyses.len()],
        ..Report::default()
    };
    for case in range {
        if budget.is_some_and(|b| t0.elapsed() > b) {
            break;
        }
        let src = input(case);
        current[2].store(u64::MAX, Ordering::SeqCst);
        current[0].store(case, Ordering::SeqCst);
        current[1].store(t0.elapsed().as_micros() as u64, Ordering::SeqCst);
        let start = cpu_time();
        let mut failed = Vec::new();
        let caught = catch_unwind(AssertUnwindSafe(|| pipeline::Input::new(&src)));
        match caught {
            Ok(i) => {
                for (n, (name, analysis)) in analyses.iter().enumerate() {
                    current[2].store(n as u64, Ordering::SeqCst);
                    let at = cpu_time();
                    if let Err(e) = catch_unwind(AssertUnwindSafe(|| analysis(&i))) {
                        failed.push(format!("{name}: {}", message(&e)));
                    }
                    let took = cpu_time().saturating_sub(at);
                    if took > scaled(ANALYSIS_LIMIT) {
                        failed.push(format!("{name} took {took:?}"));
                    }
                    report.per_analysis[n] += took;
                }
            }
            Err(e) => failed.push(format!("the scan: {}", message(&e))),
        }
        let took = cpu_time().saturating_sub(start);
        if took > scaled(CASE_LIMIT) {
            failed.push(format!("took {took:?} (limit {:?})", scaled(CASE_LIMIT)));
        }
        if took > report.slowest.0 {
            report.slowest = (took, case);
        }
        if !failed.is_empty() && report.failures.len() < 50 {
            let path = save(case, &src);
            report
                .failures
                .push(format!("case {case} ({path}): {}", failed.join("; ")));
        }
        report.cases += 1;
        if progress && report.cases % 100_000 == 0 {
            eprintln!("{} cases in {:?}", report.cases, t0.elapsed());
        }
    }
    report
}

/// The CPU time this thread has used: the limits count it, not wall time, so a machine loaded
/// with other work does not fail them (the watchdog's [`HANG`] is wall time).
fn cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn message(e: &Box<dyn std::any::Any + Send>) -> String {
    match (e.downcast_ref::<&str>(), e.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic".into(),
    }
}

/// Saves a failing input for replay; returns its path.
fn save(case: u64, src: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let path = dir.join(format!("case-{case}.cl"));
    let saved = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, src));
    match saved {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

fn summary(r: &Report, took: Duration) -> String {
    let mut s = format!(
        "{} cases in {took:.1?}, slowest case {} ({:.1?} of CPU); CPU time per analysis:",
        r.cases, r.slowest.1, r.slowest.0
    );
    for ((name, _), t) in pipeline::ANALYSES.iter().zip(&r.per_analysis) {
        s.push_str(&format!(" {name} {t:.1?};"));
    }
    s
}

fn check(r: &Report, took: Duration) {
    eprintln!("{}", summary(r, took));
    assert!(
        r.failures.is_empty(),
        "{} failing case(s):\n{}",
        r.failures.len(),
        r.failures.join("\n")
    );
}

/// The CI slice: random cases for about 15 seconds (a debug build runs some hundreds), then
/// every extreme input.
#[test]
fn sources_never_break_the_pipeline() {
    let corpus = Arc::new(mutate::corpus());
    let t0 = Instant::now();
    let c = Arc::clone(&corpus);
    let random = move |case| mutate::random_case(&c, 33, case);
    let r = run(random, 0..u64::MAX, Some(Duration::from_secs(15)), false);
    check(&r, t0.elapsed());
    assert!(r.cases >= 10, "only {} cases ran", r.cases);
    let extremes = Arc::new(mutate::extremes(&corpus, EXTREME_DEPTH));
    let n = extremes.len() as u64;
    let t0 = Instant::now();
    let r = run(
        move |case| extremes[case as usize].clone(),
        0..n,
        None,
        false,
    );
    check(&r, t0.elapsed());
}

/// The run outside CI: the extreme inputs 20,000 deep, every truncation of the corpus, then
/// random cases (see the module docs).
#[test]
#[ignore = "a million cases: run in release (see the module docs)"]
fn million_cases() {
    let number = |v: Result<String, std::env::VarError>, default: u64| {
        v.map_or(default, |v| v.parse().expect("a number"))
    };
    let cases = number(std::env::var("FUZZ_CASES"), 1_000_000);
    let seed = number(std::env::var("FUZZ_SEED"), 33);
    let from = number(std::env::var("FUZZ_FROM"), 0);
    let corpus = Arc::new(mutate::corpus());
    let cuts = Arc::new(mutate::truncations(&corpus, 1));
    eprintln!(
        "corpus: {} sources, {} bytes, {} truncations",
        corpus.len(),
        corpus.iter().map(String::len).sum::<usize>(),
        cuts.len()
    );
    let extremes = mutate::extremes(&corpus, 20_000);
    let input = move |case: u64| {
        let cut = (case as usize).checked_sub(extremes.len());
        match (extremes.get(case as usize), cut.and_then(|c| cuts.get(c))) {
            (Some(text), _) => text.clone(),
            (None, Some(&(i, at))) => corpus[i][..at].to_string(),
            (None, None) => mutate::random_case(&corpus, seed, case),
        }
    };
    let t0 = Instant::now();
    let r = run(input, from..from + cases, None, true);
    check(&r, t0.elapsed());
}

/// Replays the saved input `FUZZ_REPLAY` (a path), failing as its case failed.
#[test]
#[ignore = "replays one saved input (see the module docs)"]
fn replay() {
    let path = std::env::var("FUZZ_REPLAY").expect("FUZZ_REPLAY: the input's path");
    let src = std::fs::read_to_string(&path).expect("a readable input");
    let t0 = Instant::now();
    check(&run(move |_| src.clone(), 0..1, None, false), t0.elapsed());
}
