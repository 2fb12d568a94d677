//! Kernel arguments: what may be passed, and the checks against the kernel's signature.

use super::wrong_argument::{Expected, WrongArgument};
use crate::buffer::{builtin, Buffer, ElemType, Pod};
use crate::checked::Guard;
use crate::error::{Error, Result};
use crate::ffi::RawArg;
use crate::kernel::{ArgInfo, ArgSpace};
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

impl<T: Pod> Local<T> {
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

// SAFETY: a `Mem` is a copy of a memory object's handle (and of its guard's), with sizes: it
// neither retains nor releases the object, and a launch that passes it to the driver borrows
// the `Buffer` that keeps it alive, on whatever thread. OpenCL 1.2+ makes every API call
// thread-safe but clSetKernelArg (2.x adds clSetKernelArgSVMPointer, clSetKernelExecInfo) on
// one kernel object, which concerns the kernel, not the `cl_mem` passed to it.
unsafe impl Send for Mem {}
// SAFETY: as for `Send`: `&Mem` only reads the handle and sizes.
unsafe impl Sync for Mem {}

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
    fn of<T: Pod>(buffer: &Buffer<T>) -> Self {
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
        /// The element type.
        elem: ElemType,
    },
    /// A value (a number, a vector, a struct).
    Scalar {
        /// The value's bytes.
        bytes: ScalarBytes,
        /// Its type.
        ty: ElemType,
    },
    /// Local memory of this many bytes.
    Local(usize),
}

/// The bytes of a scalar argument: held inline up to [`ScalarBytes::INLINE`] bytes (every
/// number and vector up to a `double4`), so that making and copying an argument allocates
/// nothing; larger values (structs, `float16`) on the heap.
///
/// ```
/// use clgroups::launch::{KernelArg, Arg};
/// let Arg::Scalar { bytes, .. } = 7u32.to_arg() else { unreachable!() };
/// assert_eq!(&bytes[..], &7u32.to_ne_bytes());
/// ```
#[derive(Clone, Debug)]
pub struct ScalarBytes(Bytes);

#[derive(Clone, Debug)]
enum Bytes {
    Inline(u8, [u8; ScalarBytes::INLINE]),
    Heap(Box<[u8]>),
}

impl ScalarBytes {
    /// Bytes held without a heap allocation.
    pub const INLINE: usize = 32;

    fn of(bytes: &[u8]) -> Self {
        ScalarBytes(match bytes.len() {
            n if n <= Self::INLINE => {
                let mut inline = [0; Self::INLINE];
                inline[..n].copy_from_slice(bytes);
                Bytes::Inline(n as u8, inline)
            }
            _ => Bytes::Heap(bytes.into()),
        })
    }
}

impl std::ops::Deref for ScalarBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Inline(n, b) => &b[..*n as usize],
            Bytes::Heap(b) => b,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Anything that can be a kernel argument: `&Buffer<T>`, a value of any [`Pod`] type (`2.0f32`,
/// `[1.0f32; 4]` for a `float4`, a `#[repr(C)]` struct, `half::f16`), [`Local`]. Sealed: a
/// launch only ever sees arguments whose memory objects it borrows.
pub trait KernelArg: sealed::Sealed {
    /// The argument's value.
    fn to_arg(&self) -> Arg;
}

impl<T: Pod> sealed::Sealed for &Buffer<T> {}
impl<T: Pod> sealed::Sealed for &mut Buffer<T> {}
impl<T: Pod> sealed::Sealed for T {}
impl<T: Pod> sealed::Sealed for Local<T> {}

impl<T: Pod> KernelArg for &Buffer<T> {
    fn to_arg(&self) -> Arg {
        Arg::Buffer {
            mem: Mem::of(self),
            elem: ElemType::of::<T>(),
        }
    }
}

impl<T: Pod> KernelArg for &mut Buffer<T> {
    fn to_arg(&self) -> Arg {
        Arg::Buffer {
            mem: Mem::of(self),
            elem: ElemType::of::<T>(),
        }
    }
}

impl<T: Pod> KernelArg for T {
    fn to_arg(&self) -> Arg {
        Arg::Scalar {
            bytes: ScalarBytes::of(bytemuck::bytes_of(self)),
            ty: ElemType::of::<T>(),
        }
    }
}

impl<T: Pod> KernelArg for Local<T> {
    fn to_arg(&self) -> Arg {
        Arg::Local(self.bytes())
    }
}

impl Arg {
    /// `bytes` passed as a buffer of `elem` (clgroups' own staging buffers, e.g. a colored
    /// buffer gathered on one device).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn bytes_as(bytes: &Buffer<u8>, elem: ElemType) -> Arg {
        Arg::Buffer {
            mem: Mem::of(bytes),
            elem,
        }
    }

    /// What its signature check depends on ([`crate::kernel::ArgKey`]).
    pub(crate) fn key(&self) -> crate::kernel::ArgKey {
        let of = |kind, e: &ElemType| (kind, e.size, e.rust_name.as_ptr() as usize);
        match self {
            Arg::Buffer { elem, .. } => of(0, elem),
            Arg::Scalar { ty, .. } => of(1, ty),
            Arg::Local(_) => (2, 0, 0),
        }
    }

    pub(crate) fn raw(&self) -> RawArg<'_> {
        match self {
            Arg::Buffer { mem, .. } => RawArg::Mem(mem.raw),
            Arg::Scalar { bytes, .. } => RawArg::Bytes(bytes),
            Arg::Local(n) => RawArg::Local(*n),
        }
    }

    fn describe(&self) -> String {
        match self {
            Arg::Buffer { elem, .. } => format!("a Buffer<{}>", elem),
            Arg::Scalar { ty, .. } => format!("a {} value", ty),
            Arg::Local(n) => format!("{n} bytes of local memory"),
        }
    }
}

/// Checks `args` against the kernel's signature: the count always; where the driver reports
/// argument info, the kind (memory object, value, local memory) always, and types only where
/// the kernel names a built-in type (see [`ElemType`] for the Rust types that have OpenCL
/// names):
///
/// * a pointer to a built-in scalar or vector (`float*`, `float4*`, `half*`) takes a buffer of
///   that scalar or of its vectors (`Buffer<f32>`, `Buffer<[f32; 4]>`), or of a type without an
///   OpenCL name (a struct) whose size and the pointee's divide one another (so `[f32; 3]`,
///   12 bytes, is refused for `float3*`, 16); a pointer to `char`, `uchar` or `void` (a byte
///   view) or to anything else (typedefs, structs) takes any buffer;
/// * a built-in value type takes exactly that type (`float4`: `[f32; 4]`), or a type without an
///   OpenCL name of the same size; other value types (typedefs, structs, `size_t`) take any
///   value (the driver checks the size).
///
/// ```
/// use clgroups::kernel::{ArgInfo, ArgSpace};
/// use clgroups::launch::{check_args, KernelArg};
/// let arg = |ty: &str| ArgInfo { name: Some("v".into()), type_name: Some(ty.into()),
///     space: Some(ArgSpace::Private), is_const: Some(true) };
/// assert!(check_args("k", &[arg("real")], &[2.0f32.to_arg()]).is_ok());
/// assert!(check_args("k", &[arg("float4")], &[[1.0f32; 4].to_arg()]).is_ok());
/// assert!(check_args("k", &[arg("float4")], &[1.0f32.to_arg()]).is_err());
/// assert!(check_args("k", &[arg("real")], &[]).is_err());
/// ```
pub fn check(kernel: &str, sig: &[ArgInfo], args: &[Arg]) -> Result<()> {
    if sig.len() != args.len() {
        return Err(Error::InvalidArgument {
            kernel: kernel.to_string(),
            index: args.len().min(sig.len()),
            reason: Box::new(WrongArgument::Count {
                takes: sig.len(),
                given: args.len(),
            }),
        });
    }
    for (index, (info, arg)) in sig.iter().zip(args).enumerate() {
        if let Some(is) = mismatch(info, arg) {
            return Err(Error::InvalidArgument {
                kernel: kernel.to_string(),
                index,
                reason: Box::new(WrongArgument::Type {
                    name: info.name.as_deref().unwrap_or("?").to_string(),
                    is,
                    got: arg.describe(),
                }),
            });
        }
    }
    Ok(())
}

fn mismatch(info: &ArgInfo, arg: &Arg) -> Option<Expected> {
    let ty = info.type_name.as_deref();
    match (info.space?, arg) {
        (ArgSpace::Global, Arg::Buffer { elem, .. }) => {
            let (scalar, bytes) = builtin(ty?.trim_end_matches('*').trim())?;
            let ty = ty.unwrap_or("?");
            match elem.cl_name.and_then(builtin) {
                _ if matches!(scalar, "char" | "uchar") => None,
                Some((given, _)) => (given != scalar).then(|| Expected::Pointer(ty.into(), None)),
                None => (elem.size % bytes != 0 && bytes % elem.size != 0)
                    .then(|| Expected::Pointer(ty.into(), Some(bytes))),
            }
        }
        (ArgSpace::Global, _) => Some(Expected::Global(ty.unwrap_or("?").into())),
        (ArgSpace::Local, Arg::Local(_)) => None,
        (ArgSpace::Local, _) => Some(Expected::Local),
        (ArgSpace::Private, Arg::Scalar { ty: given, .. }) => {
            let want = ty?;
            let (_, bytes) = builtin(want)?;
            match given.cl_name {
                Some(name) => (name != want).then(|| Expected::Value(want.into(), None)),
                None => (given.size != bytes).then(|| Expected::Value(want.into(), Some(bytes))),
            }
        }
        (ArgSpace::Private, _) => Some(Expected::Private(ty.unwrap_or("?").into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    fn info(space: ArgSpace, ty: &str) -> ArgInfo {
        ArgInfo {
            name: Some("a".into()),
            type_name: Some(ty.into()),
            space: Some(space),
            is_const: None,
        }
    }

    fn buf<T: 'static>() -> Arg {
        Arg::Buffer {
            mem: Mem::null(),
            elem: ElemType::of::<T>(),
        }
    }

    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Particle {
        pos: [f32; 3],
        mass: f32,
    }

    #[test]
    fn count_and_kinds_are_checked() {
        let sig = [
            info(ArgSpace::Global, "float*"),
            info(ArgSpace::Private, "uint"),
        ];
        assert!(check("k", &sig, &[buf::<f32>(), 3u32.to_arg()]).is_ok());
        assert!(check("k", &sig, &[buf::<f32>()]).is_err());
        let e = check("k", &sig, &[buf::<i32>(), 3u32.to_arg()]).unwrap_err();
        assert!(e.to_string().contains("argument 0"), "{e}");
        let e = check("k", &sig, &[buf::<f32>(), 3i32.to_arg()]).unwrap_err();
        assert!(e.to_string().contains("is a uint"), "{e}");
        assert!(check("k", &sig, &[3u32.to_arg(), buf::<f32>()]).is_err());
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
        ] {
            let sig = [info(ArgSpace::Global, ty)];
            assert!(check("k", &sig, &[buf::<f32>()]).is_ok(), "{ty}");
            assert!(check("k", &sig, &[buf::<Particle>()]).is_ok(), "{ty}");
            assert!(check("k", &sig, &[1.0f32.to_arg()]).is_err(), "{ty}");
        }
        let sig = [info(ArgSpace::Private, "size_t")];
        assert!(check("k", &sig, &[7u64.to_arg()]).is_ok());
        assert!(check("k", &sig, &[buf::<f32>()]).is_err());
        let sig = [info(ArgSpace::Private, "struct particle")];
        assert!(check("k", &sig, &[Particle::zeroed().to_arg()]).is_ok());
    }

    #[test]
    fn vectors_half_and_structs_by_name_or_size() {
        use half::f16;
        let ok = |ty: &str, arg: Arg| check("k", &[info(ArgSpace::Global, ty)], &[arg]).is_ok();
        // A vector pointer takes buffers of its scalar or of its vectors.
        assert!(ok("int2*", buf::<i32>()));
        assert!(ok("int2*", buf::<[i32; 2]>()));
        assert!(ok("float4*", buf::<[f32; 4]>()));
        assert!(ok("float*", buf::<[f32; 4]>()));
        assert!(!ok("int2*", buf::<f32>()));
        assert!(!ok("float4*", buf::<[i32; 4]>()));
        // half: f16 only (a ushort buffer is refused now that f16 exists).
        assert!(ok("half*", buf::<f16>()));
        assert!(ok("half4*", buf::<[f16; 4]>()));
        assert!(!ok("half*", buf::<u16>()));
        // Types without an OpenCL name: sizes.
        assert!(ok("float4*", buf::<Particle>()));
        assert!(ok("float*", buf::<Particle>()));
        assert!(ok("float*", buf::<[f32; 3]>()));
        assert!(!ok("float3*", buf::<[f32; 3]>()), "float3 is 16 bytes");
        assert!(!ok("double*", buf::<[f32; 3]>()));

        let ok = |ty: &str, arg: Arg| check("k", &[info(ArgSpace::Private, ty)], &[arg]).is_ok();
        assert!(ok("float4", [1.0f32; 4].to_arg()));
        assert!(ok("float4", Particle::zeroed().to_arg()));
        assert!(ok("half", f16::ONE.to_arg()));
        assert!(ok("half2", [f16::ONE; 2].to_arg()));
        assert!(!ok("float4", 1.0f32.to_arg()));
        assert!(!ok("float4", [1i32; 4].to_arg()));
        assert!(!ok("float3", [1.0f32; 3].to_arg()));
        assert!(!ok("half", 1u16.to_arg()));
        assert!(!ok("float", f16::ONE.to_arg()));
    }

    #[test]
    fn local_and_unknown_types() {
        let sig = [
            info(ArgSpace::Local, "float*"),
            info(ArgSpace::Private, "my_t"),
        ];
        let args = [Local::<[f32; 4]>::new(4).to_arg(), 1u64.to_arg()];
        assert!(check("k", &sig, &args).is_ok());
        let unknown = ArgInfo {
            name: None,
            type_name: None,
            space: None,
            is_const: None,
        };
        assert!(check("k", &[unknown], &[1i32.to_arg()]).is_ok());
    }

    #[test]
    fn messages_name_the_types() {
        let sig = [info(ArgSpace::Global, "float3*")];
        let e = check("k", &sig, &[buf::<[f32; 3]>()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("float3* pointer (16-byte elements)"), "{e}");
        assert!(e.contains("[f32; 3] (12 bytes)"), "{e}");
    }
}
