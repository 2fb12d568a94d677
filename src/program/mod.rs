//! Programs: OpenCL C built for one device with the `cl/` sub-group layer available.
//!
//! What a build does, in order (each step logged at debug level):
//! 1. scans the source for kernels and their sub-group size attributes
//!    (`CLG_REQD_SUB_GROUP_SIZE(S)`, `CLG_NAMED_SUB_GROUP_SIZE(primary|automatic)`; kernels that
//!    say nothing get the program's default, [`SubGroupSize::Primary`] unless set — the seed's
//!    `-fsycl-default-sub-group-size`);
//! 2. resolves each kernel's size on the device's backend; a size the device does not support
//!    is remembered and reported as [`Error::FeatureNotSupported`] when that kernel is launched;
//! 3. appends range-rounded variants of the kernels that can be rounded
//!    (see [`rounded`]);
//! 4. builds once per distinct sub-group size (usually once), with the backend's defines
//!    (`CLG_BACKEND_*`, `CLG_SUB_GROUP_SIZE`, ...) prepended, then the polyfill of the standard
//!    sub-group built-ins the device lacks if the source names any (see [`polyfill`]),
//!    `#include <clgroups/...>` resolved
//!    from copies of `cl/` embedded in the library, and `#line` directives so that the
//!    compiler's log names the user's file and lines.
//!
//! Builds are cached per (context, device, final source, options).
//!
//! ```no_run
//! use clgroups::{Program, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, r#"
//!     #include <clgroups/subgroup.h>
//!     kernel void twice(global int *x) { x[get_global_id(0)] *= 2; }
//! "#)?;
//! let k = p.kernel("twice")?;
//! # Ok::<(), clgroups::Error>(())
//! ```

pub mod build_log;
mod headers;
pub mod partitioned;
pub mod polyfill;
pub mod rounded;
pub mod source;

pub use source::SubGroupSizeAttr as SubGroupSize;

use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::plan::rounding::{RoundingConfig, RoundingMode};
use crate::queue::Queue;
use once_cell::sync::Lazy;
use opencl3::program::Program as ClProgram;
use source::KernelDecl;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// How a kernel's sub-group size resolved on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResolvedSize {
    /// Runs with this size; 0 = automatic (the driver's choice).
    Size(usize),
    /// Requires this size, which the device does not support.
    Unsupported(usize),
}

/// Builds a [`Program`]: source, options, default sub-group size, file name for messages.
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
    pub fn options(mut self, options: &str) -> Self {
        self.options = options.to_string();
        self
    }

    /// The name compiler messages use for the source (default `kernel.cl`).
    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = name.to_string();
        self
    }

    /// The sub-group size of kernels that say nothing (default [`SubGroupSize::Primary`]).
    pub fn default_sub_group_size(mut self, size: SubGroupSize) -> Self {
        self.default_size = size;
        self
    }

    /// Range-rounding settings (default: [`RoundingConfig::from_env`]).
    pub fn rounding(mut self, config: RoundingConfig) -> Self {
        self.rounding = Some(config);
        self
    }

    /// Builds for the queue's device.
    pub fn build(self, queue: &Queue) -> Result<Program> {
        Program::build(self, queue)
    }
}

/// A program built for one device. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Program {
    inner: Arc<ProgramInner>,
}

struct ProgramInner {
    queue: Queue,
    kernels: Vec<KernelDecl>,
    /// Resolved sub-group size per kernel name.
    sizes: BTreeMap<String, ResolvedSize>,
    /// One build per distinct runnable size.
    builds: BTreeMap<usize, Arc<ClProgram>>,
    rounding: RoundingConfig,
    /// Rounded variants exist in the builds for these kernels; others say why not.
    roundable: BTreeMap<String, std::result::Result<(), String>>,
    /// Kernels whose body calls the sub-group layer (on `emulated` they take the hidden
    /// trailing `__local ulong *clg_sg_scratch` parameter).
    layer: BTreeSet<String>,
    /// The size of kernels that ask for none.
    default_size: SubGroupSize,
}

type CacheKey = (usize, usize, String, String);
static CACHE: Lazy<Mutex<HashMap<CacheKey, Arc<ClProgram>>>> = Lazy::new(Default::default);

impl Program {
    /// A builder for `source`.
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
    pub fn from_source(queue: &Queue, source: &str) -> Result<Program> {
        Program::builder(source).build(queue)
    }

    /// Builds the file at `path` (its name appears in compiler messages).
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
        let kernels = source::scan_kernels(&b.source)?;
        let rounding = b.rounding.unwrap_or_else(RoundingConfig::from_env);
        let sizes: BTreeMap<String, ResolvedSize> = kernels
            .iter()
            .map(|k| {
                let want = k.sub_group_size.unwrap_or(b.default_size);
                let got = resolve(want, device);
                log::debug!(
                    "kernel `{}`: sub-group size {want:?} -> {got:?} on {device}",
                    k.name
                );
                (k.name.clone(), got)
            })
            .collect();
        let obstacles: BTreeMap<String, Option<String>> = kernels
            .iter()
            .map(|k| (k.name.clone(), rounded::rounding_obstacle(&b.source, k)))
            .collect();
        let layer: BTreeSet<String> = kernels
            .iter()
            .filter(|k| uses_layer(&b.source[k.body.clone()]))
            .map(|k| k.name.clone())
            .collect();
        let scratch = scratch_kernels(device, &layer);
        let roundable: BTreeMap<String, std::result::Result<(), String>> = kernels
            .iter()
            .map(|k| {
                let verdict = match obstacles[&k.name].clone() {
                    None if scratch.contains(&k.name) => {
                        Err("it takes the emulated sub-group scratch".to_string())
                    }
                    None if rounding.mode != RoundingMode::Disable => Ok(()),
                    None => Err("range rounding is disabled".to_string()),
                    Some(why) => Err(why),
                };
                (k.name.clone(), verdict)
            })
            .collect();
        let to_round: Vec<String> = kernels
            .iter()
            .filter(|k| roundable[&k.name].is_ok())
            .map(|k| k.name.clone())
            .collect();
        let mut wanted: Vec<usize> = sizes
            .values()
            .filter_map(|s| match s {
                ResolvedSize::Size(n) => Some(*n),
                ResolvedSize::Unsupported(_) => None,
            })
            .collect();
        if wanted.is_empty() {
            wanted.push(resolve(SubGroupSize::Automatic, device).size_or(0));
        }
        wanted.sort_unstable();
        wanted.dedup();
        let mut builds = BTreeMap::new();
        for size in wanted {
            let mut text = prelude(device, size);
            let polyfill = polyfill::prelude(queue, &b.source, size);
            text.push_str(&headers::inline_includes(
                &polyfill,
                "clgroups/khr/prelude",
            )?);
            text.push_str(&format!("#line 1 \"{}\"\n", b.file_name));
            text.push_str(&compose(
                &b, device, &kernels, &sizes, &scratch, &to_round, size,
            )?);
            builds.insert(size, build_cached(queue, &text, &b.options)?);
        }
        Ok(Program {
            inner: Arc::new(ProgramInner {
                queue: queue.clone(),
                kernels,
                sizes,
                builds,
                rounding,
                roundable,
                layer,
                default_size: b.default_size,
            }),
        })
    }

    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let size = *self
            .inner
            .sizes
            .get(name)
            .ok_or_else(|| Error::NoSuchKernel {
                kernel: name.to_string(),
                available: self.kernel_names(),
            })?;
        let build = match size {
            ResolvedSize::Size(n) => &self.inner.builds[&n],
            ResolvedSize::Unsupported(_) => self.inner.builds.values().next().expect("one build"),
        };
        let rounded = match &self.inner.roundable[name] {
            Ok(()) => Ok(Arc::clone(build)),
            Err(why) => Err(why.clone()),
        };
        let uses_layer = self.inner.layer.contains(name);
        let scratch = uses_layer && emulated(self.device());
        Kernel::create(
            self.clone(),
            build,
            name,
            size,
            rounded,
            uses_layer,
            scratch,
        )
    }

    /// Names of the program's kernels, in source order.
    pub fn kernel_names(&self) -> Vec<String> {
        self.inner.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The queue the program was built for.
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
    }

    /// The device the program was built for.
    pub fn device(&self) -> &Device {
        self.inner.queue.device()
    }

    /// The range-rounding settings kernels of this program launch with.
    pub fn rounding(&self) -> &RoundingConfig {
        &self.inner.rounding
    }

    /// The sub-group size of kernels that ask for none.
    pub fn default_sub_group_size(&self) -> SubGroupSize {
        self.inner.default_size
    }

    /// The scanned declaration of kernel `name`.
    pub(crate) fn decl(&self, name: &str) -> Option<&KernelDecl> {
        self.inner.kernels.iter().find(|k| k.name == name)
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

/// Resolves a requested sub-group size on a device (pure given the device's capabilities).
///
/// `Exact(s)` runs if the effective sizes list `s`; `Primary` is the primary size;
/// `Automatic` is the driver's choice on `khr`/`intel` (0), the warp on `nvidia-ptx`, and the
/// primary size on `emulated` (emulation has no driver to choose).
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

/// Kernels that get the emulated scratch as a hidden trailing `__local` parameter: those whose
/// body uses the layer, on `emulated`.
///
/// A parameter, not a `__local` array in the body: the launch sizes it to the work-group, and
/// PoCL 3.1's pthread device was seen to let work-groups running at once on different threads
/// share a kernel-scope `__local` array (items read another work-group's values).
fn scratch_kernels(device: &Device, layer: &BTreeSet<String>) -> BTreeSet<String> {
    if !emulated(device) {
        return BTreeSet::new();
    }
    log::debug!("emulated sub-group scratch parameter for kernels {layer:?}");
    layer.clone()
}

fn emulated(device: &Device) -> bool {
    device.sub_groups().effective.shuffle_backend == ShuffleBackend::Emulated
}

/// The user's text as compiled for one sub-group size (after the preludes).
fn compose(
    b: &ProgramBuilder,
    device: &Device,
    kernels: &[KernelDecl],
    sizes: &BTreeMap<String, ResolvedSize>,
    scratch: &BTreeSet<String>,
    to_round: &[String],
    size: usize,
) -> Result<String> {
    // 1. Scratch parameters (those kernels are never rounded). The edits add no lines.
    let edits = kernels
        .iter()
        .filter(|k| scratch.contains(&k.name))
        .map(scratch_param_edit)
        .collect();
    let user = apply_edits(&b.source, edits);
    // 2. Rounded variants after their originals. Originals stay even under `force`: ND-range
    // launches and argument checks use them; the mode only makes `.range()` launch the variant.
    let rescanned: Vec<KernelDecl> = source::scan_kernels(&user)?
        .into_iter()
        .filter(|k| to_round.contains(&k.name))
        .collect();
    let user = rounded::with_rounded_variants(&user, &rescanned, true)?;
    // 3. The pinned size, last: a scan would read it next to a user's
    // `CLG_REQD_SUB_GROUP_SIZE`/`CLG_NAMED_SUB_GROUP_SIZE` as a second size request.
    let backend = device.sub_groups().effective.shuffle_backend;
    let user = if size > 0 && matches!(backend, ShuffleBackend::Khr | ShuffleBackend::Intel) {
        let owner: BTreeMap<String, &String> = to_round
            .iter()
            .flat_map(|n| [(rounded::rounded_name(n), n), (rounded::sized_name(n), n)])
            .collect();
        let attr = format!("__attribute__((intel_reqd_sub_group_size({size}))) ");
        let edits = source::scan_kernels(&user)?
            .iter()
            .filter(|k| {
                let name = owner.get(&k.name).copied().unwrap_or(&k.name);
                sizes.get(name) == Some(&ResolvedSize::Size(size))
            })
            .map(|k| (k.decl_start, k.decl_start, attr.clone()))
            .collect();
        apply_edits(&user, edits)
    } else {
        user
    };
    headers::inline_includes(&user, &b.file_name)
}

/// `text` with the replacements `(start, end, new text)`, applied from the last to the first so
/// earlier offsets stay valid.
fn apply_edits(text: &str, mut edits: Vec<(usize, usize, String)>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, &new);
    }
    out
}

/// The edit appending `__local ulong *clg_sg_scratch` to a kernel's parameters.
fn scratch_param_edit(k: &KernelDecl) -> (usize, usize, String) {
    const PARAM: &str = "__local ulong *clg_sg_scratch";
    let span = &k.params_span;
    if k.params.is_empty() {
        // `()` or `(void)`.
        (span.start, span.end, format!("({PARAM})"))
    } else {
        (span.end - 1, span.end - 1, format!(", {PARAM}"))
    }
}

/// Whether a kernel body calls the sub-group layer: a word starting with `sg_` or
/// `CLG_SG_SCRATCH`, or a standard sub-group built-in, which the polyfill may provide on the
/// layer (a name like `msg_len` that merely contains `sg_` does not count). Helper functions
/// are not followed: a kernel reaching the layer only through a helper gets no emulated scratch.
fn uses_layer(body: &str) -> bool {
    body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w.starts_with("sg_") || w.starts_with("CLG_SG_SCRATCH") || polyfill::is_builtin(w))
}

/// The defines that select and configure the layer's backend.
fn prelude(device: &Device, size: usize) -> String {
    let eff = &device.sub_groups().effective;
    let backend = eff.shuffle_backend;
    let driver = &device.sub_groups().driver;
    let mut p = format!(
        "#define {} 1\n#define CLG_SUB_GROUP_SIZE {size}\n#define CLG_PRIMARY_SUB_GROUP_SIZE {}\n",
        backend.define(),
        eff.primary_sub_group_size
    );
    if device.limits().fp64 {
        p.push_str("#define CLG_HAS_FP64 1\n");
    }
    if driver.has("cl_khr_subgroup_shuffle_relative") {
        p.push_str("#define CLG_HAS_SHUFFLE_RELATIVE 1\n");
    }
    if backend == ShuffleBackend::Emulated {
        p.push_str(&format!(
            "#define CLG_EMU_SCRATCH_ITEMS {}\n",
            device.limits().max_work_group_size
        ));
    }
    p
}

/// Builds (or finds in the cache) `text` for the queue's device.
fn build_cached(queue: &Queue, text: &str, options: &str) -> Result<Arc<ClProgram>> {
    let device = queue.device();
    let options = format!("{options} -cl-kernel-arg-info").trim().to_string();
    let key = (
        queue.context().key(),
        device.id() as usize,
        text.to_string(),
        options.clone(),
    );
    if let Some(p) = CACHE.lock().expect("program cache").get(&key) {
        log::debug!("program cache hit on {device}");
        return Ok(Arc::clone(p));
    }
    let program = ClProgram::create_from_source(queue.context().raw(), text)
        .map_err(|e| Error::cl("clCreateProgramWithSource", e.0, device.to_string()))?;
    log::debug!("building program on {device} with options {options:?}");
    let c_options = std::ffi::CString::new(options.as_str())
        .map_err(|_| Error::input(format!("build options contain a NUL byte: {options:?}")))?;
    // Built for this device only: opencl3's `Program::build` would then ask for the kernel
    // names, which drivers refuse (CL_INVALID_PROGRAM_EXECUTABLE) until every device of a
    // multi-device context has a build.
    let built = cl3::program::build_program(
        program.get(),
        &[device.id()],
        &c_options,
        None,
        std::ptr::null_mut(),
    );
    if let Err(code) = built {
        let e = opencl3::error_codes::ClError(code);
        let log = build_log::map_positions(
            &program.get_build_log(device.id()).unwrap_or_default(),
            text,
        );
        log::debug!("build failed ({e}):\n{log}");
        return Err(Error::Build {
            device: device.to_string(),
            options,
            log: if log.trim().is_empty() {
                format!("(the driver gave no log; status {e})")
            } else {
                log
            },
        });
    }
    let program = Arc::new(program);
    CACHE
        .lock()
        .expect("program cache")
        .insert(key, Arc::clone(&program));
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_use_is_a_whole_word() {
        assert!(uses_layer("{ float s = sg_reduce_add(x); }"));
        assert!(uses_layer("{ helper(v CLG_SG_SCRATCH); }"));
        assert!(!uses_layer("{ int msg_len = 1; out[msg_len] = 2; }"));
        assert!(uses_layer("{ x = sub_group_shuffle_up(v, 1u); }"));
    }

    fn with_scratch(src: &str) -> String {
        let edits = source::scan_kernels(src)
            .unwrap()
            .iter()
            .map(scratch_param_edit)
            .collect();
        apply_edits(src, edits)
    }

    #[test]
    fn scratch_parameter_is_appended_to_every_form_of_parameter_list() {
        let src = "kernel void a(global int *x,\n uint n) { }\nkernel void b(void) { }\nkernel void c() { }";
        assert_eq!(
            with_scratch(src),
            "kernel void a(global int *x,\n uint n, __local ulong *clg_sg_scratch) { }\n\
             kernel void b(__local ulong *clg_sg_scratch) { }\n\
             kernel void c(__local ulong *clg_sg_scratch) { }"
        );
    }
}
