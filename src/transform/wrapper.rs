//! Wrapper kernels: the guard of a rounded launch for a kernel whose declaration clgroups cannot
//! rewrite (CLBlast's `#if RELAX_WORKGROUP_SIZE == 1 / __kernel / #else / __kernel
//! __attribute__((reqd_work_group_size(WGS, 1, 1))) / #endif`).
//!
//! A kernel with `reqd_work_group_size` runs only over ranges its work-groups divide; a plain
//! range of another size is rounded up and the extra work-items must exit before the kernel's
//! body runs. Where the rounded variant cannot be written from the kernel's text (see
//! [`KernelDecl::rewrite_obstacle`]), a wrapper is written from what the *driver* says about
//! the kernel (`clGetKernelArgInfo`: type names, address, access and type qualifiers;
//! `CL_KERNEL_COMPILE_WORK_GROUP_SIZE`) and appended to the program's text:
//!
//! ```text
//! __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
//! void k__clg_wrapped(const __global real* restrict clg_arg0, ..., <the user's range, offset>) {
//!     if (get_global_id(0) - clg_user_offset0 >= clg_user_size0 || ...) return;
//!     k(clg_arg0, ...);
//! }
//! ```
//!
//! Its trailing parameters are the rounded variant's (`const ulong clg_user_size0..2,
//! clg_user_offset0..2`), so a wrapped launch passes the same arguments as a rounded one.
//! Unlike the rounded variant, the wrapper cannot make the called kernel see the user's range:
//! [`wrap_obstacle`] allows only kernels whose body, called functions and macros ask nothing
//! whose answer a launch rounded up to whole work-groups changes.

use super::options::{self, BuildOption};
use super::rounded::{self, first_use, EXTRA_PARAMS, GUARD};
use super::source::{KernelDecl, Scanned};
use super::variant::VariantKind;
use crate::builtins::{self, Flags};
use crate::obstacle::{ArgumentObstacle, Obstacle, Use, UseKind};
use opencl3::kernel::{
    CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_ACCESS_READ_ONLY, CL_KERNEL_ARG_ACCESS_READ_WRITE,
    CL_KERNEL_ARG_ACCESS_WRITE_ONLY, CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL,
    CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_CONST,
    CL_KERNEL_ARG_TYPE_PIPE, CL_KERNEL_ARG_TYPE_RESTRICT, CL_KERNEL_ARG_TYPE_VOLATILE,
};
use std::fmt::Write as _;

/// What the driver reports for one kernel argument (`clGetKernelArgInfo`; `None` where it
/// answers nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DriverArg {
    /// `CL_KERNEL_ARG_TYPE_NAME`, e.g. `float*`, `real*`, `int`, `image2d_t`.
    pub(crate) type_name: Option<String>,
    /// `CL_KERNEL_ARG_ADDRESS_QUALIFIER`.
    pub(crate) address: Option<u32>,
    /// `CL_KERNEL_ARG_ACCESS_QUALIFIER`.
    pub(crate) access: Option<u32>,
    /// `CL_KERNEL_ARG_TYPE_QUALIFIER` (bits).
    pub(crate) type_qualifier: Option<u64>,
}

/// Why kernel `k` of `src` must not be launched through a wrapper, or `None` when it may: the
/// rounding obstacles (collectives, sub-groups, local memory, called functions that ask for the
/// global range), a body whose `#if`s the scanner cannot follow, and any use (in the body, called
/// functions or macros) of `get_global_size`, `get_global_linear_id` or `get_num_groups` (which
/// a rounded launch changes) or `get_group_id` (the last work-group is partial).
pub(crate) fn wrap_obstacle(scanned: &Scanned<'_>, k: &KernelDecl) -> Option<Obstacle> {
    if let Some(why) = scanned.body_directive_obstacle(&k.body) {
        return Some(Obstacle::Kernel {
            kernel: k.name.clone(),
            why: Box::new(why),
        });
    }
    rounded::obstacle(scanned, k).or_else(|| first_use(scanned, k, launch_query))
}

/// Why code the scanner did not read could make a wrapped kernel see the rounded-up range: a
/// build option's macro (`-D STRIDE=get_global_size(0)`, its name or value) naming what
/// [`wrap_obstacle`] refuses, or defining a query the wrapper's guard calls
/// ([`super::queries::option_query`]), an include path or forced include in `options`, or an
/// `#include` of a header other than clgroups' own (`includes`: what the source's include
/// directives name, [`SourceFacts::includes`](super::SourceFacts)). `None` when there is none.
pub(crate) fn unseen_code(includes: &[String], options: &str) -> Option<Obstacle> {
    let defined = options::parse(options).filter_map(|o| match o {
        BuildOption::Define {
            name,
            params,
            value,
        } => Some([name, params, value.unwrap_or("")]),
        _ => None,
    });
    let mut words = defined.flat_map(|texts| texts.into_iter().flat_map(super::lex::words));
    if let Some(used) = words.find_map(|w| {
        let kind = rounded::forbidden(w, true).or_else(|| launch_query(w, true));
        kind.map(|kind| Use::new(w, kind))
    }) {
        return Some(Obstacle::BuildOption(used));
    }
    if let Some(why) = super::queries::option_query(options, &[]) {
        return Some(why);
    }
    if let Some(opt) = options::parse(options).find_map(|o| match o {
        BuildOption::IncludePath(_) => Some("-I"),
        BuildOption::Include(_) => Some("-include"),
        _ => None,
    }) {
        return Some(Obstacle::UnreadOption(opt.to_string()));
    }
    (includes.iter())
        .find(|h| !h.starts_with("clgroups/"))
        .map(|h| Obstacle::UnreadInclude(h.clone()))
}

fn launch_query(id: &str, _: bool) -> Option<UseKind> {
    let flags = builtins::flags(id);
    if flags.has(Flags::ROUNDED_UP) {
        Some(UseKind::ReportsRoundedRange)
    } else {
        flags.has(Flags::GROUP_ID).then_some(UseKind::PartialGroup)
    }
}

/// The wrapper of kernel `kernel` (see the module docs), whose arguments the driver describes
/// as `args`, in work-groups of `required` (OpenCL order), or why it cannot be written: an
/// argument the driver does not describe, a `local` one, or a type name that is not a plain
/// (possibly pointer) type.
pub(crate) fn wrapper_source(
    kernel: &str,
    args: &[DriverArg],
    required: [usize; 3],
) -> Result<String, Obstacle> {
    let params = args
        .iter()
        .enumerate()
        .map(|(index, a)| param(index, a).map_err(|why| Obstacle::Argument { index, why }))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = String::new();
    let [x, y, z] = required;
    let _ = write!(
        out,
        "\n#line 1 \"clgroups-wrapper\"\n__kernel __attribute__((reqd_work_group_size({x}, {y}, {z}))) \
         void {}({}{EXTRA_PARAMS}) {{\n    {GUARD}\n    {kernel}({});\n}}\n",
        VariantKind::Wrapped.name(kernel),
        params.iter().map(|p| format!("{p}, ")).collect::<String>(),
        (0..args.len())
            .map(|i| format!("clg_arg{i}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    Ok(out)
}

/// The wrapper's parameter `i`, named `clg_arg{i}` (the user's names may be macros).
fn param(i: usize, a: &DriverArg) -> Result<String, ArgumentObstacle> {
    let ty = a
        .type_name
        .as_deref()
        .map(|t| t.trim_end_matches('\0').trim())
        .filter(|t| !t.is_empty())
        .ok_or(ArgumentObstacle::NoTypeName)?;
    if !ty
        .chars()
        .all(|c| super::lex::is_word_char(c) || c == ' ' || c == '*')
    {
        return Err(ArgumentObstacle::NotPlainType(ty.to_string()));
    }
    let quals = a.type_qualifier.ok_or(ArgumentObstacle::NoTypeQualifiers)?;
    let has = |bit: u32| quals & u64::from(bit) != 0;
    let space = match a.address.ok_or(ArgumentObstacle::NoAddressQualifier)? {
        CL_KERNEL_ARG_ADDRESS_GLOBAL => "__global ",
        CL_KERNEL_ARG_ADDRESS_CONSTANT => "__constant ",
        CL_KERNEL_ARG_ADDRESS_PRIVATE => "",
        CL_KERNEL_ARG_ADDRESS_LOCAL => return Err(ArgumentObstacle::Local),
        q => return Err(ArgumentObstacle::Address(q)),
    };
    let access = match a.access.unwrap_or(CL_KERNEL_ARG_ACCESS_NONE) {
        CL_KERNEL_ARG_ACCESS_NONE => "",
        CL_KERNEL_ARG_ACCESS_READ_ONLY => "__read_only ",
        CL_KERNEL_ARG_ACCESS_WRITE_ONLY => "__write_only ",
        CL_KERNEL_ARG_ACCESS_READ_WRITE => "__read_write ",
        q => return Err(ArgumentObstacle::Access(q)),
    };
    let name = format!("clg_arg{i}");
    let pipe = if has(CL_KERNEL_ARG_TYPE_PIPE) {
        "pipe "
    } else {
        ""
    };
    if let Some(pointee) = ty.strip_suffix('*') {
        // Pointers: const and volatile qualify the pointee, restrict the pointer.
        let c = if has(CL_KERNEL_ARG_TYPE_CONST) {
            "const "
        } else {
            ""
        };
        let v = if has(CL_KERNEL_ARG_TYPE_VOLATILE) {
            "volatile "
        } else {
            ""
        };
        let r = if has(CL_KERNEL_ARG_TYPE_RESTRICT) {
            " restrict"
        } else {
            ""
        };
        Ok(format!("{c}{v}{space}{}*{r} {name}", pointee.trim_end()))
    } else {
        // Values, images (reported in the global space), samplers and pipes.
        Ok(format!("{access}{pipe}{ty} {name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(ty: &str, address: u32, quals: u32) -> DriverArg {
        DriverArg {
            type_name: Some(ty.into()),
            address: Some(address),
            access: Some(CL_KERNEL_ARG_ACCESS_NONE),
            type_qualifier: Some(u64::from(quals)),
        }
    }

    /// CLBlast's `Xaxpy(const int n, const real_arg arg_alpha, const __global real* restrict
    /// xgm, const int x_offset, const int x_inc, __global real* ygm, const int y_offset, const
    /// int y_inc)` as PoCL reports it (typedef names kept, `const` of values not reported).
    #[test]
    fn clblast_xaxpy_is_wrapped_from_its_arg_info() {
        let (g, p) = (CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_PRIVATE);
        let args = [
            arg("int", p, 0),
            arg("real_arg", p, 0),
            arg(
                "real*",
                g,
                CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT,
            ),
            arg("int", p, 0),
            arg("int", p, 0),
            arg("real*", g, 0),
            arg("int", p, 0),
            arg("int", p, 0),
        ];
        let text = wrapper_source("Xaxpy", &args, [64, 1, 1]).unwrap();
        assert_eq!(
            text,
            "\n#line 1 \"clgroups-wrapper\"\n__kernel __attribute__((reqd_work_group_size(64, 1, 1))) \
             void Xaxpy__clg_wrapped(int clg_arg0, real_arg clg_arg1, \
             const __global real* restrict clg_arg2, int clg_arg3, int clg_arg4, \
             __global real* clg_arg5, int clg_arg6, int clg_arg7, \
             const ulong clg_user_size0, const ulong clg_user_size1, const ulong clg_user_size2, \
             const ulong clg_user_offset0, const ulong clg_user_offset1, const ulong clg_user_offset2) {\n    \
             if (clg_real_global_id(0) - clg_user_offset0 >= clg_user_size0 || \
             clg_real_global_id(1) - clg_user_offset1 >= clg_user_size1 || \
             clg_real_global_id(2) - clg_user_offset2 >= clg_user_size2) return;\n    \
             Xaxpy(clg_arg0, clg_arg1, clg_arg2, clg_arg3, clg_arg4, clg_arg5, clg_arg6, clg_arg7);\n}\n"
        );
    }

    #[test]
    fn qualifiers_spaces_and_images() {
        let c = CL_KERNEL_ARG_ADDRESS_CONSTANT;
        let vol = arg(
            "float4 *",
            c,
            CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_VOLATILE,
        );
        assert_eq!(
            param(0, &vol).unwrap(),
            "const volatile __constant float4* clg_arg0"
        );
        let image = DriverArg {
            access: Some(CL_KERNEL_ARG_ACCESS_READ_ONLY),
            ..arg("image2d_t", CL_KERNEL_ARG_ADDRESS_GLOBAL, 0)
        };
        assert_eq!(param(1, &image).unwrap(), "__read_only image2d_t clg_arg1");
        let text = wrapper_source("k", &[], [8, 8, 1]).unwrap();
        assert!(text.contains("reqd_work_group_size(8, 8, 1))) void k__clg_wrapped(const ulong"));
        assert!(text.contains("    k();\n"));
    }

    #[test]
    fn what_the_driver_does_not_say_is_refused() {
        let g = CL_KERNEL_ARG_ADDRESS_GLOBAL;
        let no_type = DriverArg {
            type_name: None,
            ..arg("int", g, 0)
        };
        let local = arg("float*", CL_KERNEL_ARG_ADDRESS_LOCAL, 0);
        let anon = arg("struct (anonymous at k.cl:1:1)*", g, 0);
        let no_space = DriverArg {
            address: None,
            ..arg("int", g, 0)
        };
        for (a, why) in [
            (no_type, "no type name"),
            (local, "local-memory"),
            (anon, "not a plain type"),
            (no_space, "no address qualifier"),
        ] {
            let e = wrapper_source(
                "k",
                &[arg("int", CL_KERNEL_ARG_ADDRESS_PRIVATE, 0), a],
                [64, 1, 1],
            )
            .unwrap_err();
            assert!(matches!(e, Obstacle::Argument { index: 1, .. }), "{e}");
            assert!(e.to_string().contains(why), "{e}");
        }
    }

    #[test]
    fn code_the_scanner_does_not_read_is_an_obstacle() {
        let src = "#include <clgroups/subgroup.h>\nkernel void k(global int *y) { y[0] = STRIDE; }";
        let unseen_code = |s: &str, o: &str| unseen_code(&Scanned::new(s).unwrap().includes, o);
        assert_eq!(unseen_code(src, "-DWGS=64 -cl-mad-enable"), None);
        let why = |s: &str, o: &str| unseen_code(s, o).unwrap().to_string();
        assert!(why(src, "-DSTRIDE=get_global_size(0)").contains("`get_global_size`"));
        assert!(why(src, "-D SYNC=barrier(1)").contains("`barrier`"));
        assert!(why(src, "-I /opt/clblast").contains("`-I`"));
        // Every spelling of the options that bring code: `-D` with its argument in the same
        // word (read as the word `Dget_group_id` before), or the next.
        for (options, cause) in [
            ("-Dget_group_id(d)=0", "`get_group_id`"),
            ("-D get_group_id(d)=0", "`get_group_id`"),
            ("-DSYNC=barrier(1)", "`barrier`"),
            (
                "-DSYNC(x)=work_group_reduce_add(x)",
                "`work_group_reduce_add`",
            ),
            ("-Dget_global_id(d)=get_local_id(d)", "`get_global_id`"),
            ("-D get_global_id", "`get_global_id`"),
            ("-Iinclude", "`-I`"),
            ("-include clblast.h", "`-include`"),
            ("-includeclblast.h", "`-include`"),
        ] {
            assert!(
                why(src, options).contains(cause),
                "{options}: {}",
                why(src, options)
            );
        }
        for options in ["-UN", "-U get_group_id", "-DN -cl-std=CL2.0", "-D N=4"] {
            assert_eq!(unseen_code(src, options), None, "{options}");
        }
        let inc = format!("#  include \"common.h\"\n{src}");
        assert!(why(&inc, "").contains("`common.h`"));
    }

    #[test]
    fn only_kernels_blind_to_the_rounded_range_are_wrapped() {
        let src = "#define STRIDE get_global_size(0)\n\
            int twice(int v) { return 2 * v; }\n\
            #if RELAX == 1\n__kernel\n#else\n__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n#endif\n\
            void ok(global int *y, const int n) { const int id = get_global_id(0); if (id < n) y[id] = twice(id) + get_local_id(0); }\n\
            kernel void grid(global int *y, int n) { for (int i = get_global_id(0); i < n; i += STRIDE) y[i] = 1; }\n\
            kernel void groups(global int *y) { y[get_group_id(0)] = 1; }\n\
            kernel void sync(global int *y) { y[get_global_id(0)] = 1; barrier(CLK_GLOBAL_MEM_FENCE); }\n\
            kernel void tile(global int *y) { local int t[64]; t[0] = 1; y[0] = t[0]; }\n\
            #if 1\nkernel void odd(global int *y) { y[0] = 1;\n#endif\n}\n";
        let s = Scanned::new(src).unwrap();
        let why: Vec<Option<String>> = s
            .kernel_decls()
            .unwrap()
            .iter()
            .map(|k| wrap_obstacle(&s, k).map(|o| o.to_string()))
            .collect();
        assert_eq!(why[0], None);
        let expect = [
            "kernel `grid` uses macro `STRIDE`, which uses `get_global_size`",
            "kernel `groups` uses `get_group_id`",
            "kernel `sync` uses `barrier`",
            "kernel `tile` declares `local` memory",
            "kernel `odd`: its body has a conditional directive (line 15) opened outside it",
        ];
        for (got, want) in why[1..].iter().zip(expect) {
            assert!(got.as_deref().unwrap().starts_with(want), "{got:?}");
        }
        assert_eq!(why.len(), 6);
    }
}
