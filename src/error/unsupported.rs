//! [`Unsupported`]: what a device cannot do ([`Error::Unsupported`](crate::Error)'s `what`),
//! and [`NoRuntime`]: why there is no OpenCL runtime, as data; `Display` words them for users.

use crate::device::ShuffleBackend;
use crate::obstacle::Obstacle;
use crate::program::SizeRefusal;
use opencl3::error_codes::error_text;
use std::fmt;

/// What was asked of a device that cannot provide it; `Display` names it and [`needs`]
/// what it lacks.
///
/// [`needs`]: Unsupported::needs
///
/// ```
/// use clgroups::device::ShuffleBackend;
/// use clgroups::error::Unsupported;
/// use clgroups::Error;
/// let dev = clgroups::default_device()?;
/// if let Err(Error::Unsupported { what, .. }) = dev.with_backend(ShuffleBackend::NvidiaPtx) {
///     assert_eq!(what, Unsupported::Backend { backend: ShuffleBackend::NvidiaPtx, forced: false });
///     assert_eq!(what.needs().to_string(), "NVIDIA's OpenCL (local or behind PoCL-R)");
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsupported {
    /// A shuffle backend (`forced`: by `CLGROUPS_SHUFFLE_BACKEND`).
    Backend {
        /// The backend.
        backend: ShuffleBackend,
        /// Whether the environment asked for it.
        forced: bool,
    },
    /// Host sub-group queries of a kernel whose required sub-group size clgroups cannot read.
    HostSubGroupQueries {
        /// The kernel.
        kernel: String,
    },
    /// Kernel sub-group queries on a device without native sub-groups.
    KernelSubGroupQueries {
        /// The kernel.
        kernel: String,
    },
    /// `CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL`.
    CompileSubGroupSize,
    /// A kernel that needs the emulated layer's scratch parameter, which clgroups cannot add.
    Scratch {
        /// The kernel.
        kernel: String,
        /// Where and why it needs it.
        why: Box<Obstacle>,
    },
    /// A kernel whose required sub-group size neither clgroups nor the driver reads.
    SubGroupSize {
        /// The kernel.
        kernel: String,
        /// Why.
        why: Box<SizeRefusal>,
    },
    /// A kernel with a sub-group collective under work-item-dependent control flow, on a
    /// device whose collectives are work-group barriers (`barriers` says why).
    DivergentCollective {
        /// The kernel.
        kernel: String,
        /// The collective and its condition.
        why: Box<Obstacle>,
        /// Why the collectives are work-group barriers.
        barriers: Option<crate::device::GroupBarriers>,
    },
    /// The device time of a command on a queue without profiling.
    DeviceTime {
        /// The command (kernel and device).
        command: String,
    },
    /// Algorithms on a type of double precision.
    Fp64 {
        /// The OpenCL C type.
        ty: &'static str,
    },
}

impl Unsupported {
    /// What the device lacks, for the message.
    pub fn needs(&self) -> impl fmt::Display + '_ {
        Needs(self)
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::Backend { backend, forced } => match forced {
                true => write!(f, "CLGROUPS_SHUFFLE_BACKEND={backend}"),
                false => write!(f, "the `{backend}` shuffle backend"),
            },
            Unsupported::HostSubGroupQueries { kernel } => {
                write!(f, "host sub-group queries for `{kernel}`")
            }
            Unsupported::KernelSubGroupQueries { kernel } => {
                write!(f, "kernel sub-group queries for `{kernel}`")
            }
            Unsupported::CompileSubGroupSize => {
                f.write_str("CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL")
            }
            Unsupported::Scratch { kernel, why } => write!(f, "kernel `{kernel}` ({why})"),
            Unsupported::SubGroupSize { kernel, why } => write!(f, "kernel `{kernel}` ({why})"),
            Unsupported::DivergentCollective { kernel, why, .. } => {
                write!(f, "kernel `{kernel}` ({why})")
            }
            Unsupported::DeviceTime { command } => write!(f, "the device time of {command}"),
            Unsupported::Fp64 { ty } => write!(f, "algorithms on {ty}"),
        }
    }
}

/// [`Unsupported::needs`].
struct Needs<'a>(&'a Unsupported);

impl fmt::Display for Needs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unsupported::Backend { backend, .. } => f.write_str(match backend {
                ShuffleBackend::Khr => "cl_khr_subgroups and cl_khr_subgroup_shuffle",
                ShuffleBackend::Intel => "cl_intel_subgroups",
                ShuffleBackend::NvidiaPtx => "NVIDIA's OpenCL (local or behind PoCL-R)",
                ShuffleBackend::Emulated => "nothing",
            }),
            Unsupported::HostSubGroupQueries { .. } => f.write_str(
                "a required sub-group size clgroups can read (the kernel may have an \
                 intel_reqd_sub_group_size that the driver ignores in clGetKernelSubGroupInfo); \
                 ask inside the kernel",
            ),
            Unsupported::KernelSubGroupQueries { .. } => {
                f.write_str("cl_khr_subgroups (or OpenCL C feature __opencl_c_subgroups)")
            }
            Unsupported::CompileSubGroupSize => f.write_str("cl_intel_required_subgroup_size"),
            Unsupported::Scratch { .. } => f.write_str(
                "a kernel whose parameter list clgroups can reach: write the parameter list in \
                 the macro that writes the kernel keyword or right after its use (HEAD(k)(...)), \
                 or define the kernel outside a macro",
            ),
            Unsupported::SubGroupSize { .. } => f.write_str(
                "a sub-group size clgroups or the driver can read (intel_reqd_sub_group_size)",
            ),
            Unsupported::DivergentCollective { barriers, .. } => {
                f.write_str("sub-group collectives that are not work-group barriers: ")?;
                match barriers {
                    Some(why) => write!(f, "{why}")?,
                    None => f.write_str("they are work-group barriers")?,
                }
                f.write_str(
                    " (make the condition uniform, or compute the collective unconditionally)",
                )
            }
            Unsupported::DeviceTime { .. } => f.write_str(
                "a queue with profiling (Queue::with_profiling, Queue::profiled_on, \
                 RootDevice::with_profiling)",
            ),
            Unsupported::Fp64 { .. } => f.write_str("cl_khr_fp64"),
        }
    }
}

/// Why there is no OpenCL runtime ([`Error::NoRuntime`](crate::Error)'s `detail`).
///
/// ```
/// use clgroups::error::NoRuntime;
/// assert_eq!(NoRuntime::NoPlatform.to_string(), "the OpenCL loader found no platform");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoRuntime {
    /// `libOpenCL.so.1` could not be loaded (the `dynamic` feature).
    NoLoader,
    /// The loader found no platform (no driver installed).
    NoPlatform,
    /// `clGetPlatformIDs` failed with this status.
    Failed(i32),
}

impl fmt::Display for NoRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoRuntime::NoLoader => f.write_str("libOpenCL.so.1 could not be loaded"),
            NoRuntime::NoPlatform => f.write_str("the OpenCL loader found no platform"),
            NoRuntime::Failed(code) => {
                write!(f, "clGetPlatformIDs failed with {}", error_text(*code))
            }
        }
    }
}
