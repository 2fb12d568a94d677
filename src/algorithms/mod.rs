//! Device-wide algorithms built on the sub-group layer: reduce (sum, min, max) and inclusive /
//! exclusive scan (sum) over a [`Buffer`] of `int`, `uint`, `long`, `ulong`, `float` or `double`
//! (`double` where the device has `cl_khr_fp64`).
//!
//! Every call goes through the queue's cached state (kernels and buffers built on first use,
//! kept while the queue lives): a blocking reduce is one launch and one read of the result
//! into pinned host memory with one bounded wait, a blocking scan one to three launches and
//! one wait. On NVIDIA a blocking call makes no events and no read: the result is posted into
//! pinned host memory by the kernel that computes it (`CLGROUPS_POST=0` turns it off). The `enqueue_*` forms return at once with an [`Event`]; their result stays on the
//! device (later launches on the same in-order queue see it). The kernels follow the device
//! (`plan`):
//!
//! * **Reduce, GPUs**: each work-group strides over the input with 4-wide vector loads into
//!   four accumulators, reduces across the sub-group (`sg_reduce_*`) and across sub-groups
//!   through local memory, and stores one partial; on NVIDIA the last work-group to finish
//!   (an atomic counter between device-scope fences) reduces the partials in the same launch,
//!   elsewhere a second launch of one work-group does.
//! * **Reduce, CPUs**: one work-item per work-group, each summing a contiguous run with 8-wide
//!   vectors (the loop PoCL compiles to SIMD code); the last to finish adds the partials.
//! * **Scan, NVIDIA** (32-bit types): a single pass with decoupled look-back: work-groups take
//!   tiles of 8192 elements (32768 from 2^26 elements on) in the order they start (an atomic
//!   ticket), publish the tile's sum, then add their predecessors' published sums, which
//!   needs forward progress only from work-groups already running.
//! * **Scan, CPUs**: run sums, then each run scanned from the sum of the runs before it, 8
//!   elements at a time (two launches of one-work-item groups: no cross-group waiting, which
//!   PoCL does not promise to make progress).
//! * **Scan, elsewhere** (and 64-bit types on NVIDIA): reduce-then-scan in three launches.
//!
//! Accuracy: integer results are exact (wrapping on overflow, as in OpenCL C). Float and double
//! sums are not summed in order; the error is bounded by `|s - S| <= (n - 1) ε Σ|x_i|`
//! (ε = 2^-24 for `float`, 2^-53 for `double`; in practice far smaller). Min and max are
//! exact. NaN inputs give unspecified results.
//!
//! ```no_run
//! use clgroups::{algorithms, Buffer, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let x = Buffer::from_slice(&q, &[3i32, -1, 4, 1, -5])?;
//! assert_eq!(algorithms::reduce_sum(&q, &x)?, 2);
//! assert_eq!(algorithms::reduce_min(&q, &x)?, -5);
//! let mut y = Buffer::new(&q, 5)?;
//! algorithms::inclusive_scan_sum(&q, &x, &mut y)?;
//! assert_eq!(y.read(&q)?, vec![3, 2, 6, 7, 2]);
//! // Non-blocking: the sum stays on the device, in `total[0]`.
//! let total = Buffer::new(&q, 1)?;
//! let done = algorithms::enqueue_reduce(&q, &x, algorithms::ReduceOp::Sum, &total)?;
//! done.wait()?;
//! assert_eq!(total.read(&q)?, vec![2]);
//! # Ok::<(), clgroups::Error>(())
//! ```

mod cache;
#[cfg(feature = "scaling")]
pub(crate) mod multi;
#[cfg(feature = "unstable-internals")]
#[doc(hidden)]
pub mod plan;
#[cfg(not(feature = "unstable-internals"))]
pub(crate) mod plan;
mod post;
mod reduce;
mod scan;
mod wait;

use crate::error::{Error, InputFault, Result, Unsupported};
use plan::PlanInputs;
pub use plan::{LaunchPlan, ScanForm};
pub use reduce::{enqueue_reduce, reduce, reduce_max, reduce_min, reduce_sum, Reduction};
pub use scan::{enqueue_scan_sum, exclusive_scan_sum, inclusive_scan_sum, ScanKind};
pub use wait::{look_back_wait_ns, scan_form};

use crate::buffer::{Buffer, Scalar};
use crate::device::ShuffleBackend;
use crate::kernel::Kernel;
use crate::launch::{Event, Local, LocalSize};
use crate::program::Program;
use crate::queue::Queue;
use crate::range::Range;
use std::ops::Add;

/// The OpenCL C source of the reduce and scan kernels.
pub const SOURCE: &str = concat!(
    include_str!("../../cl/algorithms/reduce.cl"),
    include_str!("../../cl/algorithms/scan.cl"),
    include_str!("../../cl/algorithms/scan_persist.cl")
);

mod sealed {
    pub trait Sealed: Copy {
        /// `op` of two values on the host, as a device computes it (integers wrap): how
        /// per-device results are combined without another round trip to a device.
        fn combine(self, op: super::ReduceOp, other: Self) -> Self;
    }
}

/// Element types of the algorithms: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
pub trait Element: Scalar + sealed::Sealed {
    /// OpenCL C expression of the identity of `min` (the type's largest value).
    const MIN_IDENTITY: &'static str;
    /// OpenCL C expression of the identity of `max` (the type's smallest value).
    const MAX_IDENTITY: &'static str;
    /// Whether the type needs `cl_khr_fp64`.
    const NEEDS_FP64: bool = false;
}

macro_rules! element {
    ($t:ty, $min:literal, $max:literal, $sum:ident, $lo:path, $hi:path $(, $fp64:literal)?) => {
        impl sealed::Sealed for $t {
            fn combine(self, op: ReduceOp, other: Self) -> Self {
                match op {
                    ReduceOp::Sum => self.$sum(other),
                    ReduceOp::Min => $lo(self, other),
                    ReduceOp::Max => $hi(self, other),
                }
            }
        }
        impl Element for $t {
            const MIN_IDENTITY: &'static str = $min;
            const MAX_IDENTITY: &'static str = $max;
            $(const NEEDS_FP64: bool = $fp64;)?
        }
    };
}

element!(i32, "INT_MAX", "INT_MIN", wrapping_add, Ord::min, Ord::max);
element!(u32, "UINT_MAX", "0u", wrapping_add, Ord::min, Ord::max);
element!(
    i64,
    "LONG_MAX",
    "LONG_MIN",
    wrapping_add,
    Ord::min,
    Ord::max
);
element!(u64, "ULONG_MAX", "0ul", wrapping_add, Ord::min, Ord::max);
element!(f32, "INFINITY", "(-INFINITY)", add, f32::min, f32::max);
element!(
    f64,
    "INFINITY",
    "(-INFINITY)",
    add,
    f64::min,
    f64::max,
    true
);

/// A reduction operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `a + b` (identity 0).
    Sum,
    /// `min(a, b)` (identity: the type's largest value).
    Min,
    /// `max(a, b)` (identity: the type's smallest value).
    Max,
}

impl ReduceOp {
    fn code(self) -> u8 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Min => 1,
            ReduceOp::Max => 2,
        }
    }

    fn identity<T: Element>(self) -> &'static str {
        match self {
            ReduceOp::Sum => "0",
            ReduceOp::Min => T::MIN_IDENTITY,
            ReduceOp::Max => T::MAX_IDENTITY,
        }
    }
}

/// The kernels and buffers of one (queue, element type, operation).
pub(crate) struct State<T: Element> {
    queue: Queue,
    inputs: PlanInputs,
    tile: plan::Tile,
    /// `CLGROUPS_SCAN_WAIT_NS`: every look-back tile's wait.
    forced_wait: Option<u32>,
    k: Kernels,
    /// One partial per work-group of a reduce, or one sum per chunk of a scan (grows).
    partials: Buffer<T>,
    /// Reduce-then-scan: the chunks' offsets (grows).
    offsets: Option<Buffer<T>>,
    /// The reduce's finalisation counter or the look-back ticket (every launch leaves it 0).
    counters: Buffer<u32>,
    /// The blocking reduce's result.
    result: Buffer<T>,
    /// Where the blocking reduce reads its result to (built on first use; `Err` where the
    /// device has no pinned memory: `result` is read through [`Buffer::read_into`] then).
    pinned: Option<std::result::Result<crate::ffi::Pinned<T>, ()>>,
    /// The persistent scan's kernel (`wait.rs`; built on the first large scan, `Err` where it
    /// cannot run).
    persistent: Option<std::result::Result<Kernel, ()>>,
    /// Look-back tile states (grows), and the epoch of the next launch (1 ..< 2^30).
    tiles: Option<Buffer<u64>>,
    epoch: u32,
    /// Where `clg_post` writes results ([`post`]; set up on the first blocking call, `Err`
    /// where the device cannot take posts), and the number of the last post.
    mailbox: Option<std::result::Result<crate::ffi::Mailbox, ()>>,
    seq: u32,
    /// `multi`'s carry kernel (built on first use).
    #[cfg(feature = "scaling")]
    carry: Option<Kernel>,
}

impl<T: Element> State<T> {
    fn new(queue: &Queue, op: ReduceOp) -> Result<Self> {
        let device = queue.device();
        if T::NEEDS_FP64 && !device.limits().fp64 {
            return Err(Error::Unsupported {
                device: device.to_string(),
                what: Unsupported::Fp64 { ty: T::CL_NAME },
            });
        }
        let nvidia = device.sub_groups().effective.shuffle_backend == ShuffleBackend::NvidiaPtx;
        let lookback = nvidia && size_of::<T>() == 4;
        let forced = crate::config::typed_tuning(crate::config::SCAN_TILE, plan::Tile::parse);
        let tile = forced.unwrap_or(plan::Tile::DEFAULT);
        // Every tile's look-back wait, for tuning (else none for the default tiles, and for the
        // large ones what the device's first large scan measures: `wait`).
        let forced_wait = crate::config::settings().scan_wait_ns();
        let program = build::<T>(queue, op, lookback, tile)?;
        let lookback_kernel = |program: &Program, tile: plan::Tile| -> Result<Option<Kernel>> {
            let k = program.kernel("clg_scan_lookback")?;
            let fits = k.limits().max_work_group_size >= tile.local;
            if !fits {
                log::warn!("algorithms: look-back tile {tile:?} exceeds {k:?}'s work-group limit on {device}");
            }
            Ok(fits.then_some(k))
        };
        // Scans are sums: only their state needs the large tile's kernel.
        let large = match lookback && forced.is_none() && op == ReduceOp::Sum {
            true => lookback_kernel(
                &build::<T>(queue, op, true, plan::Tile::LARGE)?,
                plan::Tile::LARGE,
            )?,
            false => None,
        };
        let k = Kernels {
            reduce: program.kernel("clg_reduce")?,
            reduce_seq: program.kernel("clg_reduce_seq")?,
            chunk_reduce: program.kernel("clg_chunk_reduce")?,
            chunk_scan: program.kernel("clg_chunk_scan")?,
            scan_seq_sums: program.kernel("clg_scan_seq_sums")?,
            scan_seq: program.kernel("clg_scan_seq")?,
            lookback: match lookback {
                true => lookback_kernel(&program, tile)?,
                false => None,
            },
            large,
            post: match nvidia {
                true => Some(program.kernel("clg_post")?),
                false => None,
            },
        };
        let limit = |k: &Kernel| k.limits().max_work_group_size;
        let max_wg = [&k.reduce, &k.chunk_reduce, &k.chunk_scan]
            .into_iter()
            .map(limit)
            .min()
            .unwrap_or(1);
        let compute_units = device.raw().max_compute_units().map_err(|e| {
            Error::cl(
                "clGetDeviceInfo(MAX_COMPUTE_UNITS)",
                e.0,
                device.to_string(),
            )
        })?;
        let inputs = PlanInputs {
            kind: device.kind(),
            max_work_group_size: max_wg,
            sub_group_size: device.sub_groups().effective.primary_sub_group_size,
            compute_units: compute_units as usize,
            nvidia,
        };
        log::debug!(
            "algorithms: built {} for {op:?} on {device}: {inputs:?}",
            T::CL_NAME
        );
        let mut counters = Buffer::new(queue.context(), 1)?;
        counters.fill(queue, 0)?;
        Ok(State {
            queue: queue.clone(),
            inputs,
            partials: Buffer::new(queue.context(), plan::max_groups(&inputs))?,
            offsets: None,
            counters,
            result: Buffer::new(queue.context(), 1)?,
            pinned: None,
            persistent: None,
            tiles: None,
            epoch: 1,
            mailbox: None,
            seq: 0,
            #[cfg(feature = "scaling")]
            carry: None,
            tile,
            forced_wait,
            k,
        })
    }
}

/// The algorithms' program for `T` and `op`, look-back tiles of `tile` (their wait is an
/// argument, chosen in `wait.rs`).
fn build<T: Element>(
    queue: &Queue,
    op: ReduceOp,
    lookback: bool,
    tile: plan::Tile,
) -> Result<Program> {
    let options = format!(
        "-DCLG_T={} -DCLG_OP={} -DCLG_ID={} -DCLG_LOOKBACK={} -DCLG_LB_LOCAL={} \
         -DCLG_LB_ROUNDS={}",
        T::CL_NAME,
        op.code(),
        op.identity::<T>(),
        u8::from(lookback),
        tile.local,
        tile.rounds,
    );
    log::debug!("algorithms: building {options} on {}", queue.device());
    Program::builder(SOURCE)
        .file_name("clgroups/algorithms/reduce.cl")
        .options(&options)
        .build(queue)
}

/// The kernels of one program (one per element type and operation).
struct Kernels {
    reduce: Kernel,
    reduce_seq: Kernel,
    chunk_reduce: Kernel,
    chunk_scan: Kernel,
    scan_seq_sums: Kernel,
    scan_seq: Kernel,
    lookback: Option<Kernel>,
    /// The look-back scan in [`plan::Tile::LARGE`] tiles, for inputs of at least
    /// [`plan::Tile::LARGE_FROM`] (none where `CLGROUPS_SCAN_TILE` forces one tile).
    large: Option<Kernel>,
    /// Writes a result into a [`crate::ffi::Mailbox`] (NVIDIA: [`post`]).
    post: Option<Kernel>,
}

/// `buf` if it holds at least `len` elements, else a new buffer of `len`.
fn at_least<T: Scalar>(buf: &mut Option<Buffer<T>>, queue: &Queue, len: usize) -> Result<()> {
    if buf.as_ref().is_none_or(|b| b.len() < len) {
        *buf = Some(Buffer::new(queue.context(), len)?);
    }
    Ok(())
}

fn same_context<T: Scalar>(queue: &Queue, buffer: &Buffer<T>, what: &'static str) -> Result<()> {
    if queue.context().key() == buffer.context().key() {
        Ok(())
    } else {
        Err(Error::input(InputFault::BufferContext {
            what,
            device: queue.device().to_string(),
        }))
    }
}

/// How the caller learns that a call's launches completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Track {
    /// Through their events (the enqueue forms return them).
    Events,
    /// Through a post that follows them ([`post`]): the launches make no event.
    Posted,
}

/// The state behind a lock; a poisoned lock only means a panic elsewhere while it was held,
/// and the state is still whole.
pub(super) fn lock<S>(m: &std::sync::Mutex<S>) -> std::sync::MutexGuard<'_, S> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Local memory for the kernels' one slot per sub-group, sized for one per work-item: the
/// sub-group size a compiler picks for a kernel may be smaller than the device's primary one.
fn per_sub_group<T: Scalar>(local: usize) -> Local<T> {
    Local::new(local)
}

/// The one place the algorithms enqueue a kernel: `kernel` with `args` over `p`, after
/// checking that every buffer the plan's work-groups index is long enough (`needs`: each
/// buffer with the elements the kernel may touch for this plan).
///
/// # Safety
///
/// The contract of [`crate::launch::Launch::nd_range`]: `needs` must list every buffer
/// argument with an upper bound of the elements the kernel touches in it for `p`, as derived
/// from the kernel's source in `cl/algorithms/`; local arguments hold one slot per
/// work-item ([`per_sub_group`]).
unsafe fn launch(
    kernel: &Kernel,
    args: Vec<crate::launch::Arg>,
    p: LaunchPlan,
    needs: &[(usize, usize)],
    how: Track,
) -> Result<Event> {
    if let Some((len, need)) = needs.iter().find(|(len, need)| len < need) {
        return Err(Error::input(InputFault::PlanBuffer {
            kernel: kernel.name().into(),
            len: *len,
            plan: format!("{p:?}"),
            need: *need,
        }));
    }
    let mut l = kernel.launch();
    for a in args {
        l = l.raw_arg(a);
    }
    if how == Track::Posted {
        l = l.detached();
    }
    // SAFETY: the caller's contract; the lengths were checked above.
    unsafe {
        l.nd_range(
            Range::d1(p.local * p.groups),
            LocalSize::Exact(Range::d1(p.local)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sealed::Sealed;

    #[test]
    fn host_combines_as_a_device_does() {
        assert_eq!(i32::MAX.combine(ReduceOp::Sum, 1), i32::MIN);
        assert_eq!(u64::MAX.combine(ReduceOp::Sum, 2), 1);
        assert_eq!((-3i64).combine(ReduceOp::Min, 2), -3);
        assert_eq!(7u32.combine(ReduceOp::Max, 9), 9);
        assert_eq!(1.5f32.combine(ReduceOp::Sum, 2.25), 3.75);
        assert_eq!(f64::NEG_INFINITY.combine(ReduceOp::Max, -1.0), -1.0);
        assert_eq!(0.5f32.combine(ReduceOp::Min, -0.25), -0.25);
    }

    #[test]
    fn cache_entries_end_with_their_queue() {
        let Some(device) = crate::device::test_device() else {
            return;
        };
        let _serial = lock(&cache::TESTS);
        let base = cache::queues();
        for _ in 0..3 {
            let q = Queue::new(&device).expect("queue");
            let x = Buffer::from_slice(&q, &[1i32, 2, 3]).expect("buffer");
            assert_eq!(reduce_sum(&q, &x).expect("sum"), 6);
            assert_eq!(cache::queues(), base + 1);
        }
        assert_eq!(cache::queues(), base);
    }

    /// The GPU kernels (two launches or one, reduce-then-scan) on whatever device is here:
    /// PoCL would otherwise only run the CPU kernels.
    #[test]
    fn gpu_paths_on_this_device() {
        let Some(device) = crate::device::test_device() else {
            return;
        };
        let q = Queue::new(&device).expect("queue");
        for one_launch in [false, true] {
            let mut s = State::<i32>::new(&q, ReduceOp::Sum).expect("state");
            s.inputs.kind = crate::plan::local_size::DeviceKind::Gpu;
            s.inputs.nvidia = one_launch;
            s.inputs.compute_units = 3;
            s.partials = Buffer::new(q.context(), plan::max_groups(&s.inputs)).expect("partials");
            for n in [1usize, 5, 4099, 100_003, 1 << 20] {
                let x: Vec<i32> = (0..n as i32).map(|i| i % 1009 - 500).collect();
                let input = Buffer::from_slice(&q, &x).expect("input");
                let out = Buffer::new(q.context(), n).expect("output");
                s.enqueue_reduce(&input, &s.result, None).expect("reduce");
                let want: i32 = x.iter().sum();
                assert_eq!(s.result.read(&q).expect("read"), vec![want], "n = {n}");
                s.enqueue_scan(&input, &out, ScanKind::Exclusive, Track::Events)
                    .expect("scan");
                let got = out.read(&q).expect("read");
                let mut acc = 0;
                for (i, v) in x.iter().enumerate() {
                    assert_eq!(got[i], acc, "exclusive scan of {n}, element {i}");
                    acc += v;
                }
            }
        }
    }
}
