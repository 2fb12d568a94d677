//! [`RootDevice`], [`RootProgram`] and [`RootKernel`].

use super::launch::driver_params;
use super::{Placement, RootLaunch, DEVICES_ENV};
use crate::device::{default_device, devices, select_device, Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::plan::coloring::DEFAULT_PAGE_SIZE;
use crate::plan::local_size::{self, Limits};
use crate::plan::{rounding, split};
use crate::program::{Program, ProgramBuilder};
use crate::queue::{names, Context, Queue};
use crate::range::Range;
use crate::transform::{
    self, is_const_pointee, is_global_pointer, own_id_index, variant_name, whole_launch_obstacle,
    with_partitioned_variants, IdIndex, KernelDecl, Scanned, VariantKind,
};
use opencl3::kernel::CL_KERNEL_ARG_TYPE_CONST;
use std::fmt;
use std::sync::Arc;

/// Several devices of one platform used as one: a shared context and one queue per device.
/// Cheap to clone; `Send + Sync`.
///
/// ```
/// use clgroups::prelude::*;
/// // All devices of the default device's platform (or those CLGROUPS_DEVICES names).
/// let root = RootDevice::from_env()?;
/// println!("{root:?}: {} device(s), {} placement", root.len(), root.placement());
/// let program = root.program(r#"
///     kernel void saxpy(float a, global const float *x, global float *y) {
///         size_t i = get_global_id(0);
///         y[i] = a * x[i] + y[i];
///     }
/// "#)?;
/// let saxpy = program.kernel("saxpy")?;
/// let n = 1 << 16;
/// let x = ColoredBuffer::from_slice(&root, &vec![1.0f32; n])?;
/// let mut y = ColoredBuffer::from_slice(&root, &vec![2.0f32; n])?;
/// // SAFETY: work-item i reads x[i] and writes y[i], i < n = x.len() = y.len().
/// let ev = unsafe { saxpy.launch().arg(3.0f32).arg(&x).arg(&mut y).range(n)? };
/// ev.wait()?;
/// assert!(y.read()?.iter().all(|&v| v == 5.0));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct RootDevice {
    context: Context,
    queues: Vec<Queue>,
    placement: Placement,
}

impl RootDevice {
    /// A root device over `devices`, in order (device 0 takes the first chunk of every launch).
    ///
    /// Its [`Placement`] is [`Placement::choose`]`(devices)`.
    ///
    /// Errors ([`Error::InvalidInput`]): no devices, devices of different platforms, one
    /// device given twice, or a bad [`PLACEMENT_ENV`](super::PLACEMENT_ENV).
    ///
    /// ```
    /// use clgroups::RootDevice;
    /// let first = clgroups::default_device()?;
    /// let same_platform: Vec<_> = clgroups::devices()?
    ///     .iter()
    ///     .filter(|d| d.platform_index() == first.platform_index())
    ///     .cloned()
    ///     .collect();
    /// let root = RootDevice::new(&same_platform)?;
    /// assert_eq!(root.len(), same_platform.len());
    /// assert!(RootDevice::new(&[]).is_err());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(devices: &[Device]) -> Result<Self> {
        let keys: Vec<(usize, usize)> = devices
            .iter()
            .map(|d| (d.platform_index(), d.id() as usize))
            .collect();
        check_devices(&keys).map_err(|r| Error::input(format!("{r} ({})", names(devices))))?;
        let placement = Placement::choose(devices)?;
        let context = Context::new(devices)?;
        let queues = devices
            .iter()
            .map(|d| Queue::on(&context, d))
            .collect::<Result<Vec<_>>>()?;
        log::debug!(
            "root device over {} device(s), {placement} placement: {}",
            devices.len(),
            names(devices)
        );
        Ok(RootDevice {
            context,
            queues,
            placement,
        })
    }

    /// The devices [`DEVICES_ENV`] (`CLGROUPS_DEVICES`) names, or else every device of the
    /// default device's platform ([`default_device`]).
    ///
    /// `CLGROUPS_DEVICES` is a comma-separated list of device selectors, each as
    /// `CLGROUPS_DEVICE` takes it ([`crate::device::Selector`]): `0:0,0:1` (platform:device
    /// indices) is the unambiguous form; a name selects the first device it matches.
    ///
    /// ```
    /// // CLGROUPS_DEVICES=0:0,0:1 picks two devices; unset, every device of the default platform.
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(root.queues().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        match std::env::var(DEVICES_ENV) {
            Ok(list) if !list.trim().is_empty() => {
                let chosen = list
                    .split(',')
                    .map(|s| select_device(s.trim()))
                    .collect::<Result<Vec<_>>>()?;
                log::debug!("{DEVICES_ENV}={list:?} chose {}", names(&chosen));
                RootDevice::new(&chosen)
            }
            _ => {
                let platform = default_device()?.platform_index();
                let all: Vec<Device> = devices()?
                    .iter()
                    .filter(|d| d.platform_index() == platform)
                    .cloned()
                    .collect();
                RootDevice::new(&all)
            }
        }
    }

    /// `device` split into `n` equal sub-devices ([`Device::split_equally`]), used as one.
    ///
    /// ```
    /// let device = clgroups::default_device()?;
    /// // Sub-devices need clCreateSubDevices (PoCL's CPU devices have it, most GPUs do not).
    /// match clgroups::RootDevice::split(&device, 2) {
    ///     Ok(root) => assert_eq!(root.len(), 2),
    ///     Err(e) => println!("{device} cannot be split: {e}"),
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn split(device: &Device, n: usize) -> Result<Self> {
        RootDevice::new(&device.split_equally(n)?)
    }

    /// Number of devices (at least 1).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert!(root.len() >= 1 && !root.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Always false: a root device has at least one device.
    ///
    /// ```
    /// assert!(!clgroups::RootDevice::from_env()?.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The devices, in order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// for (i, d) in root.devices().iter().enumerate() {
    ///     println!("device {i}: {d}");
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn devices(&self) -> &[Device] {
        self.context.devices()
    }

    /// The shared context.
    ///
    /// ```
    /// use clgroups::Buffer;
    /// let root = clgroups::RootDevice::from_env()?;
    /// // A plain buffer in the shared context: every device's kernels may read it.
    /// let table = Buffer::<f32>::new(root.context(), 256)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// One queue per device, in device order.
    ///
    /// ```
    /// use clgroups::Buffer;
    /// let root = clgroups::RootDevice::from_env()?;
    /// let q = &root.queues()[0];
    /// let b = Buffer::from_slice(q, &[1u8, 2])?;
    /// assert_eq!(b.read(q)?, [1, 2]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// Where colored buffers of this root device live.
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let root = clgroups::RootDevice::from_env()?;
    /// if std::env::var("CLGROUPS_PLACEMENT").is_err() {
    ///     assert_eq!(root.placement(), Placement::choose(root.devices())?);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// This root device with another placement (for buffers and programs made afterwards).
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let root = clgroups::RootDevice::from_env()?.with_placement(Placement::Partitioned);
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[1u32; 1000])?;
    /// assert_eq!(x.placement(), Placement::Partitioned);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// `source` built for every device with default settings: [`RootDevice::build`] of
    /// [`Program::builder`]`(source)`.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// assert_eq!(program.programs().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn program(&self, source: &str) -> Result<RootProgram> {
        self.build(Program::builder(source))
    }

    /// The builder's source built for every device with its settings (options, file name,
    /// sub-group size, rounding: as [`ProgramBuilder::build`] for one device), with the
    /// `__clg_part` variant of every kernel the scanner can rewrite after it (it sees the whole
    /// launch, see [the module docs](super#what-a-kernel-sees)); checked variants in [checked
    /// mode](super::checked_mode).
    ///
    /// Every source the compiler builds builds here: a source the scanner cannot read, or
    /// variants that do not compile, leave the source as written, and a kernel without its
    /// variant (see [`RootKernel::rewrite_obstacle`]) runs as written, per device or on
    /// device 0 ([`crate::plan::root_fallback`]).
    ///
    /// ```
    /// use clgroups::{scaling::RootDevice, Program};
    /// let root = RootDevice::from_env()?;
    /// let src = "kernel void k(global int *x) { x[get_global_id(0)] *= SCALE; }";
    /// let p = root.build(Program::builder(src).options("-DSCALE=3"))?;
    /// let k = p.kernel("k")?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn build(&self, builder: ProgramBuilder) -> Result<RootProgram> {
        let source: Arc<str> = builder.source().into();
        let (decls, unscanned) = transform::scan(&source)?;
        let checked = super::checked_mode()?;
        let build_all = |b: &ProgramBuilder| {
            let built = self.queues.iter().map(|q| b.clone().build(q));
            built.collect::<Result<Vec<_>>>()
        };
        let (programs, obstacle) = match unscanned {
            Some(why) => (build_all(&builder)?, Some(why)),
            None => match with_partitioned_variants(&source, &decls, checked) {
                Err(e) => (build_all(&builder)?, Some(e.to_string())),
                Ok(text) => match build_all(&builder.clone().with_source(text)) {
                    Ok(programs) => (programs, None),
                    Err(e) => {
                        let why = format!("its variants did not build ({e})");
                        (build_all(&builder)?, Some(why))
                    }
                },
            },
        };
        if let Some(why) = &obstacle {
            log::debug!("root program built as written, without partitioned variants: {why}");
        }
        Ok(RootProgram {
            programs,
            placement: self.placement,
            source,
            decls,
            obstacle,
            checked,
        })
    }

    /// Waits for every queue.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// root.finish()?; // every queue is idle
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }

    /// The coloring page for this device set: [`DEFAULT_PAGE_SIZE`] rounded up to a multiple
    /// of every device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert!(root.default_page_size() >= 64 * 1024);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn default_page_size(&self) -> usize {
        let align = self.alignment();
        DEFAULT_PAGE_SIZE.div_ceil(align) * align
    }

    /// The least common multiple of the devices' sub-buffer alignments, in bytes.
    pub(super) fn alignment(&self) -> usize {
        self.devices()
            .iter()
            .map(|d| d.limits().mem_base_addr_align.max(1))
            .fold(1, |a, b| a / gcd(a, b) * b)
    }

    fn describe(&self) -> String {
        format!(
            "root device [{}], {} placement",
            names(self.devices()),
            self.placement
        )
    }
}

impl fmt::Debug for RootDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Checks `(platform index, device id)` pairs: at least one, one platform, no repeats.
fn check_devices(keys: &[(usize, usize)]) -> std::result::Result<(), String> {
    let Some(&(platform, _)) = keys.first() else {
        return Err("a root device needs at least one device".into());
    };
    if let Some(i) = keys.iter().position(|&(p, _)| p != platform) {
        return Err(format!(
            "devices of a root device must share a platform: device {i} is on platform {}, \
             device 0 on {platform}",
            keys[i].0
        ));
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| k == key) {
            return Err(format!("device {i} repeats device {j}"));
        }
    }
    Ok(())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One source built for every device of a [`RootDevice`].
///
/// ```
/// let root = clgroups::RootDevice::from_env()?;
/// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
/// let k = program.kernel("k")?;
/// assert!(program.kernel("missing").is_err());
/// println!("{program:?}"); // RootProgram { programs: [Program { .. }, ..], .. }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct RootProgram {
    programs: Vec<Program>,
    placement: Placement,
    source: Arc<str>,
    decls: Vec<KernelDecl>,
    /// Why no kernel has a partitioned variant (the source as written was built).
    obstacle: Option<String>,
    checked: bool,
}

impl RootProgram {
    /// The kernel called `name`, on every device: its `__clg_part` variant, or the kernel as
    /// written where it has none (launches then fall back, see
    /// [`RootKernel::rewrite_obstacle`]).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// assert_eq!(program.kernel("k")?.kernels().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kernel(&self, name: &str) -> Result<RootKernel> {
        let decl = self.decls.iter().find(|k| k.name == name);
        let obstacle = match (&self.obstacle, decl) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(d)) => d.rewrite_obstacle.clone(),
            (None, None) => Some(
                "the scanner did not find its declaration (a name made by a macro?)".to_string(),
            ),
        };
        let (Some(decl), None) = (decl, &obstacle) else {
            let why = obstacle.unwrap_or_default();
            log::debug!("root kernel `{name}`: no partitioned variant: {why}");
            let kernels = self.programs.iter().map(|p| p.kernel(name));
            let kernels = kernels.collect::<Result<Vec<_>>>()?;
            return Ok(RootKernel {
                params: driver_params(&kernels[0]),
                kernels,
                guarded: None,
                name: name.to_string(),
                whole_obstacle: None,
                rewrite_obstacle: Some(why),
                checked: self.checked,
                placement: self.placement,
            });
        };
        let kernels = self
            .programs
            .iter()
            .map(|p| p.kernel(&variant_name(name, VariantKind::Partitioned)))
            .collect::<Result<Vec<_>>>()?;
        let guarded = self
            .programs
            .iter()
            .map(|p| p.kernel(&variant_name(name, VariantKind::Guarded)).ok())
            .collect::<Option<Vec<_>>>();
        let scanned = Scanned::new(&self.source)?;
        let params = decl
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let driver = kernels[0].raw().get_arg_type_qualifier(i as u32).ok();
                let read_only = match driver {
                    Some(q) => q & u64::from(CL_KERNEL_ARG_TYPE_CONST) != 0,
                    None => is_const_pointee(p),
                };
                ParamFacts {
                    name: p.name.clone(),
                    global: is_global_pointer(p),
                    read_only,
                    own_id: own_id_index(&scanned, decl, &p.name),
                }
            })
            .collect();
        let whole_obstacle = whole_launch_obstacle(&self.source, decl);
        log::debug!("root kernel `{name}`: {params:?}, whole-launch obstacle {whole_obstacle:?}");
        Ok(RootKernel {
            kernels,
            guarded,
            name: name.to_string(),
            params,
            whole_obstacle,
            rewrite_obstacle: None,
            checked: self.checked,
            placement: self.placement,
        })
    }

    /// The per-device programs, in device order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// for p in program.programs() {
    ///     println!("built for {}", p.device());
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The placement the program was built for.
    pub fn placement(&self) -> Placement {
        self.placement
    }
}

/// What a launch needs to know about one parameter of the original kernel.
#[derive(Clone, Debug)]
pub(super) struct ParamFacts {
    pub(super) name: String,
    /// A global pointer.
    pub(super) global: bool,
    /// The pointee is `const` (driver's `CL_KERNEL_ARG_TYPE_QUALIFIER`, else the source).
    pub(super) read_only: bool,
    /// Proven to be indexed only by the work-item's own global id.
    pub(super) own_id: Option<IdIndex>,
}

impl fmt::Debug for RootProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootProgram")
            .field("programs", &self.programs)
            .field("placement", &self.placement)
            .field("checked", &self.checked)
            .finish_non_exhaustive()
    }
}

/// One kernel on every device of a [`RootDevice`].
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
    /// contract](super#the-contract)).
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

    fn refused(&self, global: Range, reason: &str) -> Error {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_sets_are_checked() {
        assert!(check_devices(&[(0, 10), (0, 11)]).is_ok());
        assert!(check_devices(&[(1, 10)]).is_ok());
        let e = check_devices(&[]).unwrap_err();
        assert!(e.contains("at least one"), "{e}");
        let e = check_devices(&[(0, 10), (1, 20)]).unwrap_err();
        assert!(e.contains("device 1 is on platform 1"), "{e}");
        let e = check_devices(&[(0, 10), (0, 11), (0, 10)]).unwrap_err();
        assert!(e.contains("device 2 repeats device 0"), "{e}");
        assert_eq!(gcd(128, 48), 16);
    }
}
