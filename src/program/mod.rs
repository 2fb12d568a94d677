//! Programs: OpenCL C built for one device with the `cl/` sub-group layer available.
//!
//! What a build does, in order (each step logged at debug level):
//! 1. scans the source for kernels, their sub-group size attributes
//!    (`CLG_REQD_SUB_GROUP_SIZE(S)`, `CLG_NAMED_SUB_GROUP_SIZE(primary|automatic)`,
//!    `intel_reqd_sub_group_size`) and whether each may be rewritten; a source the scanner cannot
//!    read as a whole is built as written (the source transforms are `crate::transform`);
//! 2. finds the functions that use the sub-group layer, transitively, and resolves
//!    the sub-group size of those kernels (attribute, else the program's default,
//!    [`SubGroupSize::Primary`] unless set, like DPC++'s `-fsycl-default-sub-group-size`); other
//!    kernels run the driver's size, and a size the device does not support is reported as
//!    [`Error::FeatureNotSupported`] when that kernel is launched;
//! 3. rewrites: the emulated scratch threaded through layer kernels and helpers, range-rounded
//!    variants of the kernels that can be rounded, and `intel_reqd_sub_group_size`
//!    on layer kernels without a size attribute of their own (khr/intel);
//! 4. builds once per distinct sub-group size of layer kernels (usually once), with the
//!    backend's defines (`CLG_BACKEND_*`, `CLG_SUB_GROUP_SIZE`, ...) prepended, then the
//!    polyfill of the standard sub-group built-ins the device lacks if the source names any
//!    (see [`polyfill`]),
//!    `#include <clgroups/...>` resolved from copies of `cl/` embedded in the library, and
//!    `#line` directives so that the compiler's log names the user's file and lines; a build that
//!    fails is retried without the variants, then as written, and the kernels lose what was
//!    dropped (launches fall back, see [`crate::plan::split`]);
//! 5. takes the kernel names from the driver (`CL_PROGRAM_KERNEL_NAMES`, else
//!    `clCreateKernelsInProgram`, else the scanner's).
//!
//! Builds are cached per (context, device, final source, options), in the context: they are
//! freed with it.
//!
//! ```
//! use clgroups::{Program, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, r#"
//!     #include <clgroups/subgroup.h>
//!     kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }
//! "#)?;
//! let k = p.kernel("twice")?;
//! # Ok::<(), clgroups::Error>(())
//! ```

mod build;
pub mod polyfill;

pub use crate::transform::build_log;
pub use crate::transform::SubGroupSizeAttr as SubGroupSize;

use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::ffi::ClProgram;
use crate::kernel::Kernel;
use crate::plan::rounding::RoundingConfig;
use crate::queue::Queue;
use crate::transform::{self, KernelDecl};
pub(crate) use build::KernelPlan;
use build::{build_with_fallbacks, driver_kernel_names};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a kernel's sub-group size resolved on a device.
///
/// ```
/// use clgroups::program::ResolvedSize;
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
/// match p.kernel("k")?.resolved_sub_group_size() {
///     ResolvedSize::Size(0) => println!("the driver chooses the sub-group size"),
///     ResolvedSize::Size(n) => println!("sub-groups of {n}"),
///     ResolvedSize::Unsupported(n) => println!("needs {n}, which the device lacks"),
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolvedSize {
    /// Runs with this size; 0 = automatic (the driver's choice).
    Size(usize),
    /// Requires this size, which the device does not support.
    Unsupported(usize),
}

/// Builds a [`Program`]: source, options, default sub-group size, file name for messages.
///
/// ```
/// use clgroups::program::SubGroupSize;
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let program = Program::builder("kernel void k(global float *x) { x[0] = 1.0f; }")
///     .options("-cl-fast-relaxed-math")
///     .file_name("k.cl")
///     .default_sub_group_size(SubGroupSize::Automatic)
///     .build(&queue)?;
/// assert_eq!(program.kernel_names(), ["k"]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ProgramBuilder {
    source: String,
    file_name: String,
    options: String,
    default_size: SubGroupSize,
    rounding: Option<RoundingConfig>,
}

impl ProgramBuilder {
    /// Compiler options passed through (e.g. `-cl-fast-relaxed-math`).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = N; }")
    ///     .options("-D N=7")
    ///     .build(&queue)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn options(mut self, options: &str) -> Self {
        self.options = options.to_string();
        self
    }

    /// The name compiler messages use for the source (default `kernel.cl`).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// // The build log names `mine.cl`, with the user's line numbers.
    /// let err = Program::builder("kernel void k() { oops; }").file_name("mine.cl").build(&queue);
    /// assert!(matches!(err, Err(clgroups::Error::Build { .. })));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = name.to_string();
        self
    }

    /// The sub-group size of kernels that say nothing (default [`SubGroupSize::Primary`]).
    ///
    /// ```
    /// use clgroups::program::SubGroupSize;
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = 1; }")
    ///     .default_sub_group_size(SubGroupSize::Automatic)
    ///     .build(&queue)?;
    /// assert_eq!(p.default_sub_group_size(), SubGroupSize::Automatic);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn default_sub_group_size(mut self, size: SubGroupSize) -> Self {
        self.default_size = size;
        self
    }

    /// Range-rounding settings (default: [`RoundingConfig::from_env`]).
    ///
    /// ```
    /// use clgroups::plan::rounding::{RoundingConfig, RoundingMode};
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let config = RoundingConfig { mode: RoundingMode::Disable, ..RoundingConfig::from_env() };
    /// let p = Program::builder("kernel void k(global int *x) { x[get_global_id(0)] = 1; }")
    ///     .rounding(config)
    ///     .build(&queue)?;
    /// assert_eq!(p.rounding().mode, RoundingMode::Disable);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn rounding(mut self, config: RoundingConfig) -> Self {
        self.rounding = Some(config);
        self
    }

    /// Builds for the queue's device.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = 1; }").build(&queue)?;
    /// assert_eq!(p.device(), queue.device());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn build(self, queue: &Queue) -> Result<Program> {
        Program::build(self, queue)
    }

    /// The source to build.
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// This builder with another source (e.g. with generated variants).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn with_source(mut self, source: String) -> Self {
        self.source = source;
        self
    }
}

/// A program built for one device. Cheap to clone; `Send + Sync`.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let program = Program::from_source(&queue, r#"
///     kernel void add(global int *x, int v) { x[get_global_id(0)] += v; }
///     kernel void neg(global int *x) { x[get_global_id(0)] = -x[get_global_id(0)]; }
/// "#)?;
/// let mut names = program.kernel_names();
/// names.sort();
/// assert_eq!(names, ["add", "neg"]);
/// let add = program.kernel("add")?;
/// assert_eq!(add.name(), "add");
/// println!("{program:?}"); // Program { device: "...", kernels: ["add", "neg"], .. }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Program {
    inner: Arc<ProgramInner>,
}

struct ProgramInner {
    queue: Queue,
    /// The user's source, as given.
    source: String,
    /// The scanner's declarations (possibly fewer than the driver's kernels).
    kernels: Vec<KernelDecl>,
    /// The kernel names, from the driver.
    names: Vec<String>,
    /// Whether `names` is the whole list (else a kernel's name is checked by creating it).
    names_known: bool,
    /// What the build decided per scanned kernel.
    plans: BTreeMap<String, KernelPlan>,
    /// One build per distinct size of layer kernels (`CLG_SUB_GROUP_SIZE`; kernels that do not
    /// use the layer take the first).
    builds: BTreeMap<usize, Arc<ClProgram>>,
    rounding: RoundingConfig,
    /// The size of kernels that ask for none.
    default_size: SubGroupSize,
    /// Whether plain ranges of kernels without variants may run as bulk + tail launches
    /// ([`crate::plan::split::splittable`] of the whole source).
    splittable: bool,
    /// Whether the source asks for group ids (`get_group_id`, `get_num_groups`), which a rounded
    /// launch's tail piece at a global offset would change: then one rounded launch.
    group_ids: bool,
    /// Whether a word of the source is a sub-group collective.
    sub_group_words: bool,
    /// Kernels refused where collectives are work-group barriers (emulated backend, PoCL's CPU
    /// devices): a collective under work-item-dependent control flow ([`divergence`]), and where.
    divergent: BTreeMap<String, String>,
}

impl Program {
    /// A builder for `source`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = 1; }").build(&queue)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn builder(source: impl Into<String>) -> ProgramBuilder {
        ProgramBuilder {
            source: source.into(),
            file_name: "kernel.cl".into(),
            options: String::new(),
            default_size: SubGroupSize::Primary,
            rounding: None,
        }
    }

    /// Builds `source` with default settings for the queue's device.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     #include <clgroups/subgroup.h>
    ///     kernel void lane(global uint *x) { x[get_global_id(0)] = sg_get_local_id(); }
    /// "#)?;
    /// assert!(p.kernel("lane").is_ok());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_source(queue: &Queue, source: &str) -> Result<Program> {
        Program::builder(source).build(queue)
    }

    /// Builds the file at `path` (its name appears in compiler messages).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let path = std::env::temp_dir().join(format!("clgroups-doc-{}.cl", std::process::id()));
    /// std::fs::write(&path, "kernel void k(global int *x) { x[0] = 1; }").unwrap();
    /// let p = Program::from_file(&queue, &path)?;
    /// assert_eq!(p.kernel_names(), ["k"]);
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_file(queue: &Queue, path: impl AsRef<std::path::Path>) -> Result<Program> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path)
            .map_err(|e| Error::input(format!("cannot read {}: {e}", path.display())))?;
        Program::builder(source)
            .file_name(&path.display().to_string())
            .build(queue)
    }

    fn build(b: ProgramBuilder, queue: &Queue) -> Result<Program> {
        let device = queue.device();
        let (kernels, unscanned) = transform::scan(&b.source)?;
        let rounding = b.rounding.unwrap_or_else(RoundingConfig::from_env);
        let (layer, sub_groups, mut divergence) = transform::layer_use(&b.source, device);
        for (k, why) in &divergence.refused {
            log::debug!("`{k}` is refused on the emulated backend: {why}");
        }
        let plans: BTreeMap<String, KernelPlan> = kernels
            .iter()
            .map(|k| {
                let mut plan = KernelPlan::new(k, &b, device, &rounding, layer.contains(&k.name));
                plan.set_sub_groups(sub_groups.contains(&k.name), k, device);
                plan.id_conditions = divergence.at_launch.remove(&k.name).unwrap_or_default();
                (k.name.clone(), plan)
            })
            .collect();
        let mut wanted: Vec<usize> = plans
            .values()
            .filter(|p| p.uses_layer)
            .filter_map(|p| match p.size {
                ResolvedSize::Size(n) => Some(n),
                ResolvedSize::Unsupported(_) => None,
            })
            .collect();
        // Kernels that do not use the layer are not pinned, so they get the build of the
        // backend's automatic size (0 on khr/intel: the layer and the polyfill then ask the
        // driver, like the kernel's own built-ins); so does a program with no scanned kernel.
        if wanted.is_empty() || plans.values().any(|p| !p.uses_layer) {
            wanted.push(automatic_size(device));
        }
        wanted.sort_unstable();
        wanted.dedup();
        let mut builds = BTreeMap::new();
        let mut plans = plans;
        for size in wanted {
            let program = build_with_fallbacks(queue, &b, &kernels, &mut plans, size)?;
            builds.insert(size, program);
        }
        let first = builds.values().next().expect("one build");
        // Where neither the driver (NVIDIA, for a program of another device than the first of
        // a multi-device context) nor the scanner knows the names, `kernel` asks the driver.
        let (names, names_known) = match driver_kernel_names(first, device) {
            Ok(names) => (names, true),
            Err(why) => {
                log::debug!("kernel names from the scanner: the driver gave none ({why})");
                let names = kernels.iter().map(|k| k.name.clone()).collect();
                (names, false)
            }
        };
        if let Some(why) = &unscanned {
            log::debug!("kernels {names:?} built without rewrites: {why}");
        }
        Ok(Program {
            inner: Arc::new(ProgramInner {
                queue: queue.clone(),
                source: b.source.clone(),
                kernels,
                names,
                names_known,
                plans,
                builds,
                rounding,
                default_size: b.default_size,
                splittable: crate::plan::split::splittable(&b.source),
                sub_group_words: transform::names_sub_group_collectives(&b.source),
                group_ids: crate::plan::split::uses_any(
                    &b.source,
                    &["get_group_id", "get_num_groups"],
                ),
                divergent: divergence.refused,
            }),
        })
    }

    /// The kernel called `name`. Where sub-group collectives are work-group barriers (the
    /// `emulated` backend, PoCL's CPU devices: [`Device::needs_group_uniform_collectives`]), a
    /// kernel with a collective under control flow that depends on a work-item id (but
    /// `if (get_global_id(d) OP n)`, checked per launch) is refused with [`Error::Unsupported`]
    /// naming the call and the condition ([uniform control flow](crate::opencl_c); PoCL 3.1
    /// would hang or crash, PoCL 6.0 compute wrong results).
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
        // Generated variants (`__clg_` names, e.g. the partitioned placement's) are not listed.
        let listed = |n: &str| self.inner.names.iter().any(|m| m == n);
        if self.inner.names_known
            && !listed(name)
            && !listed(&crate::kernel::driver_alias(name))
            && !name.contains("__clg_")
        {
            return Err(Error::NoSuchKernel {
                kernel: name.to_string(),
                available: self.kernel_names(),
            });
        }
        if let Some(why) = self.inner.divergent.get(name) {
            return Err(build::divergent_error(self.device(), name, why));
        }
        let unscanned;
        let plan = match self.inner.plans.get(name) {
            Some(p) => p,
            None => {
                unscanned = KernelPlan::unscanned(self.device(), self.inner.sub_group_words);
                &unscanned
            }
        };
        if let Some(e) = plan.refusal(self.device(), name) {
            return Err(e);
        }
        let build = match plan.size {
            ResolvedSize::Size(n) if plan.uses_layer => &self.inner.builds[&n],
            _ => self
                .inner
                .builds
                .get(&automatic_size(self.device()))
                .or_else(|| self.inner.builds.values().next())
                .expect("one build"),
        };
        let rounded = match &plan.rounded {
            Ok(()) => Ok(Arc::clone(build)),
            Err(why) => Err(why.clone()),
        };
        let checked = match (&plan.checked, self.decl(name)) {
            (Ok(()), Some(decl)) => Ok(transform::checked_pointers(decl)),
            (Ok(()), None) => Err("the kernel is declared more than once".to_string()),
            (Err(why), _) => Err(why.clone()),
        };
        Kernel::create(self.clone(), build, name, plan, rounded, checked)
    }

    /// Names of the program's kernels, as the driver reports them (from the scanner where the
    /// driver cannot answer).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void a(global int *x) { x[0] = 1; }")?;
    /// assert_eq!(p.kernel_names(), ["a"]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kernel_names(&self) -> Vec<String> {
        self.inner.names.clone()
    }

    /// The source as given (before clgroups' rewrites).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let src = "kernel void k(global int *x) { x[0] = 1; }";
    /// assert_eq!(Program::from_source(&queue, src)?.source(), src);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// The queue the program was built for.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// p.queue().finish()?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
    }

    /// The device the program was built for.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// println!("built for {}", p.device());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        self.inner.queue.device()
    }

    /// The range-rounding settings kernels of this program launch with.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// println!("range rounding: {:?}", p.rounding().mode);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn rounding(&self) -> &RoundingConfig {
        &self.inner.rounding
    }

    /// The sub-group size of kernels that ask for none.
    ///
    /// ```
    /// use clgroups::program::SubGroupSize;
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// assert_eq!(p.default_sub_group_size(), SubGroupSize::Primary);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn default_sub_group_size(&self) -> SubGroupSize {
        self.inner.default_size
    }

    /// Whether no kernel of the source asks for what a bulk + tail split would change.
    pub(crate) fn splittable(&self) -> bool {
        self.inner.splittable
    }

    /// Whether the source asks for group ids.
    pub(crate) fn uses_group_ids(&self) -> bool {
        self.inner.group_ids
    }

    /// The scanned declaration of kernel `name` (`None` for kernels the scanner did not find,
    /// e.g. ones made by macros, and for names defined twice under `#if` branches).
    pub(crate) fn decl(&self, name: &str) -> Option<&KernelDecl> {
        let mut found = self.inner.kernels.iter().filter(|k| k.name == name);
        match (found.next(), found.next()) {
            (Some(k), None) => Some(k),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("device", &self.device().to_string())
            .field("kernels", &self.inner.names)
            .finish_non_exhaustive()
    }
}

impl ResolvedSize {
    fn size_or(self, default: usize) -> usize {
        match self {
            ResolvedSize::Size(n) => n,
            ResolvedSize::Unsupported(_) => default,
        }
    }
}

/// The sub-group size of builds for kernels clgroups does not pin: 0 (the driver's) on
/// `khr`/`intel`, the backend's fixed size on `emulated` and `nvidia-ptx`.
fn automatic_size(device: &Device) -> usize {
    resolve(SubGroupSize::Automatic, device).size_or(0)
}

/// Resolves a requested sub-group size on a device (pure given the device's capabilities).
///
/// `Exact(s)` runs if the effective sizes list `s`; `Primary` is the primary size;
/// `Automatic` is the driver's choice on `khr`/`intel` (0), the warp on `nvidia-ptx`, and the
/// primary size on `emulated` (emulation has no driver to choose).
///
/// ```
/// use clgroups::program::{resolve, ResolvedSize, SubGroupSize};
/// let device = clgroups::default_device()?;
/// let primary = device.sub_groups().effective.primary_sub_group_size;
/// assert_eq!(resolve(SubGroupSize::Primary, &device), ResolvedSize::Size(primary));
/// assert_eq!(resolve(SubGroupSize::Exact(3), &device), ResolvedSize::Unsupported(3));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn resolve(want: SubGroupSize, device: &Device) -> ResolvedSize {
    let eff = &device.sub_groups().effective;
    match want {
        SubGroupSize::Exact(s) if eff.sub_group_sizes.contains(&s) => ResolvedSize::Size(s),
        SubGroupSize::Exact(s) => ResolvedSize::Unsupported(s),
        SubGroupSize::Primary => ResolvedSize::Size(eff.primary_sub_group_size),
        SubGroupSize::Automatic => match eff.shuffle_backend {
            ShuffleBackend::Khr | ShuffleBackend::Intel => ResolvedSize::Size(0),
            ShuffleBackend::NvidiaPtx | ShuffleBackend::Emulated => {
                ResolvedSize::Size(eff.primary_sub_group_size)
            }
        },
    }
}
