//! Implicit scaling measured on six workloads, one device against the root device of every
//! device of `RootDevice::from_env()`: SAXPY, a reduce, a 2-D heat stencil and a 1-D 3-point
//! blur over `--iters` (100) iterations, Black-Scholes and mandelbrot. Kernels are written as
//! for one device and no buffer declares an `Access` (but a second heat row declares
//! `Access::Stencil`: only halo rows move between devices): each root launch is split (by the
//! own-id proof, or by the kernel's footprint with the halos it reads fetched), merged or sent
//! to one device (printed per workload with the bytes its last launch moved, `RUST_LOG=info` logs
//! why). Times are host wall
//! medians of `--runs` interleaved rounds after two warm-ups; every output of the root device
//! is checked against the one-device output first.
//!
//! ```text
//! POCL_DEVICES="pthread pthread" CLGROUPS_PLACEMENT=partitioned \
//!     cargo run --release --example scaling_bench
//! CLGROUPS_DEVICES=0:0,0:1 cargo run --release --example scaling_bench -- --n 67108864
//! ```

#[path = "common/timing.rs"]
mod timing;

use clap::Parser;
use clgroups::device::DeviceKind;
use clgroups::scaling::{self, Access, ColoredBuffer, MultiEvent, RootDevice, RootKernel};
use clgroups::{algorithms, Buffer, Kernel, Program, Queue, Range};
use std::cell::RefCell;
use std::time::Duration;
use timing::interleaved;

#[derive(Parser, Debug)]
#[command(
    about = "One device against a root device: SAXPY, reduce, heat, blur, Black-Scholes, mandelbrot"
)]
struct Args {
    /// Elements of SAXPY, the reduce and Black-Scholes (default 2^24 on GPUs, 2^20 otherwise).
    #[arg(long)]
    n: Option<usize>,
    /// Side of the square heat grid and mandelbrot image (default 2048 on GPUs, 512 otherwise).
    #[arg(long)]
    side: Option<usize>,
    /// Heat iterations per run.
    #[arg(long, default_value_t = 100)]
    iters: usize,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 11)]
    runs: usize,
    /// Only these workloads (comma-separated: saxpy, reduce, heat, stencil, blur,
    /// black-scholes, mandelbrot); default all.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

const SOURCE: &str = r#"
kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
kernel void heat(global const float *t, global float *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = 0.25f * (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]);
}
float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}
kernel void blur(global const float *x, global float *y, uint n) {
    size_t i = get_global_id(0);
    if (i > 0 && i + 1 < n) y[i] = (x[i - 1] + x[i] + x[i + 1]) * (1.0f / 3.0f);
    else if (i < n) y[i] = x[i];
}
kernel void black_scholes(global float *call, global float *put, global const float *S,
                          global const float *X, global const float *T, float R, float V) {
    size_t i = get_global_id(0);
    float sq = sqrt(T[i]);
    float d1 = (log(S[i] / X[i]) + (R + 0.5f * V * V) * T[i]) / (V * sq);
    float d2 = d1 - V * sq;
    float e = exp(-R * T[i]);
    call[i] = S[i] * cnd(d1) - X[i] * e * cnd(d2);
    put[i] = X[i] * e * (1.0f - cnd(d2)) - S[i] * (1.0f - cnd(d1));
}
kernel void mandelbrot(global uint *out, uint w, uint h, uint max_iter) {
    uint px = get_global_id(0), py = get_global_id(1);
    float cx = -2.0f + 3.0f * px / w, cy = -1.5f + 3.0f * py / h, x = 0.0f, y = 0.0f;
    uint it = 0;
    while (x * x + y * y < 4.0f && it < max_iter) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        ++it;
    }
    out[py * w + px] = it;
}
"#;

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Run<'a> = Box<dyn FnMut() -> Res<()> + 'a>;

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

struct Bench<'a> {
    q: &'a Queue,
    root: &'a RootDevice,
    one: Program,
    multi: clgroups::scaling::RootProgram,
    /// The last root launch's decision (spread, and the cost model's choice with its figures).
    last: RefCell<(String, String)>,
}

impl Bench<'_> {
    /// Records `ev` as the last root launch.
    fn note(&self, ev: &MultiEvent) {
        let priced = ev
            .priced()
            .map_or("not priced".to_string(), |p| p.to_string());
        *self.last.borrow_mut() = (format!("{:?}", ev.spread()), priced);
    }

    /// The last root launch's decision as a table cell, its figures printed.
    fn decision(&self, name: &str) -> String {
        let (spread, priced) = self.last.take();
        println!("{name}: last root launch {spread}; cost model: {priced}");
        spread
    }

    fn k1(&self, name: &str) -> Res<Kernel> {
        Ok(self.one.kernel(name)?)
    }
    fn kn(&self, name: &str) -> Res<RootKernel> {
        Ok(self.multi.kernel(name)?)
    }
}

fn main() -> Res<()> {
    env_logger::init();
    let args = Args::parse();
    let root = RootDevice::from_env()?;
    let gpu = root.devices()[0].kind() == DeviceKind::Gpu;
    let n = args.n.unwrap_or(if gpu { 1 << 24 } else { 1 << 20 });
    let side = args.side.unwrap_or(if gpu { 2048 } else { 512 });
    for (i, d) in root.devices().iter().enumerate() {
        println!("device {i}: {d}");
    }
    println!(
        "{root:?}, spread {} (CLGROUPS_SPREAD); medians of {} rounds",
        root.spread(),
        args.runs
    );
    let q = Queue::new(&root.devices()[0])?;
    let b = Bench {
        q: &q,
        root: &root,
        one: Program::from_source(&q, SOURCE)?,
        multi: root.program(SOURCE)?,
        last: RefCell::default(),
    };
    let heat_name = format!("heat {side}x{side} x {}", args.iters);
    let runs = args.runs;
    let workloads: [Workload; 7] = [
        ("saxpy", format!("saxpy n={n}"), &|| saxpy(&b, n, runs)),
        ("reduce", format!("reduce n={n}"), &|| reduce(&b, n, runs)),
        ("heat", heat_name.clone(), &|| {
            heat(&b, side, args.iters, runs, Access::Auto)
        }),
        (
            "stencil",
            format!("{heat_name}, Access::Stencil({side})"),
            &|| heat(&b, side, args.iters, runs, Access::Stencil(side)),
        ),
        ("blur", format!("blur n={n} x {}", args.iters), &|| {
            blur(&b, n, args.iters, runs)
        }),
        ("black-scholes", format!("black-scholes n={n}"), &|| {
            black_scholes(&b, n, runs)
        }),
        ("mandelbrot", format!("mandelbrot {side}x{side}"), &|| {
            mandelbrot(&b, side, runs)
        }),
    ];
    if let Some(bad) = (args.only.iter()).find(|o| !workloads.iter().any(|w| w.0 == o.as_str())) {
        return Err(format!("--only: no workload `{bad}`").into());
    }
    let rows = (workloads.iter())
        .filter(|w| args.only.is_empty() || args.only.iter().any(|o| o == w.0))
        .map(|(_, name, run)| {
            let (t, spread) = run()?;
            let decided = b.decision(name);
            Ok((
                name.clone(),
                (t, if spread.is_empty() { decided } else { spread }),
            ))
        })
        .collect::<Res<Vec<_>>>()?;
    println!(
        "\n| workload | one device (ms) | {} devices (ms) | speedup | root launch |",
        root.len()
    );
    println!("|---|---|---|---|---|");
    for (name, (t, spread)) in rows {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "| {name} | {:.3} | {:.3} | {:.2}x | {spread} |",
            ms(t[0]),
            ms(t[1]),
            t[0].as_secs_f64() / t[1].as_secs_f64()
        );
    }
    Ok(())
}

type Row = (Vec<Duration>, String);
/// A workload: its `--only` name, its row's name and how to measure it.
type Workload<'a> = (&'static str, String, &'a dyn Fn() -> Res<Row>);

fn saxpy(b: &Bench, n: usize, runs: usize) -> Res<Row> {
    let (x, y) = (values(n, 1, -1.0, 1.0), values(n, 2, -1.0, 1.0));
    let (k1, kn) = (b.k1("saxpy")?, b.kn("saxpy")?);
    let (x1, y1) = (Buffer::from_slice(b.q, &x)?, Buffer::from_slice(b.q, &y)?);
    let (xn, yn) = (
        ColoredBuffer::from_slice(b.root, &x)?,
        ColoredBuffer::from_slice(b.root, &y)?,
    );
    // SAFETY: work-item i < n reads x[i] and updates y[i], both of n elements.
    unsafe { k1.launch().arg(&y1).arg(&x1).arg(2.0f32).range(n) }?.wait()?;
    // SAFETY: as above.
    let ev = unsafe { kn.launch().arg(&yn).arg(&xn).arg(2.0f32).range(n) }?;
    ev.wait()?;
    agree("saxpy", &yn.read()?, &y1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![
        // SAFETY: as above.
        Box::new(|| Ok(unsafe { k1.launch().arg(&y1).arg(&x1).arg(2.0f32).range(n) }?.wait()?)),
        Box::new(|| {
            // SAFETY: as above.
            let ev = unsafe { kn.launch().arg(&yn).arg(&xn).arg(2.0f32).range(n) }?;
            ev.wait()?;
            b.note(&ev);
            Ok(())
        }),
    ];
    Ok((interleaved(runs, &mut cases, |run| run())?, String::new()))
}

fn reduce(b: &Bench, n: usize, runs: usize) -> Res<Row> {
    let x: Vec<f32> = values(n, 3, 0.0, 1.0)
        .iter()
        .map(|v| (v * 64.0).round())
        .collect();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    let x1 = Buffer::from_slice(b.q, &x)?;
    let xn = ColoredBuffer::from_slice(b.root, &x)?;
    let check = |got: f32| match ((got as f64) - want).abs() <= 1e-6 * want {
        true => Ok(()),
        false => Err(format!("reduce: {got}, expected {want}").into()),
    };
    let (q, root) = (b.q, b.root);
    let mut cases: Vec<Run> = vec![
        Box::new(|| check(algorithms::reduce_sum(q, &x1)?)),
        Box::new(|| check(scaling::reduce_sum(root, &xn)?)),
    ];
    let times = interleaved(runs, &mut cases, |run| run())?;
    let held = match xn.whole_on() {
        Some(d) => format!("scaling::reduce_sum, buffer whole on device {d}"),
        None => "scaling::reduce_sum over the parts".to_string(),
    };
    Ok((times, held))
}

fn heat(b: &Bench, side: usize, iters: usize, runs: usize, access: Access) -> Res<Row> {
    let start = values(side * side, 4, 0.0, 100.0);
    let (k1, kn) = (b.k1("heat")?, b.kn("heat")?);
    let g = Range::d2(side, side);
    let s = side as i32;
    let (a1, c1) = (
        Buffer::from_slice(b.q, &start)?,
        Buffer::from_slice(b.q, &start)?,
    );
    let colored = || -> Res<ColoredBuffer<f32>> {
        let page = b.root.default_page_size();
        let mut c = ColoredBuffer::with_layout(b.root, side * side, page, access)?;
        c.write(&start)?;
        Ok(c)
    };
    let (an, cn) = (colored()?, colored()?);
    let mut spread = String::new();
    let one = || -> Res<()> {
        for i in 0..iters {
            let (t, u) = if i % 2 == 0 { (&a1, &c1) } else { (&c1, &a1) };
            // SAFETY: (x, y) reads t within the side x side grid and writes u[y * side + x].
            unsafe { k1.launch().arg(t).arg(u).arg(s).arg(s).range(g) }?;
        }
        Ok(b.q.finish()?)
    };
    let all = |spread: &mut String| -> Res<()> {
        for i in 0..iters {
            let (t, u) = if i % 2 == 0 { (&an, &cn) } else { (&cn, &an) };
            // SAFETY: as above.
            let ev = unsafe { kn.launch().arg(t).arg(u).arg(s).arg(s).range(g) }?;
            // The last launch's: the steady state (the first moves parts into their margins).
            *spread = format!("{:?}", ev.spread());
            b.note(&ev);
        }
        Ok(b.root.finish()?)
    };
    one()?;
    all(&mut spread)?;
    agree("heat", &an.read()?, &a1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(one), Box::new(|| all(&mut String::new()))];
    Ok((interleaved(runs, &mut cases, |run| run())?, String::new()))
}

fn blur(b: &Bench, n: usize, iters: usize, runs: usize) -> Res<Row> {
    let start = values(n, 8, 0.0, 100.0);
    let (k1, kn) = (b.k1("blur")?, b.kn("blur")?);
    let (a1, c1) = (
        Buffer::from_slice(b.q, &start)?,
        Buffer::from_slice(b.q, &start)?,
    );
    let (an, cn) = (
        ColoredBuffer::from_slice(b.root, &start)?,
        ColoredBuffer::from_slice(b.root, &start)?,
    );
    let len = n as u32;
    let one = || -> Res<()> {
        for i in 0..iters {
            let (x, y) = if i % 2 == 0 { (&a1, &c1) } else { (&c1, &a1) };
            // SAFETY: work-item i < n reads x[i - 1 ..= i + 1] inside 0..n and writes y[i].
            unsafe { k1.launch().arg(x).arg(y).arg(len).range(n) }?;
        }
        Ok(b.q.finish()?)
    };
    let all = |spread: &mut String| -> Res<()> {
        for i in 0..iters {
            let (x, y) = if i % 2 == 0 { (&an, &cn) } else { (&cn, &an) };
            // SAFETY: as above.
            let ev = unsafe { kn.launch().arg(x).arg(y).arg(len).range(n) }?;
            // The last launch's: the steady state (the first moves parts into their margins).
            *spread = format!("{:?}", ev.spread());
            b.note(&ev);
        }
        Ok(b.root.finish()?)
    };
    let mut spread = String::new();
    one()?;
    all(&mut spread)?;
    agree("blur", &an.read()?, &a1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(one), Box::new(|| all(&mut String::new()))];
    Ok((interleaved(runs, &mut cases, |run| run())?, String::new()))
}

fn black_scholes(b: &Bench, n: usize, runs: usize) -> Res<Row> {
    let (s, x, t) = (
        values(n, 5, 5.0, 30.0),
        values(n, 6, 1.0, 100.0),
        values(n, 7, 0.25, 10.0),
    );
    let (k1, kn) = (b.k1("black_scholes")?, b.kn("black_scholes")?);
    let one: Vec<Buffer<f32>> = [&s, &x, &t, &s, &s]
        .iter()
        .map(|v| Buffer::from_slice(b.q, v))
        .collect::<Result<_, _>>()?;
    let all: Vec<ColoredBuffer<f32>> = [&s, &x, &t, &s, &s]
        .iter()
        .map(|v| ColoredBuffer::from_slice(b.root, v))
        .collect::<Result<_, _>>()?;
    let run1 = || -> Res<()> {
        let l = k1
            .launch()
            .arg(&one[3])
            .arg(&one[4])
            .arg(&one[0])
            .arg(&one[1])
            .arg(&one[2]);
        // SAFETY: work-item i < n touches element i of five buffers of n elements.
        Ok(unsafe { l.arg(0.02f32).arg(0.3f32).range(n) }?.wait()?)
    };
    let runn = || -> Res<String> {
        let l = kn
            .launch()
            .arg(&all[3])
            .arg(&all[4])
            .arg(&all[0])
            .arg(&all[1])
            .arg(&all[2]);
        // SAFETY: as above.
        let ev = unsafe { l.arg(0.02f32).arg(0.3f32).range(n) }?;
        ev.wait()?;
        b.note(&ev);
        Ok(format!("{:?}", ev.spread()))
    };
    run1()?;
    runn()?;
    agree("black-scholes call", &all[3].read()?, &one[3].read(b.q)?)?;
    agree("black-scholes put", &all[4].read()?, &one[4].read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(|| runn().map(drop))];
    Ok((interleaved(runs, &mut cases, |run| run())?, String::new()))
}

fn mandelbrot(b: &Bench, side: usize, runs: usize) -> Res<Row> {
    let (k1, kn) = (b.k1("mandelbrot")?, b.kn("mandelbrot")?);
    let o1 = Buffer::<u32>::from_slice(b.q, &vec![0; side * side])?;
    let on = ColoredBuffer::<u32>::from_slice(b.root, &vec![0; side * side])?;
    let (g, w) = (Range::d2(side, side), side as u32);
    let run1 = || -> Res<()> {
        // SAFETY: (x, y) writes out[y * side + x] of side * side elements.
        Ok(unsafe { k1.launch().arg(&o1).arg(w).arg(w).arg(256u32).range(g) }?.wait()?)
    };
    let runn = || -> Res<String> {
        // SAFETY: as above.
        let ev = unsafe { kn.launch().arg(&on).arg(w).arg(w).arg(256u32).range(g) }?;
        ev.wait()?;
        b.note(&ev);
        Ok(format!("{:?}", ev.spread()))
    };
    run1()?;
    runn()?;
    if on.read()? != o1.read(b.q)? {
        return Err("mandelbrot: the root device's image differs".into());
    }
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(|| runn().map(drop))];
    Ok((interleaved(runs, &mut cases, |run| run())?, String::new()))
}
