//! Implicit scaling that is implicit (issue 22): kernels written the way real code is (pointer
//! offsets, transposes, 2-D images as buffers, gathers, atomics, structs, Black-Scholes,
//! mandelbrot, Rodinia-style stencils), none declaring how it reaches its buffers, launched
//! over a root device in partitioned placement (what GPUs and remote devices get) with
//! default colored buffers; every buffer is compared element by element with a run of the
//! same kernel on one device. Each launch is split, merged or sent to one device
//! ([`Spread`]), never refused and never wrong. `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no
//! multi-device setup" into a failure.

mod common;

use clgroups::launch::{Event, Launch, Local, LocalSize};
use clgroups::scaling::Spread;
use clgroups::scaling::{ColoredBuffer, MultiEvent, Placement, RootDevice, RootKernel, RootLaunch};
use clgroups::{Buffer, Kernel, Program, Queue, Range};

const SOURCE: &str = concat!(
    include_str!("cl/implicit_scaling.cl"),
    include_str!("cl/scaling_reach.cl")
);

#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Particle {
    x: f32,
    y: f32,
    z: f32,
    m: f32,
}

#[derive(Clone, Debug, PartialEq)]
enum Data {
    I(Vec<i32>),
    U(Vec<u32>),
    F(Vec<f32>),
    P(Vec<Particle>),
}

/// One kernel argument: a colored buffer, a plain buffer of the root device's context, a
/// scalar, or local memory (bytes).
#[derive(Clone, Debug)]
enum A {
    Buf(Data),
    Plain(Data),
    I(i32),
    U(u32),
    F(f32),
    Local(usize),
}

/// A buffer of either kind on either side, as a launch argument and read back.
trait Held {
    fn root_arg<'a>(&'a self, l: RootLaunch<'a>) -> RootLaunch<'a>;
    fn one_arg<'a>(&'a self, l: Launch<'a>) -> Launch<'a>;
    fn read(&self, q: &Queue) -> Data;
}

macro_rules! held {
    ($t:ty, $v:ident) => {
        impl Held for ColoredBuffer<$t> {
            fn root_arg<'a>(&'a self, l: RootLaunch<'a>) -> RootLaunch<'a> {
                l.arg(self)
            }
            fn one_arg<'a>(&'a self, _: Launch<'a>) -> Launch<'a> {
                unreachable!("colored buffers are root arguments")
            }
            fn read(&self, _: &Queue) -> Data {
                Data::$v(ColoredBuffer::read(self).unwrap())
            }
        }
        impl Held for Buffer<$t> {
            fn root_arg<'a>(&'a self, l: RootLaunch<'a>) -> RootLaunch<'a> {
                l.arg(self)
            }
            fn one_arg<'a>(&'a self, l: Launch<'a>) -> Launch<'a> {
                l.arg(self)
            }
            fn read(&self, q: &Queue) -> Data {
                Data::$v(Buffer::read(self, q).unwrap())
            }
        }
    };
}
held!(i32, I);
held!(u32, U);
held!(f32, F);
held!(Particle, P);

fn plain_held(q: &Queue, d: &Data) -> Box<dyn Held> {
    match d {
        Data::I(v) => Box::new(Buffer::from_slice(q, v).unwrap()),
        Data::U(v) => Box::new(Buffer::from_slice(q, v).unwrap()),
        Data::F(v) => Box::new(Buffer::from_slice(q, v).unwrap()),
        Data::P(v) => Box::new(Buffer::from_slice(q, v).unwrap()),
    }
}

fn colored_held(root: &RootDevice, d: &Data) -> Box<dyn Held> {
    match d {
        Data::I(v) => Box::new(ColoredBuffer::from_slice(root, v).unwrap()),
        Data::U(v) => Box::new(ColoredBuffer::from_slice(root, v).unwrap()),
        Data::F(v) => Box::new(ColoredBuffer::from_slice(root, v).unwrap()),
        Data::P(v) => Box::new(ColoredBuffer::from_slice(root, v).unwrap()),
    }
}

/// One launch: the kernel, its ranges (`local: None` is a plain range), its arguments.
struct Case {
    kernel: &'static str,
    global: Range,
    local: Option<Range>,
    args: Vec<A>,
}

impl Case {
    fn nd(kernel: &'static str, global: Range, local: Range, args: Vec<A>) -> Self {
        Case {
            kernel,
            global,
            local: Some(local),
            args,
        }
    }
    fn range(kernel: &'static str, global: Range, args: Vec<A>) -> Self {
        Case {
            kernel,
            global,
            local: None,
            args,
        }
    }
}

/// Every buffer of `c` after a launch on the single device of `q`.
fn on_one_device(q: &Queue, c: &Case) -> Vec<Data> {
    let p = Program::from_source(q, SOURCE).unwrap();
    let k = p.kernel(c.kernel).unwrap();
    let bufs = one_device_buffers(q, c);
    launch_one(&k, c, &bufs).wait().unwrap();
    bufs.iter().flatten().map(|b| b.read(q)).collect()
}

/// The buffers of `c` on `q`'s device (`None` for the other arguments).
fn one_device_buffers(q: &Queue, c: &Case) -> Vec<Option<Box<dyn Held>>> {
    (c.args.iter())
        .map(|a| match a {
            A::Buf(d) | A::Plain(d) => Some(plain_held(q, d)),
            _ => None,
        })
        .collect()
}

/// Launches `c` with kernel `k` over `bufs` on one device.
fn launch_one(k: &Kernel, c: &Case, bufs: &[Option<Box<dyn Held>>]) -> Event {
    let mut l = k.launch();
    for (a, b) in c.args.iter().zip(bufs) {
        l = match (a, b) {
            (_, Some(b)) => b.one_arg(l),
            (A::I(v), _) => l.arg(*v),
            (A::U(v), _) => l.arg(*v),
            (A::F(v), _) => l.arg(*v),
            (A::Local(n), _) => l.arg(Local::<u8>::new(*n)),
            _ => unreachable!(),
        };
    }
    // SAFETY: every case's kernel stays inside its buffers over the whole range (the host
    // sizes below).
    let ev = unsafe {
        match c.local {
            Some(local) => l.nd_range(c.global, LocalSize::Exact(local)),
            None => l.range(c.global),
        }
    };
    ev.unwrap()
}

/// Every buffer of `c` after a launch over `root`, and how it ran.
fn on_root(root: &RootDevice, c: &Case) -> (Vec<Data>, Spread) {
    try_on_root(root, c).unwrap_or_else(|e| panic!("{}: refused: {e}", c.kernel))
}

/// [`on_root`], or the launch's error.
fn try_on_root(root: &RootDevice, c: &Case) -> clgroups::Result<(Vec<Data>, Spread)> {
    let p = root.program(SOURCE).unwrap();
    let k = p.kernel(c.kernel).unwrap();
    let bufs = root_buffers(root, c);
    root.finish().unwrap();
    let ev = launch_root(&k, c, &bufs)?;
    ev.wait().unwrap();
    root.finish().unwrap();
    let out = bufs
        .iter()
        .flatten()
        .map(|b| b.read(&root.queues()[0]))
        .collect();
    Ok((out, ev.spread().clone()))
}

/// The buffers of `c` over `root`: colored, and plain ones on device 0 (`None` for the other
/// arguments).
fn root_buffers(root: &RootDevice, c: &Case) -> Vec<Option<Box<dyn Held>>> {
    (c.args.iter())
        .map(|a| match a {
            A::Buf(d) => Some(colored_held(root, d)),
            A::Plain(d) => Some(plain_held(&root.queues()[0], d)),
            _ => None,
        })
        .collect()
}

/// Launches `c` with root kernel `k` over `bufs`.
fn launch_root(
    k: &RootKernel,
    c: &Case,
    bufs: &[Option<Box<dyn Held>>],
) -> clgroups::Result<MultiEvent> {
    let mut l = k.launch();
    for (a, b) in c.args.iter().zip(bufs) {
        l = match (a, b) {
            (_, Some(b)) => b.root_arg(l),
            (A::I(v), _) => l.arg(*v),
            (A::U(v), _) => l.arg(*v),
            (A::F(v), _) => l.arg(*v),
            (A::Local(n), _) => l.arg(Local::<u8>::new(*n)),
            _ => unreachable!(),
        };
    }
    // SAFETY: as in `launch_one`, for the whole launch.
    unsafe {
        match c.local {
            Some(local) => l.nd_range(c.global, local),
            None => l.range(c.global),
        }
    }
}

/// Asserts `got` equals `want` element by element (floats within 1e-5 relative: the
/// partitioned variant is another compilation of the same code).
fn same(case: &str, got: &[Data], want: &[Data]) {
    assert_eq!(got.len(), want.len(), "{case}");
    for (b, (g, w)) in got.iter().zip(want).enumerate() {
        let close =
            |a: f32, b: f32| a == b || (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0);
        let bad = match (g, w) {
            (Data::F(g), Data::F(w)) => (0..w.len()).find(|&i| !close(g[i], w[i])),
            (Data::P(g), Data::P(w)) => (0..w.len()).find(|&i| {
                let (a, b) = (g[i], w[i]);
                !(close(a.x, b.x) && close(a.y, b.y) && close(a.z, b.z) && close(a.m, b.m))
            }),
            _ if g == w => None,
            (Data::I(g), Data::I(w)) => (0..w.len()).find(|&i| g[i] != w[i]),
            (Data::U(g), Data::U(w)) => (0..w.len()).find(|&i| g[i] != w[i]),
            _ => Some(usize::MAX),
        };
        assert!(bad.is_none(), "{case}: buffer {b} differs at {bad:?}");
    }
}

/// The root device under test in partitioned placement, not strict; `None` if there is none.
fn partitioned(test: &str) -> Option<RootDevice> {
    let root = common::root_device(test)?;
    Some(root.with_placement(Placement::Partitioned))
}

/// Runs `c` on one device and over the root device, compares, and returns how it ran.
fn check(root: &RootDevice, c: &Case) -> Spread {
    let q = Queue::new(&root.devices()[0]).unwrap();
    let want = on_one_device(&q, c);
    let (got, spread) = on_root(root, c);
    same(c.kernel, &got, &want);
    eprintln!("{}: right, {spread:?}", c.kernel);
    spread
}

#[path = "scaling_implicit/cases.rs"]
mod cases;
#[path = "scaling_implicit/order.rs"]
mod order;
#[path = "scaling_implicit/times.rs"]
mod times;
