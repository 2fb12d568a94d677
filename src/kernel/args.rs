//! What the driver says about a kernel's arguments (`clGetKernelArgInfo`, with the
//! `-cl-kernel-arg-info` build option).

use crate::device::ShuffleBackend;
use crate::error::{Error, Result, Unsupported};
use opencl3::kernel::{
    Kernel as ClKernel, CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL,
    CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_CONST,
};

/// Where a kernel argument lives, from `CL_KERNEL_ARG_ADDRESS_QUALIFIER`.
///
/// ```
/// use clgroups::kernel::ArgSpace;
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, "kernel void k(global int *x, local int *t, int v) { }")?;
/// let spaces: Vec<_> = p.kernel("k")?.args().iter().map(|a| a.space).collect();
/// // Drivers without argument information answer `None`.
/// if spaces.iter().all(Option::is_some) {
///     assert_eq!(spaces, [Some(ArgSpace::Global), Some(ArgSpace::Local), Some(ArgSpace::Private)]);
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgSpace {
    /// `global` or `constant` pointer: pass a [`crate::Buffer`].
    Global,
    /// `local` pointer: pass [`crate::launch::Local`].
    Local,
    /// A value: pass a scalar.
    Private,
}

/// What the driver says about one kernel argument (`-cl-kernel-arg-info`).
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, "kernel void k(global const float *in, uint n) { }")?;
/// for arg in p.kernel("k")?.args() {
///     println!("{:?} {:?} const={:?}", arg.type_name, arg.name, arg.is_const);
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgInfo {
    /// The argument's name, if the driver reports it.
    pub name: Option<String>,
    /// The type name without qualifiers (`float*`, `uint`), if the driver reports it.
    pub type_name: Option<String>,
    /// Address space, if the driver reports it.
    pub space: Option<ArgSpace>,
    /// Whether the argument is `const` (`CL_KERNEL_ARG_TYPE_CONST`; for pointers, the pointee),
    /// if the driver reports it.
    pub is_const: Option<bool>,
}

pub(super) fn arg_info(raw: &ClKernel, i: u32) -> ArgInfo {
    let space = raw.get_arg_address_qualifier(i).ok().map(|q| match q {
        CL_KERNEL_ARG_ADDRESS_GLOBAL | CL_KERNEL_ARG_ADDRESS_CONSTANT => ArgSpace::Global,
        CL_KERNEL_ARG_ADDRESS_LOCAL => ArgSpace::Local,
        _ => ArgSpace::Private,
    });
    ArgInfo {
        name: raw.get_arg_name(i).ok().filter(|s| !s.is_empty()),
        type_name: raw
            .get_arg_type_name(i)
            .ok()
            .map(|s| s.trim_end_matches('\0').trim().to_string())
            .filter(|s| !s.is_empty()),
        space,
        is_const: raw
            .get_arg_type_qualifier(i)
            .ok()
            .map(|q| q & u64::from(CL_KERNEL_ARG_TYPE_CONST) != 0),
    }
}

/// Whether kernel `name` (`all` arguments) takes the emulated sub-group scratch as its hidden
/// last argument: on the emulated backend, where the driver names that argument
/// `clg_sg_scratch` (the build asks for `-cl-kernel-arg-info`; the driver, not the scan, knows
/// which kernels a macro wrote), else where the build gave it one. A kernel that needs it and
/// has none ([`crate::program::KernelChoices::scratch_required`]) is refused.
pub(super) fn takes_scratch(
    raw: &ClKernel,
    all: usize,
    plan: &crate::program::KernelChoices,
    dev: &crate::Device,
    name: &str,
) -> Result<bool> {
    if dev.sub_groups().effective.shuffle_backend != ShuffleBackend::Emulated {
        return Ok(false);
    }
    let last = all.checked_sub(1).map(|i| arg_info(raw, i as u32).name);
    let takes = match last {
        None => false,
        Some(Some(arg)) => arg == "clg_sg_scratch",
        Some(None) => plan.scratch,
    };
    if takes != plan.scratch {
        log::debug!(
            "kernel `{name}`: the driver says it takes the emulated scratch: {takes} (the scan: \
             {})",
            plan.scratch
        );
    }
    match &plan.scratch_required {
        Some(why) if !takes => Err(Error::Unsupported {
            device: dev.to_string(),
            what: Unsupported::Scratch {
                kernel: name.into(),
                why: Box::new(why.clone()),
            },
        }),
        _ => Ok(takes),
    }
}
