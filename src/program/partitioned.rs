//! Partitioned variants of kernels: a pure text transform of OpenCL C for devices that hold
//! only their own chunk of each array (see [`crate::scaling`]).
//!
//! The variant [`partitioned_name`]`("k")` = `k__clg_part` of kernel `k` is `k` with:
//!
//! * every `global`/`__global` pointer parameter `p` renamed `clg_part_p`;
//! * one trailing `const ulong clg_origin_p` per such pointer, in parameter order: the byte
//!   offset of the chunk's first element in the whole array;
//! * as the body's first line, `p` declared with the parameter's pointer type (`restrict`
//!   dropped) and pointed `clg_origin_p` bytes before the chunk:
//!   `global const float* p = (global const float*)((global const char*)clg_part_p - clg_origin_p);`
//!   so that `p[i]`, for an index `i` of the whole array inside the chunk, is the chunk's
//!   element.
//!
//! Each variant is written right after its kernel, with `#line` directives as in
//! [`crate::program::rounded`], so messages point to the original lines.

use crate::error::Result;
use crate::program::source::{KernelDecl, Param};
use std::fmt::Write as _;

/// Suffix of a partitioned variant's name.
pub const PARTITIONED_SUFFIX: &str = "__clg_part";

/// The name of `kernel`'s partitioned variant.
///
/// ```
/// assert_eq!(clgroups::program::partitioned::partitioned_name("saxpy"), "saxpy__clg_part");
/// ```
pub fn partitioned_name(kernel: &str) -> String {
    format!("{kernel}{PARTITIONED_SUFFIX}")
}

/// `src` with the partitioned variant of each kernel of `kernels` after it (see the module
/// docs). `kernels` must come from
/// [`scan_kernels`](crate::program::source::scan_kernels)`(src)`; errors when a declaration
/// does not match `src` or two overlap.
///
/// ```
/// use clgroups::program::{partitioned::with_partitioned_variants, source::scan_kernels};
/// let src = "kernel void inc(global int* x) { x[get_global_id(0)] += 1; }\n";
/// let out = with_partitioned_variants(src, &scan_kernels(src).unwrap()).unwrap();
/// assert!(out.contains("kernel void inc__clg_part(global int* clg_part_x, const ulong clg_origin_x)"));
/// assert_eq!(scan_kernels(&out).unwrap().len(), 2);
/// ```
pub fn with_partitioned_variants(src: &str, kernels: &[KernelDecl]) -> Result<String> {
    let out = crate::program::rounded::with_variants(src, kernels, true, write_variant)?;
    log::debug!("wrote partitioned variants of {} kernel(s)", kernels.len());
    Ok(out)
}

/// Whether `p` is a pointer to global memory.
pub(crate) fn is_global_pointer(p: &Param) -> bool {
    p.is_pointer && p.address_space.as_deref() == Some("global")
}

/// `p`'s text with its name replaced by `name` (the last occurrence: the declarator).
fn renamed(p: &Param, name: &str) -> String {
    match p.text.rfind(&p.name) {
        Some(at) => format!("{}{name}{}", &p.text[..at], &p.text[at + p.name.len()..]),
        None => p.text.clone(),
    }
}

/// `p`'s pointer type: its text without the name and without `restrict`.
fn pointer_type(p: &Param) -> String {
    let without = renamed(p, "");
    let kept: Vec<&str> = without
        .split(' ')
        .filter(|t| !t.is_empty() && !matches!(*t, "restrict" | "__restrict"))
        .collect();
    kept.join(" ")
}

/// The first line of the variant's body: one declaration per global pointer.
fn declarations(k: &KernelDecl) -> String {
    k.params
        .iter()
        .filter(|p| is_global_pointer(p))
        .map(|p| {
            let (ty, n) = (pointer_type(p), &p.name);
            format!("{ty} {n} = ({ty})((global const char*)clg_part_{n} - clg_origin_{n});")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The variant's parameter list, parentheses included.
fn parameters(k: &KernelDecl) -> String {
    let mut params: Vec<String> = k
        .params
        .iter()
        .map(|p| match is_global_pointer(p) {
            true => renamed(p, &format!("clg_part_{}", p.name)),
            false => p.text.clone(),
        })
        .collect();
    params.extend(
        k.params
            .iter()
            .filter(|p| is_global_pointer(p))
            .map(|p| format!("const ulong clg_origin_{}", p.name)),
    );
    format!("({})", params.join(", "))
}

fn write_variant(out: &mut String, src: &str, k: &KernelDecl) {
    let line = |at: usize| crate::program::rounded::line_of(src, at);
    let close = k.body.end - 1;
    let _ = write!(
        out,
        "\n#line {}\n{}{}{}{}{}\n{}\n#line {}\n{}}}\n#line {}\n",
        line(k.decl_start),
        &src[k.decl_start..k.name_span.start],
        partitioned_name(&k.name),
        &src[k.name_span.end..k.params_span.start],
        parameters(k),
        &src[k.params_span.end..=k.body.start],
        declarations(k),
        line(k.body.start),
        &src[k.body.start + 1..close],
        line(close),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::source::scan_kernels;

    const SRC: &str = "// saxpy\nkernel void saxpy(global float* restrict y,\n    global const float *x, const float a, local float* t) {\n  size_t i = get_global_id(0);\n  y[i] += a * x[i];\n} // end\n";

    #[test]
    fn exact_text_of_one_variant() {
        let out = with_partitioned_variants(SRC, &scan_kernels(SRC).unwrap()).unwrap();
        let want = format!(
            "{}\n#line 2\nkernel void saxpy__clg_part(global float* restrict clg_part_y, \
             global const float *clg_part_x, const float a, local float* t, \
             const ulong clg_origin_y, const ulong clg_origin_x) {{\n\
             global float* y = (global float*)((global const char*)clg_part_y - clg_origin_y); \
             global const float * x = (global const float *)((global const char*)clg_part_x - clg_origin_x);\n\
             #line 3\n\n  size_t i = get_global_id(0);\n  y[i] += a * x[i];\n}}\n#line 6\n // end\n",
            &SRC[..SRC.find(" // end").unwrap()]
        );
        assert_eq!(out, want);
    }

    #[test]
    fn the_variant_scans_with_its_new_parameters() {
        let out = with_partitioned_variants(SRC, &scan_kernels(SRC).unwrap()).unwrap();
        let ks = scan_kernels(&out).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[1].name, "saxpy__clg_part");
        let names: Vec<&str> = ks[1].params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "clg_part_y",
                "clg_part_x",
                "a",
                "t",
                "clg_origin_y",
                "clg_origin_x"
            ]
        );
        assert!(ks[1].params[0].is_pointer);
        assert_eq!(ks[1].params[0].address_space.as_deref(), Some("global"));
        assert!(!ks[1].params[4].is_pointer);
    }
}
