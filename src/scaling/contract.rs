//! The contract a launch over several devices checks before enqueueing anything (see
//! [the module docs](super#the-contract)): per argument, whether the kernel's accesses can be
//! served by what each device holds.

use super::arg::{ColoredArg, Value};
use super::Access;
use super::Placement;
use crate::kernel::ArgSpace;
use crate::launch::Arg;
use crate::plan::Breach;
use crate::transform::IdIndex;

/// The facts of one launch the contract depends on.
pub(super) struct LaunchFacts {
    pub(super) placement: Placement,
    pub(super) rank: usize,
    pub(super) offset_is_zero: bool,
    /// Number of devices that get work.
    pub(super) busy: usize,
    /// Every device shares the host's memory (`CL_DEVICE_HOST_UNIFIED_MEMORY`).
    pub(super) unified: bool,
    /// Colored buffers are gathered whole on the one busy device (a kernel without its
    /// partitioned variant in partitioned placement, see [`crate::plan::root_fallback`]).
    pub(super) gathered: bool,
}

/// How device chunks must cover a launch's work for one colored argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cover {
    /// Nothing to check (shared placement, or a replicated buffer).
    Anything,
    /// Indexed exactly by the global linear id: the span itself must be held.
    OwnId,
    /// Declared partitioned or halo: `m * span` must be held (`m` = length / work-items).
    Multiple,
}

/// Why argument `i` (`value`, for parameter `p`) breaks the contract, or how its chunks must
/// cover the work when it does not.
pub(super) fn check(
    i: usize,
    p: Option<&ParamFacts>,
    value: &Value,
    f: &LaunchFacts,
) -> std::result::Result<Cover, Breach> {
    let name = |p: Option<&ParamFacts>| p.map_or("?", |p| p.name.as_str()).to_string();
    if f.placement == Placement::Shared {
        let written = p.is_some_and(|p| p.global && !p.read_only);
        let buffer = matches!(value, Value::Colored(_) | Value::Plain(Arg::Buffer { .. }));
        if written && buffer && f.busy > 1 && !f.unified {
            return Err(Breach::SharedWrite {
                arg: i,
                name: name(p),
                busy: f.busy,
            });
        }
        return Ok(Cover::Anything);
    }
    let kind = |c: &ColoredArg| format!("a ColoredBuffer<{}> with {:?}", c.elem, c.access);
    if f.gathered {
        // The kernel sees whole arrays; only the declared read-only kinds bind it.
        return match (value, p) {
            (Value::Colored(c), Some(p)) if !p.read_only => match c.access {
                Access::Replicated | Access::Halo(_) => Err(Breach::DeclaredReadOnly {
                    arg: i,
                    name: p.name.clone(),
                    kind: kind(c),
                }),
                _ => Ok(Cover::Anything),
            },
            _ => Ok(Cover::Anything),
        };
    }
    let Some(p) = p.filter(|p| p.global) else {
        return match (value, p) {
            // Only `global` pointers are rebased to the device's chunk.
            (Value::Colored(c), Some(p)) => Err(Breach::NotGlobal {
                arg: i,
                name: p.name.clone(),
                elem: c.elem.to_string(),
            }),
            _ => Ok(Cover::Anything),
        };
    };
    let c: &ColoredArg = match value {
        Value::Colored(c) => c,
        Value::Plain(Arg::Buffer { elem, .. }) if !p.read_only && f.busy > 1 => {
            return Err(Breach::PlainWritten {
                arg: i,
                name: p.name.clone(),
                elem: elem.to_string(),
                busy: f.busy,
            })
        }
        Value::Plain(_) => return Ok(Cover::Anything),
    };
    match c.access {
        Access::Replicated | Access::Halo(_) if !p.read_only => Err(Breach::CopiesWritten {
            arg: i,
            name: p.name.clone(),
            kind: kind(c),
        }),
        Access::Replicated => Ok(Cover::Anything),
        Access::Halo(_) | Access::Stencil(_) | Access::Partitioned => Ok(Cover::Multiple),
        Access::Auto => match p.own_id {
            Some(ix) if ix.matches(f.rank, f.offset_is_zero) => Ok(Cover::OwnId),
            _ => Err(Breach::NotOwnId {
                arg: i,
                name: p.name.clone(),
                kind: kind(c),
            }),
        },
    }
}

/// What a launch needs to know about one parameter of the original kernel.
#[derive(Clone, Debug)]
pub(super) struct ParamFacts {
    pub(super) name: String,
    /// A global pointer.
    pub(super) global: bool,
    /// The pointee is `const` (driver's `CL_KERNEL_ARG_TYPE_QUALIFIER`, else the source) and
    /// the source shows no way to write through it (`footprint::const_dropped`).
    pub(super) read_only: bool,
    /// Proven to be indexed only by the work-item's own global id.
    pub(super) own_id: Option<IdIndex>,
}

/// The kernel's parameters as the driver describes them (no source to prove anything from):
/// a pointer whose pointee the driver does not report `const` counts as written.
pub(in crate::scaling) fn driver_params(k: &crate::Kernel) -> Vec<ParamFacts> {
    let args = k.args().iter().enumerate();
    args.map(|(i, a)| ParamFacts {
        name: a.name.clone().unwrap_or_else(|| format!("#{i}")),
        global: !matches!(a.space, Some(ArgSpace::Local | ArgSpace::Private)),
        read_only: a.is_const == Some(true),
        own_id: None,
    })
    .collect()
}

/// Whether `source` (comments aside) names an atomic function or type (`atomic_*`,
/// `atom_*`, `__opencl_atomic_*`, clang's `__sync_*`, ...) or pastes tokens: writes of several devices merged element by element
/// could lose its updates, so such kernels are not merged. Conservative: any kernel of the
/// source counts.
pub(super) fn uses_atomics(source: &str) -> bool {
    let mut code = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find('/') {
        code.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = match tail.as_bytes().get(1) {
            Some(b'/') => tail.find('\n').unwrap_or(tail.len()),
            Some(b'*') => tail[2..].find("*/").map_or(tail.len(), |e| e + 4),
            _ => {
                code.push('/');
                1
            }
        };
        code.push(' ');
        rest = &tail[end..];
    }
    code.push_str(rest);
    // Token pasting (`ato ## mic_inc`) may make any name.
    code.contains("##")
        || (code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))).any(|w| {
            w.contains("atomic")
                || w.trim_start_matches('_').starts_with("atom_")
                || w.starts_with("__sync_")
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn atomics_are_found_outside_comments() {
        assert!(uses_atomics(
            "kernel void k(global int *s) { atomic_add(s, 1); }"
        ));
        assert!(uses_atomics(
            "kernel void k(global int *s) { atom_inc(s); }"
        ));
        assert!(uses_atomics(
            "kernel void k(volatile global atomic_int *s) {}"
        ));
        assert!(uses_atomics("x = __opencl_atomic_fetch_add(p, 1, o, s);"));
        assert!(uses_atomics("x = __sync_fetch_and_add(p, 1);"));
        assert!(uses_atomics(
            "#define CAT(a, b) a##b\nCAT(ato, mic_inc)(p);"
        ));
        assert!(!uses_atomics(
            "// atomic_add(s, 1)\nkernel void k(global int *anatomy) {}"
        ));
        assert!(!uses_atomics(
            "/* atomic_inc */ kernel void k(global int *s) { s[0] = 1 / 2; }"
        ));
    }

    use super::*;
    use crate::transform::IdIndex;

    fn facts(placement: Placement, busy: usize) -> LaunchFacts {
        LaunchFacts {
            placement,
            rank: 1,
            offset_is_zero: true,
            busy,
            unified: true,
            gathered: false,
        }
    }

    fn param(read_only: bool, own_id: bool) -> ParamFacts {
        ParamFacts {
            name: "x".into(),
            global: true,
            read_only,
            own_id: own_id.then_some(IdIndex {
                global_id0: true,
                linear_id: false,
            }),
        }
    }

    #[allow(clippy::arc_with_non_send_sync)] // as `ColoredBuffer::root_arg` makes it
    fn colored(access: Access) -> Value {
        Value::Colored(std::sync::Arc::new(ColoredArg {
            elem: crate::buffer::ElemType::of::<f32>(),
            elem_size: 4,
            len: 8,
            placement: Placement::Partitioned,
            whole: None,
            parts: vec![],
            starts: vec![0, 4],
            chunks: vec![4, 4],
            access,
            stored: vec![(0, 4), (4, 8)],
            tiling: None,
            owned: vec![vec![(0, 4)], vec![(4, 8)]],
            margins: None,
            residence: None,
        }))
    }

    #[test]
    fn shared_placement_accepts_everything() {
        let f = facts(Placement::Shared, 2);
        let v = colored(Access::Auto);
        assert_eq!(
            check(0, Some(&param(false, false)), &v, &f),
            Ok(Cover::Anything)
        );
    }

    #[test]
    fn shared_placement_needs_shared_memory_for_writes() {
        let f = LaunchFacts {
            unified: false,
            ..facts(Placement::Shared, 2)
        };
        let v = colored(Access::Auto);
        let e = check(0, Some(&param(false, true)), &v, &f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not share the host's memory"), "{e}");
        assert!(check(0, Some(&param(true, true)), &v, &f).is_ok());
        let one = LaunchFacts { busy: 1, ..f };
        assert!(check(0, Some(&param(false, true)), &v, &one).is_ok());
    }

    #[test]
    fn auto_needs_a_proof() {
        let f = facts(Placement::Partitioned, 2);
        let v = colored(Access::Auto);
        assert_eq!(check(0, Some(&param(true, true)), &v, &f), Ok(Cover::OwnId));
        let e = check(1, Some(&param(true, false)), &v, &f)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("argument 1 (`x`, a ColoredBuffer<float> with Auto)"),
            "{e}"
        );
        assert!(e.contains("Access::Halo(n)"), "{e}");
        let two_d = LaunchFacts { rank: 2, ..f };
        assert!(check(0, Some(&param(true, true)), &v, &two_d).is_err());
    }

    #[test]
    fn read_only_kinds_refuse_writes() {
        let f = facts(Placement::Partitioned, 2);
        for access in [Access::Replicated, Access::Halo(1)] {
            let e = check(0, Some(&param(false, false)), &colored(access), &f)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is written by the kernel"), "{e}");
            assert!(check(0, Some(&param(true, false)), &colored(access), &f).is_ok());
        }
        let p = check(
            0,
            Some(&param(false, false)),
            &colored(Access::Partitioned),
            &f,
        );
        assert_eq!(p, Ok(Cover::Multiple));
    }

    #[test]
    fn colored_buffers_reach_only_global_pointers() {
        let f = facts(Placement::Partitioned, 2);
        let constant = ParamFacts {
            global: false,
            ..param(true, false)
        };
        let e = check(3, Some(&constant), &colored(Access::Replicated), &f)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a `global` pointer"), "{e}");
        let shared = facts(Placement::Shared, 2);
        assert!(check(3, Some(&constant), &colored(Access::Auto), &shared).is_ok());
    }

    #[test]
    fn gathered_buffers_keep_only_the_read_only_declarations() {
        let f = LaunchFacts {
            gathered: true,
            ..facts(Placement::Partitioned, 1)
        };
        let written = param(false, false);
        for access in [Access::Auto, Access::Partitioned] {
            assert_eq!(
                check(0, Some(&written), &colored(access), &f),
                Ok(Cover::Anything)
            );
        }
        for access in [Access::Replicated, Access::Halo(2)] {
            let e = check(0, Some(&written), &colored(access), &f)
                .unwrap_err()
                .to_string();
            assert!(e.contains("declared read-only"), "{e}");
            let read = param(true, false);
            assert_eq!(
                check(0, Some(&read), &colored(access), &f),
                Ok(Cover::Anything)
            );
        }
    }

    #[test]
    fn written_plain_buffers_need_one_device_or_shared_memory() {
        let buf = Value::Plain(Arg::Buffer {
            mem: crate::launch::Mem::null(),
            elem: crate::buffer::ElemType::of::<i32>(),
        });
        let w = param(false, false);
        let e = check(2, Some(&w), &buf, &facts(Placement::Partitioned, 2))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("argument 2 (`x`, a Buffer<int>) is written"),
            "{e}"
        );
        assert!(check(2, Some(&w), &buf, &facts(Placement::Partitioned, 1)).is_ok());
        assert!(check(
            2,
            Some(&param(true, false)),
            &buf,
            &facts(Placement::Partitioned, 2)
        )
        .is_ok());
    }
}
