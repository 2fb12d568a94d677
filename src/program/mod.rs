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
//!    dropped (launches fall back, see `plan::split`);
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
mod builder;
mod compile;
mod emulated;
mod macros;
mod probe;
mod told;
mod wrapped;

pub use builder::ProgramBuilder;
pub use told::{SizeRefusal, Untold};
pub mod polyfill;

pub use crate::plan::rounding::{RoundingConfig, RoundingMode, RoundingParams};
#[cfg(feature = "unstable-internals")]
#[doc(hidden)]
pub use crate::transform::build_log;
pub use crate::transform::SubGroupSizeAttr as SubGroupSize;

use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, InputFault, Result};
use crate::ffi::ClProgram;
use crate::queue::Queue;
use crate::transform::{self, KernelDecl, Obstacle, Source, SourceFacts};
use build::{build_with_fallbacks, driver_kernel_names};
pub(crate) use build::{derived_geometry, KernelChoices};
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
    /// The kernel names, from the driver.
    names: Vec<String>,
    /// Whether `names` is the whole list (else a kernel's name is checked by creating it).
    names_known: bool,
    /// What the build decided per scanned kernel.
    plans: BTreeMap<String, KernelChoices>,
    /// One build per distinct size of layer kernels (`CLG_SUB_GROUP_SIZE`; kernels that do not
    /// use the layer take the first).
    builds: BTreeMap<usize, Arc<ClProgram>>,
    /// The sizes of the builds that declare the stand-in scratch (see `build_with_fallbacks`).
    stand_ins: std::collections::BTreeSet<usize>,
    rounding: RoundingConfig,
    /// The size of kernels that ask for none.
    default_size: SubGroupSize,
    /// The user's build options (wrapper programs are built with them).
    options: String,
    /// Wrapper programs built so far, or why one could not be, by kernel name.
    wrappers: std::sync::Mutex<BTreeMap<String, std::result::Result<Arc<ClProgram>, Obstacle>>>,
    /// What the one scan of the source found: its kernels' declarations (possibly fewer than
    /// the driver's kernels), layer users, kernels refused on the emulated backend, words.
    facts: SourceFacts,
    /// The required sub-group sizes the driver told ([`probe`]), or why it told none.
    driver_sizes: told::DriverSizes,
    /// The program rebuilt on the emulated backend, once a kernel needs it ([`emulated`]): with
    /// the program's default sub-group size, and with sub-groups of one.
    emulated: [std::sync::OnceLock<Result<Program>>; 2],
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
        let source = std::fs::read_to_string(path).map_err(|e| {
            Error::input(InputFault::Unreadable {
                path: path.display().to_string(),
                error: e.to_string(),
            })
        })?;
        Program::builder(source)
            .file_name(&path.display().to_string())
            .build(queue)
    }

    fn build(b: ProgramBuilder, queue: &Queue) -> Result<Program> {
        crate::checked::single_device()?; // an invalid CLGROUPS_CHECKED is an error here
        let device = queue.device();
        // The one scan of the source: everything below reads its facts and reuses it.
        // Collectives under sub-group-uniform conditions, where collectives are work-group
        // barriers: moved where the whole work-group reaches them (transform::hoist).
        let backend = device.sub_groups().effective.shuffle_backend;
        let collective = transform::barrier_collectives(device);
        let given = b.source.clone();
        transform::read_source(&given, backend, collective, |source| {
            Program::build_read(b, queue, source)
        })
    }

    /// [`Program::build`] of the source as read (`source.text`: hoisted where needed).
    fn build_read(mut b: ProgramBuilder, queue: &Queue, mut source: Source<'_>) -> Result<Program> {
        let device = queue.device();
        let given = std::mem::replace(&mut b.source, source.text.to_string());
        if source.facts.conditionals {
            // Sizes chosen by `#if` branches: those of the branches this build compiles.
            let macros = macros::compiler_macros(queue, &b, &source.facts);
            transform::resolve_conditional_sizes(&b.source, &mut source.facts.kernels, macros);
        }
        let rounding = b.rounding.unwrap_or_else(RoundingConfig::from_env);
        for (k, why) in &source.facts.divergence.refused {
            log::debug!("`{k}` is refused on the emulated backend: {why}");
        }
        let mut at_launch = std::mem::take(&mut source.facts.divergence.at_launch);
        let facts = &source.facts;
        let plans: BTreeMap<String, KernelChoices> = facts
            .kernels
            .iter()
            .map(|k| {
                let mut plan = KernelChoices::new(k, &b, device, &rounding, facts);
                plan.set_collectives(facts.collective_users.contains(&k.name), k, device);
                plan.id_conditions = at_launch.remove(&k.name).unwrap_or_default();
                (k.name.clone(), plan)
            })
            .collect();
        let mut wanted: Vec<usize> = plans.values().filter_map(|p| p.build_size()).collect();
        // Kernels that do not use the layer are not pinned, so they get the build of the
        // backend's automatic size (0 on khr/intel: the layer and the polyfill then ask the
        // driver, like the kernel's own built-ins); so does a program with no scanned kernel.
        // (Those with their own required size on PoCL's native sub-groups take that size's.)
        if wanted.is_empty() || plans.values().any(|p| p.build_size().is_none()) {
            wanted.push(automatic_size(device));
        }
        wanted.sort_unstable();
        wanted.dedup();
        let mut builds = BTreeMap::new();
        let mut stand_ins = std::collections::BTreeSet::new();
        let mut plans = plans;
        for size in wanted {
            let (program, stand_in) = build_with_fallbacks(queue, &b, &source, &mut plans, size)?;
            builds.insert(size, program);
            if stand_in {
                stand_ins.insert(size);
            }
        }
        let first = Arc::clone(builds.values().next().expect("one build"));
        // Where neither the driver (NVIDIA, for a program of another device than the first of
        // a multi-device context) nor the scanner knows the names, `kernel` asks the driver.
        let (names, names_known) = match driver_kernel_names(&first, device) {
            Ok(names) => (names, true),
            Err(why) => {
                log::debug!("kernel names from the scanner: the driver gave none ({why})");
                let names = facts.kernels.iter().map(|k| k.name.clone()).collect();
                (names, false)
            }
        };
        if let Some(why) = &facts.unscanned {
            log::debug!("kernels {names:?} built without rewrites: {why}");
        }
        // Required sizes clgroups cannot read, where it must know them: the driver's.
        let (driver_sizes, more_stand_ins) =
            probe::ask_driver(queue, &b, &mut source, &mut plans, &mut builds, &rounding)?;
        stand_ins.extend(more_stand_ins);
        Ok(Program {
            inner: Arc::new(ProgramInner {
                queue: queue.clone(),
                source: given,
                names,
                names_known,
                plans,
                builds,
                stand_ins,
                rounding,
                default_size: b.default_size,
                options: b.options.clone(),
                wrappers: Default::default(),
                facts: std::mem::take(&mut source.facts),
                driver_sizes,
                emulated: Default::default(),
            }),
        })
    }

    /// What the program decided for its kernel `name` ([`Program::kernel`] makes the kernel
    /// from it): the build it lives in, its plan, its rounded and checked variants or why
    /// none; an error for a kernel that does not exist or is refused.
    pub(crate) fn kernel_parts(&self, name: &str) -> Result<KernelParts<'_>> {
        // Generated variants (`__clg_` names, e.g. the partitioned placement's) are not listed.
        let listed = |n: &str| self.inner.names.iter().any(|m| m == n);
        if self.inner.names_known
            && !listed(name)
            && !listed(&driver_alias(name))
            && !transform::is_generated(name)
        {
            return Err(Error::NoSuchKernel {
                kernel: name.to_string(),
                available: self.kernel_names(),
            });
        }
        if let Some(why) = self.inner.facts.divergence.refused.get(name) {
            return Err(build::divergent_error(self.device(), name, why));
        }
        // Kernels of no build size of their own live in the automatic size's build.
        let automatic = Some(automatic_size(self.device()))
            .filter(|n| self.inner.builds.contains_key(n))
            .or_else(|| self.inner.builds.keys().next().copied())
            .expect("one build");
        let plan = match self.inner.plans.get(name) {
            Some(p) => p.clone(),
            None => KernelChoices::unscanned(
                self.device(),
                self.inner.facts.names_sub_group_collectives(),
                (
                    self.inner.facts.hidden_required_size,
                    told::told(&self.inner.driver_sizes, name),
                ),
                |size| {
                    (self.inner.facts.scratch_stand_in.as_ref())
                        .filter(|_| self.inner.stand_ins.contains(&size))
                },
            ),
        };
        if let Some(e) = plan.refusal(self.device(), name) {
            return Err(e);
        }
        let build = &self.inner.builds[&plan.build_size().unwrap_or(automatic)];
        let rounded = match &plan.rounded {
            Ok(()) => Ok(Arc::clone(build)),
            Err(why) => Err(why.clone()),
        };
        let checked = match (&plan.checked, self.decl(name)) {
            (Ok(()), Some(decl)) => Ok(transform::checked_pointers(decl)),
            (Ok(()), None) => Err(Obstacle::DeclaredTwice),
            (Err(why), _) => Err(why.clone()),
        };
        Ok(KernelParts {
            build,
            plan,
            rounded,
            checked,
        })
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
        crate::plan::split::splittable(|w| self.inner.facts.uses(w))
    }

    /// Why the source may hold code the scanner did not read (an `#include` of a header other
    /// than clgroups' own, an include option, a build option's macro naming launch values).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn unseen_code(&self) -> Option<crate::obstacle::Obstacle> {
        crate::transform::unseen_code(&self.inner.facts.includes, &self.inner.options)
    }

    /// What the one scan of the source found.
    pub(crate) fn facts(&self) -> &SourceFacts {
        &self.inner.facts
    }

    /// The scanned declaration of kernel `name` (`None` for kernels the scanner did not find,
    /// e.g. ones made by macros, and for names defined twice under `#if` branches).
    pub(crate) fn decl(&self, name: &str) -> Option<&KernelDecl> {
        let mut found = self.inner.facts.kernels.iter().filter(|k| k.name == name);
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

/// What a [`Program`] decided for one of its kernels (see [`Program::kernel_parts`]).
pub(crate) struct KernelParts<'a> {
    /// The build holding the kernel.
    pub(crate) build: &'a ClProgram,
    pub(crate) plan: KernelChoices,
    /// The build holding its rounded and sized variants, or why there are none.
    pub(crate) rounded: std::result::Result<Arc<ClProgram>, Obstacle>,
    /// Its checked pointer parameters (index, name), or why it has no checked variant.
    pub(crate) checked: std::result::Result<Vec<(usize, String)>, Obstacle>,
}

/// The name PoCL 3.x gives a kernel named like an OpenCL built-in function (`step`, `clamp`,
/// ...).
pub(crate) fn driver_alias(name: &str) -> String {
    format!("_cl_{name}")
}
