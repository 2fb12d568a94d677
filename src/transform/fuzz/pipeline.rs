//! Every analysis and transform clgroups runs on a user's source, as one table ([`ANALYSES`]):
//! adding one to the harness is one line. Each entry runs its function the way the build, a
//! launch or a root program does, on one input (failures are typed errors or fallbacks, so an
//! entry only asserts what a caller relies on).

use super::super::pp_eval::{self, PpState};
use super::super::source::{scan_kernels, KernelDecl, Scanned};
use super::super::{build_log, checked, hoist, layer, rounded, wrapper, Rewrites, SourceFacts};
use crate::device::ShuffleBackend;
use opencl3::kernel::{
    CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_LOCAL,
    CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_CONST,
};

/// One input as the analyses see it: its text and, where the scanner reads it, the one scan of
/// it and its kernels (as a program build finds them).
pub(super) struct Input<'a> {
    pub(super) src: &'a str,
    pub(super) scanned: Option<Scanned<'a>>,
    pub(super) kernels: Vec<KernelDecl>,
    /// The kernels were read (the scan's one error aside: a malformed clgroups attribute).
    pub(super) read: bool,
}

impl<'a> Input<'a> {
    pub(super) fn new(src: &'a str) -> Input<'a> {
        let scanned = Scanned::new(src).ok();
        let kernels = scanned.as_ref().map(super::super::scanned_kernels);
        let read = matches!(kernels, Some(Ok(_)));
        Input {
            src,
            kernels: kernels.and_then(Result::ok).unwrap_or_default(),
            scanned,
            read,
        }
    }
}

/// An analysis of the source pipeline, by name.
pub(super) type Analysis = (&'static str, fn(&Input<'_>));

/// Every analysis of a user's source, in the order a build runs them.
pub(super) const ANALYSES: &[Analysis] = &[
    ("scan", |i| _ = super::super::scan(i.src)),
    #[cfg(feature = "scaling")]
    ("scan of a root program", |i| {
        _ = super::super::scan_root(i.src, false)
    }),
    ("kernel declarations", |i| _ = scan_kernels(i.src)),
    ("collectives hoisted", hoisted),
    ("preprocessor conditions", conditions),
    ("sizes under #if branches", conditional_sizes),
    ("source facts", source_facts),
    ("layer and collective users", layer_users),
    ("scratch threading", scratch_threading),
    ("divergence and id conditions", divergence),
    ("kernel obstacles", obstacles),
    #[cfg(feature = "scaling")]
    ("multi-device contract", contract),
    #[cfg(feature = "scaling")]
    ("access footprints", footprints),
    ("rounded variants", rounded_variants),
    ("checked variants", |i| {
        let round: Vec<String> = i.kernels.iter().map(|k| k.name.clone()).collect();
        _ = checked::with_checked_variants(i.src, &i.kernels, &round);
        _ = checked::with_checked_variants(i.src, &i.kernels, &[]);
    }),
    #[cfg(feature = "scaling")]
    ("partitioned variants", |i| {
        _ = super::super::partitioned::with_partitioned_variants(i.src, &i.kernels, false);
        _ = super::super::partitioned::with_partitioned_variants(i.src, &i.kernels, true);
    }),
    ("rewrite and compose", rewrite),
    ("includes", |i| {
        _ = super::super::inline_includes(i.src, "fuzz.cl")
    }),
    ("polyfill", polyfill),
    ("build log", |i| {
        _ = build_log::map_positions(&driver_log(i.src), i.src)
    }),
    ("wrapper", wrap),
];

/// Collectives under divergent conditions moved where the whole work-group reaches them (as a
/// build does first on barrier backends): no line added, and the facts of the result read.
fn hoisted(i: &Input<'_>) {
    let collectives = [
        layer::is_emulated_collective,
        layer::is_sub_group_collective,
    ];
    for (c, backend) in collectives
        .into_iter()
        .zip([ShuffleBackend::Emulated, ShuffleBackend::Khr])
    {
        let out = hoist::uniform_collectives(i.src, c);
        assert_eq!(
            out.lines().count(),
            i.src.lines().count(),
            "hoisted:\n{out}"
        );
        _ = SourceFacts::read_on(&out, backend, Some(c));
    }
}

/// Macro states a build may start from: nothing known, some names defined, some unknown, and
/// after an include clgroups cannot see.
fn states() -> [PpState; 3] {
    let mut defined = PpState::default();
    for (name, value) in [
        ("cl_khr_subgroups", "1"),
        ("A", "2"),
        ("SIMD", "16"),
        ("X", "(1 << 70)"),
    ] {
        defined.define(name, value);
    }
    defined.undefine("B");
    let mut unknown = defined.clone();
    unknown.forget("A");
    unknown.forget("CLG_SUB_GROUP_SIZE");
    let mut opaque = PpState::default();
    pp_eval::evaluate("#include <unseen.h>\n", &mut opaque);
    [defined, unknown, opaque]
}

/// The `#if` decisions under each state, the text blanked by them (lines and offsets kept),
/// and the whole text read as one `#if` expression.
fn conditions(i: &Input<'_>) {
    let as_expression = format!("#if {}\n#endif\n", i.src.replace(['\n', '\r'], " "));
    for mut state in states() {
        let lines = pp_eval::evaluate(i.src, &mut state);
        for keep in [true, false] {
            assert_eq!(pp_eval::blank(i.src, &lines, keep).len(), i.src.len());
        }
        _ = pp_eval::evaluate(&as_expression, &mut state);
    }
}

fn conditional_sizes(i: &Input<'_>) {
    for state in states() {
        let mut kernels = i.kernels.clone();
        super::super::resolve_conditional_sizes(i.src, &mut kernels, state);
    }
}

fn layer_users(i: &Input<'_>) {
    let Some(s) = &i.scanned else { return };
    let names: std::collections::BTreeSet<&str> =
        s.functions.iter().map(|f| f.name.as_str()).collect();
    let users = layer::layer_users(s);
    let collectives = layer::users(s, layer::is_sub_group_collective);
    assert!(users
        .iter()
        .chain(&collectives)
        .all(|f| names.contains(f.as_str())));
    _ = layer::users_through_calls(s, layer::is_emulated_collective);
}

/// The emulated backend's scratch, threaded through every function (the text still scans).
fn scratch_threading(i: &Input<'_>) {
    let Some(s) = &i.scanned else { return };
    let all = s.functions.iter().map(|f| f.name.clone()).collect();
    let threaded = super::super::apply_edits(i.src, layer::scratch_edits(s, &all));
    assert!(Scanned::new(&threaded).is_ok(), "threaded:\n{threaded}");
}

fn divergence(i: &Input<'_>) {
    let Some(s) = &i.scanned else { return };
    _ = super::super::divergence::divergent_users(
        s,
        layer::is_emulated_collective,
        super::super::hoist::obstacle,
    );
    _ = super::super::divergence::divergent_users(
        s,
        layer::is_sub_group_collective,
        super::super::hoist::obstacle,
    );
}

fn obstacles(i: &Input<'_>) {
    let Some(s) = &i.scanned else { return };
    for k in &i.kernels {
        _ = super::super::rounding_obstacle(s, k);
        _ = super::super::shape_dependence(s, k);
        _ = wrapper::wrap_obstacle(s, k);
        _ = s.body_directive_obstacle(&k.body);
        _ = super::super::checked_pointers(k);
    }
}

#[cfg(feature = "scaling")]
fn contract(i: &Input<'_>) {
    let Some(s) = &i.scanned else { return };
    for k in &i.kernels {
        _ = super::super::whole_launch_obstacle(s, k);
        for p in &k.params {
            _ = super::super::own_id_index(s, k, &p.name);
            _ = (p.const_pointee, super::super::is_global_pointer(p));
        }
    }
}

/// Each kernel's access footprint, and what two parts of a launch reach of each parameter
/// (scalar arguments small and as large and as negative as 64 bits hold).
#[cfg(feature = "scaling")]
fn footprints(i: &Input<'_>) {
    use super::super::footprint::{footprint, Dir, Part};
    let Some(s) = &i.scanned else { return };
    let part = |first: u64, size: u64| Part {
        global: [1 << 20, 7, 1],
        local: [64, 1, 1],
        base: [3, 0, 0],
        first: [first, 0, 0],
        size: [size, 7, 1],
    };
    for k in &i.kernels {
        let f = footprint(s, k);
        let n = k.params.len();
        for scalars in [
            vec![Some(5); n],
            vec![Some(u64::MAX.into()); n],
            vec![Some(-1); n],
        ] {
            for (p, dir) in [
                (part(3, 1 << 19), Dir::Read),
                (part(1 << 19, u64::MAX >> 1), Dir::Write),
            ] {
                (0..=n).for_each(|param| _ = f.reach(param, dir, &p, &scalars));
            }
        }
    }
}

/// Rounded variants after (or instead of) their kernels: the text scans again, with two
/// variants more per rewritable kernel.
fn rounded_variants(i: &Input<'_>) {
    if !i.read {
        return;
    }
    let Ok(out) = rounded::with_rounded_variants(i.src, &i.kernels, true) else {
        return;
    };
    let rewritable = i
        .kernels
        .iter()
        .filter(|k| rounded::gets_variants(i.src, k));
    let again = Scanned::new(&out).and_then(|s| s.kernel_decls());
    let again = again.unwrap_or_else(|e| panic!("rounded variants do not scan ({e}):\n{out}"));
    assert_eq!(again.len(), i.kernels.len() + 2 * rewritable.count());
    _ = rounded::with_rounded_variants(i.src, &i.kernels, false);
}

/// The facts a build reads, for each kind of backend: emulated, PoCL's native sub-groups (whose
/// collectives are work-group barriers), NVIDIA's PTX, other native sub-groups.
fn facts(i: &Input<'_>) -> Vec<SourceFacts> {
    let on = [
        (
            ShuffleBackend::Emulated,
            Some(layer::is_emulated_collective as fn(&str) -> bool),
        ),
        (ShuffleBackend::Khr, Some(layer::is_sub_group_collective)),
        (ShuffleBackend::NvidiaPtx, None),
        (ShuffleBackend::Intel, None),
    ];
    let read = on.map(|(backend, c)| SourceFacts::read_on(i.src, backend, c));
    read.into_iter().filter_map(Result::ok).collect()
}

fn source_facts(i: &Input<'_>) {
    for f in facts(i) {
        _ = (f.names_sub_group_collectives(), f.uses("get_global_size"));
        assert_eq!(f.unscanned.is_none(), i.scanned.is_some());
    }
}

/// [`super::super::Source::rewrite`] on two backends' reading (emulated: scratch threaded,
/// collectives hoisted; PoCL's native ones) with two plans, each result composed as a build
/// composes it (includes inlined, a log mapped through its `#line`s).
fn rewrite(i: &Input<'_>) {
    let on = [
        (
            ShuffleBackend::Emulated,
            layer::is_emulated_collective as fn(&str) -> bool,
        ),
        (ShuffleBackend::Khr, layer::is_sub_group_collective),
    ];
    for (backend, c) in on {
        _ = super::super::read_source(i.src, backend, Some(c), |source| {
            for bits in [0b1111u8, 0b0010] {
                let plan = |name: &str| {
                    let on = |b: u8| bits & b != 0 && (bits != 0b0010 || name.len() % 2 == 0);
                    Rewrites {
                        scratch: on(1) && source.facts.layer_users.contains(name),
                        round: on(2),
                        check: on(4),
                        pin: on(8),
                    }
                };
                let variants = bits & 6 != 0;
                let Ok(text) = source.rewrite(plan, variants, 16) else {
                    continue;
                };
                if let Ok(body) = super::super::inline_includes(&text, "fuzz.cl") {
                    let composed = format!("#define X 1\n#line 1 \"fuzz.cl\"\n{body}");
                    _ = build_log::map_positions(&driver_log(&composed), &composed);
                }
            }
            Ok(())
        });
    }
}

fn polyfill(i: &Input<'_>) {
    const ALL: [&str; 3] = [
        "cl_khr_subgroups",
        "cl_khr_subgroup_shuffle",
        "cl_intel_subgroups",
    ];
    for f in facts(i) {
        let mentions = f.mentions_sub_groups;
        let prelude = super::super::polyfill_prelude(&ALL, mentions);
        assert_eq!(prelude.is_empty(), !mentions);
    }
}

/// A driver's log about `src`: a message on some of its lines, odd positions, and the text
/// itself (which may hold anything that looks like a position).
fn driver_log(src: &str) -> String {
    let n = src.lines().count();
    format!(
        "<kernel>:1:1: error\n<kernel>:{n}:2: warning\n<kernel>:{}:1: note\n<kernel>:0:\
         <kernel>:99999999999999999999999:1:<kernel>:\n{src}",
        n / 2 + 1
    )
}

/// The wrapper of each kernel, from what a driver would report of its parameters, and whether
/// code the scanner did not read could change it (with build options taken from the text).
fn wrap(i: &Input<'_>) {
    let options = i.src.lines().next().unwrap_or("");
    let includes = i.scanned.as_ref().map_or(&[][..], |s| &s.includes);
    _ = wrapper::unseen_code(includes, options);
    _ = wrapper::unseen_code(includes, "-DX=get_global_size(0) -I dir");
    for k in &i.kernels {
        let args: Vec<wrapper::DriverArg> = k.params.iter().map(driver_arg).collect();
        let required = [k.params.len() + 1, 1, 1];
        _ = wrapper::wrapper_source(&k.name, &args, required);
    }
}

/// What a driver reports of parameter `p`: its type without its name and address space.
fn driver_arg(p: &super::super::source::Param) -> wrapper::DriverArg {
    let type_name = p.text.rsplit_once(p.name.as_str()).map(|(t, _)| {
        let words = t.split_whitespace();
        let kept = words.filter(|w| !["global", "__global", "const", "restrict"].contains(w));
        kept.collect::<Vec<_>>().join(" ")
    });
    let address = match p.address_space.as_deref() {
        Some("global") => CL_KERNEL_ARG_ADDRESS_GLOBAL,
        Some("constant") => CL_KERNEL_ARG_ADDRESS_CONSTANT,
        Some("local") => CL_KERNEL_ARG_ADDRESS_LOCAL,
        _ => CL_KERNEL_ARG_ADDRESS_PRIVATE,
    };
    wrapper::DriverArg {
        type_name,
        address: Some(address),
        access: None,
        type_qualifier: Some(u64::from(CL_KERNEL_ARG_TYPE_CONST) * u64::from(p.is_pointer)),
    }
}
