//! Compute-bound workloads: a tiled GEMM (rows of C split, A's rows and all of B read) and an
//! all-pairs n-body step (every body reads every position, writes its own).

use crate::{agree, values, Bench, Res, Row, Run};
use clgroups::scaling::ColoredBuffer;
use clgroups::{Buffer, LocalSize, Range};

/// C = A B for `side` x `side` matrices, 16 x 16 work-groups.
pub fn gemm(b: &Bench, side: usize, runs: usize) -> Res<Row> {
    let (a, m) = (
        values(side * side, 11, -1.0, 1.0),
        values(side * side, 12, -1.0, 1.0),
    );
    let (k1, kn) = (b.k1("gemm")?, b.kn("gemm")?);
    let (a1, m1) = (Buffer::from_slice(b.q, &a)?, Buffer::from_slice(b.q, &m)?);
    let c1 = Buffer::<f32>::new(b.q, side * side)?;
    let (an, mn) = (
        ColoredBuffer::from_slice(b.root, &a)?,
        ColoredBuffer::from_slice(b.root, &m)?,
    );
    let cn = ColoredBuffer::<f32>::new(b.root, side * side)?;
    let (g, l, n) = (Range::d2(side, side), Range::d2(16, 16), side as i32);
    let run1 = || -> Res<()> {
        let launch = k1.launch().arg(&a1).arg(&m1).arg(&c1).arg(n);
        // SAFETY: (col, row) reads row `row` of a and column `col` of b (n x n each, n a
        // multiple of 16 = the tile) and writes c[row * n + col].
        Ok(unsafe { launch.nd_range(g, LocalSize::Exact(l)) }?.wait()?)
    };
    let runn = || -> Res<()> {
        let launch = kn.launch().arg(&an).arg(&mn).arg(&cn).arg(n);
        // SAFETY: as above.
        let ev = unsafe { launch.nd_range(g, LocalSize::Exact(l)) }?;
        ev.wait()?;
        b.note(&ev);
        Ok(())
    };
    run1()?;
    runn()?;
    agree("gemm", &cn.read()?, &c1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(runn)];
    Ok((b.rounds(runs, 1, &mut cases)?, String::new()))
}

/// One step of `bodies` bodies: positions `pos` to `out`, velocities updated in place.
pub fn nbody(b: &Bench, bodies: usize, runs: usize) -> Res<Row> {
    let pos: Vec<f32> = values(4 * bodies, 13, -10.0, 10.0)
        .chunks(4)
        .flat_map(|p| [p[0], p[1], p[2], 0.5 + p[3].abs() / 20.0])
        .collect();
    let vel = vec![0.0f32; 4 * bodies];
    let (k1, kn) = (b.k1("nbody")?, b.kn("nbody")?);
    let (p1, v1) = (
        Buffer::from_slice(b.q, &pos)?,
        Buffer::from_slice(b.q, &vel)?,
    );
    let o1 = Buffer::<f32>::new(b.q, 4 * bodies)?;
    let (pn, vn) = (
        ColoredBuffer::from_slice(b.root, &pos)?,
        ColoredBuffer::from_slice(b.root, &vel)?,
    );
    let on = ColoredBuffer::<f32>::new(b.root, 4 * bodies)?;
    let (n, dt) = (bodies as i32, 1e-3f32);
    let run1 = || -> Res<()> {
        let launch = k1.launch().arg(&p1).arg(&v1).arg(&o1).arg(n).arg(dt);
        // SAFETY: body i < n reads pos[0 .. 4n] and touches vel[4i .. 4i + 3], out[4i .. 4i + 4],
        // all buffers of 4n elements.
        Ok(unsafe { launch.range(bodies) }?.wait()?)
    };
    let runn = || -> Res<()> {
        let launch = kn.launch().arg(&pn).arg(&vn).arg(&on).arg(n).arg(dt);
        // SAFETY: as above.
        let ev = unsafe { launch.range(bodies) }?;
        ev.wait()?;
        b.note(&ev);
        Ok(())
    };
    run1()?;
    runn()?;
    agree("n-body positions", &on.read()?, &o1.read(b.q)?)?;
    agree("n-body velocities", &vn.read()?, &v1.read(b.q)?)?;
    let mut cases: Vec<Run> = vec![Box::new(run1), Box::new(runn)];
    Ok((b.rounds(runs, 1, &mut cases)?, String::new()))
}
