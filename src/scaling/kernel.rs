//! [`RootKernel`]: one kernel on every device of a root device, and the plans of its
//! launches (required and tuned work-groups, rounding).

use super::contract::ParamFacts;
use super::launch;
use super::Placement;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::kernel::{PlanKey, Plans, Recent};
use crate::launch::emulated::too_small_for_native;
use crate::obstacle::Obstacle;
use crate::plan::cost::{Figures, Priced};
use crate::plan::launch::{plan, DeviceFacts, KernelFacts, Plan, Refused, Request, Shape};
use crate::plan::local_size::Limits;
use crate::plan::partition::Partition;
use crate::plan::work_group::Constraints;
use crate::plan::Refusal;
use crate::queue::names;
use crate::range::Range;
use crate::transform::footprint::Footprint;
use crate::Buffer;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// One kernel on every device of a [`RootDevice`](super::RootDevice). `Send + Sync`: threads
/// may launch it at once (each device kernel's arguments are set and enqueued under its lock).
///
/// ```
/// use clgroups::{ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?.with_profiling()?;
/// let program = root.program("kernel void one(global int *x) { x[get_global_id(0)] = 1; }")?;
/// let one = program.kernel("one")?;
/// let mut x = ColoredBuffer::<i32>::new(&root, 4096)?;
/// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
/// let ev = unsafe { one.launch().arg(&mut x).nd_range(4096, clgroups::Range::d1(64))? };
/// println!("{:?} over {} devices", ev.duration()?, root.len());
/// assert_eq!(x.read()?, [1; 4096]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RootKernel {
    pub(super) kernels: Vec<Kernel>,
    /// The kernel as written on every device (a launch kept whole on one device runs it).
    pub(super) as_written: Vec<Kernel>,
    /// The guarded variants, for rounded ranges (`None`: the kernel must not be rounded).
    pub(super) guarded: Option<Vec<Kernel>>,
    pub(super) name: String,
    pub(super) params: Vec<ParamFacts>,
    /// Why the kernel cannot see whole-launch values (a called function asks for them).
    pub(super) whole_obstacle: Option<Arc<Obstacle>>,
    /// Why the kernel has no partitioned variant (`kernels` are then the kernels as written).
    pub(super) rewrite_obstacle: Option<Arc<Obstacle>>,
    /// Built as checked variants.
    pub(super) checked: bool,
    pub(super) placement: Placement,
    pub(super) policy: Policy,
    /// Staging areas of moves between devices, by [`HaloRun`]: reused by every launch (each
    /// orders its next copy in after its last copy out: `ffi::Relay`, `Stage::Device`).
    pub(super) halo_staging: Arc<Mutex<HashMap<HaloRun, launch::Stage>>>,
    /// What each buffer parameter's accesses reach (`None`: no source to read it from).
    pub(super) footprint: Option<Arc<Footprint>>,
    /// Per (argument, device), the copy a launch split by footprints fetches that
    /// argument's elements into, reused by every launch.
    pub(super) fetched: Arc<Mutex<FetchedCopies>>,
    /// The last copy out of each staging buffer of those fetches, which the next copy into
    /// it waits for.
    pub(super) staged_reads: Arc<Mutex<HashMap<HaloRun, crate::event::Event>>>,
    /// Measured launches per shape, for the cost model.
    pub(super) figures: Arc<Mutex<ShapeFigures>>,
    /// The halo depth the cost model chose per shape (global and local size).
    pub(super) depths: Arc<Mutex<HashMap<(Range, Range), usize>>>,
    /// What widened parts reach, kept across launches.
    pub(super) reaches: Arc<Mutex<launch::Reaches>>,
    /// The plans of recent launches and the shapes the cost model sends to one device.
    pub(super) memo: Arc<Memo>,
    /// Decisions that move nothing, per shape, scalars and buffers.
    pub(super) decided: Arc<launch::Decided>,
}

/// What a [`RootKernel`]'s launches keep between them: the plans of recent launches (a pure
/// function of the kernel, its devices and the [`PlanKey`], as for one device), and per
/// launch shape the device the cost model chose from warm figures, with its partition and
/// figures ([`RootKernel::stays`]).
pub(super) struct Memo {
    plans: Plans,
    /// The shapes kept on one device, most recently launched first (a forgotten one is
    /// priced again from its figures, which it keeps).
    chosen: Recent<ShapeKey, Arc<Chosen>, CHOSEN>,
    /// The device the kernel's last launch ran on whole, if it did (else `usize::MAX`).
    last: AtomicUsize,
    /// The devices that ran the kernel as written (a bit each; on devices that compile
    /// alone its first run there runs by itself).
    pub(super) written_ran: AtomicU64,
    /// What a launch's devices reach of each argument split by footprints, kept.
    pub(super) runs: Mutex<launch::ArgRuns>,
    /// Decisions that move margins, per margins' state (`launch/window.rs`).
    pub(super) windows: launch::Windows,
    /// Launches run whole on one device as the kernel is written, by request, for the next
    /// ones like them (`launch/stay.rs`).
    pub(super) written: Recent<launch::Request, Arc<launch::WrittenRun>, WRITTEN>,
    /// Bumped by every change of a shape's choice: a launch remembered under an older one is
    /// not rerun.
    generation: AtomicU64,
    /// The root device's name in errors (its devices' names: made once, a launch split by
    /// footprints names it at every launch).
    device: OnceLock<String>,
}

impl Default for Memo {
    fn default() -> Self {
        Memo {
            plans: Plans::default(),
            chosen: Recent::default(),
            last: AtomicUsize::new(usize::MAX),
            written_ran: AtomicU64::new(0),
            runs: Mutex::default(),
            windows: launch::Windows::default(),
            written: Recent::default(),
            generation: AtomicU64::new(0),
            device: OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo").finish_non_exhaustive()
    }
}

/// A launch's user range, launched range, local size and offset.
pub(super) type ShapeKey = (Range, Range, Range, [usize; 3]);

/// How many shapes kept on one device a kernel remembers (a multigrid cycle launches one
/// kernel at a few sizes in turn; a shape beyond these is priced again from its figures).
const CHOSEN: usize = 16;

/// How many launches run as written a kernel remembers (a few shapes in turn).
const WRITTEN: usize = 4;

/// The cost model's choice of one device for a shape: the device, the plan's partition with
/// every work-group there, the figures it priced, and the shape's figures (the launches it
/// keeps there count and time themselves there, without a lookup).
pub(super) struct Chosen {
    pub(super) device: usize,
    pub(super) partition: Arc<Partition>,
    pub(super) priced: Arc<Priced>,
    pub(super) figures: Arc<Mutex<Figures>>,
}

/// The copies of [`RootKernel::fetched`], by (argument, device).
pub(super) type FetchedCopies = HashMap<(usize, usize), Arc<Buffer<u8>>>;

/// A plan, or the planner's refusal.
type PlanOr = std::result::Result<Plan, Box<Refused>>;

/// Why a run of elements moves between devices; each purpose keeps staging areas of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Purpose {
    /// A halo of an `Access::Stencil` buffer after a split launch.
    Exchange,
    /// Elements another device owns, into a device's copy or kept margins before a launch.
    Fetch,
    /// What a device wrote into its copy beyond its part, back to the owner after a launch.
    GiveBack,
    /// A plain buffer's run into a device's copy of it.
    PlainFetch,
    /// What a device wrote into its copy of a plain buffer, back into the buffer.
    PlainBack,
}

/// A run of elements moved between devices: why, the argument, the receiving device, the
/// sending device, elements `[a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct HaloRun {
    purpose: Purpose,
    arg: usize,
    pub(super) to: usize,
    pub(super) from: usize,
    elems: (usize, usize),
}

impl HaloRun {
    /// The run `elems` of argument `arg`, moved for `purpose` to device `to` from `from`.
    pub(super) fn new(
        purpose: Purpose,
        arg: usize,
        (to, from): (usize, usize),
        elems: (usize, usize),
    ) -> Self {
        HaloRun {
            purpose,
            arg,
            to,
            from,
            elems,
        }
    }
}

/// What a root device's launches may do when [the contract](super#the-contract) cannot split
/// them as declared.
#[derive(Clone, Debug, Default)]
pub(super) struct Policy {
    /// Refuse instead of merging or running on one device ([`super::RootDevice::strict`]).
    pub(super) strict: bool,
    /// Relative device throughputs ([`super::RootDevice::with_weights`]).
    pub(super) weights: Option<Vec<f64>>,
    /// The source names an atomic function or type: merged writes could lose updates.
    pub(super) atomics: bool,
    /// How launches spread ([`super::RootDevice::with_spread`]).
    pub(super) spread: crate::plan::cost::SpreadPolicy,
    /// Launches between halo exchanges, if forced ([`super::RootDevice::with_halo_depth`]).
    pub(super) halo_depth: Option<usize>,
    /// The root device's link, measured once ([`crate::plan::cost::Link`]).
    pub(super) link: Arc<std::sync::OnceLock<crate::plan::cost::Link>>,
}

/// The cost model's figures of a kernel's launches per shape (global and local size).
pub(super) type ShapeFigures = HashMap<(Range, Range), Arc<Mutex<Figures>>>;

impl RootKernel {
    /// The per-device kernels (the `__clg_part` variants, or the kernels as written where
    /// [`rewrite_obstacle`](RootKernel::rewrite_obstacle) says why there are none), in device
    /// order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// for k in program.kernel("k")?.kernels() {
    ///     println!("{k:?}"); // the per-device variant
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// Why the kernel has no partitioned variant (a name made by a macro, a source the
    /// scanner cannot read, ...), or `None`. Launches of such a kernel run it as written, as
    /// `plan::root_fallback` decides: in shared placement each device runs its part
    /// at its global offset when the source never asks for whole-launch values (global size
    /// or offset, linear ids, group ids), else device 0 runs the whole launch; in partitioned
    /// placement device 0 runs it on colored buffers gathered there and copied back after.
    /// `RUST_LOG=debug` shows the decision.
    ///
    /// ```
    /// use clgroups::{ColoredBuffer, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// let src = "#define MAKE(N) kernel void N(global int *x) { x[get_global_id(0)] += 1; }\nMAKE(inc)";
    /// let inc = root.program(src)?.kernel("inc")?;
    /// assert!(inc.rewrite_obstacle().is_some()); // a name made by a macro
    /// let mut x = ColoredBuffer::from_slice(&root, &[1i32; 1000])?;
    /// // SAFETY: work-item i touches x[i], i < 1000 = x.len().
    /// unsafe { inc.launch().arg(&mut x).range(1000)? }.wait()?;
    /// assert_eq!(x.read()?, [2; 1000]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn rewrite_obstacle(&self) -> Option<&Obstacle> {
        self.rewrite_obstacle.as_deref()
    }

    /// What the kernel imposes on its work-groups on every device: the tightest limits, the
    /// required size, whole warps and the smallest work-group where any device wants them (no
    /// hint: the split picks its own size).
    pub(super) fn constraints(&self) -> Constraints {
        let each = || self.kernels.iter().map(Kernel::constraints);
        Constraints {
            limits: self.limits(),
            required: self.kernels[0].constraints().required,
            hint: None,
            warp: each().filter_map(|c| c.warp).max(),
            min_group: each().map(|c| c.min_group).max().unwrap_or(1),
        }
    }

    /// The plan of a launch of `global` over the devices ([`crate::plan::launch::plan`],
    /// sized for the most limited device, partitioned by the root device's weights), or the
    /// refusal as an error.
    pub(super) fn plan(
        &self,
        global: Range,
        shape: Shape,
        offset: Option<Range>,
    ) -> Result<Arc<Plan>> {
        let key = PlanKey {
            global,
            shape,
            offset,
            values: Vec::new(),
        };
        if let Some(p) = self.memo.plans.get(&key) {
            return Ok(p);
        }
        let planned = Arc::new(self.plan_anew(global, shape, offset)?);
        self.memo.plans.put(key, planned.clone());
        Ok(planned)
    }

    /// The shape's choice of one device by the cost model, if it made one from warm figures.
    pub(super) fn stays(&self, shape: &ShapeKey) -> Option<Arc<Chosen>> {
        self.memo.chosen.get(shape)
    }

    /// Keeps (`Some`) or forgets the shape's choice of one device. Once a choice is kept or
    /// forgotten, launches remembered under an earlier one ([`RootKernel::generation`]) are
    /// not rerun (the generation moves after the choice: a launch that read the new choice
    /// under the old generation is stale too).
    pub(super) fn choose(&self, shape: ShapeKey, choice: Option<Chosen>) {
        let changed = match choice {
            Some(c) => {
                self.memo.chosen.put(shape, Arc::new(c));
                true
            }
            None => self.memo.chosen.forget(&shape),
        };
        if changed {
            self.memo.generation.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// The generation of the shapes' choices ([`RootKernel::choose`] makes a new one).
    pub(super) fn generation(&self) -> u64 {
        self.memo.generation.load(Ordering::Acquire)
    }

    /// Whether the kernel's last launch ran whole on device `d` too (this launch runs there).
    pub(super) fn again_on(&self, d: usize) -> bool {
        self.memo.last.swap(d, Ordering::Relaxed) == d
    }

    /// [`plan`](Self::plan), asking the planner.
    fn plan_anew(&self, global: Range, shape: Shape, offset: Option<Range>) -> Result<Plan> {
        let first = &self.kernels[0];
        let round = match (&self.guarded, first.rounding_support()) {
            (Some(_), _) => Ok(()),
            (None, Err(why)) => Err(why),
            (None, Ok(())) => Err(&Obstacle::NoGuardedVariant),
        };
        let no_wrapper = || Err(Obstacle::NoGuardedVariant);
        let devices: Vec<DeviceFacts> = (self.kernels.iter())
            .map(|k| DeviceFacts {
                limits: k.limits().clone(),
                address_bits: k.program().device().limits().address_bits,
                barriers: None,
            })
            .collect();
        let constraints = self.constraints();
        // The plan with work-groups of at least `min_group` work-items.
        let planned = |min_group: usize| {
            let facts = KernelFacts {
                name: &self.name,
                constraints: Constraints {
                    min_group,
                    ..constraints.clone()
                },
                rounding: *first.program().rounding(),
                round,
                shape: first.shape_dependence(),
                wrap: &no_wrapper,
                splittable: false,
                conditions: Ok(Vec::new()),
            };
            plan(&Request {
                offset,
                weights: self.policy.weights.as_deref(),
                root: true,
                ..Request::new(&facts, &devices, global, shape)
            })
        };
        match planned(constraints.min_group) {
            Err(r) if too_small_for_native(&r.reason) => self.emulated(planned(1), *r),
            planned => planned.map_err(|r| self.refused(r.global, r.local, r.reason)),
        }
    }

    /// `planned`, the plan in any work-groups of a launch `refused` for work-groups too small
    /// for PoCL's native sub-group collectives: each device's part runs on its kernel's
    /// emulated build (as a launch on one device does: `Launch::or_emulated`), where every
    /// device's kernel (and guarded variant, for a rounded range) has one; else the refusal.
    fn emulated(&self, planned: PlanOr, refused: Refused) -> Result<Plan> {
        let refuse = |why: &dyn std::fmt::Display| {
            log::debug!(
                "kernel `{}`: refused ({why}): {}",
                self.name,
                refused.reason
            );
            Err(self.refused(refused.global, refused.local, refused.reason.clone()))
        };
        let planned = match planned {
            Ok(p) => p,
            Err(r) => return refuse(&format!("in any work-groups: {}", r.reason)),
        };
        let rounded = planned.launch != planned.user;
        let guarded = self.guarded.iter().flatten().filter(|_| rounded);
        for k in self.kernels.iter().chain(guarded) {
            if let Err(why) = k.emulated(planned.local) {
                return refuse(&format!("no emulated build of `{}`: {why}", k.name()));
            }
        }
        log::debug!(
            "kernel `{}`: {:?} in work-groups of {:?}, too small for PoCL's native collectives: \
             each device's part runs on its kernel's emulated build",
            self.name,
            planned.user,
            planned.local
        );
        Ok(planned)
    }

    /// The global and local ranges a [`RootLaunch::range`](super::RootLaunch::range) of `global` enqueues: `global`
    /// rounded up per `plan::rounding` (when the kernel may be rounded) and the local
    /// size, both for the most limited device; a kernel with `reqd_work_group_size` gets that
    /// local size, and the range is rounded up to a multiple of it where the kernel may be
    /// rounded (else it must divide the range). In partitioned placement, colored buffers in
    /// pages of one work-group slab follow the launch's partition (see [the
    /// contract](super#the-contract)). A kernel without its partitioned variant
    /// ([`rewrite_obstacle`](RootKernel::rewrite_obstacle)) runs as
    /// `plan::root_fallback` decides instead.
    ///
    /// ```
    /// use clgroups::scaling::{ColoredBuffer, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// let k = root.program("kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?.kernel("inc")?;
    /// let n = 1_000_003;
    /// let (_, local) = k.range_plan(n.into())?;
    /// let x = ColoredBuffer::<i32>::with_page(&root, n, local.len() * 4)?;
    /// // SAFETY: `inc` touches x[get_global_id(0)] only, below n, x's length.
    /// unsafe { k.launch().arg(&x).range(n)? }.wait()?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn range_plan(&self, global: Range) -> Result<(Range, Range)> {
        let plan = self.plan(global, Shape::Plain, None)?;
        let local = plan.local.unwrap_or(plan.launch);
        Ok((plan.launch, local))
    }

    pub(super) fn refused(&self, global: Range, local: Option<Range>, reason: Refusal) -> Error {
        Error::InvalidLaunch {
            kernel: self.name.clone(),
            device: (self.memo.device)
                .get_or_init(|| format!("root device [{}]", names(&self.devices())))
                .clone(),
            global: global.as_slice().to_vec(),
            local: local.map(|l| l.as_slice().to_vec()).unwrap_or_default(),
            reason: Box::new(reason),
        }
    }

    fn devices(&self) -> Vec<Device> {
        self.kernels
            .iter()
            .map(|k| k.program().device().clone())
            .collect()
    }

    /// The tightest limits over the devices' kernels.
    pub(super) fn limits(&self) -> Limits {
        let mut lim = self.kernels[0].limits().clone();
        for l in self.kernels[1..].iter().map(Kernel::limits) {
            lim.max_work_group_size = lim.max_work_group_size.min(l.max_work_group_size);
            for (a, b) in lim
                .max_work_item_sizes
                .iter_mut()
                .zip(l.max_work_item_sizes)
            {
                *a = (*a).min(b);
            }
        }
        lim
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }
}
