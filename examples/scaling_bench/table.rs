//! `--table`: one device against the root device at small and large sizes, within a time
//! budget, as one table with the decision per row. SAXPY, the reduce, heat, the blur,
//! Black-Scholes and mandelbrot at 2^24, 2^22, ..., 2^14 elements (2-D: 2048^2 down to 256^2),
//! largest first (a driver that specialises kernels by grid size, as PoCL does, then builds
//! each variant once). Each workload runs in a process of its own (this executable again,
//! `--child`): a driver abort costs its rows (tried twice), not the table. Every row times
//! interleaved rounds (one device, then the root device) after warm-up rounds of at least
//! [`WARM`] root launches (the cost model's sampling: the steady state is timed), as many
//! rounds as fit in the row's share of `--budget` (between 3 and `--runs`), and reports
//! medians.

use crate::{workloads, Args, Bench, Res, Row, Run};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Root launches run before timing at most (the model needs 11 to sample both options of a
/// shape of cheap launches, 7 of others).
pub const WARM: usize = 16;
/// Runs of each row, each on fresh buffers; per path the best median is reported. On the GPU
/// machine's virtual machine the same kernel on the same buffers' sizes takes 1x to 3x the
/// time, by which memory its buffers were given (docs/scaling.md): the best of three
/// allocations compares the two paths, not their buffers' luck.
pub const ALLOCATIONS: usize = 3;
/// Timed rounds per row at most (fewer where they take more than the row's budget).
const RUNS: usize = 101;

/// The table's workloads, each with its sizes (elements, or the side of a square grid),
/// largest first.
fn plan() -> Vec<(&'static str, Vec<usize>)> {
    let n: Vec<usize> = (0..6).map(|i| 1usize << (24 - 2 * i)).collect();
    let side: Vec<usize> = (0..4).map(|i| 2048usize >> i).collect();
    vec![
        ("saxpy", n.clone()),
        ("reduce", n.clone()),
        ("heat", side.clone()),
        ("blur", n.clone()),
        ("black-scholes", n),
        ("mandelbrot", side),
    ]
}

impl Bench<'_> {
    /// Median times of `cases` (one device, then the root device) over interleaved rounds of
    /// `per_round` root launches each: warm-up rounds (two at least) until the cost model no
    /// longer measures (where the root launches say: [`Bench::note`]) or [`WARM`] launches,
    /// then `runs` rounds, or as many as fit in the row's budget (3 at least).
    pub fn rounds(&self, runs: usize, per_round: usize, cases: &mut [Run]) -> Res<Vec<Duration>> {
        let warm = WARM.div_ceil(per_round.max(1)).max(2);
        let mut round = Duration::ZERO;
        self.measuring.set(true);
        for i in 0..warm {
            let t = Instant::now();
            cases.iter_mut().try_for_each(|run| run())?;
            round = t.elapsed();
            if i >= 1 && !self.measuring.get() {
                break;
            }
        }
        let runs = match self.budget {
            Some(b) => ((b.as_secs_f64() / round.as_secs_f64().max(1e-9)) as usize).clamp(3, runs),
            None => runs,
        };
        let mut walls = vec![Vec::with_capacity(runs); cases.len()];
        for _ in 0..runs {
            for (i, run) in cases.iter_mut().enumerate() {
                let t = Instant::now();
                run()?;
                walls[i].push(t.elapsed());
            }
        }
        Ok(crate::timing::medians(walls))
    }
}

/// The rows of `--only`'s workload (one) at the table's sizes, as lines `ROW\t...` on stdout:
/// per path, the best median of [`ALLOCATIONS`] runs of the workload on fresh buffers.
pub fn child(b: &Bench, args: &Args, iters: usize) -> Res<()> {
    for (workload, sizes) in plan() {
        if !args.only.iter().any(|o| o == workload) {
            continue;
        }
        for size in sizes {
            let mut best: Option<(String, Vec<Duration>, String)> = None;
            for _ in 0..ALLOCATIONS {
                let (name, (times, own)) = row(b, workload, size, args.runs, iters)?;
                let last = b.last.take();
                let decision = if own.is_empty() { last.choice() } else { own };
                // The decision reported is that of the root's best run.
                best = Some(match best {
                    Some((_, was, kept)) => {
                        let min = was.iter().zip(&times).map(|(a, b)| *a.min(b)).collect();
                        (name, min, if times[1] < was[1] { decision } else { kept })
                    }
                    None => (name, times, decision),
                });
            }
            let (name, times, decision) = best.expect("ALLOCATIONS > 0");
            println!(
                "ROW\t{workload}\t{name}\t{}\t{}\t{decision}",
                times[0].as_secs_f64(),
                times[1].as_secs_f64()
            );
            std::io::stdout().flush()?;
        }
    }
    Ok(())
}

/// One run of `workload` at `size` on buffers of its own: the row's name and its times.
fn row(b: &Bench, workload: &str, size: usize, runs: usize, iters: usize) -> Res<(String, Row)> {
    Ok(match workload {
        "saxpy" => (
            format!("2^{}", size.ilog2()),
            workloads::saxpy(b, size, runs)?,
        ),
        "reduce" => (
            format!("2^{}", size.ilog2()),
            workloads::reduce(b, size, runs)?,
        ),
        "heat" => (
            format!("{size}^2 x {iters}"),
            workloads::heat(b, size, iters, runs, clgroups::scaling::Access::Auto)?,
        ),
        "blur" => (
            format!("2^{} x {iters}", size.ilog2()),
            workloads::blur(b, size, iters, runs)?,
        ),
        "black-scholes" => (
            format!("2^{}", size.ilog2()),
            workloads::black_scholes(b, size, runs)?,
        ),
        _ => (format!("{size}^2"), workloads::mandelbrot(b, size, runs)?),
    })
}

/// Runs every workload of the table in a child process and prints the table.
pub fn parent(args: &Args, iters: usize) -> Res<()> {
    let exe = std::env::current_exe()?;
    let rows: usize = plan().iter().map(|(_, s)| s.len()).sum();
    let per_row = args.budget / rows as f64;
    let start = Instant::now();
    let mut table: Vec<String> = Vec::new();
    for (workload, sizes) in plan() {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == workload) {
            continue;
        }
        let mut got = Vec::new();
        let mut failed = String::new();
        for attempt in 0..2 {
            let out = Command::new(&exe)
                .args(["--child", "--only", workload, "--iters", &iters.to_string()])
                .args(["--runs", &args.runs.max(RUNS).to_string()])
                .args(["--row-budget", &per_row.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .output()?;
            let text = String::from_utf8_lossy(&out.stdout);
            got = text
                .lines()
                .filter_map(|l| l.strip_prefix("ROW\t"))
                .map(String::from)
                .collect();
            if out.status.success() {
                failed.clear();
                break;
            }
            failed = format!("{} (attempt {})", out.status, attempt + 1);
            eprintln!("{workload}: child {failed}; {} rows", got.len());
        }
        for (i, size) in sizes.iter().enumerate() {
            table.push(match got.get(i) {
                Some(row) => row.clone(),
                None => format!("{workload}\t{size}\t\t\tnot measured: {failed}"),
            });
        }
    }
    println!("\n| workload | size | one device (ms) | root device (ms) | one / root | decision |");
    println!("|---|---|---|---|---|---|");
    for row in &table {
        let f: Vec<&str> = row.split('\t').collect();
        let secs = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok());
        let (one, two) = (secs(2), secs(3));
        let ms = |t: Option<f64>| t.map_or("-".into(), |t| format!("{:.3}", t * 1e3));
        let ratio = match (one, two) {
            (Some(o), Some(t)) => format!("{:.2}x", o / t),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {ratio} | {} |",
            f[0],
            f.get(1).unwrap_or(&""),
            ms(one),
            ms(two),
            f.get(4).unwrap_or(&"")
        );
    }
    println!("total {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
