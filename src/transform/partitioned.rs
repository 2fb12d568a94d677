//! Root-launch variants of kernels: a pure text transform of OpenCL C for one launch split over
//! several devices (see [`crate::scaling`]). Every launch over a root device runs them, in both
//! placements.
//!
//! Public, and stable under semantic versioning, so that the kernel each device really runs
//! can be read (the `__clg_part` names appear in compiler logs and profilers) and tested
//! without a device.
//!
//! The variant [`VariantKind::Partitioned`]`.name("k")` = `k__clg_part` of kernel `k` is `k` with:
//!
//! * every `global`/`__global` pointer parameter `p` renamed `clg_part_p`;
//! * one trailing `const ulong clg_origin_p` per such pointer, in parameter order: the byte
//!   offset of the device's first stored element in the whole array (0 for a whole buffer);
//! * then six `const ulong` parameters `clg_whole_size0..2`, `clg_whole_offset0..2`: the whole
//!   launch's global size (padded with 1) and global offset (padded with 0);
//! * as the body's first line, `p` declared with the parameter's pointer type (`restrict`
//!   dropped) and pointed `clg_origin_p` bytes before the chunk:
//!   `global const float* p = (global const float*)((global const char*)clg_part_p - clg_origin_p);`
//!   so that `p[i]`, for an index `i` of the whole array inside the chunk, is the chunk's
//!   element;
//! * around the variant, function-like `#define`s (undefined after it) that make
//!   `get_global_size`, `get_global_offset`, `get_global_linear_id`, `get_num_groups` and
//!   `get_group_id` report the whole launch, as on one device: a grid-stride loop over
//!   `get_global_size(0)` covers the array once, not once per device. They reach the real
//!   `get_global_id` and `get_local_size` through `clg_real_global_id` and
//!   `clg_real_local_size`, defined before the user's code (a user macro of either name changes
//!   the user's uses only); a source that `#define`s one of the names they define gets no
//!   variants ([`defined_query`], and [`option_query`] for build options). (In a rounded range
//!   launch the global size is the user's range and the group count the groups covering it.)
//!   Functions the kernel calls cannot see these values: [`whole_launch_obstacle`] names them,
//!   and launches over several devices refuse such kernels.
//!
//! **Checked variants** (`checked == true`) also take, per global pointer, `const ulong
//! clg_lo_p, const ulong clg_hi_p` (the byte offsets in the whole array of what the device
//! holds), then `global uint *clg_check`; every `p[index]` in the body becomes
//! `p[clg_checked_index(...)]`, which records the first index outside the pointees wholly
//! held, `[ceil(clg_lo_p / sizeof(*p)), clg_hi_p / sizeof(*p))`, in `clg_check` (and reads or
//! writes the first of them instead, so the device never touches memory it does not hold).
//! Bounds in bytes make the check right whatever `p` points to (`pair_t *`, `float4 *` over a
//! buffer of floats): bounds in the buffer's elements sent such accesses far past a part. Uses of
//! `p` other than `p[...]` (pointer arithmetic, `vload`, calls) are not checked. The
//! instrumentation is [`super::checked`]'s, shared with single-device checked mode.
//!
//! Each variant is written right after its kernel, with `#line` directives as in
//! [`super::rounded`], so messages point to the original lines.

use super::checked::{self, CHECK_HELPER};
use super::queries::{self, with_real_queries};
use super::rounded::{first_use, rounding_obstacle, DEFINES, GUARD, UNDEFS};
use super::source::{KernelDecl, Param, Scanned};
use super::variant::VariantKind;
use crate::builtins::{self, Flags};
use crate::error::Result;
use crate::obstacle::{Obstacle, UseKind};
use std::fmt::Write as _;

/// `src` with the partitioned variant of each kernel of `kernels` after it (see the module
/// docs), checked variants when `checked`. `kernels` must come from
/// the scan of `src`; errors when a declaration
/// does not match `src` or two overlap.
#[cfg(test)]
pub fn with_partitioned_variants(
    src: &str,
    kernels: &[KernelDecl],
    checked: bool,
) -> Result<String> {
    with_partitioned_variants_on(&Scanned::new(src)?, kernels, checked)
}

/// [`with_partitioned_variants`] of an already scanned source (`scan_root`'s).
pub(crate) fn with_partitioned_variants_on(
    scanned: &Scanned<'_>,
    kernels: &[KernelDecl],
    checked: bool,
) -> Result<String> {
    let checks = checked.then_some(scanned);
    let out = super::rounded::with_variants(scanned.src, kernels, true, |out, src, k| {
        write_variant(out, src, k, checks, None);
        if rounding_obstacle(scanned, k).is_none() {
            write_variant(out, src, k, checks, Some(&guard()));
        }
    })?;
    log::debug!(
        "wrote partitioned variants of {} kernel(s) (checked: {checked})",
        kernels.len()
    );
    let out = match checked {
        true => format!("{CHECK_HELPER}\n#line 1\n{out}"),
        false => out,
    };
    Ok(with_real_queries(out))
}

/// The work-item built-ins the variants `#define` around themselves (and `#undef` after).
const DEFINED: &[&str] = &[
    "get_global_size",
    "get_global_offset",
    "get_global_linear_id",
    "get_num_groups",
    "get_group_id",
];

/// Why no partitioned variants are written for `scanned`: it `#define`s a work-item built-in
/// the variants define themselves ([`queries::defined_query`]).
pub(crate) fn defined_query(scanned: &Scanned<'_>) -> Option<Obstacle> {
    queries::defined_query(scanned, DEFINED)
}

/// Why no partitioned variants are written under build `options`: a `-D` defines a work-item
/// built-in the variants define or call ([`queries::option_query`]).
pub(crate) fn option_query(options: &str) -> Option<Obstacle> {
    queries::option_query(options, DEFINED)
}

/// Why kernel `k` of `src` cannot run split over several devices, or `None`: a function it
/// calls (directly, through other functions or through macros) asks for the global size or
/// offset, the global linear id, the number of work-groups or a work-group id, which would
/// describe one device's part of the launch there.
pub(crate) fn whole_launch_obstacle(scanned: &Scanned<'_>, k: &KernelDecl) -> Option<Obstacle> {
    fn forbidden(id: &str, in_function: bool) -> Option<UseKind> {
        let whole = builtins::flags(id).has(Flags::WHOLE_LAUNCH);
        (in_function && whole).then_some(UseKind::WholeLaunch)
    }
    first_use(scanned, k, forbidden)
}

/// The whole-launch queries of a variant, as `#define`s (see the module docs).
fn whole_defines() -> String {
    format!(
        "{}\n#define get_num_groups(clg_d) ((get_global_size(clg_d) + clg_real_local_size(clg_d) \
         - 1) / clg_real_local_size(clg_d))\n\
         #define get_group_id(clg_d) ((clg_real_global_id(clg_d) - get_global_offset(clg_d)) / \
         clg_real_local_size(clg_d))",
        DEFINES.replace("clg_user_", "clg_whole_")
    )
}

const WHOLE_UNDEFS: &str = "#undef get_num_groups\n#undef get_group_id";

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
fn parameters(k: &KernelDecl, checked: bool) -> String {
    let mut params: Vec<String> = k
        .params
        .iter()
        .map(|p| match is_global_pointer(p) {
            true => renamed(p, &format!("clg_part_{}", p.name)),
            false => p.text.clone(),
        })
        .collect();
    let globals = || k.params.iter().filter(|p| is_global_pointer(p));
    params.extend(globals().map(|p| format!("const ulong clg_origin_{}", p.name)));
    params.extend(
        ["size", "offset"]
            .iter()
            .flat_map(|w| (0..3).map(move |d| format!("const ulong clg_whole_{w}{d}"))),
    );
    if checked {
        for p in globals() {
            params.push(format!(
                "const ulong clg_lo_{0}, const ulong clg_hi_{0}",
                p.name
            ));
        }
        params.push("global uint *clg_check".into());
    }
    format!("({})", params.join(", "))
}

/// The first statement of guarded variants.
fn guard() -> String {
    GUARD.replace("clg_user_", "clg_whole_")
}

/// Writes `k`'s partitioned variant, or its guarded one when `guard` is given.
fn write_variant(
    out: &mut String,
    src: &str,
    k: &KernelDecl,
    checked: Option<&Scanned>,
    guard: Option<&str>,
) {
    let line = |at: usize| super::rounded::line_of(src, at);
    let close = k.body.end - 1;
    let body = match checked {
        Some(scanned) => instrumented(scanned, k),
        None => src[k.body.start + 1..close].to_string(),
    };
    let _ = write!(
        out,
        "\n{}\n#line {}\n{}{}{}{}{}\n{}\n#line {}\n{body}}}\n{UNDEFS}\n{WHOLE_UNDEFS}\n#line {}\n",
        whole_defines(),
        line(k.decl_start),
        &src[k.decl_start..k.name_span.start],
        match guard {
            Some(_) => VariantKind::Guarded.name(&k.name),
            None => VariantKind::Partitioned.name(&k.name),
        },
        &src[k.name_span.end..k.params_span.start],
        parameters(k, checked.is_some()),
        &src[k.params_span.end..=k.body.start],
        declarations(k) + guard.map(|g| format!(" {g}")).as_deref().unwrap_or(""),
        line(k.body.start),
        line(close),
    );
}

/// `k`'s body (between its braces) with every `p[index]` of a global pointer parameter `p`
/// checked against the pointees wholly inside bytes `[clg_lo_p, clg_hi_p)` (see
/// [`super::checked`]).
fn instrumented(scanned: &Scanned, k: &KernelDecl) -> String {
    let globals: Vec<(usize, String)> = k
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| is_global_pointer(p))
        .map(|(i, p)| (i, p.name.clone()))
        .collect();
    checked::instrumented(scanned, k, &globals, |n| {
        let first = format!("(clg_lo_{n} + sizeof(*{n}) - 1) / sizeof(*{n})");
        format!("{first}, clg_hi_{n} / sizeof(*{n}), {first}")
    })
}

#[cfg(test)]
mod tests {
    use super::super::queries::REAL_QUERIES;
    use super::*;

    #[test]
    fn example_with_partitioned_variants() {
        use crate::transform::source::scan_kernels;
        let src = "kernel void inc(global int* x) { x[get_global_id(0)] += 1; }\n";
        let out = with_partitioned_variants(src, &scan_kernels(src).unwrap(), false).unwrap();
        assert!(out.contains("kernel void inc__clg_part(global int* clg_part_x, const ulong clg_origin_x, const ulong clg_whole_size0"));
        let names: Vec<String> = scan_kernels(&out)
            .unwrap()
            .into_iter()
            .map(|k| k.name)
            .collect();
        assert_eq!(names, ["inc", "inc__clg_part", "inc__clg_pguard"]);
    }

    #[test]
    fn example_whole_launch_obstacle() {
        use crate::transform::source::scan_kernels;
        let src = "size_t n(void) { return get_global_size(0); }\n\
                   kernel void a(global int* x) { x[get_global_id(0)] = get_global_size(0); }\n\
                   kernel void b(global int* x) { x[get_global_id(0)] = n(); }";
        let k = scan_kernels(src).unwrap();
        let s = Scanned::new(src).unwrap();
        assert_eq!(whole_launch_obstacle(&s, &k[0]), None);
        let why = whole_launch_obstacle(&s, &k[1]).unwrap();
        assert_eq!(
            why.to_string(),
            "kernel `b` calls `n`, which uses `get_global_size`"
        );
        let used = super::super::Use::new("get_global_size", UseKind::WholeLaunch);
        let via = vec![super::super::Via::Calls("n".into())];
        let kernel = "b".to_string();
        assert_eq!(why, Obstacle::Uses { kernel, via, used });
    }
    use crate::transform::source::scan_kernels;

    const SRC: &str = "// saxpy\nkernel void saxpy(global float* restrict y,\n    global const float *x, const float a, local float* t) {\n  size_t i = get_global_id(0);\n  y[i] += a * x[i];\n} // end\n";

    const WHOLE: &str = "const ulong clg_whole_size0, const ulong clg_whole_size1, \
                         const ulong clg_whole_size2, const ulong clg_whole_offset0, \
                         const ulong clg_whole_offset1, const ulong clg_whole_offset2";

    #[test]
    fn exact_text_of_one_variant() {
        let out = with_partitioned_variants(SRC, &scan_kernels(SRC).unwrap(), false).unwrap();
        let want = format!(
            "{REAL_QUERIES}\n#line 1\n{}\n{}\n#line 2\n\
             kernel void saxpy__clg_part(global float* restrict clg_part_y, \
             global const float *clg_part_x, const float a, local float* t, \
             const ulong clg_origin_y, const ulong clg_origin_x, {WHOLE}) {{\n\
             global float* y = (global float*)((global const char*)clg_part_y - clg_origin_y); \
             global const float * x = (global const float *)((global const char*)clg_part_x - clg_origin_x);\n\
             #line 3\n\n  size_t i = get_global_id(0);\n  y[i] += a * x[i];\n}}\n{UNDEFS}\n{WHOLE_UNDEFS}\n#line 6\n // end\n",
            &SRC[..SRC.find(" // end").unwrap()],
            whole_defines(),
        );
        assert_eq!(out, want);
    }

    #[test]
    fn whole_launch_queries_are_defined_around_the_variant() {
        let d = whole_defines();
        assert!(
            d.contains("#define get_global_size(clg_d) ((clg_d) == 0 ? (size_t)clg_whole_size0")
        );
        assert!(d.contains(
            "#define get_num_groups(clg_d) ((get_global_size(clg_d) + \
             clg_real_local_size(clg_d) - 1) / clg_real_local_size(clg_d))"
        ));
        assert!(d.contains(
            "#define get_group_id(clg_d) ((clg_real_global_id(clg_d) - \
             get_global_offset(clg_d)) / clg_real_local_size(clg_d))"
        ));
        assert!(!d.contains("clg_user_"));
        for q in builtins::named(Flags::WHOLE_LAUNCH) {
            assert!(d.contains(&format!("#define {q}(")), "{q}");
            assert!(
                format!("{UNDEFS}\n{WHOLE_UNDEFS}").contains(&format!("#undef {q}")),
                "{q}"
            );
        }
    }

    /// The hunt's `note_redefined_builtin`: `get_group_id` was defined through the user's
    /// `get_global_id` macro (local ids), so device 1's work-items saw group 0.
    #[test]
    fn user_macros_do_not_change_the_variants_own_queries() {
        let src = "#define get_global_id(d) get_local_id(d)\n\
                   kernel void k(global int *y) { \
                   if (get_group_id(0) == 0) y[get_global_id(0)] = 1; }\n";
        let s = Scanned::new(src).unwrap();
        assert_eq!(defined_query(&s), None);
        let out = with_partitioned_variants(src, &scan_kernels(src).unwrap(), false).unwrap();
        assert!(out.starts_with(REAL_QUERIES));
        let after = &out[out.find("#define get_global_id").unwrap()..];
        let defines = after
            .lines()
            .filter(|l| l.starts_with("#define get_") || l.starts_with("if ("));
        for l in defines.skip(1) {
            assert!(
                !l.contains("get_global_id(") && !l.contains("get_local_size("),
                "{l}"
            );
        }
        // Names the variants define themselves: none are written.
        let src =
            "#define get_group_id(d) 0\nkernel void k(global int *y) { y[0] = get_group_id(0); }";
        let why = defined_query(&Scanned::new(src).unwrap()).unwrap();
        assert_eq!(why, Obstacle::DefinesQuery("get_group_id".into()));
        for (options, name) in [
            ("-D get_local_size(d)=8", "get_local_size"),
            ("-Dget_num_groups=1", "get_num_groups"),
        ] {
            assert_eq!(
                option_query(options),
                Some(Obstacle::DefinesQuery(name.into()))
            );
        }
        assert_eq!(option_query("-DN=get_global_id(0) -cl-mad-enable"), None);
    }

    #[test]
    fn checked_variants_check_every_subscript() {
        let src = "kernel void k(global int *y, global const int *ix, uint n) {\n  size_t i = get_global_id(0);\n  y[ix[i]] = y[i + 1] + n;\n}\n";
        let out = with_partitioned_variants(src, &scan_kernels(src).unwrap(), true).unwrap();
        let start = format!("{REAL_QUERIES}\n#line 1\n{CHECK_HELPER}\n#line 1\n");
        assert!(out.starts_with(&start));
        // Bounds in bytes, as pointees wholly held (the first rounded up).
        const IX: &str = "(clg_lo_ix + sizeof(*ix) - 1) / sizeof(*ix)";
        const Y: &str = "(clg_lo_y + sizeof(*y) - 1) / sizeof(*y)";
        assert!(out.contains(&format!(
            "  y[clg_checked_index(clg_check, 0u, (long)(ix[clg_checked_index(clg_check, 1u, \
             (long)(i), {IX}, clg_hi_ix / sizeof(*ix), {IX})]), {Y}, clg_hi_y / sizeof(*y), {Y})] = \
             y[clg_checked_index(clg_check, 0u, (long)(i + 1), {Y}, clg_hi_y / sizeof(*y), {Y})] + n;"
        )));
        let ks = scan_kernels(&out).unwrap();
        let names: Vec<&str> = ks[1].params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names[..5],
            [
                "clg_part_y",
                "clg_part_ix",
                "n",
                "clg_origin_y",
                "clg_origin_ix"
            ]
        );
        assert_eq!(
            names[11..],
            [
                "clg_lo_y",
                "clg_hi_y",
                "clg_lo_ix",
                "clg_hi_ix",
                "clg_check"
            ]
        );
    }

    #[test]
    fn guarded_variants_of_roundable_kernels() {
        let src = "kernel void inc(global int* x) { x[get_global_id(0)] += 1; }\n";
        let out = with_partitioned_variants(src, &scan_kernels(src).unwrap(), false).unwrap();
        let at = out.find("kernel void inc__clg_pguard(").unwrap();
        let first_line = out[at..].lines().nth(1).unwrap();
        assert!(
            first_line.ends_with(&format!(" {}", guard())),
            "{first_line}"
        );
        assert!(guard()
            .starts_with("if (clg_real_global_id(0) - clg_whole_offset0 >= clg_whole_size0 || "));
        let root = |n: &str| VariantKind::parse(n).is_some_and(|(_, v)| v.is_root());
        assert!(root("inc__clg_pguard") && root("inc__clg_part"));
        assert!(!root("inc"));
    }

    #[test]
    fn the_variant_scans_with_its_new_parameters() {
        let out = with_partitioned_variants(SRC, &scan_kernels(SRC).unwrap(), false).unwrap();
        let ks = scan_kernels(&out).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[1].name, "saxpy__clg_part");
        let names: Vec<&str> = ks[1].params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names[..6],
            [
                "clg_part_y",
                "clg_part_x",
                "a",
                "t",
                "clg_origin_y",
                "clg_origin_x"
            ]
        );
        assert_eq!(names.len(), 12);
        assert!(ks[1].params[0].is_pointer);
        assert_eq!(ks[1].params[0].address_space.as_deref(), Some("global"));
        assert!(!ks[1].params[4].is_pointer);
    }
}
