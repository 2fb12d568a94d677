//! [`RootLaunch`]: one ND-range split over the devices of a root device.

use super::arg::{ColoredArg, Value};
use super::{MultiEvent, Placement, RootArg, RootKernel, Spread};
use crate::buffer::Buffer;
use crate::error::{Error, InputFault, Result};
use crate::kernel::Kernel;
use crate::launch::{Arg, Event, KernelArg, Launch, LocalSize};
use crate::plan::cost::Choice;
use crate::plan::launch::{split_pieces, spread, Piece, Plan, Shape as PlanShape};
use crate::plan::partition::Partition;
use crate::plan::rounding::Variant;
use crate::plan::Refusal;
use crate::range::Range;
use crate::transform::{Violation, CHECK_WORDS};
use chunks::shift;
use fallback::{flush, Shape};
use std::marker::PhantomData;
use terms::{copy, Copies, Decision, Shape3};

mod chunks;
mod decide;
mod deepen;
mod fallback;
mod footprint;
mod merge;
mod order;
mod place;
mod terms;

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
    /// device's context (passed as it is), a scalar, or [`crate::launch::Local`]. Buffers stay
    /// borrowed until the launch is enqueued or dropped.
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
    /// an event of another context is an [`Error`] before anything is enqueued.
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
    /// access as [`Error::OutOfChunk`].
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
        let plan = self
            .kernel
            .plan(global, PlanShape::NdRange(local), self.offset)?;
        // SAFETY: the caller's contract, for the same range.
        unsafe { self.run(plan) }
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
        let plan = self.kernel.plan(user, PlanShape::Plain, self.offset)?;
        // SAFETY: the caller's contract for `user`; the rounded work-items are guarded.
        unsafe { self.run(plan) }
    }

    /// Launches `plan` (the `user` range, or a rounded range containing it, in work-groups
    /// split over the devices); the kernel sees `user`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the work-items of `plan.user`.
    unsafe fn run(self, plan: Plan) -> Result<MultiEvent> {
        let (user, global) = (plan.user, plan.launch);
        let (Some(local), Some(split)) = (plan.local, plan.partition.as_ref()) else {
            return Err(self.kernel.refused(global, None, Refusal::NoPartition));
        };
        let split = split.partition.clone();
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
        };
        let key = (user, global, local, base);
        // SAFETY: the caller's contract, for the same launch.
        if let Some(ran) = unsafe { self.stay(&shape, &key) } {
            return ran;
        }
        let decision = self.decide(&shape, &split)?;
        // The planner's choice among the right executions (its pieces and partition on one
        // device, or as planned), from the cost model's inputs.
        let (plan, priced) = match self.cost_inputs(&shape, &decision, &split)? {
            Some(inputs) => {
                let chosen = spread(plan, &inputs, self.kernel.policy.spread, self.kernel.name());
                match chosen.partition {
                    Some(several) => {
                        if let Some(priced) = &several.priced {
                            self.keep_depth(&shape, &inputs, priced);
                        }
                        (several.partition, several.priced)
                    }
                    None => (split, None),
                }
            }
            None => (split, None),
        };
        self.kernel.choose(key, self.keeps(&plan, priced.as_ref()));
        let choice = priced.as_ref().map(|p| p.choice);
        self.timed(&shape, priced, || match choice {
            // SAFETY: the caller's contract, for the same launch, on one device.
            Some(Choice::OneDevice(d)) => unsafe { self.resident(&shape, d, plan) },
            _ => {
                // Buffers a launch left whole on one device move back to their parts first.
                self.settle_all()?;
                self.mark_written();
                // SAFETY: the caller's contract, for the same launch; `decide` accepted the
                // split's arguments, or chose copies of those it did not.
                unsafe { self.analysed(&shape, plan, decision) }
            }
        })
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

    /// Enqueues every device's part of the launch `s` split by `plan`, with whole copies
    /// `copies[i][d]` in place of argument `i` on device `d` where there is one.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch, and every argument the
    /// contract does not accept for a device replaced by a whole copy there.
    unsafe fn execute(&self, s: &Shape3, plan: Partition, copies: &Copies) -> Result<MultiEvent> {
        // SAFETY: the caller's contract.
        unsafe { self.execute_in(s, plan, copies, true, &[]) }
    }

    /// [`execute`](Self::execute), where `ordered` says whether each device's part waits for
    /// everything enqueued before it on the other queues (a launch on one device whose
    /// colored buffers are whole there needs it only for plain buffers: see
    /// [`RootLaunch::resident`]).
    ///
    /// # Safety
    ///
    /// As [`execute`](Self::execute).
    unsafe fn execute_in(
        &self,
        s: &Shape3,
        plan: Partition,
        copies: &Copies,
        ordered: bool,
        widen: &[usize],
    ) -> Result<MultiEvent> {
        let (user, global, local, base) = (s.user, s.global, s.local, s.base);
        let kernels = &self.kernel.kernels;
        // The partitioned variant (else the kernel as written, in shared placement: no extra
        // arguments).
        let variant = self.kernel.rewrite_obstacle.is_none();
        let guarded = self.kernel.guarded.as_ref();
        let pieces = split_pieces(
            user,
            global,
            local,
            shift(global.zeros_like(), base),
            &plan,
            widen,
            guarded.is_some(),
        )
        .map_err(|why| self.kernel.refused(global, Some(local), why))?;
        let whole: Vec<Arg> = match variant {
            true => user
                .padded()
                .iter()
                .chain(&base)
                .map(|&v| (v as u64).to_arg())
                .collect(),
            false => Vec::new(),
        };
        // Per device: its sub-launches, each prepared (every check) before the first of any
        // device is enqueued.
        let mut per_device = Vec::with_capacity(kernels.len());
        let mut checks = Vec::with_capacity(kernels.len());
        let busy: Vec<bool> = (0..kernels.len())
            .map(|d| pieces.iter().any(|p| p.device == d))
            .collect();
        let order = match ordered {
            true => self.order_for(&busy)?,
            false => order::Order::none(),
        };
        for d in 0..kernels.len() {
            let mine: Vec<&Piece> = pieces.iter().filter(|p| p.device == d).collect();
            if mine.is_empty() {
                per_device.push(Vec::new());
                checks.push(None);
                continue;
            }
            let mut args = self.device_args(d, variant, copies)?;
            args.extend(whole.iter().cloned());
            let check = match self.kernel.checked && variant {
                true => Some(self.push_check_args(d, &mut args, copies)?),
                false => None,
            };
            let mut prepared = Vec::with_capacity(mine.len());
            for piece in mine {
                let k = match (piece.variant, guarded) {
                    (Variant::Rounded, Some(g)) => &g[d],
                    _ => &kernels[d],
                };
                let waits = order.waits(&self.waits, d);
                let launch = sub_launch(k, &args, &waits).offset(piece.offset);
                let exact = LocalSize::Exact(local);
                prepared.push(launch.or_emulated(|l| l.prepare_nd(piece.global, exact))?);
            }
            per_device.push(prepared);
            checks.push(check);
        }
        // Devices that compile alone (PoCL before 4 on CPUs) run the parts of a split launch
        // one at a time: a part's first run compiles it, and two at once could crash PoCL's
        // compiler; two parts of one kernel at once aborted PoCL 3.1 in CI. A launch on one
        // device does not wait (it cost a chain there 15-30 %; `resident` orders it).
        let alone = busy.iter().filter(|&&b| b).count() > 1 && self.compile_alone();
        if alone {
            log::debug!("scaling: parts run one device at a time (the devices compile alone)");
        }
        let mut events = Vec::with_capacity(kernels.len());
        for prepared in per_device {
            let mut event: Option<Event> = None;
            for (launch, p) in prepared {
                // SAFETY: each sub-launch is a part of the launch the caller vouches for, with
                // the arguments of its device (checked against the contract, or whole copies).
                let ev = unsafe { launch.execute(p)? };
                Event::push(&mut event, ev);
            }
            if let Some(ev) = event.as_ref().filter(|_| alone) {
                ev.wait()?;
            }
            events.push(event);
        }
        flush(kernels.iter().map(|k| k.program().queue()))?;
        let launched = MultiEvent {
            partition: plan,
            events,
            spread: Spread::Split,
            priced: None,
        };
        if self.kernel.checked {
            launched.wait()?;
            for (d, check) in checks.iter().enumerate() {
                if let Some(buf) = check {
                    self.report(d, buf, copies)?;
                }
            }
        }
        Ok(launched)
    }

    /// Device `d`'s arguments: chunks (partitioned placement) or whole buffers (shared) for
    /// colored buffers, then for the partitioned `variant` one byte origin per global pointer
    /// parameter.
    fn device_args(&self, d: usize, variant: bool, copies: &Copies) -> Result<Vec<Arg>> {
        let mut args = Vec::with_capacity(self.args.len() * 2 + 6);
        for (i, value) in self.args.iter().enumerate() {
            args.push(match (value, copy(copies, i, d)) {
                (Value::Plain(Arg::Buffer { elem, .. }), Some(h)) => Arg::bytes_as(&h.buf, *elem),
                (Value::Colored(c), Some(h)) => Arg::bytes_as(&h.buf, c.elem),
                (Value::Plain(a), _) => a.clone(),
                (Value::Colored(c), None) => self.colored_arg(c, i, d)?,
            });
        }
        for i in self.global_params().filter(|_| variant) {
            args.push((self.held(i, d, copies).0 * self.elem_size(i)).to_arg());
        }
        Ok(args)
    }

    /// Every colored buffer the kernel may write (no `const` from the driver): the margins
    /// other devices keep of it are stale from this launch on.
    fn mark_written(&self) {
        let params = &self.kernel.params;
        for (i, v) in self.args.iter().enumerate() {
            if let (Value::Colored(c), true) = (v, params.get(i).is_none_or(|p| !p.read_only)) {
                c.written();
            }
        }
    }

    /// Indices of the kernel's global pointer parameters.
    fn global_params(&self) -> impl Iterator<Item = usize> + '_ {
        let params = &self.kernel.params;
        (0..params.len()).filter(|&i| params[i].global)
    }

    /// Element indices `[lo, hi)` device `d` holds of argument `i` (whole-array numbering).
    fn held(&self, i: usize, d: usize, copies: &Copies) -> (u64, u64) {
        match (self.args.get(i), self.kernel.placement) {
            (Some(Value::Colored(c)), _) if copy(copies, i, d).is_some() => {
                let h = copy(copies, i, d).expect("a copy");
                let n = h.buf.len() / c.elem_size.max(1);
                (h.lo as u64, (h.lo + n) as u64)
            }
            (Some(Value::Colored(c)), Placement::Partitioned) => {
                let (lo, hi) = c.stored[d];
                (lo as u64, hi as u64)
            }
            (Some(Value::Colored(c)), Placement::Shared) => (0, c.len as u64),
            _ => (0, i64::MAX as u64),
        }
    }

    fn elem_size(&self, i: usize) -> u64 {
        match self.args.get(i) {
            Some(Value::Colored(c)) => c.elem_size as u64,
            _ => 0,
        }
    }

    /// Appends the checked variant's arguments for device `d` (held ranges in bytes, which
    /// the variant turns into the pointees it holds whatever their type, and a zeroed check
    /// buffer, which it returns).
    fn push_check_args(&self, d: usize, args: &mut Vec<Arg>, c: &Copies) -> Result<Buffer<u32>> {
        for i in self.global_params() {
            let (lo, hi) = self.held(i, d, c);
            let es = self.elem_size(i);
            let (lo, hi) = match es {
                0 => (lo, hi),
                _ => (lo * es, hi * es),
            };
            args.push(lo.to_arg());
            args.push(hi.to_arg());
        }
        let q = self.kernel.kernels[d].program().queue();
        let buf = Buffer::from_slice(q, &[0u32; CHECK_WORDS])?;
        args.push((&buf).to_arg());
        Ok(buf)
    }

    /// The first out-of-chunk access device `d`'s checked variant recorded, as an error.
    fn report(&self, d: usize, buf: &Buffer<u32>, copies: &Copies) -> Result<()> {
        let k = &self.kernel.kernels[d];
        let Some(v) = Violation::decode(&buf.read(k.program().queue())?) else {
            return Ok(());
        };
        // The variant counts the pointees wholly held; so does the message where their size
        // is known (else the buffer's elements).
        let (lo, hi) = self.held(v.param, d, copies);
        let es = self.elem_size(v.param);
        let (lo, hi) = match self.pointee(v.param).filter(|&p| p > 0 && es > 0) {
            Some(p) => ((lo * es).div_ceil(p as u64), hi * es / p as u64),
            None => (lo, hi),
        };
        let name = self
            .kernel
            .params
            .get(v.param)
            .map_or("?", |p| p.name.as_str());
        Err(Error::OutOfChunk {
            kernel: self.kernel.name().to_string(),
            device: k.program().device().to_string(),
            argument: format!("argument {} (`{name}`)", v.param),
            index: v.index,
            lo,
            hi,
            global_id: v.global_id,
        })
    }

    /// What device `d` receives for colored argument `i`.
    fn colored_arg(&self, c: &ColoredArg, i: usize, d: usize) -> Result<Arg> {
        let placement = self.kernel.placement;
        let got = match placement {
            Placement::Shared => c.whole.clone(),
            Placement::Partitioned => c.part(d),
        };
        got.ok_or_else(|| {
            Error::input(InputFault::NotPassable {
                kernel: self.kernel.name().into(),
                placement: placement.to_string(),
                argument: i,
                elem: c.elem.to_string(),
                device: d,
                held_in: (c.placement != placement).then(|| c.placement.to_string()),
            })
        })
    }
}

/// A single-device launch of `k` with `args` (made and kept alive by the [`RootLaunch`]) that
/// waits for `waits`: one device's part, prepared and executed by the single-device path.
pub(super) fn sub_launch<'a>(k: &'a Kernel, args: &[Arg], waits: &[&'a Event]) -> Launch<'a> {
    let launch = args.iter().cloned().fold(k.launch(), |l, a| l.raw_arg(a));
    launch.wait_for(waits.iter().copied())
}
