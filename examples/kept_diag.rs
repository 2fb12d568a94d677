// Scratch diagnostic (not committed): where the root's kept-on-one-device path loses time.
use clgroups::scaling::RootDevice;
use clgroups::{Buffer, Kernel, Program, Queue, Range};
use std::time::{Duration, Instant};

const SRC: &str = include_str!("scaling_bench/kernels.cl");
type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn med(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn heat1(
    k: &Kernel,
    q: &Queue,
    a: &Buffer<f32>,
    c: &Buffer<f32>,
    side: usize,
    iters: usize,
) -> Res<()> {
    let s = side as i32;
    for i in 0..iters {
        let (t, u) = if i % 2 == 0 { (a, c) } else { (c, a) };
        unsafe {
            k.launch()
                .arg(t)
                .arg(u)
                .arg(s)
                .arg(s)
                .range(Range::d2(side, side))
        }?;
    }
    Ok(q.finish()?)
}

fn main() -> Res<()> {
    env_logger::init();
    let side: usize = std::env::args().nth(1).map_or(2048, |a| a.parse().unwrap());
    let iters = 20;
    let root = RootDevice::from_env()?;
    let start: Vec<f32> = (0..side * side).map(|i| (i % 97) as f32).collect();
    // A: own context
    let q = Queue::new(&root.devices()[0])?;
    let p = Program::from_source(&q, SRC)?;
    let k = p.kernel("heat")?;
    let (a, c) = (
        Buffer::from_slice(&q, &start)?,
        Buffer::from_slice(&q, &start)?,
    );
    // C: the root's context, queue 0
    let rq = &root.queues()[0];
    let pr = Program::from_source(rq, SRC)?;
    let kr = pr.kernel("heat")?;
    let (ar, cr) = (
        Buffer::from_slice(rq, &start)?,
        Buffer::from_slice(rq, &start)?,
    );
    // B: the root kernel
    let rp = root.program(SRC)?;
    let kn = rp.kernel("heat")?;
    let an = clgroups::scaling::ColoredBuffer::from_slice(&root, &start)?;
    let cn = clgroups::scaling::ColoredBuffer::from_slice(&root, &start)?;
    let s = side as i32;
    let mut root_run = || -> Res<String> {
        let mut last = String::new();
        for i in 0..iters {
            let (t, u) = if i % 2 == 0 { (&an, &cn) } else { (&cn, &an) };
            let ev = unsafe {
                kn.launch()
                    .arg(t)
                    .arg(u)
                    .arg(s)
                    .arg(s)
                    .range(Range::d2(side, side))
            }?;
            last = format!("{:?}", ev.spread());
        }
        root.finish()?;
        Ok(last)
    };
    for _ in 0..3 {
        heat1(&k, &q, &a, &c, side, iters)?;
        heat1(&kr, rq, &ar, &cr, side, iters)?;
        root_run()?;
    }
    let (mut ta, mut tc, mut tb) = (vec![], vec![], vec![]);
    let mut spread = String::new();
    for _ in 0..21 {
        let t = Instant::now();
        heat1(&k, &q, &a, &c, side, iters)?;
        ta.push(t.elapsed());
        let t = Instant::now();
        heat1(&kr, rq, &ar, &cr, side, iters)?;
        tc.push(t.elapsed());
        let t = Instant::now();
        spread = root_run()?;
        tb.push(t.elapsed());
    }
    println!("heat {side}^2 x {iters}: own ctx {:.3} ms, root ctx q0 {:.3} ms, root kernel {:.3} ms ({spread})", med(ta), med(tc), med(tb));
    // Pairs allocated one after another, with spacers between: time and addresses per pair.
    let pa = Program::from_source(
        &q,
        "kernel void addr(global float *p, global ulong *o) { o[0] = (ulong)p; }",
    )?;
    let ka = pa.kernel("addr")?;
    let mut out = Buffer::<u64>::new(&q, 1)?;
    let mut keep = vec![];
    for i in 0..8usize {
        let spacer = Buffer::<f32>::new(&q, 1 + i * 4099)?;
        let (a, c) = (
            Buffer::from_slice(&q, &start)?,
            Buffer::from_slice(&q, &start)?,
        );
        let mut addr = |b: &Buffer<f32>| -> Res<u64> {
            unsafe { ka.launch().arg(b).arg(&mut out).range(1usize) }?;
            Ok(out.read(&q)?[0])
        };
        let (x, y) = (addr(&a)?, addr(&c)?);
        heat1(&k, &q, &a, &c, side, iters)?;
        let mut t = vec![];
        for _ in 0..11 {
            let t0 = Instant::now();
            heat1(&k, &q, &a, &c, side, iters)?;
            t.push(t0.elapsed());
        }
        println!(
            "pair {i}: {:.3} ms  t%4096={} u%4096={} (u-t)%4096={} t%2M={} u%2M={}",
            med(t),
            x % 4096,
            y % 4096,
            y.wrapping_sub(x) % 4096,
            x % (2 << 20),
            y % (2 << 20)
        );
        keep.push((spacer, a, c));
    }
    Ok(())
}
