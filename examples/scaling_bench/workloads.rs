//! The six first workloads: SAXPY, a reduce, the heat stencil, the 1-D blur, Black-Scholes and
//! mandelbrot, each on one device and on the root device, outputs compared.

use crate::{agree, values, Bench, Res, Row, Run};
use clgroups::scaling::{self, Access, ColoredBuffer};
use clgroups::{algorithms, Buffer, Kernel, Range};

pub fn saxpy(b: &Bench, n: usize, runs: usize) -> Res<Row> {
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
    Ok((b.rounds(runs, 1, &mut cases)?, String::new()))
}

pub fn reduce(b: &Bench, n: usize, runs: usize) -> Res<Row> {
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
    let times = b.rounds(runs, 1, &mut cases)?;
    let held = match xn.whole_on() {
        Some(d) => format!("scaling::reduce_sum, buffer whole on device {d}"),
        None => "scaling::reduce_sum over the parts".to_string(),
    };
    Ok((times, held))
}

/// `iters` steps of `heat` on the bench's one device, ping-ponging from `a` to `c` and back,
/// then a finish.
pub fn heat_on_one(
    b: &Bench,
    k1: &Kernel,
    (a, c): (&Buffer<f32>, &Buffer<f32>),
    side: usize,
    iters: usize,
) -> Res<()> {
    let s = side as i32;
    for i in 0..iters {
        let (t, u) = if i % 2 == 0 { (a, c) } else { (c, a) };
        // SAFETY: (x, y) reads t within the side x side grid and writes u[y * side + x].
        unsafe {
            k1.launch()
                .arg(t)
                .arg(u)
                .arg(s)
                .arg(s)
                .range(Range::d2(side, side))
        }?;
    }
    Ok(b.q.finish()?)
}

pub fn heat(b: &Bench, side: usize, iters: usize, runs: usize, access: Access) -> Res<Row> {
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
    let one = || heat_on_one(b, &k1, (&a1, &c1), side, iters);
    let all = || -> Res<()> {
        for i in 0..iters {
            let (t, u) = if i % 2 == 0 { (&an, &cn) } else { (&cn, &an) };
            // SAFETY: as above.
            let ev = unsafe { kn.launch().arg(t).arg(u).arg(s).arg(s).range(g) }?;
            // The last launch's is reported: the steady state (the first moves parts into
            // their margins).
            b.note(&ev);
        }
        Ok(b.root.finish()?)
    };
    one()?;
    all()?;
    agree("heat", &an.read()?, &a1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(one), Box::new(all)];
    Ok((b.rounds(runs, iters, &mut cases)?, String::new()))
}

pub fn blur(b: &Bench, n: usize, iters: usize, runs: usize) -> Res<Row> {
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
    let all = || -> Res<()> {
        for i in 0..iters {
            let (x, y) = if i % 2 == 0 { (&an, &cn) } else { (&cn, &an) };
            // SAFETY: as above.
            let ev = unsafe { kn.launch().arg(x).arg(y).arg(len).range(n) }?;
            // The last launch's is reported: the steady state (the first moves parts into
            // their margins).
            b.note(&ev);
        }
        Ok(b.root.finish()?)
    };
    one()?;
    all()?;
    agree("blur", &an.read()?, &a1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(one), Box::new(all)];
    Ok((b.rounds(runs, iters, &mut cases)?, String::new()))
}

pub fn black_scholes(b: &Bench, n: usize, runs: usize) -> Res<Row> {
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
    let runn = || -> Res<()> {
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
        Ok(())
    };
    run1()?;
    runn()?;
    agree("black-scholes call", &all[3].read()?, &one[3].read(b.q)?)?;
    agree("black-scholes put", &all[4].read()?, &one[4].read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(runn)];
    Ok((b.rounds(runs, 1, &mut cases)?, String::new()))
}

pub fn mandelbrot(b: &Bench, side: usize, runs: usize) -> Res<Row> {
    let (k1, kn) = (b.k1("mandelbrot")?, b.kn("mandelbrot")?);
    let o1 = Buffer::<u32>::from_slice(b.q, &vec![0; side * side])?;
    let on = ColoredBuffer::<u32>::from_slice(b.root, &vec![0; side * side])?;
    let (g, w) = (Range::d2(side, side), side as u32);
    let run1 = || -> Res<()> {
        // SAFETY: (x, y) writes out[y * side + x] of side * side elements.
        Ok(unsafe { k1.launch().arg(&o1).arg(w).arg(w).arg(256u32).range(g) }?.wait()?)
    };
    let runn = || -> Res<()> {
        // SAFETY: as above.
        let ev = unsafe { kn.launch().arg(&on).arg(w).arg(w).arg(256u32).range(g) }?;
        ev.wait()?;
        b.note(&ev);
        Ok(())
    };
    run1()?;
    runn()?;
    if on.read()? != o1.read(b.q)? {
        return Err("mandelbrot: the root device's image differs".into());
    }
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(runn)];
    Ok((b.rounds(runs, 1, &mut cases)?, String::new()))
}
