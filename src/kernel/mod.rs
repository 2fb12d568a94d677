//! [`Kernel`]: one kernel of a built [`Program`], its arguments' signature, and its sub-group
//! queries (the SYCL sub-group specification's `info::kernel_device_specific` descriptors,
//! [`SubGroupQueries`]).

mod args;
mod emulated;
pub(crate) mod first_run;
mod plans;
mod sub_groups;
mod wrapped;

use args::{arg_info, takes_scratch};
pub use args::{ArgInfo, ArgSpace};

#[cfg(feature = "scaling")]
pub(crate) use plans::Recent;
pub(crate) use plans::{PlanKey, Plans};
pub use sub_groups::SubGroupQueries;

use crate::device::ShuffleBackend;
use crate::error::{Error, Result};
use crate::ffi::{ClProgram, Owned};
pub use crate::plan::local_size::Limits;
use crate::plan::rounding::Variant;
use crate::plan::uniform_branch::IdCondition;
use crate::plan::work_group::{Constraints, MIN_POCL_COLLECTIVE_GROUP};
use crate::program::{driver_alias, KernelParts, Program, ResolvedSize, SubGroupSize};
use crate::range::Range;
use crate::transform::VariantKind;
pub use crate::transform::{
    ArgumentObstacle, DriverCall, NoRewrite, Obstacle, Undecided, Use, UseKind, Via,
};
use first_run::Runs;
use opencl3::error_codes::CL_INVALID_KERNEL_NAME;
use opencl3::kernel::Kernel as ClKernel;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// What the signature check of an argument depends on: buffer, value or local memory, and the
/// element type (its size and the address of its Rust name: equal addresses are equal names,
/// and unequal ones only cost a check).
pub(crate) type ArgKey = (u8, usize, usize);

/// A kernel of a built program. Cheap to clone; `Send + Sync` (argument setting and
/// enqueueing are serialised inside).
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, r#"
///     #include <clgroups/subgroup.h>
///     kernel void lane(global uint *x) { x[get_global_id(0)] = sg_get_local_id(); }
/// "#)?;
/// let k: Kernel = p.kernel("lane")?;
/// let sg = k.sub_groups();
/// println!("`{}`: up to {} work-items, sub-groups of {}", k.name(),
///     k.limits().max_work_group_size, sg.max_sub_group_size(Range::d1(64))?);
/// let x = Buffer::<u32>::new(queue.context(), 64)?;
/// // SAFETY: work-item i writes x[i] for i < 64 = x.len(); the layer's calls are uniform.
/// unsafe { k.launch().arg(&x).nd_range(Range::d1(64), LocalSize::Exact(Range::d1(64)))? }.wait()?;
/// assert_eq!(x.read(&queue)?[0], 0);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<KernelInner>,
}

struct KernelInner {
    name: Arc<str>,
    program: Program,
    raw: Mutex<Owned<ClKernel>>,
    /// The rounded and sized variants, or why the kernel is not rounded.
    rounded: std::result::Result<[Mutex<Owned<ClKernel>>; 2], Obstacle>,
    /// The wrapper that runs rounded pieces where there is no rounded variant (made on the
    /// first launch that needs it, see [`Kernel::wrapped`]), or why none.
    wrapped: OnceLock<std::result::Result<Mutex<Owned<ClKernel>>, Obstacle>>,
    /// The same kernel built on the emulated backend (made on the first launch in work-groups
    /// too small for PoCL's native collectives, see [`Kernel::emulated`]), or why none: at
    /// the program's sub-group size, and in sub-groups of one.
    emulated: [OnceLock<std::result::Result<Kernel, emulated::NoEmulated>>; 2],
    /// The checked variant (whose rounded and sized variants are checked too), or why none.
    checked: std::result::Result<Checked, Obstacle>,
    size: ResolvedSize,
    requested: SubGroupSize,
    args: Vec<ArgInfo>,
    limits: Limits,
    /// What the kernel imposes on its work-groups: its limits, `reqd_work_group_size`
    /// (`CL_KERNEL_COMPILE_WORK_GROUP_SIZE`), `work_group_size_hint`, whole warps, ...
    constraints: Constraints,
    /// The plans of its recent launches: a launch like one of them asks the planner nothing
    /// (planning a plain range costs microseconds, a tuned local size 1–2 µs).
    plans: Plans,
    /// Whether its program's source allows bulk + tail launches (`plan::split::splittable`).
    splittable: bool,
    /// The kinds and types of the last arguments that passed the signature check (a launch
    /// with the same ones checks nothing again; see `Launch::check_arguments`); `None` before
    /// the first that passed.
    last_args: Mutex<Option<Vec<ArgKey>>>,
    /// What its pieces ran, on a device that compiles alone (`first_run`).
    first_runs: Mutex<Runs>,
    /// Whether the last parameter is the hidden emulated sub-group scratch (set by the launch).
    hidden_scratch: bool,
    /// Why its result may depend on its work-group shape, or `None`.
    shape: Option<Obstacle>,
    /// Conditions its collectives sit under, decided per launch (emulated backend).
    id_conditions: Vec<IdCondition>,
}

/// A kernel's single-device checked variant ([`crate::launch::checked`]).
struct Checked {
    raw: Mutex<Owned<ClKernel>>,
    /// `(index, name)` of the pointer parameters it checks.
    pointers: Vec<(usize, String)>,
}

impl Program {
    /// The kernel called `name`. On the `emulated` backend, a kernel with a sub-group
    /// collective under control flow that depends on a work-item id (but `if (get_global_id(d)
    /// OP n)`, checked per launch) is refused with [`Error::Unsupported`] naming the call and the
    /// condition ([uniform control flow](crate::opencl_c); PoCL 3.1 would hang or crash).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// let k = p.kernel("k")?;
    /// assert!(matches!(p.kernel("nope"), Err(Error::NoSuchKernel { .. })));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        Kernel::create(self, name, self.kernel_parts(name)?)
    }
}

impl Kernel {
    /// The kernel `name` of `program`, from what the program decided for it.
    fn create(program: &Program, name: &str, parts: KernelParts<'_>) -> Result<Kernel> {
        let KernelParts {
            build,
            plan,
            rounded,
            checked,
        } = parts;
        let program = program.clone();
        let size = plan.size;
        let dev = program.device().clone();
        let err = |call: &'static str| {
            let ctx = format!("kernel `{name}` on {dev}");
            move |e: opencl3::error_codes::ClError| Error::cl(call, e.0, ctx.clone())
        };
        let raw = ClKernel::create(build, name)
            .or_else(|e| match e.0 {
                // PoCL 3.x renames a kernel named like an OpenCL built-in function (`step`,
                // `clamp`, ...) to `_cl_NAME`; the user's name still reaches it.
                CL_INVALID_KERNEL_NAME => ClKernel::create(build, &driver_alias(name)),
                _ => Err(e),
            })
            .map(Owned::new)
            .map_err(|e| match e.0 {
                CL_INVALID_KERNEL_NAME => Error::NoSuchKernel {
                    kernel: name.to_string(),
                    available: program.kernel_names(),
                },
                _ => err("clCreateKernel")(e),
            })?;
        let variant = |p: &ClProgram, n: String| {
            ClKernel::create(p, &n)
                .map(|k| Mutex::new(Owned::new(k)))
                .map_err(|e| Obstacle::Driver {
                    call: DriverCall::Variant(n),
                    code: Some(e.0),
                })
        };
        let rounded = rounded.and_then(|p| {
            Ok([
                variant(&p, VariantKind::Rounded.name(name))?,
                variant(&p, VariantKind::Sized.name(name))?,
            ])
        });
        let checked = checked.and_then(|pointers| {
            Ok(Checked {
                raw: variant(build, VariantKind::Checked.name(name))?,
                pointers,
            })
        });
        if let Err(why) = &checked {
            log::debug!("kernel `{name}`: no checked variant ({why})");
        }
        let all = raw.num_args().map_err(err("clGetKernelInfo(NUM_ARGS)"))? as usize;
        let hidden_scratch = takes_scratch(&raw, all, &plan, &dev, name)?;
        let n = all - usize::from(hidden_scratch);
        let args = (0..n as u32).map(|i| arg_info(&raw, i)).collect();
        let wg = raw
            .get_work_group_size(dev.id())
            .map_err(err("clGetKernelWorkGroupInfo(WORK_GROUP_SIZE)"))?;
        // A driver that cannot answer (or answers 0) gets the device's multiple, else the SIMD
        // width clgroups assumes when nothing is known.
        let multiple = raw
            .get_work_group_size_multiple(dev.id())
            .ok()
            .filter(|&m| m > 0)
            .or(Some(
                dev.sub_groups().driver.preferred_work_group_size_multiple,
            ))
            .filter(|&m| m > 0)
            .unwrap_or(crate::device::UNKNOWN_SIMD_WIDTH);
        // Where the driver has no answer (PoCL's remote driver reports no compile work-group
        // size), its attribute string, else the scanned declaration (integer literals only). The
        // attribute string is asked for on the context's first device only: NVIDIA's driver
        // crashes answering it for a program built for another device of a multi-device
        // context (measured on two H200s, driver 580).
        let first = program.queue().context().devices().first() == Some(&dev);
        let attributes = || match first {
            true => raw.attributes().unwrap_or_default(),
            false => String::new(),
        };
        let decl = program.decl(name);
        let scanned = |dims: Option<&Vec<usize>>| Range::new(trim_ones(dims?)).ok();
        let required = raw
            .get_compile_work_group_size(dev.id())
            .ok()
            .filter(|r| r.iter().any(|&n| n > 0))
            .and_then(|r| Range::new(trim_ones(&r[..r.len().min(3)])).ok())
            .or_else(|| attr_sizes(&attributes(), "reqd_work_group_size"))
            .or_else(|| scanned(decl.and_then(|d| d.reqd_work_group_size.as_ref())));
        let hint = attr_sizes(&attributes(), "work_group_size_hint")
            .or_else(|| scanned(decl.and_then(|d| d.work_group_size_hint.as_ref())));
        let limits = Limits {
            kind: dev.kind(),
            max_work_group_size: wg.min(dev.limits().max_work_group_size),
            max_work_item_sizes: dev.limits().max_work_item_sizes,
            preferred_multiple: multiple,
            non_uniform: false,
        };
        let backend = dev.sub_groups().effective.shuffle_backend;
        let constraints = Constraints {
            limits: limits.clone(),
            required,
            hint,
            // Sub-group calls on NVIDIA run on warps: whole ones are preferred.
            warp: (backend == ShuffleBackend::NvidiaPtx && plan.uses_layer).then_some(32),
            // Work-groups of one or two work-items abort PoCL's process for kernels with native
            // sub-group collectives (PoCL 6.0: `undefined symbol: __pocl_work_group_alloca`;
            // queries such as `get_sub_group_local_id` run): launches there run the kernel's
            // emulated build (`Kernel::emulated`).
            min_group: match plan.collectives
                && backend != ShuffleBackend::Emulated
                && dev.is_pocl()
            {
                true => MIN_POCL_COLLECTIVE_GROUP,
                false => 1,
            },
        };
        let splittable = program.splittable();
        log::debug!("kernel `{name}` on {dev}: {n} args, sub-group size {size:?}, {constraints:?}");
        Ok(Kernel {
            inner: Arc::new(KernelInner {
                name: name.into(),
                program,
                raw: Mutex::new(raw),
                rounded,
                wrapped: OnceLock::new(),
                emulated: Default::default(),
                checked,
                size,
                requested: plan.requested,
                args,
                limits,
                constraints,
                plans: Plans::default(),
                splittable,
                last_args: Mutex::new(None),
                first_runs: Mutex::default(),
                hidden_scratch,
                id_conditions: plan.id_conditions.clone(),
                shape: plan.shape.clone(),
            }),
        })
    }

    /// The conditions on a global id that its collectives sit under, which each launch must
    /// find uniform over its work-groups (emulated backend only; [`crate::plan::uniform_branch`]).
    pub(crate) fn id_conditions(&self) -> &[IdCondition] {
        &self.inner.id_conditions
    }

    /// The kernel's name.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// assert_eq!(p.kernel("k")?.name(), "k");
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name, shared (for events' messages).
    pub(crate) fn shared_name(&self) -> Arc<str> {
        Arc::clone(&self.inner.name)
    }

    /// The program it comes from.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// let k = p.kernel("k")?;
    /// assert_eq!(k.program().kernel_names(), ["k"]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn program(&self) -> &Program {
        &self.inner.program
    }

    /// The driver's description of each argument (entries are `None` where it has none).
    /// The emulated backend's hidden sub-group scratch argument is not listed.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x, int n) { }")?;
    /// let args = p.kernel("k")?.args().to_vec();
    /// assert_eq!(args.len(), 2);
    /// if let Some(t) = &args[1].type_name {
    ///     assert_eq!(t, "int");
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn args(&self) -> &[ArgInfo] {
        &self.inner.args
    }

    /// Work-group limits of this kernel on its device (the inputs of local-size plans).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// let limits = p.kernel("k")?.limits().clone();
    /// assert!(limits.max_work_group_size >= 1 && limits.preferred_multiple >= 1);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// How the kernel's sub-group size resolved on its device.
    ///
    /// ```
    /// use clgroups::program::ResolvedSize;
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     #include <clgroups/subgroup.h>
    ///     kernel void k(global int *x) { x[0] = sg_get_max_local_range(); }
    /// "#)?;
    /// let primary = queue.device().sub_groups().effective.primary_sub_group_size;
    /// assert_eq!(p.kernel("k")?.resolved_sub_group_size(), ResolvedSize::Size(primary));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn resolved_sub_group_size(&self) -> ResolvedSize {
        self.inner.size
    }

    /// The work-group size the kernel requires (`reqd_work_group_size`, as the driver reports
    /// it in `CL_KERNEL_COMPILE_WORK_GROUP_SIZE`), OpenCL order, trailing 1s trimmed.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     kernel __attribute__((reqd_work_group_size(16, 1, 1))) void k(global int *x) { x[0] = 1; }
    /// "#)?;
    /// assert_eq!(p.kernel("k")?.required_work_group_size(), Some(Range::d1(16)));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn required_work_group_size(&self) -> Option<Range> {
        self.inner.constraints.required
    }

    /// The kernel's `work_group_size_hint`, from the driver's `CL_KERNEL_ATTRIBUTES` or else
    /// the kernel's declaration; [`crate::launch::LocalSize::Tuned`] uses it where it divides
    /// the global range and fits the kernel's limits.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     kernel __attribute__((work_group_size_hint(8, 1, 1))) void k(global int *x) { x[0] = 1; }
    /// "#)?;
    /// assert_eq!(p.kernel("k")?.work_group_size_hint(), Some(Range::d1(8)));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn work_group_size_hint(&self) -> Option<Range> {
        self.inner.constraints.hint
    }

    /// Whether a range-rounded variant exists, or why not.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[get_global_id(0)] = 1; }")?;
    /// match p.kernel("k")?.rounding_support() {
    ///     Ok(()) => println!("plain ranges of `k` may be rounded up and guarded"),
    ///     Err(why) => println!("no rounded variant: {why}"),
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn rounding_support(&self) -> std::result::Result<(), &Obstacle> {
        self.inner.rounded.as_ref().map(|_| ())
    }

    pub(crate) fn raw(&self) -> MutexGuard<'_, Owned<ClKernel>> {
        self.inner.raw.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pointer parameters (index, name) that the kernel's variants check, or why they
    /// check none (see [`crate::launch::checked`]): when there are some, every variant
    /// [`raw_variant`](Kernel::raw_variant) gives is checked.
    pub(crate) fn checked_pointers(&self) -> std::result::Result<&[(usize, String)], &Obstacle> {
        match &self.inner.checked {
            Ok(c) => Ok(&c.pointers),
            Err(why) => Err(why),
        }
    }

    /// The kernel that runs a piece of a launch (`None`: no such variant); checked variants
    /// where the kernel has them; for rounded pieces of a kernel without a rounded variant, its
    /// wrapper once [`Kernel::wrapped`] made it.
    pub(crate) fn raw_variant(&self, v: Variant) -> Option<MutexGuard<'_, Owned<ClKernel>>> {
        let m = match (v, &self.inner.rounded) {
            (Variant::Original, _) => match &self.inner.checked {
                Ok(c) => &c.raw,
                Err(_) => &self.inner.raw,
            },
            (Variant::Rounded, Ok([r, _])) => r,
            (Variant::Sized, Ok([_, z])) => z,
            (Variant::Rounded, Err(_)) => self.wrapper()?,
            (_, Err(_)) => return None,
        };
        Some(m.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether the kernel's last parameter is the hidden emulated sub-group scratch, which the
    /// launch sets after the user's arguments.
    pub(crate) fn hidden_scratch(&self) -> bool {
        self.inner.hidden_scratch
    }

    /// Whether the kernel's body calls the sub-group layer (`sg_*`, or a standard sub-group
    /// built-in, which the polyfill may provide on the layer).
    /// Why the kernel's result may depend on its work-group shape (it asks for group ids,
    /// local sizes or local ids), or `None`: plain ranges of such kernels are rounded only
    /// where a required work-group size keeps the shape.
    pub(crate) fn shape_dependence(&self) -> Option<&Obstacle> {
        self.inner.shape.as_ref()
    }

    /// The plans of the kernel's recent launches.
    pub(crate) fn plans(&self) -> &Plans {
        &self.inner.plans
    }

    /// Whether its program's source allows bulk + tail launches (`plan::split::splittable`).
    pub(crate) fn splittable(&self) -> bool {
        self.inner.splittable
    }

    /// The arguments of the last launch whose arguments passed the signature check.
    pub(crate) fn last_args(&self) -> MutexGuard<'_, Option<Vec<ArgKey>>> {
        self.inner
            .last_args
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// What its pieces ran, on a device that compiles alone (`first_run`).
    pub(crate) fn first_runs(&self) -> MutexGuard<'_, Runs> {
        (self.inner.first_runs.lock()).unwrap_or_else(|p| p.into_inner())
    }

    /// What the kernel imposes on its work-groups ([`crate::plan::work_group::choose`]).
    pub(crate) fn constraints(&self) -> &Constraints {
        &self.inner.constraints
    }

    /// Errors with [`Error::FeatureNotSupported`] if the kernel requires a sub-group size the
    /// device does not support.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     #include <clgroups/subgroup.h>
    ///     kernel CLG_REQD_SUB_GROUP_SIZE(3) void odd(global uint *x) { x[0] = sg_get_local_id(); }
    /// "#)?;
    /// // No device has sub-groups of 3: the kernel builds, but says so before any launch.
    /// assert!(matches!(p.kernel("odd")?.check_sub_group_size(), Err(Error::FeatureNotSupported { .. })));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn check_sub_group_size(&self) -> Result<()> {
        match self.inner.size {
            ResolvedSize::Size(_) => Ok(()),
            ResolvedSize::Unsupported(s) => Err(Error::FeatureNotSupported {
                device: self.program().device().to_string(),
                kernel: self.name().to_string(),
                requested: s,
                supported: self
                    .program()
                    .device()
                    .sub_groups()
                    .effective
                    .sub_group_sizes
                    .clone(),
            }),
        }
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kernel({} on {})", self.name(), self.program().device())
    }
}
/// The sizes of the attribute `attr(x, y, z)` (`reqd_work_group_size`, `work_group_size_hint`)
/// in `text`, the driver's `CL_KERNEL_ATTRIBUTES` string (integer literals only).
fn attr_sizes(text: &str, attr: &str) -> Option<Range> {
    let at = text.find(attr)?;
    let rest = text[at..].split_once('(')?.1;
    let dims: Vec<usize> = rest
        .split_once(')')?
        .0
        .split(',')
        .map(|d| d.trim().trim_end_matches(['u', 'U']).parse().ok())
        .collect::<Option<_>>()?;
    if dims.is_empty() || dims.len() > 3 || dims.contains(&0) {
        return None;
    }
    Range::new(trim_ones(&dims)).ok()
}

fn trim_ones(dims: &[usize]) -> &[usize] {
    let mut n = dims.len();
    while n > 1 && dims[n - 1] == 1 {
        n -= 1;
    }
    &dims[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_hints_are_read_from_attribute_text() {
        assert_eq!(
            attr_sizes(
                "work_group_size_hint(64,1,1) vec_type_hint(float4)",
                "work_group_size_hint"
            ),
            Some(Range::d1(64))
        );
        assert_eq!(
            attr_sizes(
                "kernel __attribute__((work_group_size_hint(8, 4, 1))) void",
                "work_group_size_hint"
            ),
            Some(Range::d2(8, 4))
        );
        assert_eq!(
            attr_sizes("work_group_size_hint(WGS, 1, 1)", "work_group_size_hint"),
            None
        );
        assert_eq!(
            attr_sizes("reqd_work_group_size(4,1,1)", "work_group_size_hint"),
            None
        );
        assert_eq!(
            attr_sizes("reqd_work_group_size(4,1,1)", "reqd_work_group_size"),
            Some(Range::d1(4))
        );
    }
}
