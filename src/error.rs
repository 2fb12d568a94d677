//! The crate's one error type.
//!
//! Every fallible function returns [`Result<T>`]. Variants carry enough context (device, kernel,
//! sizes, the compiler's log) to act on the message without a debugger.

use opencl3::error_codes::error_text;

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in clgroups.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No OpenCL loader, or a loader with no installed driver (ICD).
    #[error("no OpenCL runtime found: install an ICD such as pocl-opencl-icd ({detail})")]
    NoRuntime {
        /// What the loader said.
        detail: String,
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
    #[error("{what} is not supported on {device}: it needs {missing}")]
    Unsupported {
        /// The device asked.
        device: String,
        /// What was asked for.
        what: String,
        /// The missing extension or capability.
        missing: String,
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
        reason: String,
    },
    /// A kernel argument does not match the kernel's signature.
    #[error("kernel `{kernel}` argument {index}: {reason}")]
    InvalidArgument {
        /// The kernel.
        kernel: String,
        /// The argument's index.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A range, plan parameter or size that is invalid on its own (no device involved).
    #[error("invalid input: {reason}")]
    InvalidInput {
        /// What is wrong.
        reason: String,
    },
    /// A command did not finish within the wait limit (`CLGROUPS_TIMEOUT`, see
    /// [`crate::wait::limit`]): the device, or the connection to it, is stuck. The command may
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
    /// An [`Error::InvalidInput`] from anything printable.
    pub(crate) fn input(reason: impl Into<String>) -> Self {
        Error::InvalidInput {
            reason: reason.into(),
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
