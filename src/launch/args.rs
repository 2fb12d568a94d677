//! Kernel arguments: what may be passed, and the checks against the kernel's signature.

use crate::buffer::{Buffer, Scalar};
use crate::error::{Error, Result};
use crate::ffi::RawArg;
use crate::kernel::{ArgInfo, ArgSpace};
use crate::launch::checked::Guard;
use opencl3::types::cl_mem;
use std::marker::PhantomData;

/// A `__local` buffer argument of `len` elements of `T`.
///
/// ```
/// let scratch = clgroups::launch::Local::<f32>::new(256);
/// assert_eq!(scratch.bytes(), 1024);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Local<T> {
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Scalar> Local<T> {
    /// `len` elements of local memory per work-group.
    pub const fn new(len: usize) -> Self {
        Local {
            len,
            _t: PhantomData,
        }
    }

    /// Size in bytes, saturating at `usize::MAX` (which no device has: launches refuse it).
    ///
    /// ```
    /// assert_eq!(clgroups::launch::Local::<f32>::new(usize::MAX / 4 + 1).bytes(), usize::MAX);
    /// ```
    pub const fn bytes(&self) -> usize {
        self.len.saturating_mul(size_of::<T>())
    }
}

/// A memory object taken from a live [`Buffer`]; only clgroups can make one, so safe code
/// cannot hand the driver an arbitrary pointer:
///
/// ```compile_fail,E0451
/// let forged = clgroups::launch::Mem { raw: std::ptr::null_mut(), context: 0, bytes: 0, guard: None };
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    raw: cl_mem,
    /// The buffer's context (launches refuse buffers of another context).
    context: usize,
    /// The buffer's size in bytes (without its guard).
    bytes: usize,
    /// The buffer's guard region in checked mode.
    guard: Option<Guard>,
}

#[cfg(test)]
impl Mem {
    /// A memory object for tests of plans that never reach the driver.
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` tests only
    pub(crate) fn null() -> Self {
        Mem {
            raw: std::ptr::null_mut(),
            context: 0,
            bytes: 0,
            guard: None,
        }
    }
}

impl Mem {
    fn of<T: Scalar>(buffer: &Buffer<T>) -> Self {
        Mem {
            raw: buffer.as_raw(),
            context: buffer.context().key(),
            bytes: buffer.len() * size_of::<T>(),
            guard: (buffer.guard_len() > 0).then(|| Guard {
                len: buffer.len(),
                guard: buffer.guard_len(),
                elem: size_of::<T>(),
                front: buffer.front_len(),
                whole: buffer.whole_raw().unwrap_or(buffer.as_raw()),
            }),
        }
    }

    /// Identity of the buffer's context.
    pub(crate) fn context(&self) -> usize {
        self.context
    }

    /// The memory object.
    pub(crate) fn raw(&self) -> cl_mem {
        self.raw
    }

    /// The buffer's size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The guard region, in checked mode.
    pub(crate) fn guard(&self) -> Option<Guard> {
        self.guard
    }
}

/// One argument, owned by the launch until it is set. Only [`KernelArg`] values reach a
/// launch; an `Arg` built by hand cannot be passed to one.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A buffer: its memory object and element type.
    Buffer {
        /// The memory object (kept alive by the [`Buffer`] the launch borrows).
        mem: Mem,
        /// OpenCL C name of the element type.
        elem: &'static str,
    },
    /// A scalar value.
    Scalar {
        /// The value's bytes.
        bytes: Vec<u8>,
        /// OpenCL C name of its type.
        ty: &'static str,
    },
    /// Local memory of this many bytes.
    Local(usize),
}

mod sealed {
    pub trait Sealed {}
}

/// Anything that can be a kernel argument: `&Buffer<T>`, a [`Scalar`], [`Local`]. Sealed: a
/// launch only ever sees arguments whose memory objects it borrows.
pub trait KernelArg: sealed::Sealed {
    /// The argument's value.
    fn to_arg(&self) -> Arg;
}

impl<T: Scalar> sealed::Sealed for &Buffer<T> {}
impl<T: Scalar> sealed::Sealed for &mut Buffer<T> {}
impl<T: Scalar> sealed::Sealed for T {}
impl<T: Scalar> sealed::Sealed for Local<T> {}

impl<T: Scalar> KernelArg for &Buffer<T> {
    fn to_arg(&self) -> Arg {
        Arg::Buffer {
            mem: Mem::of(self),
            elem: T::CL_NAME,
        }
    }
}

impl<T: Scalar> KernelArg for &mut Buffer<T> {
    fn to_arg(&self) -> Arg {
        Arg::Buffer {
            mem: Mem::of(self),
            elem: T::CL_NAME,
        }
    }
}

impl<T: Scalar> KernelArg for T {
    fn to_arg(&self) -> Arg {
        Arg::Scalar {
            bytes: self.to_bytes(),
            ty: T::CL_NAME,
        }
    }
}

impl<T: Scalar> KernelArg for Local<T> {
    fn to_arg(&self) -> Arg {
        Arg::Local(self.bytes())
    }
}

impl Arg {
    pub(crate) fn raw(&self) -> RawArg<'_> {
        match self {
            Arg::Buffer { mem, .. } => RawArg::Mem(mem.raw),
            Arg::Scalar { bytes, .. } => RawArg::Bytes(bytes),
            Arg::Local(n) => RawArg::Local(*n),
        }
    }

    fn describe(&self) -> String {
        match self {
            Arg::Buffer { elem, .. } => format!("a Buffer<{elem}>"),
            Arg::Scalar { ty, .. } => format!("a {ty} value"),
            Arg::Local(n) => format!("{n} bytes of local memory"),
        }
    }
}

/// Checks `args` against the kernel's signature: the count always; where the driver reports
/// argument info, the kind (memory object, value, local memory) always, and types only where
/// the kernel names a built-in type:
///
/// * a pointer to a built-in scalar or vector (`float*`, `float4*`, `uint*`) takes a buffer of
///   that scalar; a pointer to `char`, `uchar` or `void` (a byte view) or to anything else
///   (typedefs, structs) takes any buffer;
/// * a built-in scalar value takes exactly that scalar; other value types (typedefs, `size_t`)
///   take any scalar.
///
/// ```
/// use clgroups::kernel::{ArgInfo, ArgSpace};
/// use clgroups::launch::{check_args, KernelArg};
/// let real = ArgInfo { name: Some("n".into()), type_name: Some("real".into()),
///     space: Some(ArgSpace::Private), is_const: Some(true) };
/// assert!(check_args("k", &[real.clone()], &[2.0f32.to_arg()]).is_ok());
/// assert!(check_args("k", &[real], &[]).is_err());
/// ```
pub fn check(kernel: &str, sig: &[ArgInfo], args: &[Arg]) -> Result<()> {
    if sig.len() != args.len() {
        return Err(Error::InvalidArgument {
            kernel: kernel.to_string(),
            index: args.len().min(sig.len()),
            reason: format!(
                "the kernel takes {} argument(s), {} given",
                sig.len(),
                args.len()
            ),
        });
    }
    for (index, (info, arg)) in sig.iter().zip(args).enumerate() {
        if let Some(reason) = mismatch(info, arg) {
            let name = info.name.as_deref().unwrap_or("?");
            return Err(Error::InvalidArgument {
                kernel: kernel.to_string(),
                index,
                reason: format!("`{name}` {reason}, got {}", arg.describe()),
            });
        }
    }
    Ok(())
}

fn mismatch(info: &ArgInfo, arg: &Arg) -> Option<String> {
    let ty = info.type_name.as_deref();
    match (info.space?, arg) {
        (ArgSpace::Global, Arg::Buffer { elem, .. }) => {
            let base = ty?.trim_end_matches('*').trim();
            let scalar = base.trim_end_matches(|c: char| c.is_ascii_digit());
            let checked = known_scalar(scalar) && !matches!(scalar, "char" | "uchar");
            (checked && scalar != *elem).then(|| format!("is a {} pointer", ty.unwrap_or("?")))
        }
        (ArgSpace::Global, _) => Some(format!("is a global {} pointer", ty.unwrap_or("?"))),
        (ArgSpace::Local, Arg::Local(_)) => None,
        (ArgSpace::Local, _) => Some("is a local pointer (pass launch::Local)".into()),
        (ArgSpace::Private, Arg::Scalar { ty: given, .. }) => {
            let want = ty?;
            (known_scalar(want) && want != *given).then(|| format!("is a {want}"))
        }
        (ArgSpace::Private, _) => Some(format!("is a {} value", ty.unwrap_or("?"))),
    }
}

fn known_scalar(ty: &str) -> bool {
    matches!(
        ty,
        "char"
            | "uchar"
            | "short"
            | "ushort"
            | "int"
            | "uint"
            | "long"
            | "ulong"
            | "float"
            | "double"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(space: ArgSpace, ty: &str) -> ArgInfo {
        ArgInfo {
            name: Some("a".into()),
            type_name: Some(ty.into()),
            space: Some(space),
            is_const: None,
        }
    }

    fn buf(elem: &'static str) -> Arg {
        Arg::Buffer {
            mem: Mem::null(),
            elem,
        }
    }

    #[test]
    fn count_and_kinds_are_checked() {
        let sig = [
            info(ArgSpace::Global, "float*"),
            info(ArgSpace::Private, "uint"),
        ];
        assert!(check("k", &sig, &[buf("float"), 3u32.to_arg()]).is_ok());
        assert!(check("k", &sig, &[buf("float")]).is_err());
        let e = check("k", &sig, &[buf("int"), 3u32.to_arg()]).unwrap_err();
        assert!(e.to_string().contains("argument 0"), "{e}");
        let e = check("k", &sig, &[buf("float"), 3i32.to_arg()]).unwrap_err();
        assert!(e.to_string().contains("is a uint"), "{e}");
        assert!(check("k", &sig, &[3u32.to_arg(), buf("float")]).is_err());
    }

    #[test]
    fn typedefs_structs_and_byte_pointers_take_any_buffer() {
        for ty in [
            "real*",
            "struct particle*",
            "pair_t*",
            "char*",
            "uchar*",
            "void*",
            "half*",
        ] {
            let sig = [info(ArgSpace::Global, ty)];
            assert!(check("k", &sig, &[buf("float")]).is_ok(), "{ty}");
            assert!(check("k", &sig, &[1.0f32.to_arg()]).is_err(), "{ty}");
        }
        let sig = [info(ArgSpace::Global, "int2*")];
        assert!(check("k", &sig, &[buf("int")]).is_ok());
        assert!(check("k", &sig, &[buf("float")]).is_err());
        let sig = [info(ArgSpace::Private, "size_t")];
        assert!(check("k", &sig, &[7u64.to_arg()]).is_ok());
        assert!(check("k", &sig, &[buf("float")]).is_err());
    }

    #[test]
    fn vectors_local_and_unknown_types() {
        let sig = [
            info(ArgSpace::Global, "float4*"),
            info(ArgSpace::Local, "float*"),
            info(ArgSpace::Private, "my_t"),
        ];
        let args = [buf("float"), Local::<f32>::new(4).to_arg(), 1u64.to_arg()];
        assert!(check("k", &sig, &args).is_ok());
        let unknown = ArgInfo {
            name: None,
            type_name: None,
            space: None,
            is_const: None,
        };
        assert!(check("k", &[unknown], &[1i32.to_arg()]).is_ok());
    }
}
