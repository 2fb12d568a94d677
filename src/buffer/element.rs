//! Element types: any [`bytemuck::Pod`], and what a launch knows of one (its OpenCL C name
//! where it is a built-in type, its size).

use std::any::TypeId;
use std::fmt;

/// An element type as launches see it: its OpenCL C name where the Rust type is one of
/// OpenCL's built-in types (found by [`TypeId`]), and its size.
///
/// Built-in types: the numbers (`f32` is `float`, `u8` is `uchar`, ...), `half::f16` (`half`)
/// and arrays of 2, 4, 8 or 16 of them (`[f32; 4]` is `float4`). `[T; 3]` is not `T3`: an
/// OpenCL 3-component vector takes the room of four. Anything else (a `#[repr(C)]` struct, say)
/// is known by its size only.
///
/// ```
/// use clgroups::buffer::ElemType;
/// assert_eq!(ElemType::of::<f32>().cl_name, Some("float"));
/// assert_eq!(ElemType::of::<[u32; 4]>().cl_name, Some("uint4"));
/// assert_eq!(ElemType::of::<half::f16>().cl_name, Some("half"));
/// assert_eq!(ElemType::of::<[f32; 3]>().cl_name, None); // float3 is 16 bytes
/// assert_eq!(ElemType::of::<[f32; 3]>().size, 12);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ElemType {
    /// The OpenCL C name, for built-in types.
    pub cl_name: Option<&'static str>,
    /// `size_of` the Rust type, in bytes.
    pub size: usize,
    /// The Rust type's name, for messages.
    pub rust_name: &'static str,
}

impl ElemType {
    /// What is known of `T`.
    ///
    /// ```
    /// let e = clgroups::buffer::ElemType::of::<[f64; 2]>();
    /// assert_eq!((e.cl_name, e.size), (Some("double2"), 16));
    /// ```
    pub fn of<T: 'static>() -> Self {
        ElemType {
            cl_name: builtin_name::<T>(),
            size: size_of::<T>(),
            rust_name: std::any::type_name::<T>(),
        }
    }
}

/// The OpenCL C name where there is one, else the Rust name with the size.
///
/// ```
/// use clgroups::buffer::ElemType;
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 2], mass: f32, id: u32 }
/// assert_eq!(ElemType::of::<[i16; 2]>().to_string(), "short2");
/// assert!(ElemType::of::<Particle>().to_string().ends_with("Particle (16 bytes)"));
/// ```
impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cl_name {
            Some(name) => f.write_str(name),
            None => write!(f, "{} ({} bytes)", self.rust_name, self.size),
        }
    }
}

/// The OpenCL C name of `T` where it is a built-in type. Each comparison is of two constants
/// once `T` is known, so the compiler folds the whole chain: a launch's arguments pay nothing
/// for it (a table searched at run time cost ~400 instructions per argument).
fn builtin_name<T: 'static>() -> Option<&'static str> {
    let id = TypeId::of::<T>();
    macro_rules! names {
        ($($t:ty => $n:literal),*) => {
            $(
                if id == TypeId::of::<$t>() { return Some($n); }
                if id == TypeId::of::<[$t; 2]>() { return Some(concat!($n, "2")); }
                if id == TypeId::of::<[$t; 4]>() { return Some(concat!($n, "4")); }
                if id == TypeId::of::<[$t; 8]>() { return Some(concat!($n, "8")); }
                if id == TypeId::of::<[$t; 16]>() { return Some(concat!($n, "16")); }
            )*
        };
    }
    names! {
        i8 => "char", u8 => "uchar", i16 => "short", u16 => "ushort",
        i32 => "int", u32 => "uint", i64 => "long", u64 => "ulong",
        half::f16 => "half", f32 => "float", f64 => "double"
    }
    None
}

/// An OpenCL C built-in scalar or vector type name: its scalar name and size in bytes
/// (`float3` is 16, like `float4`). `None` for any other name (typedefs, structs, `void`).
///
/// ```text
/// builtin("float4") == Some(("float", 16)); builtin("real") == None
/// ```
pub(crate) fn builtin(name: &str) -> Option<(&str, usize)> {
    let scalar = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let bytes = match scalar {
        "char" | "uchar" => 1,
        "short" | "ushort" | "half" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "ulong" | "double" => 8,
        _ => return None,
    };
    let width = match &name[scalar.len()..] {
        "" => 1,
        "2" => 2,
        "3" | "4" => 4,
        "8" => 8,
        "16" => 16,
        _ => return None,
    };
    Some((scalar, bytes * width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_and_sizes() {
        assert_eq!(builtin("float"), Some(("float", 4)));
        assert_eq!(builtin("float3"), Some(("float", 16)));
        assert_eq!(builtin("half8"), Some(("half", 16)));
        assert_eq!(builtin("uchar16"), Some(("uchar", 16)));
        for other in ["real", "float5", "struct p", "void", "size_t", "float32"] {
            assert_eq!(builtin(other), None, "{other}");
        }
    }

    #[test]
    fn every_known_rust_type_has_the_size_of_its_opencl_name() {
        fn check<T: 'static>() {
            let e = ElemType::of::<T>();
            let name = e.cl_name.expect("a built-in type");
            assert_eq!(builtin(name).map(|b| b.1), Some(e.size), "{name}");
        }
        check::<i8>();
        check::<[u16; 2]>();
        check::<[i32; 4]>();
        check::<[u64; 8]>();
        check::<[half::f16; 16]>();
        check::<[f64; 16]>();
        check::<[f32; 2]>();
        check::<u8>();
        assert_eq!(ElemType::of::<[f32; 3]>().cl_name, None);
        assert_eq!(ElemType::of::<[f32; 32]>().cl_name, None);
        assert_eq!(ElemType::of::<(f32, f32)>().cl_name, None);
    }
}
