//! Sub-group sizes as kernels ask for them (`CLG_REQD_SUB_GROUP_SIZE`, `CLG_NAMED_SUB_GROUP_SIZE`,
//! the program default, the driver's automatic size), partial sub-groups smaller than the size,
//! and build errors that name the user's file and line.

mod common;

use common::Poison;

use clgroups::device::ShuffleBackend;
use clgroups::launch::LocalSize;
use clgroups::program::SubGroupSize;
use clgroups::{Buffer, Error, Program, Range};

/// Kernels asking for sub-group sizes; each writes `sg_get_max_local_range()`.
const SIZES: &str = r#"
#include <clgroups/subgroup.h>
kernel CLG_REQD_SUB_GROUP_SIZE(16) void reqd16(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
kernel CLG_REQD_SUB_GROUP_SIZE(3) void reqd3(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
kernel CLG_REQD_SUB_GROUP_SIZE(64) void reqd64(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
kernel CLG_NAMED_SUB_GROUP_SIZE(primary) void primary(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
kernel CLG_NAMED_SUB_GROUP_SIZE(automatic) void automatic(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
kernel void plain(global uint *o) { o[get_global_id(0)] = sg_get_max_local_range(); }
"#;

/// Runs `name` over 64 work-items in work-groups of `local`; the outputs, or the launch error
/// with the (then checked untouched) poisoned output.
fn observe(p: &Program, name: &str, local: Range) -> Result<Vec<u32>, Error> {
    let q = p.queue();
    let out = Buffer::from_slice(q, &[u32::POISON; 64]).expect("buffer");
    let k = p.kernel(name).expect(name);
    // SAFETY: every kernel observed (SIZES', `part`) writes o[get_global_id(0)] for 64 ids;
    // `out` has 64.
    let launched = unsafe {
        k.launch()
            .arg(&out)
            .nd_range(Range::d1(64), LocalSize::Exact(local))
    }
    .and_then(|e| e.wait());
    let v = out.read(q).expect("read");
    match launched {
        Ok(()) => Ok(v),
        Err(e) => {
            assert_eq!(
                v,
                vec![u32::POISON; 64],
                "{name}: output written despite {e}"
            );
            Err(e)
        }
    }
}

fn compile_size(p: &Program, name: &str) -> usize {
    let k = p.kernel(name).expect(name);
    k.sub_groups().compile_sub_group_size().expect(name)
}

#[test]
fn required_and_named_sizes() {
    let q = common::queue();
    let d = q.device().clone();
    let eff = &d.sub_groups().effective;
    let nvidia = eff.shuffle_backend == ShuffleBackend::NvidiaPtx;
    let p = Program::builder(SIZES).build(&q).expect("build");
    let unsupported: &[(&str, usize)] = if nvidia {
        &[("reqd3", 3), ("reqd64", 64)]
    } else {
        &[("reqd3", 3)]
    };
    for &(name, size) in unsupported {
        match observe(&p, name, Range::d1(32)) {
            Err(Error::FeatureNotSupported {
                kernel, requested, ..
            }) => assert_eq!((kernel.as_str(), requested), (name, size)),
            other => panic!("{name}: expected FeatureNotSupported, got {other:?}"),
        }
        assert!(matches!(
            p.kernel(name)
                .unwrap()
                .sub_groups()
                .compile_sub_group_size(),
            Err(Error::FeatureNotSupported { .. })
        ));
    }
    let primary = eff.primary_sub_group_size;
    assert_eq!(compile_size(&p, "primary"), primary);
    assert_eq!(compile_size(&p, "plain"), primary);
    assert_eq!(
        observe(&p, "primary", Range::d1(32)).unwrap(),
        vec![primary as u32; 64]
    );
    assert_eq!(
        observe(&p, "plain", Range::d1(32)).unwrap(),
        vec![primary as u32; 64]
    );
    assert_eq!(compile_size(&p, "reqd16"), 16);
    assert_eq!(observe(&p, "reqd16", Range::d1(32)).unwrap(), vec![16; 64]);
    // 0 even where the backend fixes the size (emulated, nvidia-ptx).
    assert_eq!(compile_size(&p, "automatic"), 0);
}

#[test]
fn program_default_size_applies_to_kernels_that_say_nothing() {
    let q = common::queue();
    let eff = &q.device().sub_groups().effective;
    let p = Program::builder(SIZES)
        .default_sub_group_size(SubGroupSize::Exact(16))
        .build(&q)
        .expect("build");
    assert_eq!(observe(&p, "plain", Range::d1(64)).unwrap(), vec![16; 64]);
    assert_eq!(compile_size(&p, "plain"), 16);
    let primary = eff.primary_sub_group_size as u32;
    assert_eq!(
        observe(&p, "primary", Range::d1(64)).unwrap(),
        vec![primary; 64]
    );
}

/// Per work-item: sub-group id, lane, range, and the sub-group's sum of ones (+128 if the lane
/// mirrored in its sub-group is not the one read), a byte each.
const GEOMETRY: &str = r#"
#include <clgroups/subgroup.h>
kernel void geometry(global uint *o) {
    uint lane = sg_get_local_id(), n = sg_get_local_range();
    uint mirrored = sg_shuffle(lane, n - 1u - lane) == n - 1u - lane ? 0u : 128u;
    o[get_global_id(0)] = sg_get_group_id() << 24 | lane << 16 | n << 8 | (sg_reduce_add(1u) + mirrored);
}
"#;

/// Every size up to 32 that clgroups provides (`nvidia-ptx`: segments of a warp; `emulated`)
/// runs as asked over three work-groups of 64, 40, 24 and 5 work-items: ids, lanes, ranges
/// (partial last sub-groups included), sums and shuffles within each sub-group.
#[test]
fn every_provided_size_runs_as_asked() {
    let q = common::queue();
    let eff = &q.device().sub_groups().effective;
    if !matches!(
        eff.shuffle_backend,
        ShuffleBackend::NvidiaPtx | ShuffleBackend::Emulated
    ) {
        eprintln!("not run: the driver's sub-groups ({})", eff.shuffle_backend);
        return;
    }
    for &s in eff.sub_group_sizes.iter().filter(|&&s| s <= 32) {
        let p = Program::builder(GEOMETRY)
            .default_sub_group_size(SubGroupSize::Exact(s))
            .build(&q)
            .expect("build");
        let k = p.kernel("geometry").expect("geometry");
        for local in [64usize, 40, 24, 5] {
            let out = Buffer::from_slice(&q, &vec![u32::POISON; 3 * local]).expect("buffer");
            // SAFETY: `geometry` writes o[get_global_id(0)] for 3 * local ids; `out` has as many.
            unsafe {
                k.launch()
                    .arg(&out)
                    .nd_range(Range::d1(3 * local), LocalSize::Exact(Range::d1(local)))
            }
            .and_then(|e| e.wait())
            .unwrap_or_else(|e| panic!("size {s}, local {local}: {e}"));
            let want: Vec<u32> = (0..3 * local)
                .map(|g| {
                    let l = g % local;
                    let n = s.min(local - l / s * s) as u32;
                    ((l / s) as u32) << 24 | ((l % s) as u32) << 16 | n << 8 | n
                })
                .collect();
            assert_eq!(out.read(&q).unwrap(), want, "size {s}, local {local}");
        }
    }
}

#[test]
fn automatic_observes_the_drivers_size() {
    let q = common::queue();
    let d = q.device().clone();
    if !common::native_or_skip(&d, "automatic_observes_the_drivers_size") {
        return;
    }
    let p = Program::builder(SIZES).build(&q).expect("build");
    let k = p.kernel("automatic").expect("automatic");
    for local in [Range::d1(16), Range::d1(32), Range::d1(64)] {
        let driver = k
            .driver_sub_groups()
            .max_sub_group_size(local)
            .expect("driver query");
        let seen = observe(&p, "automatic", local).unwrap();
        assert_eq!(seen, vec![driver as u32; 64], "local {local:?}");
        if d.identity().implementation == clgroups::device::Implementation::Pocl {
            assert_eq!(driver, local.as_slice()[0], "PoCL: the local X size");
        }
    }
}

#[test]
fn work_groups_smaller_than_a_sub_group_are_one_partial_sub_group() {
    let q = common::queue();
    let src = "#include <clgroups/subgroup.h>\n\
        kernel void part(global uint *o) {\n\
            o[get_global_id(0)] = sg_get_local_range() * 1000u + sg_reduce_add(1u);\n\
        }";
    let p = Program::from_source(&q, src).expect("build");
    let size = q.device().sub_groups().effective.primary_sub_group_size;
    if size <= 16 {
        eprintln!("not run: sub-groups of {size} (a work-group of 16 is whole sub-groups)");
        return;
    }
    // 16 work-items: one sub-group of 16 (on NVIDIA, half a warp): its range and its sum.
    let got = observe(&p, "part", Range::d1(16)).expect("partial sub-group");
    assert_eq!(got, vec![16 * 1000 + 16; 64], "sub-groups of {size}");
}

#[test]
fn build_errors_name_the_file_and_line() {
    let q = common::queue();
    let src = "kernel void broken(global int *o) {\n    int a = 1;\n    o[0] = a + undeclared_thing;\n}\n";
    let e = Program::builder(src)
        .file_name("broken.cl")
        .build(&q)
        .expect_err("an undeclared identifier fails the build");
    let msg = e.to_string();
    eprintln!("{msg}");
    assert!(matches!(e, Error::Build { .. }), "{msg}");
    // Line 3 of the user's file, whatever the prelude before it (NVIDIA's compiler ignores
    // `#line`; clgroups maps its positions back).
    assert!(msg.contains("broken.cl:3:"), "{msg}");
    assert!(msg.contains("undeclared_thing"), "{msg}");
}
