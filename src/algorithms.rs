//! Device-wide algorithms built on the sub-group layer: reduce (sum, min, max) and inclusive /
//! exclusive scan (sum) over a [`Buffer`] of `int`, `uint`, `long`, `ulong`, `float` or `double`
//! (`double` where the device has `cl_khr_fp64`).
//!
//! **Reduce** reads the input once: each work-group strides over the whole grid with 4-wide
//! vector loads into four independent accumulators, reduces them in registers, then across the
//! sub-group (`sg_reduce_*`) and across sub-groups through local memory, writing one partial per
//! work-group; a second launch of one work-group reduces the partials.
//! **Scan** is reduce-then-scan: the sum of each chunk of the input, an exclusive scan of those
//! sums (one work-group), then a scan of every chunk from its offset (sequential in registers
//! over 4 elements per work-item, `sg_exclusive_scan_add` across the sub-group, local memory
//! across sub-groups, a running carry across tiles).
//!
//! Work-group sizes and counts come from the device ([`plan`]); built kernels are cached per
//! queue, for the 16 most recently used (queue, type, operation) sets (each entry keeps its
//! queue alive, so the cache is bounded).
//!
//! Accuracy: integer results are exact (wrapping on overflow, as in OpenCL C). Float and double
//! sums are not summed in order; the error is bounded by `|s - S| <= (n - 1) ε Σ|x_i|`
//! (ε = 2^-24 for `float`, 2^-53 for `double`; in practice far smaller, as the tree makes the
//! depth ≈ log2 n + n / (work-items)). Min and max are exact. NaN inputs give unspecified
//! results.
//!
//! ```no_run
//! use clgroups::{algorithms, Buffer, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let x = Buffer::from_slice(&q, &[3i32, -1, 4, 1, -5])?;
//! assert_eq!(algorithms::reduce_sum(&q, &x)?, 2);
//! assert_eq!(algorithms::reduce_min(&q, &x)?, -5);
//! let mut y = Buffer::new(q.context(), 5)?;
//! algorithms::inclusive_scan_sum(&q, &x, &mut y)?;
//! assert_eq!(y.read(&q)?, vec![3, 2, 6, 7, 2]);
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::buffer::{Buffer, Scalar};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::launch::{Event, Local, LocalSize};
use crate::plan::local_size::DeviceKind;
use crate::program::Program;
use crate::queue::Queue;
use crate::range::Range;
use once_cell::sync::Lazy;
use std::sync::Mutex;

/// The OpenCL C source of the reduce and scan kernels.
pub const REDUCE_SOURCE: &str = include_str!("../cl/algorithms/reduce.cl");

mod sealed {
    pub trait Sealed {}
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
    ($t:ty, $min:literal, $max:literal $(, $fp64:literal)?) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const MIN_IDENTITY: &'static str = $min;
            const MAX_IDENTITY: &'static str = $max;
            $(const NEEDS_FP64: bool = $fp64;)?
        }
    };
}

element!(i32, "INT_MAX", "INT_MIN");
element!(u32, "UINT_MAX", "0u");
element!(i64, "LONG_MAX", "LONG_MIN");
element!(u64, "ULONG_MAX", "0ul");
element!(f32, "INFINITY", "(-INFINITY)");
element!(f64, "INFINITY", "(-INFINITY)", true);

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

/// What the launch plans need to know about a kernel on a device (gathered by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanInputs {
    /// The kind of device.
    pub kind: DeviceKind,
    /// The kernel's largest work-group (`min(CL_KERNEL_WORK_GROUP_SIZE, device max)`).
    pub max_work_group_size: usize,
    /// The kernels' sub-group size (the device's primary size).
    pub sub_group_size: usize,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: usize,
}

/// The shape of a reduce or scan launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Work-items per work-group (a multiple of the sub-group size).
    pub local: usize,
    /// Number of work-groups.
    pub groups: usize,
}

/// Launch planning (pure).
pub mod plan {
    use super::{DeviceKind, LaunchPlan, PlanInputs};

    /// Elements each work-item should read at least once per launch (4 vectors of 4).
    const ITEM_GRAIN: usize = 16;

    /// The work-group size: 256 on GPUs (enough warps to hide latency, few enough for many
    /// groups per compute unit), 64 on CPUs (PoCL runs a work-group as a loop on one thread;
    /// smaller groups balance better), rounded down to a multiple of the sub-group size within
    /// the kernel's limit.
    ///
    /// ```
    /// use clgroups::algorithms::{plan, PlanInputs};
    /// use clgroups::plan::local_size::DeviceKind;
    /// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
    ///                         sub_group_size: 32, compute_units: 132 };
    /// assert_eq!(plan::local_size(&h100), 256);
    /// ```
    pub fn local_size(d: &PlanInputs) -> usize {
        let want = match d.kind {
            DeviceKind::Gpu => 256,
            DeviceKind::Cpu => 64,
            DeviceKind::Accelerator | DeviceKind::Other => 64,
        };
        let s = d.sub_group_size.max(1);
        let cap = d.max_work_group_size.max(1);
        let local = if s > cap {
            cap
        } else {
            (want.min(cap) / s).max(1) * s
        };
        log::debug!("algorithms: work-group size {local} (wanted {want}, {d:?})");
        local
    }

    /// The most work-groups worth launching: enough to fill the device (8 per compute unit on
    /// GPUs, 4 on CPUs and others).
    pub fn max_groups(d: &PlanInputs) -> usize {
        let per_cu = if d.kind == DeviceKind::Gpu { 8 } else { 4 };
        d.compute_units.max(1) * per_cu
    }

    /// The plan of the reduce's first launch over `n` elements: as many groups as fill the
    /// device, fewer when each work-item would read less than 16 elements.
    ///
    /// ```
    /// use clgroups::algorithms::{plan, LaunchPlan, PlanInputs};
    /// use clgroups::plan::local_size::DeviceKind;
    /// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
    ///                         sub_group_size: 32, compute_units: 132 };
    /// assert_eq!(plan::reduce(1 << 28, &h100), LaunchPlan { local: 256, groups: 1056 });
    /// assert_eq!(plan::reduce(1, &h100), LaunchPlan { local: 256, groups: 1 });
    /// ```
    pub fn reduce(n: usize, d: &PlanInputs) -> LaunchPlan {
        let local = local_size(d);
        let groups = n.div_ceil(local * ITEM_GRAIN).clamp(1, max_groups(d));
        log::debug!("algorithms: reduce of {n}: {groups} groups of {local}");
        LaunchPlan { local, groups }
    }

    /// The chunk length (a multiple of 4 × the work-group size) and plan of a scan's passes
    /// over `n` elements: work-group `g` owns elements `[g·chunk, (g+1)·chunk)`.
    ///
    /// ```
    /// use clgroups::algorithms::{plan, LaunchPlan, PlanInputs};
    /// use clgroups::plan::local_size::DeviceKind;
    /// let cpu = PlanInputs { kind: DeviceKind::Cpu, max_work_group_size: 4096,
    ///                        sub_group_size: 8, compute_units: 2 };
    /// assert_eq!(plan::scan(1000, &cpu), (256, LaunchPlan { local: 64, groups: 4 }));
    /// ```
    pub fn scan(n: usize, d: &PlanInputs) -> (usize, LaunchPlan) {
        let local = local_size(d);
        let tile = 4 * local;
        let chunk = n.div_ceil(max_groups(d)).div_ceil(tile).max(1) * tile;
        let groups = n.div_ceil(chunk).max(1);
        log::debug!("algorithms: scan of {n}: {groups} chunks of {chunk} in groups of {local}");
        (chunk, LaunchPlan { local, groups })
    }
}

/// The three kernels of one (queue, type, operation), built once.
#[derive(Clone)]
struct Kernels {
    reduce: Kernel,
    chunk_reduce: Kernel,
    chunk_scan: Kernel,
    inputs: PlanInputs,
}

/// Queue (alive while its entry is: the kernels hold it), type, operation.
type CacheKey = (usize, &'static str, u8);

/// The most recently used kernel sets, newest first. Bounded: an entry keeps its queue and
/// context alive, so an unbounded cache would keep every queue ever used.
static KERNELS: Lazy<Mutex<Vec<(CacheKey, Kernels)>>> = Lazy::new(Default::default);

/// Kernel sets [`KERNELS`] keeps.
const CACHED_KERNEL_SETS: usize = 16;

fn kernels<T: Element>(queue: &Queue, op: ReduceOp) -> Result<Kernels> {
    let key = (queue.raw().get() as usize, T::CL_NAME, op.code());
    // A poisoned lock only means a panic elsewhere while it was held; the list is intact.
    let cache = || {
        KERNELS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    {
        let mut c = cache();
        if let Some(i) = c.iter().position(|(k, _)| *k == key) {
            let hit = c.remove(i);
            c.insert(0, hit.clone());
            return Ok(hit.1);
        }
    }
    let built = build::<T>(queue, op)?;
    let mut c = cache();
    c.insert(0, (key, built.clone()));
    c.truncate(CACHED_KERNEL_SETS);
    Ok(built)
}

fn build<T: Element>(queue: &Queue, op: ReduceOp) -> Result<Kernels> {
    let device = queue.device();
    if T::NEEDS_FP64 && !device.limits().fp64 {
        return Err(Error::Unsupported {
            device: device.to_string(),
            what: format!("algorithms on {}", T::CL_NAME),
            missing: "cl_khr_fp64".into(),
        });
    }
    let contiguous = u8::from(device.kind() == DeviceKind::Cpu);
    let options = format!(
        "-DCLG_T={} -DCLG_OP={} -DCLG_ID={} -DCLG_ITEM_CONTIGUOUS={contiguous}",
        T::CL_NAME,
        op.code(),
        op.identity::<T>()
    );
    let program = Program::builder(REDUCE_SOURCE)
        .file_name("clgroups/algorithms/reduce.cl")
        .options(&options)
        .build(queue)?;
    let reduce = program.kernel("clg_reduce")?;
    let chunk_reduce = program.kernel("clg_chunk_reduce")?;
    let chunk_scan = program.kernel("clg_chunk_scan")?;
    let max_wg = [&reduce, &chunk_reduce, &chunk_scan]
        .iter()
        .map(|k| k.limits().max_work_group_size)
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
    };
    log::debug!("algorithms: built {options} on {device}: {inputs:?}");
    Ok(Kernels {
        reduce,
        chunk_reduce,
        chunk_scan,
        inputs,
    })
}

fn same_context<T: Scalar>(queue: &Queue, buffer: &Buffer<T>, what: &str) -> Result<()> {
    if queue.context().key() == buffer.context().key() {
        Ok(())
    } else {
        Err(Error::input(format!(
            "{what}: the buffer belongs to another context than the queue on {}",
            queue.device()
        )))
    }
}

/// Local memory for the kernels' one slot per sub-group, sized for one per work-item: the
/// sub-group size a compiler picks for a kernel may be smaller than the device's primary one.
fn per_work_item<T: Scalar>(local: usize) -> Local<T> {
    Local::new(local)
}

/// A reusable reduction on one queue: kernels, the partials buffer and the result buffer.
/// [`Reduction::enqueue`] only launches (for timing); [`Reduction::run`] also reads the result.
///
/// ```no_run
/// use clgroups::{algorithms::{ReduceOp, Reduction}, Buffer, Queue};
/// let q = Queue::new(&clgroups::default_device()?)?;
/// let x = Buffer::from_slice(&q, &[1.5f32, 2.5, 3.0])?;
/// let mut sum = Reduction::<f32>::new(&q, ReduceOp::Sum)?;
/// assert_eq!(sum.run(&x)?, 7.0);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct Reduction<T: Element> {
    queue: Queue,
    kernels: Kernels,
    partials: Buffer<T>,
    result: Buffer<T>,
    /// Whether a reduction was enqueued (before that, `result` is uninitialised).
    enqueued: bool,
}

impl<T: Element> Reduction<T> {
    /// Builds (or finds in the cache) the kernels of `op` on `T` for the queue's device.
    pub fn new(queue: &Queue, op: ReduceOp) -> Result<Self> {
        let kernels = kernels::<T>(queue, op)?;
        let partials = Buffer::new(queue.context(), plan::max_groups(&kernels.inputs))?;
        let result = Buffer::new(queue.context(), 1)?;
        Ok(Reduction {
            queue: queue.clone(),
            kernels,
            partials,
            result,
            enqueued: false,
        })
    }

    /// The plan of the first launch for an input of `n` elements.
    pub fn plan(&self, n: usize) -> LaunchPlan {
        plan::reduce(n, &self.kernels.inputs)
    }

    /// Enqueues the reduction of `input` into the result buffer; returns the launches' events
    /// (one when a single work-group suffices, else two).
    pub fn enqueue(&mut self, input: &Buffer<T>) -> Result<Vec<Event>> {
        same_context(&self.queue, input, "reduce")?;
        let p = self.plan(input.len());
        let n = input.len();
        let events = if p.groups == 1 {
            vec![self.launch(input, &self.result, n, p)?]
        } else {
            let first = self.launch(input, &self.partials, n, p)?;
            let one = LaunchPlan { groups: 1, ..p };
            vec![
                first,
                self.launch(&self.partials, &self.result, p.groups, one)?,
            ]
        };
        self.enqueued = true;
        Ok(events)
    }

    /// Reduces `input` and returns the result.
    pub fn run(&mut self, input: &Buffer<T>) -> Result<T> {
        self.enqueue(input)?;
        self.result()
    }

    /// Reads the result of the last [`Reduction::enqueue`] (blocking); an
    /// [`Error::InvalidInput`] before the first.
    pub fn result(&self) -> Result<T> {
        if !self.enqueued {
            return Err(Error::input(
                "Reduction::result before any enqueue or run: there is no result yet",
            ));
        }
        Ok(self.result.read(&self.queue)?[0])
    }

    /// Reduces the first `n` elements of `input` into `out[0..p.groups)`.
    fn launch(&self, input: &Buffer<T>, out: &Buffer<T>, n: usize, p: LaunchPlan) -> Result<Event> {
        if n > input.len() || p.groups > out.len() {
            return Err(Error::input(format!(
                "reduce: {n} of {} elements into {} of {} partials",
                input.len(),
                p.groups,
                out.len()
            )));
        }
        let launch = self
            .kernels
            .reduce
            .launch()
            .arg(input)
            .arg(out)
            .arg(n as u64)
            .arg(per_work_item::<T>(p.local));
        // SAFETY: `clg_reduce` reads `in` only below `n` <= `input.len()` (vector reads below
        // `n / 4 * 4`), writes `out[get_group_id(0)]` for `p.groups` <= `out.len()` groups, and
        // `tmp` below the sub-group count, at most one per work-item (the `Local` size). All
        // commands on these buffers run in order on `self.queue`; other queues can only make
        // the values unspecified (every bit pattern is a valid `T`), not move the accesses.
        unsafe {
            launch.nd_range(
                Range::d1(p.local * p.groups),
                LocalSize::Exact(Range::d1(p.local)),
            )
        }
    }
}

/// The sum of `input`'s elements (see the module's accuracy note for floats).
pub fn reduce_sum<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    Reduction::new(queue, ReduceOp::Sum)?.run(input)
}

/// The smallest element of `input`.
pub fn reduce_min<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    Reduction::new(queue, ReduceOp::Min)?.run(input)
}

/// The largest element of `input`.
pub fn reduce_max<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    Reduction::new(queue, ReduceOp::Max)?.run(input)
}

/// `output[i] = input[0] + ... + input[i]`; `output` has `input`'s length. Blocks until done.
pub fn inclusive_scan_sum<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
) -> Result<()> {
    scan(queue, input, output, false)
}

/// `output[i] = input[0] + ... + input[i - 1]` (`output[0] = 0`); `output` has `input`'s
/// length. Blocks until done.
pub fn exclusive_scan_sum<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
) -> Result<()> {
    scan(queue, input, output, true)
}

fn scan<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
    exclusive: bool,
) -> Result<()> {
    same_context(queue, input, "scan input")?;
    same_context(queue, output, "scan output")?;
    if output.len() != input.len() {
        return Err(Error::input(format!(
            "scan of {} elements into a buffer of {}",
            input.len(),
            output.len()
        )));
    }
    let k = kernels::<T>(queue, ReduceOp::Sum)?;
    let (chunk, p) = plan::scan(input.len(), &k.inputs);
    if p.groups == 1 {
        return chunk_scan(&k, input, output, input, false, exclusive, chunk, p)?.wait();
    }
    let sums = Buffer::new(queue.context(), p.groups)?;
    let offsets = Buffer::new(queue.context(), p.groups)?;
    chunk_reduce(&k, input, &sums, chunk, p)?;
    let one = LaunchPlan {
        local: p.local,
        groups: 1,
    };
    let all = p.groups.div_ceil(4) * 4;
    chunk_scan(&k, &sums, &offsets, &sums, false, true, all, one)?;
    chunk_scan(&k, input, output, &offsets, true, exclusive, chunk, p)?.wait()
}

fn chunk_reduce<T: Element>(
    k: &Kernels,
    input: &Buffer<T>,
    sums: &Buffer<T>,
    chunk: usize,
    p: LaunchPlan,
) -> Result<Event> {
    if p.groups > sums.len() {
        return Err(Error::input(format!(
            "scan: {} chunks into {} sums",
            p.groups,
            sums.len()
        )));
    }
    let launch = k
        .chunk_reduce
        .launch()
        .arg(input)
        .arg(sums)
        .arg(input.len() as u64)
        .arg(chunk as u64)
        .arg(per_work_item::<T>(p.local));
    // SAFETY: work-group g reads `in` in [g * chunk, min(n, (g + 1) * chunk)) with n =
    // `input.len()`, writes `out[g]` for `p.groups` <= `sums.len()` groups, and `tmp` below
    // the sub-group count (at most the work-item count, the `Local` size). One in-order queue.
    unsafe {
        launch.nd_range(
            Range::d1(p.local * p.groups),
            LocalSize::Exact(Range::d1(p.local)),
        )
    }
}

#[allow(clippy::too_many_arguments)]
fn chunk_scan<T: Element>(
    k: &Kernels,
    input: &Buffer<T>,
    output: &Buffer<T>,
    offsets: &Buffer<T>,
    has_offsets: bool,
    exclusive: bool,
    chunk: usize,
    p: LaunchPlan,
) -> Result<Event> {
    if output.len() < input.len() || (has_offsets && offsets.len() < p.groups) {
        return Err(Error::input(format!(
            "scan of {} elements into {} with {} offsets for {} chunks",
            input.len(),
            output.len(),
            offsets.len(),
            p.groups
        )));
    }
    let launch = k
        .chunk_scan
        .launch()
        .arg(input)
        .arg(output)
        .arg(input.len() as u64)
        .arg(chunk as u64)
        .arg(offsets)
        .arg(i32::from(has_offsets))
        .arg(i32::from(exclusive))
        .arg(per_work_item::<T>(p.local));
    // SAFETY: work-group g reads `in` and writes `out` only in [g * chunk, min(n, (g + 1) *
    // chunk)) with n = `input.len()` <= `output.len()` (each element access is compared with
    // that end), reads `offsets[g]` only when `has_offsets` (checked above for all
    // `p.groups`), and `tmp` below the sub-group count (at most the work-item count, the
    // `Local` size). One in-order queue.
    unsafe {
        launch.nd_range(
            Range::d1(p.local * p.groups),
            LocalSize::Exact(Range::d1(p.local)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu() -> PlanInputs {
        PlanInputs {
            kind: DeviceKind::Cpu,
            max_work_group_size: 4096,
            sub_group_size: 8,
            compute_units: 2,
        }
    }

    #[test]
    fn local_size_is_a_multiple_of_the_sub_group_within_the_limit() {
        let mut d = cpu();
        assert_eq!(plan::local_size(&d), 64);
        d.sub_group_size = 48;
        assert_eq!(plan::local_size(&d), 48);
        d.max_work_group_size = 40;
        assert_eq!(plan::local_size(&d), 40);
        d.sub_group_size = 16;
        assert_eq!(plan::local_size(&d), 32);
    }

    #[test]
    fn reduce_groups_grow_with_n_up_to_the_device() {
        let d = cpu();
        assert_eq!(plan::reduce(1, &d).groups, 1);
        assert_eq!(plan::reduce(64 * 16, &d).groups, 1);
        assert_eq!(plan::reduce(64 * 16 + 1, &d).groups, 2);
        assert_eq!(plan::reduce(1 << 24, &d).groups, 8);
    }

    #[test]
    fn scan_chunks_cover_n_and_are_tiles() {
        let d = cpu();
        for n in [1, 2, 255, 256, 257, 4099, 65537, (1 << 20) + 3] {
            let (chunk, p) = plan::scan(n, &d);
            assert_eq!(chunk % (4 * p.local), 0, "n = {n}");
            assert!(
                p.groups * chunk >= n && (p.groups - 1) * chunk < n,
                "n = {n}"
            );
            assert!(p.groups <= plan::max_groups(&d));
        }
    }
}
