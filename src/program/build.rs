//! A program build: what is decided per kernel ([`KernelChoices`]), the rewritten text per
//! sub-group size, the build with its fallbacks, and the driver's kernel names.

use super::compile::build_cached;
use super::told::{SizeRefusal, Told, Untold};
use super::{polyfill, resolve, ProgramBuilder, ResolvedSize, SubGroupSize};
use crate::device::{Device, ShuffleBackend};
use crate::error::{Error, Result, Unsupported};
use crate::ffi::ClProgram;
use crate::plan::rounding::{RoundingConfig, RoundingMode};
use crate::plan::uniform_branch::IdCondition;
use crate::queue::Queue;
use crate::transform::{self, KernelDecl, Obstacle, Rewrites, Source, SourceFacts, VariantKind};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a build decided for one kernel.
#[derive(Clone, Debug)]
pub(crate) struct KernelChoices {
    /// The resolved sub-group size.
    pub(crate) size: ResolvedSize,
    /// The size asked for (an attribute, the program default for layer kernels, or automatic).
    pub(crate) requested: SubGroupSize,
    /// Whether clgroups pins the size with `intel_reqd_sub_group_size` (layer kernels without
    /// an attribute of their own, on `khr`/`intel`).
    pub(crate) pinned: bool,
    /// Whether the kernel uses the sub-group layer (directly or through helpers).
    pub(crate) uses_layer: bool,
    /// Whether the kernel, without the layer, takes the build of its own required size, whose
    /// standard built-ins are the polyfill's fixed-size ones ([`fixed_builtins`]).
    pub(crate) own_size_build: bool,
    /// Whether it uses sub-group collectives (the layer's or OpenCL's built-ins).
    pub(crate) collectives: bool,
    /// Whether it takes the emulated scratch as a hidden trailing parameter.
    pub(crate) scratch: bool,
    /// Conditions its collectives sit under, which each launch must find uniform (emulated
    /// backend; [`crate::plan::uniform_branch`]).
    pub(crate) id_conditions: Vec<IdCondition>,
    /// Why the kernel is refused (a sub-group size attribute clgroups must know and neither it
    /// nor the driver can read), if it is.
    pub(crate) refused: Option<SizeRefusal>,
    /// Why the kernel is refused unless the driver lists the emulated scratch as its last
    /// parameter: its build declares the stand-in scratch ([`STAND_IN`]), which a kernel
    /// without the parameter may be using.
    pub(crate) scratch_required: Option<Obstacle>,
    /// Rounded variants exist in the build, or why not.
    pub(crate) rounded: std::result::Result<(), Obstacle>,
    /// Why the kernel's result may depend on its work-group shape (plain ranges then keep the
    /// driver's shape unless the kernel requires one), or `None`.
    pub(crate) shape: Option<Obstacle>,
    /// Checked variants exist in the build (see [`crate::launch::checked`]; its rounded variants are then
    /// checked too), or why not.
    pub(crate) checked: std::result::Result<(), Obstacle>,
}

impl KernelChoices {
    pub(super) fn new(
        k: &KernelDecl,
        b: &ProgramBuilder,
        device: &Device,
        rounding: &RoundingConfig,
        facts: &SourceFacts,
    ) -> KernelChoices {
        let uses_layer = facts.layer_users.contains(&k.name);
        let backend = device.sub_groups().effective.shuffle_backend;
        let requested = match (k.sub_group_size, uses_layer) {
            (Some(s), _) => s,
            (None, true) => b.default_size,
            (None, false) => SubGroupSize::Automatic,
        };
        // Where clgroups provides the sub-groups, a kernel that uses them with a size attribute
        // the scanner cannot read would run with a guessed size: refused.
        let provided = matches!(
            backend,
            ShuffleBackend::Emulated | ShuffleBackend::NvidiaPtx
        );
        let refused = match &k.unresolved_sub_group_attr {
            Some(why) if provided && uses_layer => Some(SizeRefusal::Unread {
                attribute: why.clone(),
                backend,
                driver: Untold::NotAsked,
            }),
            _ => None,
        };
        // The driver accepted the build, so a kernel that does not use the layer is never
        // refused for its own size attribute: an unsupported one leaves the size to the driver.
        let size = match resolve(requested, device) {
            _ if refused.is_some() => resolve(SubGroupSize::Automatic, device),
            _ if k.own_sub_group_attr && k.sub_group_size.is_none() => ResolvedSize::Size(0),
            ResolvedSize::Unsupported(_) if !uses_layer => ResolvedSize::Size(0),
            r => r,
        };
        let pinned = uses_layer
            && !k.own_sub_group_attr
            && matches!(backend, ShuffleBackend::Khr | ShuffleBackend::Intel)
            && matches!(size, ResolvedSize::Size(n) if n > 0);
        let own_size_build = !uses_layer
            && k.own_sub_group_attr
            && matches!(size, ResolvedSize::Size(n) if fixed_builtins(device, n));
        let scratch = uses_layer && backend == ShuffleBackend::Emulated;
        let not_rewritten = |why: &Obstacle| Obstacle::NotRewritten {
            kernel: k.name.clone(),
            why: Box::new(why.clone()),
        };
        let rounded = if let Some(why) = &k.rewrite_obstacle {
            Err(not_rewritten(why))
        } else if VariantKind::parse(&k.name).is_some_and(|(_, v)| v.is_root()) {
            Err(Obstacle::RootVariant)
        } else if scratch {
            Err(Obstacle::TakesScratch)
        } else if rounding.mode == RoundingMode::Disable {
            Err(Obstacle::RoundingDisabled)
        } else if let Some(why) = transform::rounded_option_query(&b.options) {
            Err(why)
        } else {
            match facts.rounding_obstacles.get(&k.name).cloned().flatten() {
                Some(why) => Err(why),
                None => Ok(()),
            }
        };
        let checked = if !crate::checked::enabled() {
            Err(Obstacle::CheckedOff)
        } else if let Some(why) = &k.rewrite_obstacle {
            Err(not_rewritten(why))
        } else if transform::is_generated(&k.name) {
            Err(Obstacle::GeneratedChecked)
        } else {
            Ok(())
        };
        log::debug!(
            "kernel `{}`: sub-group size {requested:?} -> {size:?} on {device} (pinned: {pinned}, \
             layer: {uses_layer}, own size's build: {own_size_build}), rounded variants: {rounded:?}, checked variants: {checked:?}",
            k.name
        );
        KernelChoices {
            size,
            requested,
            pinned,
            uses_layer,
            own_size_build,
            collectives: uses_layer,
            scratch,
            id_conditions: Vec::new(),
            refused,
            scratch_required: None,
            rounded,
            shape: facts.shape_dependence.get(&k.name).cloned().flatten(),
            checked,
        }
    }

    /// Records whether the kernel uses sub-group collectives; one that does with its own size
    /// that the device does not offer is refused (the driver may accept the attribute and run
    /// another size: PoCL 6.0 does).
    pub(super) fn set_collectives(&mut self, used: bool, k: &KernelDecl, device: &Device) {
        self.collectives = used;
        if let (true, true, Some(SubGroupSize::Exact(n))) =
            (used, k.own_sub_group_attr, k.sub_group_size)
        {
            if let ResolvedSize::Unsupported(n) = resolve(SubGroupSize::Exact(n), device) {
                self.size = ResolvedSize::Unsupported(n);
            }
        }
    }

    /// The sub-group size of the build the kernel lives in, where it is not the backend's
    /// automatic one: layer kernels', and those of [`KernelChoices::own_size_build`].
    pub(crate) fn build_size(&self) -> Option<usize> {
        match self.size {
            ResolvedSize::Size(n) if self.uses_layer || self.own_size_build => Some(n),
            _ => None,
        }
    }

    /// The error for kernel `name` when the build refused it ([`KernelChoices::refused`]).
    pub(super) fn refusal(&self, device: &Device, name: &str) -> Option<Error> {
        self.refused.as_ref().map(|why| Error::Unsupported {
            device: device.to_string(),
            what: Unsupported::SubGroupSize {
                kernel: name.into(),
                why: Box::new(why.clone()),
            },
        })
    }

    /// A kernel the scanner did not find: nothing rewritten; it counts as using sub-group
    /// collectives when any word of the source is one. Where the source may give this kernel an
    /// `intel_reqd_sub_group_size` clgroups cannot see (`hidden_size`), it takes the build of
    /// the size the driver tells ([`super::probe`]; a size the device does not offer is refused
    /// at launch); where the driver tells none, it is refused where clgroups provides the
    /// sub-groups at a size fixed when it compiles (emulated, NVIDIA's PTX: it would run at
    /// another size than it asks for), and runs at the driver's size elsewhere.
    ///
    /// `stand_in` says where the scratch edits could not reach a kernel a macro writes, when its
    /// build declares the stand-in scratch: the kernel then needs the scratch parameter.
    pub(super) fn unscanned<'a>(
        device: &Device,
        source_sub_groups: bool,
        (hidden_size, told): (bool, std::result::Result<Told, Untold>),
        stand_in: impl Fn(usize) -> Option<&'a Obstacle>,
    ) -> KernelChoices {
        let backend = device.sub_groups().effective.shuffle_backend;
        let provided = matches!(
            backend,
            ShuffleBackend::Emulated | ShuffleBackend::NvidiaPtx
        );
        let automatic = resolve(SubGroupSize::Automatic, device);
        let (size, requested, refused) = match told {
            _ if !hidden_size => (automatic, SubGroupSize::Automatic, None),
            Ok(Told::NoSize) => (automatic, SubGroupSize::Automatic, None),
            Ok(Told::Size(s)) => match resolve(SubGroupSize::Exact(s), device) {
                ResolvedSize::Unsupported(_) if !source_sub_groups => {
                    (automatic, SubGroupSize::Exact(s), None)
                }
                r => (r, SubGroupSize::Exact(s), None),
            },
            Err(driver) if provided => (
                automatic,
                SubGroupSize::Automatic,
                Some(SizeRefusal::Unseen { backend, driver }),
            ),
            // The driver applies the attribute itself (`CLG_KHR_DERIVED` tells its sizes).
            Err(_) => (automatic, SubGroupSize::Automatic, None),
        };
        let own_size_build =
            requested != SubGroupSize::Automatic && matches!(size, ResolvedSize::Size(n) if n > 0);
        log::debug!(
            "a kernel the scanner did not find: sub-group size {requested:?} -> {size:?} on \
             {device}, refused: {refused:?}"
        );
        KernelChoices {
            size,
            requested,
            pinned: false,
            uses_layer: false,
            own_size_build,
            collectives: source_sub_groups,
            scratch: false,
            id_conditions: Vec::new(),
            refused,
            scratch_required: stand_in(match size {
                ResolvedSize::Size(n) if own_size_build => n,
                _ => automatic.size_or(0),
            })
            .map(|why| Obstacle::StandIn(Box::new(why.clone()))),
            rounded: Err(Obstacle::NotFound),
            shape: Some(Obstacle::NotFound),
            checked: Err(Obstacle::NotFound),
        }
    }
}

/// Whether a build of sub-group size `size` provides every standard sub-group built-in itself
/// (the polyfill over the layer's fixed-size sub-groups, computed from the linear local id)
/// instead of the driver's: on PoCL's native sub-groups (`khr`/`intel`) with a required size,
/// where the driver reports a partial last sub-group wrong (PoCL 6.0 with
/// `intel_reqd_sub_group_size(8)` in a work-group of 12: `get_sub_group_size()` 8 in the second
/// sub-group, `get_num_sub_groups()` 1, `sub_group_reduce_add(1)` 36; measured).
pub(crate) fn fixed_builtins(device: &Device, size: usize) -> bool {
    size > 0
        && device.is_pocl()
        && matches!(
            device.sub_groups().effective.shuffle_backend,
            ShuffleBackend::Khr | ShuffleBackend::Intel
        )
}

/// Whether the automatic build (`size` 0) of a source computes the driver's sub-groups' sizes
/// and counts itself and provides every standard built-in (`CLG_KHR_DERIVED`): on PoCL's
/// native sub-groups, for a source that names `intel_reqd_sub_group_size`
/// ([`SourceFacts::names_required_size`]), where a kernel whose
/// size clgroups cannot read (made by a macro, a function-like macro's parameter) runs at the
/// driver's size, which PoCL reports wrong for a partial last sub-group and tells the host
/// nowhere (`CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL` fails, `CL_KERNEL_ATTRIBUTES` omits it).
pub(crate) fn derived_geometry(device: &Device, size: usize, facts: &SourceFacts) -> bool {
    size == 0 && fixed_builtins(device, 1) && facts.names_required_size
}

/// The error for kernel `name`, refused for a collective under work-item-dependent control
/// flow (`why`) on a device whose collectives are work-group barriers.
pub(super) fn divergent_error(device: &Device, name: &str, why: &Obstacle) -> Error {
    Error::Unsupported {
        device: device.to_string(),
        what: Unsupported::DivergentCollective {
            kernel: name.into(),
            why: Box::new(why.clone()),
            barriers: device.group_uniform_reason(),
        },
    }
}

/// The kernel names the driver reports (`CL_PROGRAM_KERNEL_NAMES`, else the function names of
/// `clCreateKernelsInProgram`; NVIDIA refuses the first in multi-device contexts until every
/// device has a build), without clgroups' generated variants; else the call that failed.
pub(super) fn driver_kernel_names(program: &ClProgram, device: &Device) -> Result<Vec<String>> {
    let listed = match program.get_kernel_names() {
        Ok(names) => names.split(';').map(|n| n.trim().to_string()).collect(),
        Err(e) => {
            log::debug!(
                "CL_PROGRAM_KERNEL_NAMES on {device}: {e}; trying clCreateKernelsInProgram"
            );
            let raw = cl3::kernel::create_kernels_in_program(program.get())
                .map_err(|e| Error::cl("clCreateKernelsInProgram", e, device.to_string()))?;
            raw.into_iter()
                .map(|k| crate::ffi::Owned::new(opencl3::kernel::Kernel::new(k)).function_name())
                .collect::<std::result::Result<Vec<String>, _>>()
                .map_err(|e| Error::cl("CL_KERNEL_FUNCTION_NAME", e.0, device.to_string()))?
        }
    };
    let mut names: Vec<String> = listed
        .into_iter()
        .map(|n| n.trim_end_matches('\0').to_string())
        .filter(|n| !n.is_empty() && !transform::is_generated(n))
        .collect();
    names.dedup();
    Ok(names)
}

/// Builds the program for one pinned size: with every rewrite; if that fails where the scratch
/// edits cannot reach a macro's kernel ([`SourceFacts::scratch_stand_in`]), with a stand-in
/// `clg_sg_scratch` declared too; if that fails, without the generated variants (rounding then
/// falls back at launch); if that fails too, without any rewrite at all. The error reported is
/// the one of the build with the rewrites the kernels need (scratch threading, pinned sizes),
/// whose log points at the user's lines. Also says whether the build declares the stand-in
/// (its kernels without the scratch parameter must then be refused).
pub(super) fn build_with_fallbacks(
    queue: &Queue,
    b: &ProgramBuilder,
    source: &Source<'_>,
    plans: &mut BTreeMap<String, KernelChoices>,
    size: usize,
) -> Result<(Arc<ClProgram>, bool)> {
    let facts = &source.facts;
    let polyfill = polyfill_text(queue, facts, size)?;
    let mut stand_in = false;
    let attempt =
        |plans: &BTreeMap<String, KernelChoices>, round: bool, rewrite: bool, stand_in: bool| {
            let text = compose(
                b,
                queue.device(),
                &polyfill,
                source,
                plans,
                (round, rewrite, stand_in),
                size,
            )?;
            build_cached(queue, &text, &b.options)
        };
    let mut needed = attempt(plans, true, true, false);
    if let (Err(e), Some(why)) = (&needed, &facts.scratch_stand_in) {
        log::debug!(
            "build failed ({e}); the scratch edits cannot reach every kernel ({why}): building \
             with a stand-in clg_sg_scratch, kernels without the parameter refused"
        );
        stand_in = true;
        needed = attempt(plans, true, true, true);
    }
    if let (Err(e), true) = (&needed, plans.values().any(|p| p.checked.is_ok())) {
        log::debug!("build with checked variants failed ({e}); building without them");
        let why = Obstacle::VariantsFailed {
            checked: true,
            error: Box::new(e.clone()),
        };
        for p in plans.values_mut().filter(|p| p.checked.is_ok()) {
            p.checked = Err(why.clone());
        }
        needed = attempt(plans, true, true, stand_in);
    }
    if let Err(e) = &needed {
        if plans.values().any(|p| p.rounded.is_ok()) {
            log::debug!("build with generated variants failed ({e}); building without them");
            let why = Obstacle::VariantsFailed {
                checked: false,
                error: Box::new(e.clone()),
            };
            for p in plans.values_mut().filter(|p| p.rounded.is_ok()) {
                p.rounded = Err(why.clone());
            }
            for p in plans.values_mut().filter(|p| p.checked.is_ok()) {
                p.checked = Err(why.clone());
            }
            needed = attempt(plans, false, true, stand_in);
        }
    }
    let Err(e) = needed else {
        return needed.map(|p| (p, stand_in));
    };
    log::debug!("build with clgroups' rewrites failed ({e}); building the source as written");
    let bare = attempt(plans, false, false, false);
    if bare.is_ok() {
        for p in plans.values_mut() {
            p.pinned = false;
            p.scratch = false;
            p.rounded = Err(Obstacle::OnlyWithoutRewrites);
            p.checked = Err(Obstacle::OnlyWithoutRewrites);
        }
    }
    bare.map(|p| (p, false)).map_err(|_| e)
}

/// The standard sub-group built-ins the device lacks (nothing when the source names none), for
/// the build of sub-group size `size`.
fn polyfill_text(queue: &Queue, facts: &SourceFacts, size: usize) -> Result<String> {
    let device = queue.device();
    let all = fixed_builtins(device, size) || derived_geometry(device, size, facts);
    let text = polyfill::prelude(queue, facts, all);
    transform::inline_includes(&text, "clgroups/khr/prelude")
}

/// The build of [`build_with_fallbacks`]'s first text of size `size` (with the stand-in scratch
/// where that alone fails and the facts allow it), without generated variants, with `defines`
/// just before the user's text: the driver's probe ([`super::probe`]), never launched.
pub(super) fn build_probe(
    queue: &Queue,
    b: &ProgramBuilder,
    source: &Source<'_>,
    plans: &BTreeMap<String, KernelChoices>,
    size: usize,
    defines: &str,
) -> Result<Arc<ClProgram>> {
    let polyfill = polyfill_text(queue, &source.facts, size)? + defines;
    let attempt = |stand_in: bool| {
        let how = (false, true, stand_in);
        let text = compose(b, queue.device(), &polyfill, source, plans, how, size)?;
        build_cached(queue, &text, &b.options)
    };
    match (attempt(false), &source.facts.scratch_stand_in) {
        (Err(_), Some(_)) => attempt(true),
        (first, _) => first,
    }
}

/// The full text compiled for one sub-group size: the user's source with the emulated scratch
/// threaded, rounded variants (if `round`), sizes pinned — none of it unless `rewrite` — then
/// the includes resolved and the backend's prelude and the `polyfill` in front, and with
/// `stand_in` the stand-in scratch ([`STAND_IN`]) just before the user's text.
fn compose(
    b: &ProgramBuilder,
    device: &Device,
    polyfill: &str,
    source: &Source<'_>,
    plans: &BTreeMap<String, KernelChoices>,
    (round, rewrite, stand_in): (bool, bool, bool),
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
            source.rewrite(plan, round, size)?
        }
        false => b.source.clone(),
    };
    let body = transform::inline_includes(&user, &b.file_name)?;
    let mut out = prelude(device, size);
    if derived_geometry(device, size, &source.facts) {
        log::debug!(
            "{device}: the source names intel_reqd_sub_group_size: its automatic build computes \
             the driver's partial sub-groups and provides every standard built-in"
        );
        out.push_str("#define CLG_KHR_DERIVED 1\n");
    }
    out.push_str(polyfill);
    if stand_in {
        out.push_str(STAND_IN);
    }
    out.push_str(&format!("#line 1 \"{}\"\n", b.file_name));
    out.push_str(&body);
    Ok(out)
}

/// The stand-in for the emulated scratch where the edits cannot reach a kernel a macro writes
/// ([`SourceFacts::scratch_stand_in`]): a null pointer at program scope, which every kernel and
/// helper given the parameter hides; a kernel without it (the driver's argument info says) is
/// refused before anything runs ([`KernelChoices::scratch_required`]).
const STAND_IN: &str = "__local ulong *__constant clg_sg_scratch = 0;\n";

/// The defines that select and configure the layer's backend.
pub(super) fn prelude(device: &Device, size: usize) -> String {
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
    if matches!(
        backend,
        ShuffleBackend::Emulated | ShuffleBackend::NvidiaPtx
    ) {
        // clgroups sets the size of the sub-groups it provides: `intel_reqd_sub_group_size(N)`
        // is honoured for every N the device offers (others are refused before a launch).
        p.push_str("#define cl_intel_required_subgroup_size 1\n");
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
    if device.needs_group_uniform_collectives() {
        p.push_str(match backend {
            ShuffleBackend::Emulated => GROUP_ANY_EMULATED,
            _ => "#define clg_group_any(p) work_group_any((int)(p))\n",
        });
    }
    p
}

/// The vote of the work-group that loops run in lockstep take (`transform::lockstep`), on the
/// emulated scratch (one slot per work-item), which the function calling it has.
const GROUP_ANY_EMULATED: &str = "static inline int clg_wg_any(int p, __local ulong *s) { \
    uint n = get_local_size(0) * get_local_size(1) * get_local_size(2); \
    uint id = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * \
    get_local_id(2)); barrier(CLK_LOCAL_MEM_FENCE); s[id] = p != 0; \
    barrier(CLK_LOCAL_MEM_FENCE); for (uint i = 0; i < n; ++i) if (s[i]) return 1; return 0; }\n\
    #define clg_group_any(p) clg_wg_any((int)(p), clg_sg_scratch)\n";

#[cfg(test)]
mod tests {
    use crate::device::ShuffleBackend;
    use crate::transform::SourceFacts;

    /// [`SourceFacts::names_required_size`] of `src`.
    fn names_required_size(src: &str) -> bool {
        let facts = SourceFacts::read_on(src, ShuffleBackend::Khr, None);
        facts.unwrap().names_required_size
    }

    #[test]
    fn required_sizes_are_named_as_whole_words() {
        assert!(names_required_size(
            "#define F(n) __attribute__((intel_reqd_sub_group_size(n)))"
        ));
        assert!(names_required_size(
            "kernel __attribute__((intel_reqd_sub_group_size(8))) void k() {}"
        ));
        assert!(!names_required_size(
            "CLG_REQD_SUB_GROUP_SIZE(8) kernel void k() {}"
        ));
        assert!(!names_required_size("my_intel_reqd_sub_group_size_table"));
    }
}
