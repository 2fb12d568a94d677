//! Where the look-back scan loses against a device copy (issue 25): every case against
//! `clEnqueueCopyBuffer` in the same run, on one profiling queue of the default device (or
//! `CLGROUPS_DEVICE`), at every power of two from 2^K to 2^M. Each case: the median host wall of
//! enqueue + wait and the median device time (profiling) over `--runs` calls after 3 warm-up
//! calls, its output poisoned before every call; ratios are copy time / case time (1: as fast
//! as the copy). Cases:
//!
//! * `copy-*`: OpenCL C copy kernels (float): scalar, `float4`, `vload4`, K `float4`s per
//!   work-item in one tile per work-group, grid-stride loops, PTX cache hints (checked).
//! * scan variants (float and int), the kernel of `cl/algorithms/scan.cl` built with a tile
//!   `ROUNDS:LOCAL`, build options (`-D…`, e.g. `-DCLG_LB_WIDTH=4`: the look-back reads 4 ×
//!   32 tile states per step; `-cl-nv-maxrregcount=N`) and source patches:
//!   `nolb` skips the look-back (each tile adds nothing from its predecessors: wrong, timing
//!   only), `copy` also stores its input unchanged (a copy shaped like the scan, checked),
//!   `noticket` takes the tile from the group id (timing only), `nowait` reads each window of
//!   predecessors once without waiting for them (wrong, timing only), `lead` first waits for
//!   the tile just before (one word, read by the whole warp) and only then reads the window,
//!   `spread` puts each tile's state in its own `CLG_LB_STRIDE`-word slot (a build define;
//!   the states buffer holds n / 1024 words), `nc` loads through `ld.global.nc`, `nc256` adds
//!   the L2 256-byte prefetch hint, `cs` stores with `st.global.cs`, `sleep` pauses
//!   `CLG_LB_DELAY` ns (PTX `nanosleep`) before every poll of the predecessors' states after
//!   the first (as CUB's delay constructors do), `tsleep` the same on `%globaltimer` (PTX
//!   patches: NVIDIA only), `persist` runs `clg_scan_persist` (`cl/algorithms/scan_persist.cl`:
//!   persistent work-groups, `-DCLG_LB_PER_CU=N` per compute unit, each loading its next tile
//!   while the current one looks back; `nolb+persist` without the look-back). The
//!   first wait of a tile (the kernel's `wait_ns` argument) is the one the library measured on
//!   the device (`algorithms::look_back_wait_ns`, after its scan; 0 before one of at least
//!   2^26 elements) unless the build options say `-DCLG_LB_WAIT_NS=N`. Variants that still
//!   scan are checked against the library's `enqueue_scan_sum`.
//!
//! `--stub-check` instead checks the look-back kernels' results with stub sub-groups on any
//! device with program-scope globals (PoCL: `stub_check.rs`).
//!
//! `cargo run --release --example scan_diag -- [--min-log2 K] [--max-log2 M] [--runs N]
//!  [--stub-check] [--no-copies] [--variants NAME:ROUNDS:LOCAL:PATCH+PATCH[:BUILD OPTIONS],...]`

mod patches;
mod stub_check;
#[path = "../common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::algorithms::{self, Element, ScanKind};
use clgroups::{Buffer, Event, Kernel, LocalSize, Program, Queue, Range};
use patches::patched;
use std::time::Instant;
use timing::median;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

#[derive(Parser)]
struct Args {
    /// Smallest size, as a power of two.
    #[arg(long, default_value_t = 26)]
    min_log2: u32,
    /// Largest size, as a power of two.
    #[arg(long, default_value_t = 28)]
    max_log2: u32,
    /// Timed calls per median.
    #[arg(long, default_value_t = 31)]
    runs: usize,
    /// Skip the copy kernels.
    #[arg(long)]
    no_copies: bool,
    /// Only check the look-back kernels' logic with stub sub-groups (`stub_check.rs`: any
    /// OpenCL 2.0 device, e.g. PoCL's CPU devices) and exit.
    #[arg(long)]
    stub_check: bool,
    /// Scan variants, `NAME:ROUNDS:LOCAL:PATCHES[:BUILD OPTIONS]` (patches joined by `+`),
    /// comma-separated; the default is the diagnostic set of the issue 25 report.
    #[arg(long, default_value = DEFAULT_VARIANTS)]
    variants: String,
}

const DEFAULT_VARIANTS: &str = "main:32:256:,nolb:32:256:nolb,copy:32:256:copy,\
    nolb-noticket:32:256:nolb+noticket,nolb:16:256:nolb,copy:16:256:copy,nolb:32:128:nolb,\
    copy:32:128:copy,nowait0:32:256::-DCLG_LB_WAIT_NS=0,nc:32:256:nc,nc-cs:32:256:nc+cs,cs:32:256:cs,\
    main:32:128:,main:16:256:,main:16:128:,r128:16:256::-cl-nv-maxrregcount=128,\
    w4:32:256::-DCLG_LB_WIDTH=4,w4:16:256::-DCLG_LB_WIDTH=4,w4:32:128::-DCLG_LB_WIDTH=4,\
    w4:16:128::-DCLG_LB_WIDTH=4,main:8:256:,nc-w4:32:256:nc:-DCLG_LB_WIDTH=4,\
    w4-r128:16:256::-DCLG_LB_WIDTH=4 -cl-nv-maxrregcount=128,lead:32:256:lead,\
    spread16:32:256:spread:-DCLG_LB_STRIDE=16";

/// OpenCL C copy kernels; `K` (vectors per work-item) is a build define.
const COPIES: &str = r#"
kernel void copy1(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}
kernel void copy4(global const float4 *in, global float4 *out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}
kernel void copy_vload4(global const float *in, global float *out) {
    size_t i = get_global_id(0);
    vstore4(vload4(i, in), i, out);
}
/* One tile of K * local float4s per work-group, every load issued before any store. */
kernel void copy4_tile(global const float4 *in, global float4 *out) {
    size_t base = get_group_id(0) * K * get_local_size(0) + get_local_id(0);
    float4 v[K];
    for (int r = 0; r < K; r++)
        v[r] = in[base + r * get_local_size(0)];
    for (int r = 0; r < K; r++)
        out[base + r * get_local_size(0)] = v[r];
}
kernel void copy4_grid(global const float4 *in, global float4 *out, ulong n4) {
    for (size_t i = get_global_id(0); i < n4; i += get_global_size(0))
        out[i] = in[i];
}
#ifdef PTX
kernel void copy4_nc_cs(global const float *in, global float *out) {
    size_t i = 4 * get_global_id(0);
    uint a, b, c, d;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(in + i));
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(out + i), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
#endif
"#;

/// Device-side input (the hash values of bench_scan) and mismatch count.
const TOOLS: &str = r#"
kernel void init(global T *x) {
    size_t i = get_global_id(0);
    uint h = ((uint)i * 2654435761u) >> 28;
#ifdef FLOAT
    x[i] = h == 0 ? 1.0f : 0.0f;
#else
    x[i] = (int)h - 7;
#endif
}
kernel void mismatches(global const T *y, global const T *want, global uint *bad) {
    size_t i = get_global_id(0);
    if (!(y[i] == want[i]))
        atomic_inc(bad);
}
"#;

/// Host wall (enqueue + wait) and device time medians, in seconds.
#[derive(Clone, Copy)]
struct Times {
    host: f64,
    device: f64,
}

/// Medians of `runs` calls of `call` (after 3 warm-ups) writing `out`, each after `out` is
/// filled with `poison`.
fn time<T: Element>(
    q: &Queue,
    runs: usize,
    out: &mut Buffer<T>,
    poison: T,
    mut call: impl FnMut(&mut Buffer<T>) -> AnyResult<Event>,
) -> AnyResult<Times> {
    let (mut host, mut device) = (Vec::new(), Vec::new());
    for i in 0..runs + 3 {
        out.fill(q, poison)?;
        q.finish()?;
        let start = Instant::now();
        let e = call(out)?;
        e.wait()?;
        let t = start.elapsed().as_secs_f64();
        if i >= 3 {
            host.push(t);
            device.push(e.duration()?.as_secs_f64());
        }
    }
    Ok(Times {
        host: median(&mut host),
        device: median(&mut device),
    })
}

struct Tools<T: Element> {
    init: Kernel,
    mismatches: Kernel,
    bad: Buffer<u32>,
    _t: std::marker::PhantomData<T>,
}

impl<T: Element> Tools<T> {
    fn new(q: &Queue) -> AnyResult<Self> {
        let float = if T::CL_NAME == "float" { "-DFLOAT" } else { "" };
        let p = Program::builder(TOOLS)
            .options(&format!("-DT={} {float}", T::CL_NAME))
            .build(q)?;
        Ok(Tools {
            init: p.kernel("init")?,
            mismatches: p.kernel("mismatches")?,
            bad: Buffer::from_slice(q, &[0u32])?,
            _t: std::marker::PhantomData,
        })
    }

    /// Elements of `y` that differ from `want`.
    fn wrong(&mut self, q: &Queue, y: &Buffer<T>, want: &Buffer<T>) -> AnyResult<u32> {
        self.bad.fill(q, 0)?;
        let l = self.mismatches.launch().arg(y).arg(want).arg(&self.bad);
        // SAFETY: work-item i < want.len() = y.len() reads y[i], want[i]; counts into bad[0].
        unsafe { l.range(Range::d1(want.len())) }?.wait()?;
        Ok(self.bad.read(q)?[0])
    }
}

/// A build error as one table cell: its first 400 characters, lines joined by ` / `.
fn one_line(e: &str) -> String {
    e.lines()
        .collect::<Vec<_>>()
        .join(" / ")
        .chars()
        .take(400)
        .collect()
}

/// One line of the table: the case, its times, and what its check found.
fn row(name: &str, t: Times, copy: Times, check: &str) {
    println!(
        "| {name} | {:.1} | {:.1} | **{:.3}** | **{:.3}** | {check} |",
        t.host * 1e6,
        t.device * 1e6,
        copy.host / t.host,
        copy.device / t.device,
    );
}

/// A copy kernel case: its name, kernel, elements per work-item (grid-stride cases: their
/// work-items), local size, and whether it takes the vector count (grid-stride).
struct CopyCase {
    name: String,
    kernel: Result<Kernel, String>,
    per_item: usize,
    local: usize,
    n4: bool,
}

fn copy_cases(q: &Queue) -> AnyResult<Vec<CopyCase>> {
    let nvidia = q.device().to_string().to_lowercase().contains("nvidia");
    let cus = opencl3::device::Device::new(q.device().id()).max_compute_units()? as usize;
    let build = |k: usize, name: &str| -> Result<Kernel, String> {
        let ptx = if nvidia { "-DPTX" } else { "" };
        Program::builder(COPIES)
            .options(&format!("-DK={k} {ptx}"))
            .build(q)
            .and_then(|p| p.kernel(name))
            .map_err(|e| one_line(&e.to_string()))
    };
    let case = |name: String, kernel, per_item, local, n4| CopyCase {
        name,
        kernel,
        per_item,
        local,
        n4,
    };
    let mut cases = vec![case(
        "copy-scalar L=256".into(),
        build(4, "copy1"),
        1,
        256,
        false,
    )];
    for l in [128, 256] {
        cases.push(case(
            format!("copy-float4 L={l}"),
            build(4, "copy4"),
            4,
            l,
            false,
        ));
    }
    cases.push(case(
        "copy-vload4 L=256".into(),
        build(4, "copy_vload4"),
        4,
        256,
        false,
    ));
    for (k, l) in [
        (4, 256),
        (8, 256),
        (16, 256),
        (32, 256),
        (32, 128),
        (16, 128),
    ] {
        let name = format!("copy-tile K={k} L={l}");
        cases.push(case(name, build(k, "copy4_tile"), 4 * k, l, false));
    }
    for per_cu in [4, 8, 16, 32] {
        let mut c = case(
            format!("copy-grid {per_cu}×CUs L=256"),
            build(4, "copy4_grid"),
            0,
            256,
            true,
        );
        c.per_item = cus * per_cu * 256;
        cases.push(c);
    }
    if nvidia {
        cases.push(case(
            "copy-nc-cs L=256".into(),
            build(4, "copy4_nc_cs"),
            4,
            256,
            false,
        ));
    }
    Ok(cases)
}

fn copies(q: &Queue, n: usize, runs: usize, cases: &[CopyCase], copy: Times) -> AnyResult<()> {
    let mut tools = Tools::<f32>::new(q)?;
    let x = Buffer::<f32>::new(q, n)?;
    let mut y = Buffer::<f32>::new(q, n)?;
    // SAFETY: work-item i < n writes x[i].
    unsafe { tools.init.launch().arg(&x).range(Range::d1(n)) }?.wait()?;
    for c in cases {
        let k = match &c.kernel {
            Ok(k) => k,
            Err(e) => {
                println!("| {} | build failed: {e} |", c.name);
                continue;
            }
        };
        let items = if c.n4 { c.per_item } else { n / c.per_item };
        let t = time(q, runs, &mut y, f32::NAN, |y| {
            let mut l = k.launch().arg(&x).arg(&*y);
            if c.n4 {
                l = l.arg((n / 4) as u64);
            }
            // SAFETY: every copy kernel touches elements below n = x.len() = y.len() only:
            // `items` work-items (× the elements each moves) cover exactly n elements, and
            // the grid-stride loop stops at n / 4 vectors.
            Ok(unsafe { l.nd_range(Range::d1(items), LocalSize::Exact(Range::d1(c.local))) }?)
        });
        match t {
            Ok(t) => row(
                &c.name,
                t,
                copy,
                &format!("{} wrong", tools.wrong(q, &y, &x)?),
            ),
            Err(e) => println!("| {} | failed: {e} |", c.name),
        }
    }
    Ok(())
}

/// A scan variant, built once per element type.
struct Variant {
    label: String,
    rounds: usize,
    local: usize,
    patches: Vec<String>,
    /// `-DCLG_LB_WAIT_NS=N` of its options: its tiles' first wait, else the library's.
    wait: Option<u32>,
    /// The `persist` kernel's work-groups per compute unit (`-DCLG_LB_PER_CU=N`, else 1);
    /// `None` for `clg_scan_lookback` (one work-group per tile).
    per_cu: Option<usize>,
    kernel: Result<Kernel, String>,
}

/// `NAME:ROUNDS:LOCAL:PATCHES[:BUILD OPTIONS]` for `T`.
fn variants<T: Element>(q: &Queue, list: &str) -> AnyResult<Vec<Variant>> {
    let mut out = Vec::new();
    for v in list.split(',').filter(|v| !v.is_empty()) {
        let parts: Vec<&str> = v.split(':').collect();
        let (name, rounds, local, patches, extra) = match parts[..] {
            [a, b, c, d] => (a, b, c, d, ""),
            [a, b, c, d, e] => (a, b, c, d, e),
            _ => return Err(format!("variant {v:?} is not NAME:ROUNDS:LOCAL:PATCHES").into()),
        };
        let (rounds, local): (usize, usize) = (rounds.parse()?, local.parse()?);
        let patches: Vec<String> = patches.split('+').map(String::from).collect();
        let label = format!("scan {name} {rounds}:{local} {}", T::CL_NAME);
        let wait = extra
            .split_whitespace()
            .find_map(|o| o.strip_prefix("-DCLG_LB_WAIT_NS="))
            .map(str::parse)
            .transpose()?;
        let persist = patches.iter().any(|p| p == "persist");
        let per_cu = extra
            .split_whitespace()
            .find_map(|o| o.strip_prefix("-DCLG_LB_PER_CU="))
            .map(str::parse)
            .transpose()?
            .or(persist.then_some(1));
        let name = match persist {
            true => "clg_scan_persist",
            false => "clg_scan_lookback",
        };
        let options = format!(
            "-DCLG_T={} -DCLG_OP=0 -DCLG_ID=0 -DCLG_LOOKBACK=1 -DCLG_LB_LOCAL={local} \
             -DCLG_LB_ROUNDS={rounds} {extra}",
            T::CL_NAME
        );
        let refs: Vec<&str> = patches.iter().map(String::as_str).collect();
        let kernel = patched(&refs)
            .and_then(|src| {
                Ok(Program::builder(src)
                    .file_name("clgroups/algorithms/reduce.cl")
                    .options(&options)
                    .build(q)?
                    .kernel(name)?)
            })
            .map_err(|e| one_line(&e.to_string()));
        out.push(Variant {
            label,
            rounds,
            local,
            patches,
            wait,
            per_cu,
            kernel,
        });
    }
    Ok(out)
}

fn scans<T: Element>(
    q: &Queue,
    n: usize,
    runs: usize,
    variants: &[Variant],
    copy: Times,
    poison: T,
) -> AnyResult<()> {
    let mut tools = Tools::<T>::new(q)?;
    let cus = opencl3::device::Device::new(q.device().id()).max_compute_units()? as usize;
    let x = Buffer::<T>::new(q, n)?;
    let mut y = Buffer::<T>::new(q, n)?;
    let mut want = Buffer::<T>::new(q, n)?;
    // SAFETY: work-item i < n writes x[i].
    unsafe { tools.init.launch().arg(&x).range(Range::d1(n)) }?.wait()?;
    let t = time(q, runs, &mut want, poison, |want| {
        Ok(algorithms::enqueue_scan_sum(
            q,
            &x,
            want,
            ScanKind::Inclusive,
        )?)
    })?;
    row(
        &format!("library enqueue_scan_sum {}", T::CL_NAME),
        t,
        copy,
        "reference",
    );
    let mut states = Buffer::<u64>::new(q, n / 1024 + 1)?;
    let mut ticket = Buffer::<u32>::new(q, 1)?;
    for v in variants {
        let (label, rounds, local) = (&v.label, v.rounds, v.local);
        let k = match &v.kernel {
            Ok(k) => k,
            Err(e) => {
                println!("| {label} | build failed: {e} |");
                continue;
            }
        };
        let has = |p: &str| v.patches.iter().any(|q| q == p);
        let wait = v
            .wait
            .or_else(|| algorithms::look_back_wait_ns(q.device()))
            .unwrap_or(0);
        let tile = 4 * rounds * local;
        let tiles = n.div_ceil(tile);
        let groups = v.per_cu.map_or(tiles, |k| tiles.min(k * cus));
        states.fill(q, 0)?;
        ticket.fill(q, 0)?;
        let mut epoch = 0u32;
        let t = time(q, runs, &mut y, poison, |y| {
            epoch += 1;
            let l = k
                .launch()
                .arg(&x)
                .arg(&*y)
                .arg(n as u64)
                .arg(&states)
                .arg(&ticket)
                .arg(tiles as u32)
                .arg(epoch)
                .arg(0i32)
                .arg(wait);
            // The persistent kernel's post: none.
            let l = match has("persist") {
                true => l.arg(0u64).arg(0u32),
                false => l,
            };
            // SAFETY: `clg_scan_lookback` and `clg_scan_persist` read x and write y below
            // n (their length), state[tile] for tile < tiles <= states.len(), and
            // ticket[0]; `clg_scan_persist` posts nowhere (its mailbox is 0).
            Ok(unsafe {
                l.nd_range(
                    Range::d1(groups * local),
                    LocalSize::Exact(Range::d1(local)),
                )
            }?)
        });
        let t = match t {
            Ok(t) => t,
            Err(e) => {
                println!("| {label} | failed: {e} |");
                continue;
            }
        };
        let check = if has("nolb") || has("noticket") || has("nowait") {
            "not checked".to_string()
        } else if has("copy") {
            format!("{} wrong (copy)", tools.wrong(q, &y, &x)?)
        } else {
            format!("{} wrong", tools.wrong(q, &y, &want)?)
        };
        row(label, t, copy, &check);
    }
    Ok(())
}

fn main() -> AnyResult<()> {
    env_logger::init();
    let args = Args::parse();
    if args.stub_check {
        let wrong = stub_check::run()?;
        println!("{wrong} wrong cases");
        return match wrong {
            0 => Ok(()),
            _ => Err("wrong results".into()),
        };
    }
    let device = clgroups::default_device()?;
    let q = Queue::with_profiling(&device)?;
    println!("device: {device}");
    let build = Instant::now();
    let floats = variants::<f32>(&q, &args.variants)?;
    let ints = variants::<i32>(&q, &args.variants)?;
    let copy_list = match args.no_copies {
        true => Vec::new(),
        false => copy_cases(&q)?,
    };
    println!("variants built in {:.1} s", build.elapsed().as_secs_f64());
    for log2 in args.min_log2..=args.max_log2 {
        let n = 1usize << log2;
        let x = Buffer::<f32>::new(&q, n)?;
        let mut y = Buffer::<f32>::new(&q, n)?;
        let mut copy = || time(&q, args.runs, &mut y, f32::NAN, |y| Ok(x.copy_to(&q, y)?));
        let before = copy()?;
        println!(
            "\n2^{log2}: clEnqueueCopyBuffer {:.1} µs host, {:.1} µs device ({:.0} GB/s)",
            before.host * 1e6,
            before.device * 1e6,
            8.0 * n as f64 / before.device / 1e9
        );
        println!("| case | host µs | device µs | copy/case host | copy/case device | check |");
        println!("|---|---|---|---|---|---|");
        if !args.no_copies {
            copies(&q, n, args.runs, &copy_list, before)?;
        }
        scans::<f32>(&q, n, args.runs, &floats, before, f32::NAN)?;
        scans::<i32>(&q, n, args.runs, &ints, before, i32::MIN)?;
        let after = copy()?;
        println!(
            "clEnqueueCopyBuffer after: {:.1} µs host, {:.1} µs device",
            after.host * 1e6,
            after.device * 1e6
        );
    }
    Ok(())
}
