//! Sub-group collectives in work-groups of one and two work-items (`tests/cl/tiny_groups.cl`),
//! with the standard built-ins and with the layer, in every way a launch gets such groups: an
//! exact local size (1-3 D), `LocalSize::Auto` and plain ranges of one or two work-items, and
//! `reqd_work_group_size(1|2, 1, 1)`. PoCL 6.0's native collectives abort the process there
//! (`undefined symbol: __pocl_work_group_alloca`): clgroups runs the kernel's emulated build,
//! in the sub-groups the native kernel has (its host query). Every launch must run (0 refused)
//! and every value is checked on the host against the sub-group each work-item reports (0
//! wrong). A kernel the emulated backend refuses keeps its typed refusal.

mod common;

use common::tally::Tally;
use common::Poison;

use clgroups::device::{Implementation, ShuffleBackend};
use clgroups::{Buffer, Error, Kernel, LocalSize, Program, Queue, Range};
use std::collections::BTreeMap;

const SRC: &str = include_str!("cl/tiny_groups.cl");
const FIELDS: usize = 12;

/// How a case is launched.
#[derive(Clone, Copy, Debug)]
enum How {
    Exact(Range),
    Auto,
    Plain,
}

/// Launches `k` over `global` as `how` says and checks every work-item's values.
fn case(t: &mut Tally, q: &Queue, k: &Kernel, global: Range, how: How) {
    let name = format!("{} {global:?} {how:?}", k.name());
    let mut out = Buffer::<u32>::new(q.context(), FIELDS * global.len()).unwrap();
    out.fill(q, u32::POISON).unwrap();
    let l = k.launch().arg(&out);
    // SAFETY: work-item g writes out[FIELDS * g .. FIELDS * (g + 1)], g < global.len().
    let launched = unsafe {
        match how {
            How::Exact(local) => l.nd_range(global, LocalSize::Exact(local)),
            How::Auto => l.nd_range(global, LocalSize::Auto),
            How::Plain => l.range(global),
        }
    };
    match launched.and_then(|e| e.wait()) {
        Ok(()) => t.launches += 1,
        Err(e) => return t.check(false, || format!("{name}: refused: {e}")),
    }
    checked(t, &name, &out.read(q).unwrap(), k, global, how);
}

/// Checks the values `v` a launch of `k` (the kernel on one of the devices) over `global`
/// as `how` says wrote: every sub-group's collectives against the host, and the sub-groups
/// against the native kernel's query.
fn checked(t: &mut Tally, name: &str, v: &[u32], k: &Kernel, global: Range, how: How) {
    let at = |g: usize, f: usize| v[FIELDS * g + f] as usize;
    // Members of each (work-group, sub-group): (local id, global id).
    let mut groups: BTreeMap<(usize, usize), Vec<(usize, usize)>> = BTreeMap::new();
    for g in 0..global.len() {
        groups
            .entry((at(g, 11), at(g, 10)))
            .or_default()
            .push((at(g, 1), g));
    }
    let mut largest = 0;
    for ((wg, sg), mut m) in groups {
        m.sort_unstable();
        let n = m.len();
        largest = largest.max(n);
        let value = |lid: usize| m[lid].1 + 1;
        let sum = |r: std::ops::Range<usize>| r.map(value).sum::<usize>();
        for (i, &(lid, g)) in m.iter().enumerate() {
            let want = [
                n,
                i,
                sum(0..n),
                sum(0..i + 1),
                sum(0..i),
                value(0),
                (0..n).map(value).max().unwrap(),
                value(n - 1 - i),
                usize::from(n > 1),
                1,
            ];
            let got: Vec<usize> = (0..want.len()).map(|f| at(g, f)).collect();
            t.check(lid == i && got == want, || {
                format!("{name}: group {wg} sub-group {sg} item {g}: got {got:?} want {want:?}")
            });
        }
    }
    // The sub-groups the native kernel has in these work-groups (its host query).
    let local = match how {
        How::Exact(l) => Some(l),
        _ => k.required_work_group_size(),
    };
    if let Some(local) = local {
        let native = k.sub_groups().max_sub_group_size(local).unwrap();
        t.check(largest == native, || {
            format!("{name}: sub-groups of {largest}, the kernel's query says {native}")
        });
    }
}

/// Work-groups of one and two work-items in 1-3 dimensions.
const TINY: [Range; 6] = [
    Range::d1(1),
    Range::d1(2),
    Range::d2(1, 2),
    Range::d2(2, 1),
    Range::d3(1, 1, 2),
    Range::d3(2, 1, 1),
];

/// Plain and `LocalSize::Auto` ranges of one and two work-items.
const SMALL: [Range; 3] = [Range::d1(1), Range::d1(2), Range::d2(1, 2)];

/// Kernels with `reqd_work_group_size(1|2, 1, 1)`.
const REQUIRED: [&str; 4] = ["builtins_r1", "builtins_r2", "layer_r1", "layer_r2"];

#[test]
fn collectives_run_right_in_work_groups_of_one_and_two() {
    let _ = env_logger::builder().is_test(true).try_init();
    let q = common::queue();
    let p = Program::from_source(&q, SRC).unwrap();
    let mut t = Tally::default();
    for name in ["builtins", "layer"] {
        let k = p.kernel(name).unwrap();
        for local in TINY {
            let global = local.with(0, 3 * local.get(0));
            case(&mut t, &q, &k, global, How::Exact(local));
        }
        for global in SMALL {
            case(&mut t, &q, &k, global, How::Auto);
            case(&mut t, &q, &k, global, How::Plain);
        }
    }
    for name in REQUIRED {
        let k = p.kernel(name).unwrap();
        let required = k.required_work_group_size().unwrap();
        for how in [How::Plain, How::Auto, How::Exact(required)] {
            case(&mut t, &q, &k, Range::d1(6), how);
        }
    }
    println!(
        "{}: {} launches in work-groups of 1 and 2, {} checks, {} failures",
        q.device(),
        t.launches,
        t.checks,
        t.failures.len()
    );
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
}

#[cfg(feature = "scaling")]
mod root {
    use super::*;
    use clgroups::scaling::{ColoredBuffer, RootDevice, RootKernel};

    /// [`case`] over the devices of a root device; the number of devices that ran a part.
    fn root_case(
        t: &mut Tally,
        root: &RootDevice,
        k: (&str, &RootKernel),
        global: Range,
        how: How,
    ) -> usize {
        let (name, k) = k;
        let name = format!("{name} {global:?} {how:?} ({:?})", root.placement());
        let poison = vec![u32::POISON; FIELDS * global.len()];
        let mut out = ColoredBuffer::from_slice(root, &poison).unwrap();
        let l = k.launch().arg(&mut out);
        // SAFETY: work-item g writes out[FIELDS * g .. FIELDS * (g + 1)], g < global.len().
        let launched = unsafe {
            match how {
                How::Exact(local) => l.nd_range(global, LocalSize::Exact(local)),
                How::Auto => l.nd_range(global, LocalSize::Auto),
                How::Plain => l.range(global),
            }
        };
        let ev = match launched.and_then(|e| e.wait().map(|()| e)) {
            Ok(ev) => ev,
            Err(e) => {
                t.check(false, || format!("{name}: refused: {e}"));
                return 0;
            }
        };
        t.launches += 1;
        checked(t, &name, &out.read().unwrap(), &k.kernels()[0], global, how);
        ev.events().iter().flatten().count()
    }

    /// The same launches split over two or more devices (each device's part in its
    /// work-groups of one or two: on PoCL 6.0, on the kernel's emulated build there), in both
    /// placements: 0 refused, 0 wrong.
    #[test]
    fn collectives_run_right_in_tiny_groups_over_several_devices() {
        let _ = env_logger::builder().is_test(true).try_init();
        let (mut t, mut split) = (Tally::default(), 0);
        let roots = common::roots("tiny_groups");
        for root in &roots {
            let p = root.program(SRC).unwrap();
            for name in ["builtins", "layer"] {
                let k = p.kernel(name).unwrap();
                for local in TINY {
                    let global = local.with(0, 4 * local.get(0));
                    let busy = root_case(&mut t, root, (name, &k), global, How::Exact(local));
                    split += usize::from(busy > 1);
                }
                for global in SMALL {
                    root_case(&mut t, root, (name, &k), global, How::Auto);
                    root_case(&mut t, root, (name, &k), global, How::Plain);
                }
            }
            for name in REQUIRED {
                let k = p.kernel(name).unwrap();
                let required = k.kernels()[0].required_work_group_size().unwrap();
                for how in [How::Plain, How::Auto, How::Exact(required)] {
                    let busy = root_case(&mut t, root, (name, &k), Range::d1(8), how);
                    split += usize::from(busy > 1);
                }
            }
        }
        if let Some(root) = roots.first() {
            println!(
                "root device of {}: {} launches in work-groups of 1 and 2 ({split} split over \
                 several devices), {} checks, {} failures",
                root.len(),
                t.launches,
                t.checks,
                t.failures.len()
            );
        }
        assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
        // Launches of several work-groups split: each device runs its part.
        assert!(
            roots.is_empty() || split > 0,
            "no launch split over the devices"
        );
    }
}

/// A kernel made by macros that write its keyword and name apart from its parameters: the
/// emulated backend cannot give it the hidden scratch parameter (a typed `Unsupported`), so
/// it has no emulated build, while native sub-groups run it.
const NO_EMULATED: &str = "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n\
    #define KERNEL_HEAD(name) kernel void name\n\
    #define SIGNATURE (global uint *o)\n\
    #define MAKE(name) KERNEL_HEAD(name) SIGNATURE { o[get_global_id(0)] = sub_group_reduce_add(1u); }\n\
    MAKE(hidden)\n";

/// A kernel just made, with whether `d` runs PoCL's native sub-groups (where work-groups of two
/// are refused without an emulated build); `None`, printed, when making it was refused.
fn made<K>(kernel: Result<K, Error>, d: &clgroups::Device) -> Option<(K, bool)> {
    match kernel {
        Err(e @ Error::Unsupported { .. }) => {
            println!("refused when made on {d}: {e}");
            None
        }
        Err(e) => panic!("{e}"),
        Ok(k) => Some((
            k,
            d.identity().implementation == Implementation::Pocl
                && d.sub_groups().effective.shuffle_backend != ShuffleBackend::Emulated,
        )),
    }
}

#[cfg(feature = "scaling")]
/// A root-device launch in work-groups of two of a kernel without an emulated build (issue
/// 38): on PoCL's native sub-groups each device's part is refused, typed (work-groups too
/// small for the native collectives), before anything runs; elsewhere it runs.
#[test]
fn root_launches_of_kernels_without_an_emulated_build_stay_refused() {
    use clgroups::plan::Refusal;
    use clgroups::scaling::ColoredBuffer;
    let _ = env_logger::builder().is_test(true).try_init();
    for root in common::roots("tiny_groups") {
        let d = root.devices()[0].clone();
        let p = root.program(NO_EMULATED).unwrap();
        let Some((k, native_pocl)) = made(p.kernel("hidden"), &d) else {
            continue;
        };
        let global = Range::d1(2 * root.len());
        let mut o = ColoredBuffer::from_slice(&root, &vec![u32::POISON; global.len()]).unwrap();
        // SAFETY: work-item g writes o[g], g < global.len().
        let launched = unsafe {
            k.launch()
                .arg(&mut o)
                .nd_range(global, LocalSize::Exact(Range::d1(2)))
        };
        if !native_pocl {
            launched.and_then(|e| e.wait()).unwrap();
            assert_eq!(o.read().unwrap(), vec![2; global.len()], "{d}");
            println!("{d}: ran (work-groups of two run natively here)");
            continue;
        }
        let e = launched.map(|_| ()).unwrap_err();
        let Error::InvalidLaunch { reason, .. } = &e else {
            panic!("{d}: not a launch refusal: {e}");
        };
        assert!(
            matches!(**reason, Refusal::GroupTooSmall { .. }),
            "{d}: {e}"
        );
        assert!(e.to_string().contains("hidden"), "{e}");
        assert_eq!(
            o.read().unwrap(),
            vec![u32::POISON; global.len()],
            "nothing ran"
        );
        println!("{d} ({:?}): refused: {e}", root.placement());
    }
}

/// Kernels the emulated backend refuses (a collective under a local-id condition; a
/// parameter list it cannot reach, [`NO_EMULATED`]) have no emulated build: on PoCL's native
/// sub-groups their work-groups of two stay refused, typed, before anything runs.
#[test]
fn kernels_without_an_emulated_build_stay_refused() {
    let _ = env_logger::builder().is_test(true).try_init();
    let q = common::queue();
    let d = q.device();
    let divergent = "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n\
        kernel void divergent(global uint *o) {\n\
            uint v = 0;\n\
            if (get_local_id(0) == 0) v = sub_group_reduce_add(1u);\n\
            o[get_global_id(0)] = v;\n\
        }";
    for (name, src) in [("divergent", divergent), ("hidden", NO_EMULATED)] {
        let p = Program::from_source(&q, src).unwrap();
        let Some((k, native_pocl)) = made(p.kernel(name), d) else {
            continue;
        };
        if !native_pocl {
            println!("{d}: {name} made (work-groups of two run natively here)");
            continue;
        }
        let mut o = Buffer::<u32>::new(q.context(), 2).unwrap();
        o.fill(&q, u32::POISON).unwrap();
        // SAFETY: refused before anything is enqueued; it would write o[0..2].
        let e = unsafe {
            k.launch()
                .arg(&o)
                .nd_range(Range::d1(2), LocalSize::Exact(Range::d1(2)))
        }
        .unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(name) && text.contains("__pocl_work_group_alloca"),
            "{e}"
        );
        assert_eq!(o.read(&q).unwrap(), [u32::POISON; 2], "nothing ran");
        println!("{d}: refused as before: {e}");
    }
}
