//! Required sub-group sizes the scanner cannot read, asked of the driver.
//!
//! On the backends where clgroups provides the sub-groups (`emulated`, `nvidia-ptx`) it fixes
//! their size when it compiles, so it must know each kernel's `intel_reqd_sub_group_size` before
//! the kernel runs; PoCL's native sub-groups apply the attribute but tell the host nowhere
//! which size (and accept sizes the device does not list), so there too. Where the attribute reaches a kernel through macros the scanner cannot follow
//! (a kernel written entirely by a function-like macro, `REQD(16) kernel void k(..)`, a size
//! chosen by `#if` on a macro clgroups cannot tell), the driver's preprocessor is asked instead:
//! the program is built once more (never run) with
//!
//! ```c
//! #define reqd_work_group_size(...) work_group_size_hint(__VA_ARGS__)
//! #define intel_reqd_sub_group_size(S) __reqd_work_group_size__(S, 1, 1)
//! #define __intel_reqd_sub_group_size__(S) __reqd_work_group_size__(S, 1, 1)
//! ```
//!
//! in front of the user's text, so that every kernel's required sub-group size `S`, however its
//! macros wrote it, becomes the only required work-group size of that build, which the driver
//! reports per kernel (`CL_KERNEL_COMPILE_WORK_GROUP_SIZE`: `(S, 1, 1)`, or `(0, 0, 0)` for a
//! kernel that asks for no size). The kernel's own `reqd_work_group_size` becomes a hint there
//! (not reported). Sound only where every `__reqd_work_group_size__` of that build is the
//! probe's: a source that spells it, or defines or undefines one of the probe's names, is not
//! probed ([`Untold::Spelled`]); a kernel whose answer is not of the form `(S, 1, 1)` is not
//! told ([`Untold::Shape`]). What is not told stays refused ([`SizeRefusal`]), never guessed.

use super::build::{self, KernelChoices};
use super::told::{told, DriverSizes, SizeRefusal, Told, Untold, REQUIRED_SIZE};
use super::{ProgramBuilder, ResolvedSize, SubGroupSize};
use crate::device::ShuffleBackend;
use crate::ffi::ClProgram;
use crate::queue::Queue;
use crate::transform::{self, Source};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The probe's defines, after the polyfill and before the user's text.
const PROBE: &str = "#define reqd_work_group_size(...) work_group_size_hint(__VA_ARGS__)\n\
                     #define intel_reqd_sub_group_size(S) __reqd_work_group_size__(S, 1, 1)\n\
                     #define __intel_reqd_sub_group_size__(S) __reqd_work_group_size__(S, 1, 1)\n";

/// Names whose spelling or definition in the source would make the probe's answer ambiguous.
const PROBE_NAMES: [&str; 4] = [
    "__reqd_work_group_size__",
    "reqd_work_group_size",
    REQUIRED_SIZE,
    "__intel_reqd_sub_group_size__",
];

/// Whether a build on `backend` must ask the driver: clgroups fixes the size there (or the
/// device is PoCL's native sub-groups, `pocl_native`), and some
/// kernel's size is unread (`plans`) or the source writes the attribute where the scanner
/// cannot tell which kernel it sizes (a kernel it did not find, or whose macros it could not
/// follow, may have one).
fn needed(
    (backend, pocl_native): (ShuffleBackend, bool),
    source: &Source<'_>,
    plans: &BTreeMap<String, KernelChoices>,
) -> bool {
    let provided = matches!(
        backend,
        ShuffleBackend::Emulated | ShuffleBackend::NvidiaPtx
    );
    let unread = plans.values().any(|p| p.refused.is_some());
    // PoCL's native sub-groups apply the attribute, but tell the host nowhere which size (and
    // run one the device does not list): asked there too.
    (provided || pocl_native) && (unread || source.facts.hidden_required_size)
}

/// Asks the driver for the required sub-group sizes of the program's kernels where clgroups
/// must know them and cannot read them ([`needed`]), builds what the answers add (a size of
/// its own for each kernel told one), and re-plans the scanned kernels they size. `builds` are
/// the program's builds so far; returns the answers and the sizes of the builds added with the
/// stand-in scratch.
pub(super) fn ask_driver(
    queue: &Queue,
    b: &ProgramBuilder,
    source: &mut Source<'_>,
    plans: &mut BTreeMap<String, KernelChoices>,
    builds: &mut BTreeMap<usize, Arc<ClProgram>>,
    rounding: &super::RoundingConfig,
) -> crate::error::Result<(DriverSizes, std::collections::BTreeSet<usize>)> {
    let device = queue.device();
    let backend = device.sub_groups().effective.shuffle_backend;
    let mut stand_ins = std::collections::BTreeSet::new();
    let pocl_native = build::fixed_builtins(device, 1);
    if !needed((backend, pocl_native), source, plans) {
        return Ok((Err(Untold::NotAsked), stand_ins));
    }
    let built = Arc::clone(builds.values().next().expect("one build"));
    let sizes = probe(queue, b, source, plans, &built);
    match &sizes {
        Ok(map) => log::debug!("required sub-group sizes the driver tells: {map:?}"),
        Err(why) => log::debug!("required sub-group sizes: {why}"),
    }
    // Scanned kernels whose own attribute the scanner could not read: the driver's size.
    // Scanned kernels whose size the scanner could not read, or read otherwise than the
    // driver (a kernel's macros it could not follow): the driver's size.
    let mut replanned = Vec::new();
    for (n, k) in source.facts.kernels.iter_mut().enumerate() {
        let Ok(told) = told(&sizes, &k.name) else {
            continue;
        };
        let agrees = k.unresolved_sub_group_attr.is_none()
            && match told {
                Told::Size(s) => {
                    k.own_sub_group_attr && k.sub_group_size == Some(SubGroupSize::Exact(s))
                }
                Told::NoSize => !k.own_sub_group_attr,
            };
        if agrees || !plans.contains_key(&k.name) {
            continue;
        }
        log::debug!(
            "kernel `{}`: the driver tells its required sub-group size {told:?} (the scanner \
             read {:?}{})",
            k.name,
            k.sub_group_size,
            k.unresolved_sub_group_attr
                .as_ref()
                .map_or_else(String::new, |why| format!(", or not: {why}"))
        );
        k.sub_group_size = match told {
            Told::Size(s) => Some(SubGroupSize::Exact(s)),
            Told::NoSize => None,
        };
        k.own_sub_group_attr = matches!(told, Told::Size(_));
        k.unresolved_sub_group_attr = None;
        replanned.push(n);
    }
    let facts = &source.facts;
    for k in replanned.into_iter().map(|n| &facts.kernels[n]) {
        let ids = std::mem::take(&mut plans.get_mut(&k.name).expect("planned").id_conditions);
        let mut plan = KernelChoices::new(k, b, device, rounding, facts);
        plan.set_collectives(facts.collective_users.contains(&k.name), k, device);
        plan.id_conditions = ids;
        plans.insert(k.name.clone(), plan);
    }
    for (name, p) in plans.iter_mut() {
        if let Some(SizeRefusal::Unread { driver, .. }) = &mut p.refused {
            *driver = told(&sizes, name).err().unwrap_or(Untold::Absent);
        }
    }
    // The builds of the sizes the driver's answers add.
    let mut wanted: Vec<usize> = plans.values().filter_map(|p| p.build_size()).collect();
    if let Ok(map) = &sizes {
        for (name, told) in map {
            if let (false, Ok(Told::Size(s))) = (plans.contains_key(name), told) {
                if let ResolvedSize::Size(n) = super::resolve(SubGroupSize::Exact(*s), device) {
                    wanted.push(n);
                }
            }
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    wanted.retain(|n| !builds.contains_key(n));
    for size in wanted {
        log::debug!("a build of sub-group size {size} for the sizes the driver told");
        let (program, stand_in) = build::build_with_fallbacks(queue, b, source, plans, size)?;
        builds.insert(size, program);
        if stand_in {
            stand_ins.insert(size);
        }
    }
    Ok((sizes, stand_ins))
}

/// How the probe asks: its defines, and whether the kernel's own `reqd_work_group_size`
/// becomes a hint there (else a kernel with one is not told: [`Untold::OwnWorkGroupSize`]).
struct Variant {
    defines: &'static str,
    remaps_own: bool,
    /// The attributes of a kernel ([`transform::probe_canary`]), before the user's text, whose
    /// answer must be `(2, 1, 1)`: the driver applies the defines as they are meant (a driver
    /// that ignored an attribute spelling would otherwise answer "no size" for every kernel).
    canary: &'static str,
}

/// The probes, in the order tried: with the kernel's own required work-group size made a hint
/// (needs variadic macros and the `__name__` spelling of attributes), then without.
const VARIANTS: [Variant; 2] = [
    Variant {
        defines: PROBE,
        remaps_own: true,
        canary: "__attribute__((reqd_work_group_size(3, 1, 1))) \
                 __attribute__((intel_reqd_sub_group_size(2))) ",
    },
    Variant {
        defines: "#define intel_reqd_sub_group_size(S) reqd_work_group_size(S, 1, 1)\n\
                  #define __intel_reqd_sub_group_size__(S) reqd_work_group_size(S, 1, 1)\n",
        remaps_own: false,
        canary: "__attribute__((intel_reqd_sub_group_size(2))) ",
    },
];

/// The probe builds and their answers ([`Told`] per kernel the driver lists, generated variants
/// left out); `built` is a build of the program without the probe, whose required work-group
/// sizes tell the kernels' own.
fn probe(
    queue: &Queue,
    b: &ProgramBuilder,
    source: &Source<'_>,
    plans: &BTreeMap<String, KernelChoices>,
    built: &ClProgram,
) -> DriverSizes {
    // A source that spells or defines one of the probe's names: its answers would be ambiguous.
    if source.facts.spells(PROBE_NAMES[0]) {
        return Err(Untold::Spelled(PROBE_NAMES[0]));
    }
    if let Some(name) = PROBE_NAMES.into_iter().find(|n| source.facts.defines(n)) {
        return Err(Untold::Spelled(name));
    }
    let mut why = Untold::BuildFailed;
    for v in &VARIANTS {
        match probe_with(queue, b, source, plans, (v, built)) {
            Ok(told) => return Ok(told),
            Err(e) => {
                log::debug!(
                    "probe ({} own sizes): {e}",
                    ["keeps", "remaps"][usize::from(v.remaps_own)]
                );
                why = e;
            }
        }
    }
    Err(why)
}

/// The `reqd_work_group_size(x, y, z)` of a `CL_KERNEL_ATTRIBUTES` string.
fn reqd_in(attributes: &str) -> Option<[usize; 3]> {
    let rest = attributes.split("reqd_work_group_size").nth(1)?;
    let inner = rest.trim_start().strip_prefix('(')?.split(')').next()?;
    let dims: Vec<usize> = (inner.split(','))
        .map(|d| d.trim().trim_end_matches(['u', 'U']).parse().ok())
        .collect::<Option<_>>()?;
    match dims[..] {
        [x] => Some([x, 1, 1]),
        [x, y] => Some([x, y, 1]),
        [x, y, z] => Some([x, y, z]),
        _ => None,
    }
}

/// One probe build ([`Variant`]) and its answers, or why it tells nothing.
fn probe_with(
    queue: &Queue,
    b: &ProgramBuilder,
    source: &Source<'_>,
    plans: &BTreeMap<String, KernelChoices>,
    (variant, built): (&Variant, &ClProgram),
) -> DriverSizes {
    let device = queue.device();
    let size = super::automatic_size(device);
    let defines = format!(
        "{}{}kernel void {}(global int *clg_x) {{ clg_x[0] = 0; }}\n",
        variant.defines,
        variant.canary,
        transform::probe_canary()
    );
    let program = build::build_probe(queue, b, source, plans, size, &defines).map_err(|e| {
        log::debug!("the probe build failed on {device}: {e}");
        Untold::BuildFailed
    })?;
    // The attribute string where the driver reports no size (PoCL's remote driver), asked of
    // the context's first device only (NVIDIA's driver crashes answering it for another).
    let first = queue.context().devices().first() == Some(device);
    let dims = |k: &opencl3::kernel::Kernel| {
        let d = k.get_compile_work_group_size(device.id()).map_err(|e| {
            log::debug!("CL_KERNEL_COMPILE_WORK_GROUP_SIZE on {device}: {e}");
            Untold::BuildFailed
        })?;
        let d = [0, 1, 2].map(|i| d.get(i).copied().unwrap_or(0));
        let listed = || Some(reqd_in(&k.attributes().ok()?)).flatten();
        Ok(match (d, first) {
            ([0, 0, 0], true) => listed().unwrap_or(d),
            _ => d,
        })
    };
    let raw = cl3::kernel::create_kernels_in_program(program.get()).map_err(|e| {
        log::debug!("clCreateKernelsInProgram on the probe build: {e}");
        Untold::BuildFailed
    })?;
    let mut told = BTreeMap::new();
    let (mut canary, canary_name) = (None, transform::probe_canary());
    for k in raw {
        let k = crate::ffi::Owned::new(opencl3::kernel::Kernel::new(k));
        let name = k.function_name().map_err(|e| {
            log::debug!("CL_KERNEL_FUNCTION_NAME on the probe build: {e}");
            Untold::BuildFailed
        })?;
        let name = name.trim_end_matches('\0').to_string();
        if name == canary_name {
            canary = Some(dims(&k)?);
        }
        if transform::is_generated(&name) {
            continue;
        }
        let own = || -> Result<[usize; 3], Untold> {
            let k = opencl3::kernel::Kernel::create(built, &name).map_err(|_| Untold::Absent)?;
            dims(&crate::ffi::Owned::new(k))
        };
        let answer = match (dims(&k)?, variant.remaps_own) {
            (_, false) if own()? != [0, 0, 0] => Err(Untold::OwnWorkGroupSize(own()?)),
            ([0, 0, 0], _) => Ok(Told::NoSize),
            ([s, 1, 1], _) if s > 0 => Ok(Told::Size(s)),
            (other, _) => Err(Untold::Shape(other)),
        };
        log::debug!("kernel `{name}`: the probe build tells {answer:?}");
        // A name listed twice (it should not be) is told nothing.
        if told.insert(name.clone(), answer).is_some() {
            told.insert(name, Err(Untold::Absent));
        }
    }
    match canary {
        Some([2, 1, 1]) => Ok(told),
        other => Err(Untold::Canary(other.unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn required_sizes_are_read_from_attribute_strings() {
        let read = super::reqd_in;
        assert_eq!(
            read("__attribute__((reqd_work_group_size(16, 1, 1 )))"),
            Some([16, 1, 1])
        );
        assert_eq!(
            read("__attribute__((work_group_size_hint(64, 1, 1 ))) __attribute__((reqd_work_group_size(8u,1,1)))"),
            Some([8, 1, 1])
        );
        assert_eq!(
            read("__attribute__((work_group_size_hint(64, 1, 1 )))"),
            None
        );
        assert_eq!(read(""), None);
    }
}
