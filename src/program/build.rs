//! A program build: what is decided per kernel ([`KernelPlan`]), the rewritten text per
//! sub-group size, the build with its fallbacks, and the driver's kernel names.

use super::{polyfill, resolve, ProgramBuilder, ResolvedSize, SubGroupSize};
use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result};
use crate::ffi::ClProgram;
use crate::plan::rounding::{RoundingConfig, RoundingMode};
use crate::plan::uniform_branch::IdCondition;
use crate::queue::Queue;
use crate::transform::{self, build_log, KernelDecl, Rewrites};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a build decided for one kernel.
#[derive(Clone, Debug)]
pub(crate) struct KernelPlan {
    /// The resolved sub-group size.
    pub(crate) size: ResolvedSize,
    /// The size asked for (an attribute, the program default for layer kernels, or automatic).
    pub(crate) requested: SubGroupSize,
    /// Whether clgroups pins the size with `intel_reqd_sub_group_size` (layer kernels without
    /// an attribute of their own, on `khr`/`intel`).
    pub(crate) pinned: bool,
    /// Whether the kernel uses the sub-group layer (directly or through helpers).
    pub(crate) uses_layer: bool,
    /// Whether it uses sub-group collectives (the layer's or OpenCL's built-ins).
    pub(crate) sub_groups: bool,
    /// Whether it takes the emulated scratch as a hidden trailing parameter.
    pub(crate) scratch: bool,
    /// Conditions its collectives sit under, which each launch must find uniform (emulated
    /// backend; [`crate::plan::uniform_branch`]).
    pub(crate) id_conditions: Vec<IdCondition>,
    /// Rounded variants exist in the build, or why not.
    pub(crate) rounded: std::result::Result<(), String>,
    /// Checked variants exist in the build (see [`crate::launch::checked`]; its rounded variants are then
    /// checked too), or why not.
    pub(crate) checked: std::result::Result<(), String>,
}

impl KernelPlan {
    pub(super) fn new(
        k: &KernelDecl,
        b: &ProgramBuilder,
        device: &Device,
        rounding: &RoundingConfig,
        uses_layer: bool,
    ) -> KernelPlan {
        let backend = device.sub_groups().effective.shuffle_backend;
        let requested = match (k.sub_group_size, uses_layer) {
            (Some(s), _) => s,
            (None, true) => b.default_size,
            (None, false) => SubGroupSize::Automatic,
        };
        // The driver accepted the build, so a kernel that does not use the layer is never
        // refused for its own size attribute: an unsupported one leaves the size to the driver.
        let size = match resolve(requested, device) {
            _ if k.own_sub_group_attr && k.sub_group_size.is_none() => ResolvedSize::Size(0),
            ResolvedSize::Unsupported(_) if !uses_layer => ResolvedSize::Size(0),
            r => r,
        };
        let pinned = uses_layer
            && !k.own_sub_group_attr
            && matches!(backend, ShuffleBackend::Khr | ShuffleBackend::Intel)
            && matches!(size, ResolvedSize::Size(n) if n > 0);
        let scratch = uses_layer && backend == ShuffleBackend::Emulated;
        let rounded = if let Some(why) = &k.rewrite_obstacle {
            Err(format!("kernel `{}` is not rewritten: {why}", k.name))
        } else if transform::is_root_variant(&k.name) {
            Err("root-launch variants are launched over exact ND-ranges".to_string())
        } else if scratch {
            Err("it takes the emulated sub-group scratch".to_string())
        } else if rounding.mode == RoundingMode::Disable {
            Err("range rounding is disabled".to_string())
        } else {
            match transform::rounding_obstacle(&b.source, k) {
                Some(why) => Err(why),
                None => Ok(()),
            }
        };
        let checked = if !crate::buffer::guard::enabled() {
            Err("checked mode is off".to_string())
        } else if let Some(why) = &k.rewrite_obstacle {
            Err(format!("kernel `{}` is not rewritten: {why}", k.name))
        } else if k.name.contains("__clg_") {
            Err("generated variants check their own accesses".to_string())
        } else {
            Ok(())
        };
        log::debug!(
            "kernel `{}`: sub-group size {requested:?} -> {size:?} on {device} (pinned: {pinned}, \
             layer: {uses_layer}), rounded variants: {rounded:?}, checked variants: {checked:?}",
            k.name
        );
        KernelPlan {
            size,
            requested,
            pinned,
            uses_layer,
            sub_groups: uses_layer,
            scratch,
            id_conditions: Vec::new(),
            rounded,
            checked,
        }
    }

    /// A kernel the scanner did not find: nothing rewritten, the driver's sub-group size; it
    /// counts as using sub-group collectives when any word of the source is one.
    pub(super) fn unscanned(device: &Device, source_sub_groups: bool) -> KernelPlan {
        KernelPlan {
            size: resolve(SubGroupSize::Automatic, device),
            requested: SubGroupSize::Automatic,
            pinned: false,
            uses_layer: false,
            sub_groups: source_sub_groups,
            scratch: false,
            id_conditions: Vec::new(),
            rounded: Err("the scanner did not find the kernel (made by a macro?)".into()),
            checked: Err("the scanner did not find the kernel (made by a macro?)".into()),
        }
    }
}

/// The kernel names the driver reports (`CL_PROGRAM_KERNEL_NAMES`, else the function names of
/// `clCreateKernelsInProgram`; NVIDIA refuses the first in multi-device contexts until every
/// device has a build), without clgroups' generated variants.
pub(super) fn driver_kernel_names(
    program: &ClProgram,
    device: &Device,
) -> std::result::Result<Vec<String>, String> {
    let listed = match program.get_kernel_names() {
        Ok(names) => names.split(';').map(|n| n.trim().to_string()).collect(),
        Err(e) => {
            log::debug!(
                "CL_PROGRAM_KERNEL_NAMES on {device}: {e}; trying clCreateKernelsInProgram"
            );
            let raw = cl3::kernel::create_kernels_in_program(program.get()).map_err(|e| {
                format!(
                    "clCreateKernelsInProgram: {}",
                    opencl3::error_codes::ClError(e)
                )
            })?;
            raw.into_iter()
                .map(|k| crate::ffi::Owned::new(opencl3::kernel::Kernel::new(k)).function_name())
                .collect::<std::result::Result<Vec<String>, _>>()
                .map_err(|e| format!("CL_KERNEL_FUNCTION_NAME: {e}"))?
        }
    };
    let mut names: Vec<String> = listed
        .into_iter()
        .map(|n| n.trim_end_matches('\0').to_string())
        .filter(|n| !n.is_empty() && !n.contains("__clg_"))
        .collect();
    names.dedup();
    Ok(names)
}

/// Builds the program for one pinned size: with every rewrite; if that fails, without the
/// generated variants (rounding then falls back at launch); if that fails too, without any
/// rewrite at all. The error reported is the one of the build with the rewrites the kernels
/// need (scratch threading, pinned sizes), whose log points at the user's lines.
pub(super) fn build_with_fallbacks(
    queue: &Queue,
    b: &ProgramBuilder,
    kernels: &[KernelDecl],
    plans: &mut BTreeMap<String, KernelPlan>,
    size: usize,
) -> Result<Arc<ClProgram>> {
    // The standard sub-group built-ins the device lacks (nothing when the source names none).
    let polyfill =
        transform::inline_includes(&polyfill::prelude(queue, &b.source), "clgroups/khr/prelude")?;
    let attempt = |plans: &BTreeMap<String, KernelPlan>, round: bool, rewrite: bool| {
        let text = compose(
            b,
            queue.device(),
            &polyfill,
            kernels,
            plans,
            round,
            rewrite,
            size,
        )?;
        build_cached(queue, &text, &b.options)
    };
    let mut needed = attempt(plans, true, true);
    if let (Err(e), true) = (&needed, plans.values().any(|p| p.checked.is_ok())) {
        log::debug!("build with checked variants failed ({e}); building without them");
        let why = format!("its checked variants did not build: {e}");
        for p in plans.values_mut().filter(|p| p.checked.is_ok()) {
            p.checked = Err(why.clone());
        }
        needed = attempt(plans, true, true);
    }
    if let Err(e) = &needed {
        if plans.values().any(|p| p.rounded.is_ok()) {
            log::debug!("build with generated variants failed ({e}); building without them");
            let why = format!("its generated variants did not build: {e}");
            for p in plans.values_mut().filter(|p| p.rounded.is_ok()) {
                p.rounded = Err(why.clone());
            }
            for p in plans.values_mut().filter(|p| p.checked.is_ok()) {
                p.checked = Err(why.clone());
            }
            needed = attempt(plans, false, true);
        }
    }
    let Err(e) = needed else { return needed };
    log::debug!("build with clgroups' rewrites failed ({e}); building the source as written");
    let bare = attempt(plans, false, false);
    if bare.is_ok() {
        for p in plans.values_mut() {
            p.pinned = false;
            p.scratch = false;
            p.rounded = Err("the program builds only without clgroups' rewrites".into());
            p.checked = Err("the program builds only without clgroups' rewrites".into());
        }
    }
    bare.map_err(|_| e)
}

/// The full text compiled for one sub-group size: the user's source with the emulated scratch
/// threaded, rounded variants (if `round`), sizes pinned — none of it unless `rewrite` — then
/// the includes resolved and the backend's prelude and the `polyfill` in front.
#[allow(clippy::too_many_arguments)]
fn compose(
    b: &ProgramBuilder,
    device: &Device,
    polyfill: &str,
    kernels: &[KernelDecl],
    plans: &BTreeMap<String, KernelPlan>,
    round: bool,
    rewrite: bool,
    size: usize,
) -> Result<String> {
    let user = match rewrite {
        true => {
            let plan = |name: &str| {
                plans.get(name).map_or(Rewrites::default(), |p| Rewrites {
                    scratch: p.scratch,
                    round: p.rounded.is_ok(),
                    check: p.checked.is_ok(),
                    pin: p.pinned && p.size == ResolvedSize::Size(size),
                })
            };
            transform::rewrite(&b.source, device, kernels, plan, round, size)?
        }
        false => b.source.clone(),
    };
    let body = transform::inline_includes(&user, &b.file_name)?;
    let mut out = prelude(device, size);
    out.push_str(polyfill);
    out.push_str(&format!("#line 1 \"{}\"\n", b.file_name));
    out.push_str(&body);
    Ok(out)
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
    if let (ShuffleBackend::NvidiaPtx, Some((major, minor))) =
        (backend, driver.compute_capability_nv)
    {
        p.push_str(&format!("#define CLG_PTX_SM {}\n", 10 * major + minor));
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
pub(super) fn build_cached(queue: &Queue, text: &str, options: &str) -> Result<Arc<ClProgram>> {
    let device = queue.device();
    let options = format!("{options} -cl-kernel-arg-info").trim().to_string();
    let key = (device.id() as usize, text.to_string(), options.clone());
    if let Some(p) = queue.context().programs().get(&key) {
        log::debug!("program cache hit on {device}");
        return Ok(Arc::clone(p));
    }
    let program = opencl3::program::Program::create_from_source(queue.context().raw(), text)
        .map(crate::ffi::Owned::new)
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
    queue.context().programs().insert(key, Arc::clone(&program));
    Ok(program)
}
