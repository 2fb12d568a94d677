//! [`WrongArgument`]: why a launch refuses a kernel argument, as data
//! ([`Error::InvalidArgument`](crate::Error::InvalidArgument)'s reason).

use std::fmt;

/// Why a kernel argument is refused before the launch is enqueued; `Display` gives the
/// sentence the error shows.
///
/// ```
/// use clgroups::kernel::{ArgInfo, ArgSpace};
/// use clgroups::launch::{check_args, Expected, KernelArg, WrongArgument};
/// use clgroups::Error;
/// let arg = ArgInfo { name: Some("v".into()), type_name: Some("float4".into()),
///     space: Some(ArgSpace::Private), is_const: Some(true) };
/// let Err(Error::InvalidArgument { reason, .. }) = check_args("k", &[arg], &[1.0f32.to_arg()])
/// else { panic!() };
/// assert!(matches!(&*reason, WrongArgument::Type { is: Expected::Value(t, None), .. } if t == "float4"));
/// assert_eq!(reason.to_string(), "`v` is a float4, got a float value");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WrongArgument {
    /// The kernel takes `takes` arguments; `given` are given.
    Count {
        /// The kernel's parameters.
        takes: usize,
        /// The arguments given.
        given: usize,
    },
    /// Parameter `name` is what `is` says; the argument is `got`.
    Type {
        /// The parameter's name (`?` where the driver does not say).
        name: String,
        /// What the parameter is.
        is: Expected,
        /// The argument, as a reader names it (`a Buffer<f32>`, `a float value`).
        got: String,
    },
    /// The buffer belongs to another context than the queue on `device`.
    OtherContext {
        /// The queue's device.
        device: String,
    },
}

/// What a parameter is that an argument does not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expected {
    /// A pointer to another built-in type (with the pointee's bytes where the buffer's element
    /// has no OpenCL name).
    Pointer(String, Option<usize>),
    /// A global pointer, given something else.
    Global(String),
    /// A local pointer, given something else.
    Local,
    /// A value of another built-in type (with its bytes where the given one has no name).
    Value(String, Option<usize>),
    /// A value, given something else.
    Private(String),
}

impl fmt::Display for WrongArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrongArgument::Count { takes, given } => {
                write!(f, "the kernel takes {takes} argument(s), {given} given")
            }
            WrongArgument::Type { name, is, got } => write!(f, "`{name}` {is}, got {got}"),
            WrongArgument::OtherContext { device } => write!(
                f,
                "the buffer belongs to another context than the queue on {device}"
            ),
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Pointer(ty, None) => write!(f, "is a {ty} pointer"),
            Expected::Pointer(ty, Some(b)) => write!(f, "is a {ty} pointer ({b}-byte elements)"),
            Expected::Global(ty) => write!(f, "is a global {ty} pointer"),
            Expected::Local => f.write_str("is a local pointer (pass launch::Local)"),
            Expected::Value(ty, None) => write!(f, "is a {ty}"),
            Expected::Value(ty, Some(b)) => write!(f, "is a {ty} ({b} bytes)"),
            Expected::Private(ty) => write!(f, "is a {ty} value"),
        }
    }
}
