//! Implicit scaling measured on nine workloads, one device against the root device of every
//! device of `RootDevice::from_env()`: SAXPY, a reduce, a 2-D heat stencil and a 1-D 3-point
//! blur over `--iters` (100) iterations, Black-Scholes, mandelbrot, a tiled GEMM and an n-body
//! step. Kernels are written as for one device and no buffer declares an `Access` (but a second
//! heat row declares `Access::Stencil`: only halo rows move between devices): each root launch
//! is split (by the own-id proof, or by the kernel's footprint with the halos it reads
//! fetched), merged or sent to one device, as the cost model finds faster (printed per workload
//! with the bytes its last launch moved between devices; `RUST_LOG=info` logs why). A last row
//! runs the heat stencil as a user would write it by hand for two devices (one queue and one
//! grid per device, the halo rows copied between them after every step), against the same
//! one-device run. Times are host wall medians of `--runs` interleaved rounds after warm-up
//! rounds of 16 root launches at least (`table::WARM`: the cost model's sampling is not
//! timed); every output of the root device (and of the hand-written version) is checked
//! against the one-device output first.
//!
//! `--sweep S` runs every workload at S sizes, each a quarter (2-D: half a side) of the next,
//! up to the sizes given, and prints a speed-up table; `--plot FILE.svg` draws speed-up against
//! size for every workload (docs/scaling_speedup.svg). `--table` prints one table of six
//! workloads from 2^24 down to 2^14 elements (2048^2 to 256^2) within `--budget` seconds of
//! timed rounds, with the decision per row (`table.rs`).
//!
//! ```text
//! POCL_DEVICES="pthread pthread" CLGROUPS_PLACEMENT=partitioned \
//!     cargo run --release --example scaling_bench
//! CLGROUPS_DEVICES=0:0,0:1 cargo run --release --example scaling_bench -- --n 67108864
//! POCL_DEVICES="pthread pthread" CLGROUPS_PLACEMENT=partitioned cargo run --release \
//!     --example scaling_bench -- --sweep 4 --runs 5 --iters 20 --plot docs/scaling_speedup.svg
//! POCL_DEVICES="cpu cpu" CLGROUPS_PLACEMENT=partitioned scaling_bench --table
//! ```

#[path = "../common/timing.rs"]
mod timing;

mod by_hand;
mod dense;
mod plot;
mod table;
mod workloads;

use clap::Parser;
use clgroups::device::DeviceKind;
use clgroups::plan::cost::Priced;
use clgroups::scaling::{Access, MultiEvent, RootDevice, RootKernel, Spread};
use clgroups::{Kernel, Program, Queue};
use std::cell::{Cell, RefCell};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    about = "One device against a root device: SAXPY, reduce, heat, blur, Black-Scholes, \
             mandelbrot, GEMM, n-body, and heat written by hand for two devices"
)]
struct Args {
    /// Elements of SAXPY, the reduce, the blur and Black-Scholes (default 2^24 on GPUs, 2^20
    /// otherwise).
    #[arg(long)]
    n: Option<usize>,
    /// Side of the square heat grid and mandelbrot image (default 2048 on GPUs, 512 otherwise).
    #[arg(long)]
    side: Option<usize>,
    /// Side of GEMM's square matrices (default 4096 on GPUs, 256 otherwise; a multiple of 16).
    #[arg(long)]
    gemm: Option<usize>,
    /// Bodies of the n-body step (default 65536 on GPUs, 2048 otherwise; a multiple of 64).
    #[arg(long)]
    bodies: Option<usize>,
    /// Heat and blur iterations per run (default 100; 20 with `--table`).
    #[arg(long)]
    iters: Option<usize>,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 11)]
    runs: usize,
    /// Only these workloads (comma-separated: saxpy, reduce, heat, stencil, blur,
    /// black-scholes, mandelbrot, gemm, nbody, heat-by-hand); default all.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run every workload at this many sizes, each 4x the elements of the one before, up to
    /// the sizes given.
    #[arg(long, default_value_t = 1)]
    sweep: u32,
    /// Draw speed-up against size into this SVG file.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
    /// One table of SAXPY, the reduce, heat, the blur, Black-Scholes and mandelbrot from 2^24
    /// down to 2^14 elements (2048^2 down to 256^2), each workload in a process of its own.
    #[arg(long)]
    table: bool,
    /// Seconds of timed rounds over the whole `--table` (each row its share).
    #[arg(long, default_value_t = 80.0)]
    budget: f64,
    /// Internal (`--table`): run `--only`'s workload at the table's sizes, print its rows.
    #[arg(long, hide = true)]
    child: bool,
    /// Internal (`--table`): seconds of timed rounds per row.
    #[arg(long, hide = true)]
    row_budget: Option<f64>,
}

const SOURCE: &str = include_str!("kernels.cl");

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Run<'a> = Box<dyn FnMut() -> Res<()> + 'a>;
/// A workload's median times (one device, then the root device) and its decision when the
/// workload names it itself (else the last root launch's).
type Row = (Vec<Duration>, String);

fn values(n: usize, seed: u32, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            lo + (hi - lo) * (s % 10_000) as f32 / 10_000.0
        })
        .collect()
}

/// Errors unless `got` and `want` agree within a relative 1e-4 everywhere.
fn agree(what: &str, got: &[f32], want: &[f32]) -> Res<()> {
    let bad = (0..want.len())
        .find(|&i| (got[i] - want[i]).abs() > 1e-4 * want[i].abs().max(1.0) || got[i].is_nan());
    match bad {
        Some(i) => Err(format!("{what}: [{i}] = {}, one device gives {}", got[i], want[i]).into()),
        None => Ok(()),
    }
}

/// The last root launch, kept as it came (noting it is part of every timed root launch, so
/// it is formatted only when printed), or a row's own account of its steps.
#[derive(Default)]
enum Last {
    #[default]
    None,
    Launch {
        spread: Spread,
        priced: Option<Box<Priced>>,
    },
    /// Heat written by hand: no clgroups launch, `moved` halo bytes per step.
    ByHand { devices: usize, moved: u64 },
}

impl Last {
    fn spread(&self) -> String {
        match self {
            Last::None => String::new(),
            Last::Launch { spread, .. } => format!("{spread:?}"),
            Last::ByHand { devices, .. } => format!("by hand over {devices} devices"),
        }
    }

    /// The cost model's figures.
    fn priced(&self) -> String {
        match self {
            Last::Launch {
                priced: Some(p), ..
            } => p.to_string(),
            Last::ByHand { .. } => "not priced (no clgroups launch)".into(),
            _ => "not priced".into(),
        }
    }

    /// The choice and why (or the spread where not priced).
    fn choice(&self) -> String {
        match self {
            Last::Launch {
                priced: Some(p), ..
            } => format!("{} ({})", p.choice, p.why),
            _ => self.spread(),
        }
    }

    /// The bytes the launch moved between devices.
    fn moved(&self) -> u64 {
        match self {
            Last::Launch {
                spread: Spread::Fetched { between, .. },
                ..
            } => *between,
            Last::Launch {
                spread: Spread::Resident { moved, .. },
                ..
            } => *moved,
            Last::ByHand { moved, .. } => *moved,
            _ => 0,
        }
    }
}

struct Bench<'a> {
    q: &'a Queue,
    root: &'a RootDevice,
    one: Program,
    multi: clgroups::scaling::RootProgram,
    last: RefCell<Last>,
    /// Whether the cost model was measuring (or re-sampling) an option at the last launch.
    measuring: Cell<bool>,
    /// Seconds of timed rounds per row, where bounded (`Bench::rounds`).
    budget: Option<Duration>,
}

impl Bench<'_> {
    /// Records `ev` as the last root launch.
    fn note(&self, ev: &MultiEvent) {
        self.measuring.set(ev.priced().is_some_and(|p| p.measure));
        *self.last.borrow_mut() = Last::Launch {
            spread: ev.spread().clone(),
            priced: ev.priced().cloned().map(Box::new),
        };
    }

    /// The last root launch, its figures printed.
    fn decision(&self, name: &str) -> Last {
        let last = self.last.take();
        println!(
            "{name}: last root launch {}; cost model: {}",
            last.spread(),
            last.priced()
        );
        last
    }

    fn k1(&self, name: &str) -> Res<Kernel> {
        Ok(self.one.kernel(name)?)
    }
    fn kn(&self, name: &str) -> Res<RootKernel> {
        Ok(self.multi.kernel(name)?)
    }
}

/// The sizes of one step of a sweep.
#[derive(Clone, Copy)]
struct Sizes {
    n: usize,
    side: usize,
    gemm: usize,
    bodies: usize,
}

impl Sizes {
    /// The sizes `down` steps below `self`: a quarter of the elements per step.
    fn below(self, down: u32) -> Sizes {
        Sizes {
            n: (self.n >> (2 * down)).max(1),
            side: (self.side >> down).max(2),
            gemm: (self.gemm >> down).max(16) / 16 * 16,
            bodies: (self.bodies >> (2 * down)).max(64) / 64 * 64,
        }
    }
}

/// One measured row: workload, its size in elements, times, decision, bytes moved per launch.
struct Measured {
    workload: &'static str,
    name: String,
    elements: usize,
    times: Vec<Duration>,
    spread: String,
    moved: u64,
}

fn main() -> Res<()> {
    env_logger::init();
    let args = Args::parse();
    let iters = args.iters.unwrap_or(if args.table { 20 } else { 100 });
    if args.table && !args.child {
        return table::parent(&args, iters);
    }
    let root = RootDevice::from_env()?;
    let gpu = root.devices()[0].kind() == DeviceKind::Gpu;
    let top = Sizes {
        n: args.n.unwrap_or(if gpu { 1 << 24 } else { 1 << 20 }),
        side: args.side.unwrap_or(if gpu { 2048 } else { 512 }),
        gemm: args.gemm.unwrap_or(if gpu { 4096 } else { 256 }),
        bodies: args.bodies.unwrap_or(if gpu { 65536 } else { 2048 }),
    };
    if top.gemm % 16 != 0 || top.bodies % 64 != 0 || args.sweep == 0 {
        return Err("--gemm must be a multiple of 16, --bodies of 64, --sweep at least 1".into());
    }
    for (i, d) in root.devices().iter().enumerate() {
        println!("device {i}: {d}");
    }
    println!(
        "{root:?}, spread {} (CLGROUPS_SPREAD); medians of {} rounds",
        root.spread(),
        args.runs
    );
    // The one-device runs share the root device's context: NVIDIA time-slices a GPU between
    // contexts, and a switch at every interleaved run added ~120 us to both sides.
    let q = Queue::on(root.context(), &root.devices()[0])?;
    let b = Bench {
        q: &q,
        root: &root,
        one: Program::from_source(&q, SOURCE)?,
        multi: root.program(SOURCE)?,
        last: RefCell::default(),
        measuring: Cell::new(false),
        budget: (args.row_budget).map(|s| Duration::from_secs_f64(s / table::ALLOCATIONS as f64)),
    };
    if args.child {
        return table::child(&b, &args, iters);
    }
    let names = workload_names();
    if let Some(bad) = (args.only.iter()).find(|o| !names.contains(&o.as_str())) {
        return Err(format!("--only: no workload `{bad}` (of {})", names.join(", ")).into());
    }
    let mut rows = Vec::new();
    for down in (0..args.sweep).rev() {
        rows.extend(measure(&b, &args, iters, top.below(down))?);
    }
    println!(
        "\n| workload | one device (ms) | {} devices (ms) | speedup | bytes moved per launch | root launch |",
        root.len()
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "| {} | {:.3} | {:.3} | {:.2}x | {} | {} |",
            r.name,
            ms(r.times[0]),
            ms(r.times[1]),
            speedup(r),
            r.moved,
            r.spread
        );
    }
    if let Some(path) = &args.plot {
        let title = format!("{} devices against one: {}", root.len(), root.devices()[0]);
        plot::speedups(path, &title, &rows)?;
        println!("plot: {}", path.display());
    }
    Ok(())
}

fn speedup(r: &Measured) -> f64 {
    r.times[0].as_secs_f64() / r.times[1].as_secs_f64()
}

fn workload_names() -> [&'static str; 10] {
    [
        "saxpy",
        "reduce",
        "heat",
        "stencil",
        "blur",
        "black-scholes",
        "mandelbrot",
        "gemm",
        "nbody",
        "heat-by-hand",
    ]
}

/// Every selected workload at `s`.
fn measure(b: &Bench, args: &Args, iters: usize, s: Sizes) -> Res<Vec<Measured>> {
    let runs = args.runs;
    let heat_name = format!("heat {0}x{0} x {iters}", s.side);
    let mut rows = Vec::new();
    for workload in workload_names() {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == workload) {
            continue;
        }
        let (name, elements, (times, own)) = match workload {
            "saxpy" => (
                format!("saxpy n={}", s.n),
                s.n,
                workloads::saxpy(b, s.n, runs)?,
            ),
            "reduce" => (
                format!("reduce n={}", s.n),
                s.n,
                workloads::reduce(b, s.n, runs)?,
            ),
            "heat" => (
                heat_name.clone(),
                s.side * s.side,
                workloads::heat(b, s.side, iters, runs, Access::Auto)?,
            ),
            "stencil" => (
                format!("{heat_name}, Access::Stencil({})", s.side),
                s.side * s.side,
                workloads::heat(b, s.side, iters, runs, Access::Stencil(s.side))?,
            ),
            "blur" => (
                format!("blur n={} x {iters}", s.n),
                s.n,
                workloads::blur(b, s.n, iters, runs)?,
            ),
            "black-scholes" => (
                format!("black-scholes n={}", s.n),
                s.n,
                workloads::black_scholes(b, s.n, runs)?,
            ),
            "mandelbrot" => (
                format!("mandelbrot {0}x{0}", s.side),
                s.side * s.side,
                workloads::mandelbrot(b, s.side, runs)?,
            ),
            "gemm" => (
                format!("gemm {0}x{0}", s.gemm),
                s.gemm * s.gemm,
                dense::gemm(b, s.gemm, runs)?,
            ),
            "nbody" => (
                format!("n-body {} bodies", s.bodies),
                s.bodies,
                dense::nbody(b, s.bodies, runs)?,
            ),
            _ => (
                format!("{heat_name}, by hand"),
                s.side * s.side,
                by_hand::heat(b, s.side, iters, runs)?,
            ),
        };
        let last = b.decision(&name);
        rows.push(Measured {
            workload,
            name,
            elements,
            times,
            spread: if own.is_empty() { last.spread() } else { own },
            moved: last.moved(),
        });
    }
    Ok(rows)
}
