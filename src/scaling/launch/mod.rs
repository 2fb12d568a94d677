//! [`RootLaunch`]: one ND-range split over the devices of a root device.

use super::arg::Value;
use super::{MultiEvent, RootArg, RootKernel};
use crate::error::Result;
use crate::launch::{Event, LocalSize};
use crate::plan::cost::Choice;
use crate::plan::launch::{spread, Plan, Shape as PlanShape};
use crate::plan::partition::Partition;
use crate::plan::Refusal;
use crate::range::Range;
use fallback::Shape;
use std::marker::PhantomData;
use std::sync::Arc;
use terms::{Decision, Shape3};

mod between;
mod checked;
mod chunks;
mod decide;
mod deepen;
mod execute;
mod fallback;
mod fetch;
mod footprint;
mod merge;
mod order;
mod place;
mod plain;
mod pure;
mod stay;
mod terms;
mod window;

pub(super) use between::Stage;
pub(super) use deepen::Reaches;
pub(super) use execute::sub_launch;
pub(super) use footprint::ArgRuns;
pub(super) use pure::Decided;
pub(super) use stay::WrittenRun;
pub(super) use terms::Request;
pub(super) use window::Windows;

/// A launch over several devices being prepared; [`RootLaunch::nd_range`] or
/// [`RootLaunch::range`] enqueues it.
///
/// ```
/// use clgroups::{Buffer, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let p = root.program(r#"
///     kernel void lookup(global const uint *table, global const uint *key, global uint *out) {
///         size_t i = get_global_id(0);
///         out[i] = table[key[i] % 16];
///     }
/// "#)?;
/// let lookup = p.kernel("lookup")?;
/// // A plain buffer the kernel only reads is shared by every device.
/// let table = Buffer::from_slice(&root.queues()[0], &(100..116u32).collect::<Vec<_>>())?;
/// root.finish()?;
/// let key = ColoredBuffer::from_slice(&root, &(0..1000u32).collect::<Vec<_>>())?;
/// let mut out = ColoredBuffer::<u32>::new(&root, 1000)?;
/// let launch = lookup.launch().arg(&table).arg(&key).arg(&mut out);
/// // SAFETY: table[k % 16] is inside table (16); key[i] and out[i] for i < 1000 = their len().
/// unsafe { launch.range(1000)? }.wait()?;
/// assert_eq!(out.read()?[17], 101);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a launch does nothing until nd_range() or range() is called"]
pub struct RootLaunch<'a> {
    kernel: &'a RootKernel,
    args: Vec<Value>,
    offset: Option<Range>,
    /// Events every sub-launch waits for ([`RootLaunch::wait_for`]).
    waits: Vec<&'a Event>,
    /// The buffers behind `args` (their memory objects are raw handles there).
    _borrows: PhantomData<&'a ()>,
}

impl RootKernel {
    /// Starts a launch over all devices.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void set(global int *x, int v) { x[get_global_id(0)] = v; }")?;
    /// let set = program.kernel("set")?;
    /// let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 1000)?;
    /// // SAFETY: work-item i writes x[i], i < 1000 = x.len().
    /// unsafe { set.launch().arg(&mut x).arg(7i32).range(1000)? }.wait()?;
    /// assert_eq!(x.read()?, [7; 1000]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn launch(&self) -> RootLaunch<'_> {
        RootLaunch::new(self)
    }
}

impl<'a> RootLaunch<'a> {
    pub(super) fn new(kernel: &'a RootKernel) -> Self {
        RootLaunch {
            kernel,
            args: Vec::new(),
            offset: None,
            waits: Vec::new(),
            _borrows: PhantomData,
        }
    }

    /// Appends an argument ([`RootArg`]): `&ColoredBuffer<T>` (the whole buffer in shared
    /// placement, the device's chunk in partitioned placement), `&Buffer<T>` of the root
    /// device's context (passed as it is; one the kernel writes goes through a copy per device
    /// where its footprints prove the devices' writes apart, else is merged), a scalar, or
    /// [`crate::launch::Local`]. Buffers stay borrowed until the launch is enqueued or dropped.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?;
    /// let p = root.program("kernel void add(global int *x, int v) { x[get_global_id(0)] += v; }")?;
    /// let add = p.kernel("add")?;
    /// let mut x = clgroups::ColoredBuffer::from_slice(&root, &[1i32; 256])?;
    /// // SAFETY: work-item i touches x[i], i < 256 = x.len().
    /// unsafe { add.launch().arg(&mut x).arg(2i32).range(256)? }.wait()?;
    /// assert_eq!(x.read()?, [3; 256]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn arg<A: RootArg + 'a>(mut self, arg: A) -> Self {
        self.args.push(arg.to_root_arg().0);
        self
    }

    /// Makes every device's part of the launch wait for `events` (of the root device's
    /// context, from any of its queues), as [`Launch::wait_for`](crate::launch::Launch::wait_for)
    /// does for one device (for a [`MultiEvent`]'s commands: `ev.events().iter().flatten()`);
    /// an event of another context is an [`Error`](crate::Error) before anything is enqueued.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?;
    /// let p = root.program("kernel void add(global int *x, global const int *y) { size_t i = get_global_id(0); x[i] += y[i]; }")?;
    /// let add = p.kernel("add")?;
    /// let mut x = clgroups::ColoredBuffer::from_slice(&root, &[1i32; 256])?;
    /// let mut y = clgroups::Buffer::<i32>::new(root.context(), 256)?; // read by every device
    /// let written = y.enqueue_write(&root.queues()[0], vec![2; 256])?;
    /// // SAFETY: work-item i touches x[i] and y[i], i < 256 = x.len() = y.len(); every device
    /// // waits for the write of y.
    /// unsafe { add.launch().arg(&mut x).arg(&y).wait_for([&written]).range(256)? }.wait()?;
    /// assert_eq!(x.read()?, [3; 256]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn wait_for(mut self, events: impl IntoIterator<Item = &'a Event>) -> Self {
        self.waits.extend(events);
        self
    }

    /// A global offset (OpenCL order) for the whole launch.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?;
    /// let p = root.program("kernel void one(global int *x) { x[get_global_id(0)] = 1; }")?;
    /// let one = p.kernel("one")?;
    /// let mut x = clgroups::ColoredBuffer::from_slice(&root, &[0i32; 256])?;
    /// let launch = one.launch().arg(&mut x).offset(clgroups::Range::d1(128));
    /// // SAFETY: work-items 128..256 write x[128..256], inside x (256).
    /// unsafe { launch.nd_range(128, clgroups::Range::d1(64))? }.wait()?;
    /// assert_eq!(x.read()?[..128], [0; 128]);
    /// assert_eq!(x.read()?[128..], [1; 128]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn offset(mut self, offset: Range) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Splits the ND-range `global` (work-groups of `local`, OpenCL order) over the devices
    /// and enqueues one sub-launch per non-empty chunk. `local` is a [`LocalSize`] or a
    /// [`Range`] (exact); [`LocalSize::Auto`] and [`LocalSize::Tuned`] both pick the tuned
    /// local size (`plan::local_size::tuned`, whole warps preferred for sub-group
    /// kernels on NVIDIA) for the most limited device, since the split needs whole work-groups; a kernel
    /// with `reqd_work_group_size` runs in exactly those work-groups. Every check (ranks, `local` dividing `global`, arguments, each
    /// device's work-group limits, [the contract](super#the-contract) for every buffer
    /// argument) happens before anything is enqueued; a launch the contract cannot split runs
    /// merged or on one device (waiting for it), or is refused in strict mode. In [checked
    /// mode](super::checked_mode) the launch then waits and reports the first out-of-chunk
    /// access as [`Error::OutOfChunk`](crate::Error::OutOfChunk).
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::nd_range`](crate::launch::Launch::nd_range) for the whole
    /// launch (`global` at the offset), with buffers indexed as whole arrays. In shared
    /// placement every device sees whole buffers; in partitioned placement each device holds
    /// only its chunk of a colored buffer, and launches that [the contract](super#the-contract)
    /// cannot prove in bounds get whole copies (or are refused in strict mode).
    ///
    /// ```
    /// use clgroups::{ColoredBuffer, LocalSize, Range, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// let p = root.program(r#"
    ///     kernel void row(global uint *x) {
    ///         size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    ///         x[i] = (uint)get_global_id(1);
    ///     }
    /// "#)?;
    /// let row = p.kernel("row")?;
    /// let (w, h) = (64, 32);
    /// let mut x = ColoredBuffer::<u32>::new(&root, w * h)?;
    /// // SAFETY: the index is the global linear id, below w * h = x.len().
    /// let ev = unsafe { row.launch().arg(&mut x).nd_range(Range::d2(w, h), LocalSize::Tuned)? };
    /// ev.wait()?;
    /// assert_eq!(x.read()?[5 * w], 5);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub unsafe fn nd_range(
        self,
        global: impl Into<Range>,
        local: impl Into<LocalSize>,
    ) -> Result<MultiEvent> {
        let (global, local) = (global.into(), local.into());
        if self.kernel.rewrite_obstacle.is_some() {
            // SAFETY: the caller's contract, for the same range.
            return unsafe { self.fallback(global, Shape::NdRange(local)) };
        }
        // SAFETY: the caller's contract, for the same range.
        unsafe { self.planned(global, PlanShape::NdRange(local)) }
    }

    /// Enqueues over a plain range, like [`crate::launch::Launch::range`]: the range is
    /// rounded up per `plan::rounding` (for the most limited device) when the kernel
    /// may be rounded, the rounded range is split over the devices in whole work-groups, and
    /// each device runs the unguarded variant when its part lies inside `global`, else the
    /// guarded one, whose extra work-items exit at once. The kernel sees `global` as its
    /// global size.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the work-items of `global`; the guard
    /// keeps the rounded ones from running the kernel's body.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?;
    /// let p = root.program("kernel void sq(global ulong *x) { size_t i = get_global_id(0); x[i] = i * i; }")?;
    /// let sq = p.kernel("sq")?;
    /// let n = 100_003; // prime: rounded up, split, and guarded
    /// let mut x = clgroups::ColoredBuffer::<u64>::new(&root, n)?;
    /// // SAFETY: work-item i < n writes x[i], inside x (n elements).
    /// unsafe { sq.launch().arg(&mut x).range(n)? }.wait()?;
    /// assert_eq!(x.read()?[n - 1], ((n - 1) * (n - 1)) as u64);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub unsafe fn range(self, global: impl Into<Range>) -> Result<MultiEvent> {
        let user = global.into();
        if self.kernel.rewrite_obstacle.is_some() {
            // SAFETY: the caller's contract, for the same range.
            return unsafe { self.fallback(user, Shape::Plain) };
        }
        // SAFETY: the caller's contract for `user`; the rounded work-items are guarded.
        unsafe { self.planned(user, PlanShape::Plain) }
    }

    /// Launches `global` asked as `shape`: as a remembered launch like it ran, where one may
    /// be rerun ([`RootLaunch::rerun`]), else planned and run.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the work-items of `global`.
    unsafe fn planned(self, global: Range, shape: PlanShape) -> Result<MultiEvent> {
        let request = Request {
            global,
            shape,
            offset: self.offset,
        };
        // SAFETY: the caller's contract, for the same launch.
        if let Some(ran) = unsafe { self.rerun(&request) } {
            return ran;
        }
        let plan = self.kernel.plan(global, shape, self.offset)?;
        // SAFETY: the caller's contract, for the same launch.
        unsafe { self.run(plan, request) }
    }

    /// Launches `plan` (the `user` range, or a rounded range containing it, in work-groups
    /// split over the devices) of `request`; the kernel sees `user`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the work-items of `plan.user`.
    unsafe fn run(self, plan: Arc<Plan>, request: Request) -> Result<MultiEvent> {
        let plain = request.shape == PlanShape::Plain;
        let (user, global) = (plan.user, plan.launch);
        let (Some(local), Some(split)) = (plan.local, plan.partition.as_ref()) else {
            return Err(self.kernel.refused(global, None, Refusal::NoPartition));
        };
        let rank = global.rank();
        let base = match self.offset {
            Some(o) => [0, 1, 2].map(|d| if d < rank { o.get(d) } else { 0 }),
            None => [0; 3],
        };
        let shape = Shape3 {
            user,
            global,
            local,
            base,
            plain,
        };
        let key = (user, global, local, base);
        // SAFETY: the caller's contract, for the same launch.
        if let Some(ran) = unsafe { self.stay(&shape, &key, &request) } {
            return ran;
        }
        let split = split.partition.clone();
        // The host's share of a launch (`RUST_LOG=...=trace`): where a GPU's step is shorter,
        // it bounds the chain (the analysis at halo depth 16 took 68 us on the H200 machine).
        let started = log::log_enabled!(log::Level::Trace).then(std::time::Instant::now);
        self.stale_margins_of_whole();
        let decision = self.decision(&shape, &split, self.decide_key(key))?;
        // The planner's choice among the right executions (its pieces and partition on one
        // device, or as planned), from the cost model's inputs.
        let (plan, priced) = match self.cost_inputs(&shape, &decision, &split)? {
            Some(inputs) => {
                let policy = self.kernel.policy.spread;
                let chosen = spread(Plan::clone(&plan), &inputs, policy, self.kernel.name());
                match chosen.partition {
                    Some(several) => {
                        if let Some(priced) = &several.priced {
                            self.keep_depth(&shape, &inputs, priced);
                        }
                        (several.partition, several.priced.map(Arc::new))
                    }
                    None => (split, None),
                }
            }
            None => (split, None),
        };
        self.kernel
            .choose(key, self.keeps(&shape, &plan, priced.as_ref()));
        let choice = priced.as_ref().map(|p| p.choice);
        if !matches!(choice, Some(Choice::OneDevice(_))) {
            // Buffers a launch left whole on one device move back to their parts first (not
            // timed: a sample of the split is the split's own time).
            self.settle_all()?;
        }
        let planned = started.map(|t| t.elapsed());
        // A merge's copies and a launch on device 0 touch parts from other devices' queues.
        let crossing = matches!(decision, Decision::Merge(..) | Decision::OneDevice(..));
        let ran = self.timed(&shape, priced, || match choice {
            // SAFETY: the caller's contract, for the same launch, on one device.
            Some(Choice::OneDevice(d)) => unsafe { self.resident(&shape, d, plan) },
            _ => {
                self.mark_written();
                // SAFETY: the caller's contract, for the same launch; `decide` accepted the
                // split's arguments, or chose copies of those it did not.
                unsafe { self.analysed(&shape, plan, decision) }
            }
        });
        if crossing {
            order::cross_all(&self.args);
        }
        if let (Some(t), Some(planned)) = (started, planned) {
            log::trace!(
                "kernel `{}`: host time {:.1} us (analysis and pricing {:.1} us, the rest \
                 moves and enqueues)",
                self.kernel.name(),
                t.elapsed().as_secs_f64() * 1e6,
                planned.as_secs_f64() * 1e6
            );
        }
        ran
    }

    /// Executes the analysis's `decision` for the launch `s`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    unsafe fn analysed(
        &self,
        s: &Shape3,
        plan: Partition,
        decision: Decision,
    ) -> Result<MultiEvent> {
        // SAFETY: the caller's contract.
        unsafe {
            match decision {
                Decision::Split => self.execute(s, plan, &Vec::new()).and_then(|mut ev| {
                    self.exchange(&mut ev)?;
                    Ok(ev)
                }),
                Decision::Fetch(fetch, why, _) => self.fetch_and_split(s, plan, &fetch, &why),
                Decision::Merge(feeds, why) => self.merged(s, plan, &feeds, Some(&why)),
                Decision::OneDevice(why) => self.one_device(s, why),
            }
        }
    }
}
