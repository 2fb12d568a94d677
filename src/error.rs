//! The crate's one error type.
//!
//! Every fallible function returns [`Result<T>`]. Variants carry enough context (device, kernel,
//! sizes, the compiler's log) to act on the message without a debugger.

mod input;
mod unsupported;

pub use input::{InputFault, Internal, RootFault, Weight};
use opencl3::error_codes::error_text;
pub use unsupported::{NoRuntime, Unsupported};

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in clgroups.
///
/// ```
/// use clgroups::prelude::*;
/// let queue = Queue::new(&default_device()?)?;
/// match Program::from_source(&queue, "kernel void k(global int *x) { x[0] = undeclared; }") {
///     Err(Error::Build { log, .. }) => println!("the compiler says:\n{log}"),
///     Err(other) => return Err(other),
///     Ok(_) => unreachable!("the source does not compile"),
/// }
/// // Bad input is refused before anything is enqueued.
/// assert!(matches!(Buffer::<f32>::new(&queue, 0), Err(Error::InvalidInput { .. })));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No OpenCL loader, or a loader with no installed driver (ICD).
    #[error("no OpenCL runtime found: install an ICD such as pocl-opencl-icd ({detail})")]
    NoRuntime {
        /// What the loader said.
        detail: NoRuntime,
    },
    /// The loader found platforms, but none of them offered a usable device: usually an
    /// environment variable (`POCL_DEVICES`, `OCL_ICD_VENDORS`, `CLGROUPS_SHUFFLE_BACKEND`, ...)
    /// excludes them.
    #[error(
        "the OpenCL platforms {platforms} offer no usable device\n{reasons}\nenvironment: {environment}"
    )]
    NoDevices {
        /// The platforms the loader found.
        platforms: String,
        /// Why each platform or device was passed over, one per line.
        reasons: String,
        /// The set environment variables that select devices or drivers, or `(none set)`.
        environment: String,
    },
    /// `CLGROUPS_DEVICE` (or an explicit selector) matched no device.
    #[error("no OpenCL device matches {request:?}; available devices:\n{available}")]
    NoDevice {
        /// The selector as given.
        request: String,
        /// One line per available device (`P:D platform / device`).
        available: String,
    },
    /// An OpenCL call returned an error status.
    #[error("{call} failed with {} ({code}) ({context})", error_text(*code))]
    Cl {
        /// The OpenCL entry point.
        call: &'static str,
        /// The status it returned; the message prints its `CL_*` name.
        code: i32,
        /// Device, kernel or sizes involved.
        context: String,
    },
    /// A program failed to build; `log` is the compiler's own output with file names and line
    /// numbers.
    #[error("OpenCL program build failed on {device} (options: {options})\n{log}")]
    Build {
        /// The device the build was for.
        device: String,
        /// The options passed to the compiler.
        options: String,
        /// The build log.
        log: String,
    },
    /// A query or feature the device cannot provide.
    #[error("{what} is not supported on {device}: it needs {}", what.needs())]
    Unsupported {
        /// The device asked.
        device: String,
        /// What was asked for, and what it needs.
        what: Unsupported,
    },
    /// A kernel requires a sub-group size the device does not support (SYCL's
    /// `errc::feature_not_supported`); raised before anything is enqueued.
    #[error("kernel `{kernel}` requires sub-group size {requested}, which {device} does not support (supported: {supported:?})")]
    FeatureNotSupported {
        /// The device.
        device: String,
        /// The kernel.
        kernel: String,
        /// The required sub-group size.
        requested: usize,
        /// The sizes the device supports.
        supported: Vec<usize>,
    },
    /// A global/local range that is invalid for this kernel and device; raised before anything
    /// is enqueued.
    #[error("invalid launch of kernel `{kernel}` on {device} (global {global:?}, local {local:?}): {reason}")]
    InvalidLaunch {
        /// The kernel.
        kernel: String,
        /// The device.
        device: String,
        /// Global range, OpenCL order.
        global: Vec<usize>,
        /// Local range, OpenCL order (empty for an automatic one).
        local: Vec<usize>,
        /// What is wrong.
        reason: Box<crate::plan::Refusal>,
    },
    /// A kernel argument does not match the kernel's signature.
    #[error("kernel `{kernel}` argument {index}: {reason}")]
    InvalidArgument {
        /// The kernel.
        kernel: String,
        /// The argument's index.
        index: usize,
        /// What is wrong.
        reason: Box<crate::launch::wrong_argument::WrongArgument>,
    },
    /// An environment variable clgroups reads ([`crate::config`]) holds a value it does not
    /// accept; reported by the first call that needs the setting.
    #[error("{variable}={value:?}: expected {expected}")]
    InvalidEnvironment {
        /// The variable, `CLGROUPS_...`.
        variable: String,
        /// Its value.
        value: String,
        /// The values it accepts.
        expected: String,
    },
    /// A range, plan parameter or size that is invalid on its own (no device involved).
    #[error("invalid input: {reason}")]
    InvalidInput {
        /// What is wrong.
        reason: Box<InputFault>,
    },
    /// Checked mode ([`crate::launch::checked`]): a work-item of a single-device launch
    /// indexed a buffer argument outside its elements (seen by the kernel's checked variant,
    /// which redirected the access), or wrote past its end into its guard region (seen after
    /// the launch; `global_id` is then unknown). Nothing outside the buffers was corrupted.
    #[error("kernel `{kernel}` on {device}: {} element {index} of argument {argument} (`{name}`), a buffer of {len} elements (checked mode)", by(.global_id))]
    OutOfBounds {
        /// The kernel.
        kernel: String,
        /// The device.
        device: String,
        /// The argument's index.
        argument: usize,
        /// The argument's name (`?` where neither the driver nor the scanner knows it).
        name: String,
        /// The first index out of bounds (in the kernel's element type for checked variants,
        /// the buffer's for guard regions).
        index: i64,
        /// The buffer's length in the same elements.
        len: u64,
        /// The global id of the work-item (dimensions 0 to 2), when the checked variant saw it.
        global_id: Option<[u32; 3]>,
    },
    /// Checked mode ([`crate::scaling::checked_mode`]): a work-item of a launch over several
    /// devices indexed a buffer outside what its device holds. Indices count the kernel's
    /// pointees (its pointer parameter's type; the buffer's elements where that size is
    /// unknown). Reported after the launch, which has run (with that access redirected to a
    /// pointee the device holds).
    #[error("kernel `{kernel}` on {device}: work-item {global_id:?} indexed {argument} at {index}, outside the pointees [{lo}, {hi}) this device holds wholly; declare the buffer's Access (Halo(n) or Replicated for reads) or use shared placement (CLGROUPS_PLACEMENT=shared)")]
    OutOfChunk {
        /// The kernel.
        kernel: String,
        /// The device.
        device: String,
        /// The argument, as "argument 1 (`x`)".
        argument: String,
        /// The index used (whole-array numbering, in pointees).
        index: i64,
        /// First pointee held.
        lo: u64,
        /// One past the last pointee held.
        hi: u64,
        /// The global id of the work-item (dimensions 0 to 2).
        global_id: [u32; 3],
    },
    /// A command did not finish within the wait limit (`CLGROUPS_TIMEOUT`, see
    /// [`crate::config::timeout`]): the device, or the connection to it, is stuck. The command may
    /// still be running; OpenCL cannot cancel it.
    #[error("{command} did not finish within {waited:?} (CLGROUPS_TIMEOUT): the device or its connection is stuck")]
    Timeout {
        /// The command waited for (kernel and device, or the transfer).
        command: String,
        /// How long clgroups waited.
        waited: std::time::Duration,
    },
    /// The program has no kernel of that name.
    #[error("no kernel `{kernel}` in the program; it defines: {available:?}")]
    NoSuchKernel {
        /// The name asked for.
        kernel: String,
        /// The names the program defines.
        available: Vec<String>,
    },
}

impl Error {
    /// An [`Error::InvalidInput`] for `fault`.
    pub(crate) fn input(fault: InputFault) -> Self {
        Error::InvalidInput {
            reason: Box::new(fault),
        }
    }

    /// An [`Error::Cl`] for a failed call.
    pub(crate) fn cl(call: &'static str, code: i32, context: impl Into<String>) -> Self {
        Error::Cl {
            call,
            code,
            context: context.into(),
        }
    }
}

/// Who made an out-of-bounds access, in [`Error::OutOfBounds`]'s message.
fn by(global_id: &Option<[u32; 3]>) -> String {
    match global_id {
        Some(g) => format!("work-item {g:?} indexed"),
        None => "a write reached".into(),
    }
}
