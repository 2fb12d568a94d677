//! [`RootKernel`]: one kernel on every device of a root device, and the plans of its
//! launches (required and tuned work-groups, rounding).

use super::program::ParamFacts;
use super::{Placement, RootLaunch};
use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::plan::local_size::{self, Limits};
use crate::plan::{rounding, split};
use crate::queue::names;
use crate::range::Range;

/// One kernel on every device of a [`RootDevice`](super::RootDevice).
///
/// ```
/// use clgroups::{ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
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
    /// The guarded variants, for rounded ranges (`None`: the kernel must not be rounded).
    pub(super) guarded: Option<Vec<Kernel>>,
    pub(super) name: String,
    pub(super) params: Vec<ParamFacts>,
    /// Why the kernel cannot see whole-launch values (a called function asks for them).
    pub(super) whole_obstacle: Option<String>,
    /// Why the kernel has no partitioned variant (`kernels` are then the kernels as written).
    pub(super) rewrite_obstacle: Option<String>,
    /// Built as checked variants.
    pub(super) checked: bool,
    pub(super) placement: Placement,
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
    /// [`crate::plan::root_fallback`] decides: in shared placement each device runs its part
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
    pub fn rewrite_obstacle(&self) -> Option<&str> {
        self.rewrite_obstacle.as_deref()
    }

    /// The kernel's `reqd_work_group_size` at `global`'s rank, if it has one; an error naming
    /// the attribute when it has more dimensions than `global` or does not fit `local`
    /// (`Some`: an exact local size asked for).
    pub(super) fn required_local(
        &self,
        global: Range,
        local: Option<Range>,
    ) -> Result<Option<Range>> {
        let Some(req) = self.kernels[0].required_work_group_size() else {
            return Ok(None);
        };
        let refuse = |what: &str| {
            Err(self.refused(
                global,
                &format!(
                    "the kernel requires work-groups of {:?} (reqd_work_group_size): {what}",
                    req.as_slice()
                ),
            ))
        };
        let Some(at_rank) = split::at_rank(req, global.rank()) else {
            return refuse("more dimensions than the range");
        };
        if local.is_some_and(|l| l.padded() != req.padded()) {
            return refuse("the local size must be that");
        }
        log::debug!("kernel `{}`: required work-groups {at_rank:?}", self.name);
        Ok(Some(at_rank))
    }

    /// Errors naming `reqd_work_group_size` unless `required` divides `global`.
    pub(super) fn check_required_fits(&self, global: Range, required: Range) -> Result<()> {
        match split::fits_required(global, required) {
            true => Ok(()),
            false => Err(self.refused(
                global,
                &format!(
                    "the kernel requires work-groups of {:?} (reqd_work_group_size), which do \
                     not divide the global range",
                    required.as_slice()
                ),
            )),
        }
    }

    /// The global and local ranges a [`RootLaunch::range`] of `global` enqueues: `global`
    /// rounded up per [`crate::plan::rounding`] (when the kernel may be rounded) and the local
    /// size, both for the most limited device; a kernel with `reqd_work_group_size` gets that
    /// local size, and the range is rounded up to a multiple of it where the kernel may be
    /// rounded (else it must divide the range). In partitioned placement, colored buffers in
    /// pages of one work-group slab follow the launch's partition (see [the
    /// contract](super#the-contract)). A kernel without its partitioned variant
    /// ([`rewrite_obstacle`](RootKernel::rewrite_obstacle)) runs as
    /// [`crate::plan::root_fallback`] decides instead.
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
        if let Some(req) = self.required_local(global, None)? {
            let rounded = split::round_to_required(global, req);
            let launch = match self.guarded.is_some() {
                true => rounded,
                false => global,
            };
            self.check_required_fits(launch, req)?;
            self.check_warps(global, req)?;
            return Ok((launch, req));
        }
        let lim = self.limits();
        let cfg = self.kernels[0].program().rounding();
        let plan = rounding::plan(global, cfg, &lim, self.guarded.is_some());
        let local = match plan.local {
            Some(l) => l,
            None => self.tuned_local(plan.launch)?,
        };
        self.check_warps(global, local)?;
        log::debug!(
            "kernel `{}` over {} devices: range {global:?} -> launch {:?}, local {local:?}",
            self.name,
            self.kernels.len(),
            plan.launch
        );
        Ok((plan.launch, local))
    }

    /// The tuned local size of `global` for the most limited device: whole warps (32
    /// work-items) for sub-group kernels on NVIDIA, as single-device launches pick.
    pub(super) fn tuned_local(&self, global: Range) -> Result<Range> {
        let lim = self.limits();
        if !self.warp_bound() {
            return Ok(local_size::tuned(global, &lim));
        }
        local_size::tuned_whole(global, &lim, 32).ok_or_else(|| {
            self.refused(
                global,
                "no work-group of whole warps (a multiple of 32 work-items) divides the global \
                 range, and sub-group kernels on NVIDIA need one; pad the range",
            )
        })
    }

    /// Errors unless `local` is whole warps where the kernel needs them.
    pub(super) fn check_warps(&self, global: Range, local: Range) -> Result<()> {
        match self.warp_bound() && local.len() % 32 != 0 {
            true => Err(self.refused(
                global,
                "work-groups of sub-group kernels on NVIDIA must be a multiple of the warp (32) \
                 work-items",
            )),
            false => Ok(()),
        }
    }

    /// Whether some device runs the kernel's sub-group calls on NVIDIA warps.
    fn warp_bound(&self) -> bool {
        self.kernels.iter().any(|k| {
            k.uses_sub_groups()
                && k.program().device().sub_groups().effective.shuffle_backend
                    == ShuffleBackend::NvidiaPtx
        })
    }

    pub(super) fn refused(&self, global: Range, reason: &str) -> Error {
        Error::InvalidLaunch {
            kernel: self.name.clone(),
            device: format!("root device [{}]", names(&self.devices())),
            global: global.as_slice().to_vec(),
            local: Vec::new(),
            reason: reason.into(),
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
