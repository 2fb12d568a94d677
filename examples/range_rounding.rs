//! `range_rounding`: what range rounding does, and what it buys.
//!
//! * `--plan X[,Y[,Z]]` prints, without running anything, the range a plain-range launch of a
//!   vector addition would enqueue on the default device (`rounded: ...`, OpenCL order) and the
//!   local size it would use (`local: ...` or `local: NULL`). `--params`, `--exp` and `--mode`
//!   override the `CLGROUPS_*` environment variables.
//! * Without `--plan`, it times `c = a + b` (floats) at a power of two `N`, at the largest prime
//!   `p < N` with a NULL local size, and at `p` with rounding, and prints the throughputs
//!   (12 bytes per element, median of 21 profiled runs) and their ratios.
//!
//! ```text
//! cargo run --release --example range_rounding
//! cargo run --example range_rounding -- --plan 7,79,43 --params 1:256:1 --exp
//! ```

use clap::Parser;
use clgroups::device::DeviceKind;
use clgroups::launch::{Event, LocalSize};
use clgroups::plan::rounding::{self, RoundingConfig, RoundingMode, RoundingParams};
use clgroups::{Buffer, Kernel, Program, Queue, Range};
use std::time::Duration;

/// A failed run: an error of clgroups, or a wrong result.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const VADD: &str = "kernel void vadd(global const float *a, global const float *b, \
                    global float *c) {\n    size_t i = get_global_id(0);\n    c[i] = a[i] + b[i];\n}\n";

/// Timed runs per case (the median is reported).
const RUNS: usize = 21;
/// Untimed runs before them.
const WARM_UP: usize = 3;
/// Marks output elements no launch should write.
const POISON: f32 = -12345.5;

#[derive(Parser)]
#[command(about = "Range rounding: print a plan, or time vector addition with and without it")]
struct Args {
    /// Print the rounded range and local size for this user range (X[,Y[,Z]], OpenCL order).
    #[arg(long)]
    plan: Option<Range>,
    /// DPC++ parameters MinFactor:GoodFactor:MinRange (overrides the environment).
    #[arg(long)]
    params: Option<RoundingParams>,
    /// Round every dimension (overrides the environment).
    #[arg(long)]
    exp: bool,
    /// on, force or disable (overrides the environment).
    #[arg(long)]
    mode: Option<RoundingMode>,
    /// The power-of-two size to time (default: 2^24 on CPUs, 2^26 elsewhere).
    #[arg(long)]
    n: Option<usize>,
}

fn main() {
    env_logger::init();
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("range_rounding: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<()> {
    let q = Queue::with_profiling(&clgroups::default_device()?)?;
    let mut cfg = RoundingConfig::from_env();
    if let Some(p) = args.params {
        cfg.params = Some(p);
    }
    if let Some(m) = args.mode {
        cfg.mode = m;
    }
    cfg.experimental |= args.exp;
    let k = Program::builder(VADD)
        .rounding(cfg)
        .build(&q)?
        .kernel("vadd")?;
    match args.plan {
        Some(user) => {
            print_plan(&k, user, &cfg);
            Ok(())
        }
        None => bench(&q, &k, args.n),
    }
}

fn print_plan(k: &Kernel, user: Range, cfg: &RoundingConfig) {
    let plan = rounding::plan(user, cfg, k.limits(), k.rounding_support().is_ok());
    println!("rounded: {}", plan.launch);
    println!("local: {}", local_text(plan.local));
}

fn local_text(local: Option<Range>) -> String {
    local.map_or("NULL".to_string(), |l| l.to_string())
}

/// One timed case: a name, the user size, and how it launches.
struct Case {
    name: &'static str,
    n: usize,
    rounded: bool,
}

fn bench(q: &Queue, k: &Kernel, n: Option<usize>) -> Result<()> {
    let kind = q.device().kind();
    let big = n.unwrap_or(if kind == DeviceKind::Cpu {
        1 << 24
    } else {
        1 << 26
    });
    let p = prime_below(big).ok_or_else(|| format!("no prime below {big}"))?;
    println!("device: {} ({kind:?})", q.device());
    let a: Vec<f32> = (0..big).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..big).map(|i| (i % 7) as f32 * 0.25).collect();
    let mut bufs = Vectors {
        a: Buffer::from_slice(q, &a)?,
        b: Buffer::from_slice(q, &b)?,
        c: Buffer::new(&q, big)?,
    };
    let cases = [
        Case {
            name: "pow2",
            n: big,
            rounded: true,
        },
        Case {
            name: "null",
            n: p,
            rounded: false,
        },
        Case {
            name: "rounded",
            n: p,
            rounded: true,
        },
    ];
    let mut rates = Vec::new();
    for case in &cases {
        bufs.c.fill(q, POISON)?;
        launch(k, &bufs, case)?.wait()?;
        verify(&bufs.c.read(q)?, &a, &b, case.n)?;
        let t = median_time(k, &bufs, case)?;
        let gbs = 12.0 * case.n as f64 / t.as_nanos() as f64;
        let local = if case.rounded {
            let plan = rounding::plan(
                Range::d1(case.n),
                k.program().rounding(),
                k.limits(),
                k.rounding_support().is_ok(),
            );
            format!("launch {} local {}", plan.launch, local_text(plan.local))
        } else {
            "local NULL".to_string()
        };
        println!(
            "{:<8} n={:<10} {local}: {gbs:.2} GB/s (median {:.3} ms of {RUNS})",
            case.name,
            case.n,
            t.as_secs_f64() * 1e3
        );
        rates.push(gbs);
    }
    println!("ratio rounded/pow2: {:.3}", rates[2] / rates[0]);
    println!("ratio null/pow2: {:.3}", rates[1] / rates[0]);
    Ok(())
}

struct Vectors {
    a: Buffer<f32>,
    b: Buffer<f32>,
    c: Buffer<f32>,
}

/// Enqueues one run of `case`.
fn launch(k: &Kernel, v: &Vectors, case: &Case) -> Result<Event> {
    if case.n > v.c.len() {
        return Err(format!("{} elements of {}", case.n, v.c.len()).into());
    }
    let l = k.launch().arg(&v.a).arg(&v.b).arg(&v.c);
    // SAFETY: `vadd` touches element get_global_id(0) of each buffer, below `case.n`, which
    // is at most their common length.
    let event = unsafe {
        if case.rounded {
            l.range(case.n)
        } else {
            l.nd_range(case.n, LocalSize::Auto)
        }
    }?;
    Ok(event)
}

/// The median device time of [`RUNS`] runs after [`WARM_UP`] untimed ones.
fn median_time(k: &Kernel, v: &Vectors, case: &Case) -> Result<Duration> {
    for _ in 0..WARM_UP {
        launch(k, v, case)?.wait()?;
    }
    let mut times = (0..RUNS)
        .map(|_| Ok(launch(k, v, case)?.duration()?))
        .collect::<Result<Vec<_>>>()?;
    times.sort_unstable();
    Ok(times[RUNS / 2])
}

/// Every element below `n` is `a + b`; every one from `n` on is still [`POISON`].
fn verify(c: &[f32], a: &[f32], b: &[f32], n: usize) -> Result<()> {
    let bad = c.iter().enumerate().find(|&(i, &x)| {
        let want = if i < n { a[i] + b[i] } else { POISON };
        x != want
    });
    match bad {
        None => Ok(()),
        Some((i, x)) => Err(format!("wrong result at {i} of {} (n = {n}): {x}", c.len()).into()),
    }
}

/// The largest prime below `n`, if any.
fn prime_below(n: usize) -> Option<usize> {
    (2..n).rev().find(|&m| is_prime(m))
}

fn is_prime(m: usize) -> bool {
    m >= 2 && (2..).take_while(|d| d * d <= m).all(|d| m % d != 0)
}
