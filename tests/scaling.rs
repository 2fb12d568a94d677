//! Implicit scaling on whatever the default platform offers: its devices when it has several
//! (`POCL_DEVICES="pthread pthread"`, two GPUs), else the default device split in two.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.
//! The placement is the root device's (`CLGROUPS_PLACEMENT=partitioned` tests the other one
//! on shared-memory devices); in partitioned placement buffers get pages of one work-group
//! slab so that their chunks match the launch's partition.

mod common;

use clgroups::buffer::Scalar;
use clgroups::launch::{Local, LocalSize};
use clgroups::plan::coloring::color_elements;
use clgroups::scaling::{Access, ColoredBuffer, Placement, RootDevice};
use clgroups::{Buffer, Error, Program, Range};

/// Every kernel here indexes with `get_global_id` and takes the sizes it needs as arguments.
const SOURCE: &str = r#"
kernel void blend(global float *out, global const float *in, uint nx, uint ny, local float *tile) {
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t i = x + nx * (y + ny * z);
    size_t l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2));
    size_t n = get_local_size(0) * get_local_size(1) * get_local_size(2);
    tile[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc = 0.0f;
    for (size_t j = 0; j < n; ++j) acc += tile[j] * (float)(j + 1);
    out[i] = acc + sin(in[i]) + (float)(x * 3 + y * 5 + z * 7);
}

kernel void sizes(global uint *out, uint dim) {
    size_t i = get_global_id(0);
    out[3 * i] = get_global_size(dim);
    out[3 * i + 1] = get_group_id(dim);
    out[3 * i + 2] = get_num_groups(dim);
}
"#;

fn root(test: &str) -> Option<RootDevice> {
    // Profiling queues: tests read device times.
    let root = common::root_device(test)?
        .with_profiling()
        .expect("profiling queues");
    // Where the devices do not share the host's memory, shared placement runs a launch that
    // writes a buffer on one device (by design): these tests, which look at the split, run
    // partitioned there (`CLGROUPS_PLACEMENT=shared` on two GPUs).
    let unified = (root.devices().iter()).all(|d| d.limits().host_unified_memory);
    Some(match (root.placement(), unified) {
        (Placement::Shared, false) => {
            eprintln!("{test}: shared placement not run: the devices do not share host memory");
            root.with_placement(Placement::Partitioned)
        }
        _ => root,
    })
}

/// Distinct, non-zero floats.
fn input(n: usize) -> Vec<f32> {
    common::values(n, 42)
        .into_iter()
        .map(|v| v as f32 * 0.37)
        .collect()
}

/// A colored buffer of `len` elements, unwritten: in partitioned placement in pages of `slab` elements
/// and declared [`Access::Partitioned`] (the kernels index it by `m * id + j`), else with the
/// default page.
fn unwritten<T: Scalar>(root: &RootDevice, len: usize, slab: usize) -> ColoredBuffer<T> {
    match root.placement() {
        Placement::Partitioned => {
            ColoredBuffer::with_layout(root, len, slab * size_of::<T>(), Access::Partitioned)
                .unwrap()
        }
        Placement::Shared => ColoredBuffer::new(root, len).unwrap(),
    }
}

/// Runs `blend` over `global`/`local` on all devices and on device 0 alone (plain buffers);
/// asserts identical bits and returns the partitioned dimension (in partitioned placement
/// too, whichever dimension is split).
fn same_bits(root: &RootDevice, global: Range, local: Range) -> usize {
    let n = global.len();
    let prog = root.program(SOURCE).unwrap();
    let k = prog.kernel("blend").unwrap();
    // Colored for this launch: in partitioned placement each device owns its work-items'
    // elements whichever dimension is split.
    let for_launch = || ColoredBuffer::for_launch(root, global, local, Access::Partitioned);
    let mut x = for_launch().unwrap();
    x.write(&input(n)).unwrap();
    let mut multi = for_launch().unwrap();
    multi.fill(-1.0).unwrap();
    let (nx, ny) = (global.get(0) as u32, global.get(1) as u32);
    let tile = Local::<f32>::new(local.len());
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let launched = unsafe {
        k.launch()
            .arg(&multi)
            .arg(&x)
            .arg(nx)
            .arg(ny)
            .arg(tile)
            .nd_range(global, local)
    };
    let ev = launched.unwrap_or_else(|e| panic!("global {global:?} local {local:?}: {e}"));
    ev.wait().unwrap();
    let q = &root.queues()[0];
    let one = Program::from_source(q, SOURCE).unwrap();
    let mut single = Buffer::<f32>::new(root.context(), n).unwrap();
    single.fill(q, -2.0).unwrap();
    let xs = Buffer::from_slice(q, &input(n)).unwrap();
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    unsafe {
        one.kernel("blend")
            .unwrap()
            .launch()
            .arg(&single)
            .arg(&xs)
            .arg(nx)
            .arg(ny)
            .arg(tile)
            .nd_range(global, LocalSize::Exact(local))
    }
    .unwrap()
    .wait()
    .unwrap();
    let (m, s) = (multi.read().unwrap(), single.read(q).unwrap());
    assert!(s.iter().all(|v| *v != -2.0), "single-device run incomplete");
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&m), bits(&s), "global {global:?} local {local:?}");
    let p = ev.partition();
    let launched: Vec<bool> = ev.events().iter().map(Option::is_some).collect();
    let want: Vec<bool> = p.chunks.iter().map(|&c| c > 0).collect();
    assert_eq!(launched, want);
    assert_eq!(
        p.chunks.iter().sum::<usize>(),
        global.get(p.dim) / local.get(p.dim)
    );
    p.dim
}

/// The seed's shapes, scaled down (SYCL order in the comments; OpenCL order in the code).
#[test]
fn bit_identical_1d_2d_3d() {
    let Some(root) = root("bit_identical_1d_2d_3d") else {
        return;
    };
    let two = root.len() == 2;
    let cases = [
        // 1-D: 19 and 21 groups.
        (Range::d1(19 * 64), Range::d1(64), 0),
        (Range::d1(21 * 32), Range::d1(32), 0),
        // 2-D, SYCL {19, 64} local {1, 16}: 19 y-groups are 5.3% off, 4 x-groups are even.
        (Range::d2(64, 19), Range::d2(16, 1), 0),
        (Range::d2(64, 18), Range::d2(16, 1), 1),
        // 3-D, SYCL {nz, 32, 64} local {1, 1, 16}: the seed's table.
        (Range::d3(64, 32, 21), Range::d3(16, 1, 1), 2),
        (Range::d3(64, 32, 19), Range::d3(16, 1, 1), 1),
        (Range::d3(64, 32, 18), Range::d3(16, 1, 1), 2),
        (Range::d3(64, 19, 19), Range::d3(16, 1, 1), 0),
        // SYCL {38, 32, 64}: local {2, 1, 8} splits y, local {1, 1, 16} splits z.
        (Range::d3(64, 32, 38), Range::d3(8, 1, 2), 1),
        (Range::d3(64, 32, 38), Range::d3(16, 1, 1), 2),
    ];
    for placement in common::placements(&root) {
        let root = root.clone().with_placement(placement);
        for (global, local, dim) in cases {
            let got = same_bits(&root, global, local);
            if two {
                assert_eq!(got, dim, "global {global:?} local {local:?} ({placement})");
            }
        }
    }
}

/// get_global_size, get_group_id and get_num_groups report the whole launch, as on one device.
#[test]
fn size_queries_report_the_whole_launch() {
    let Some(root) = root("size_queries_report_the_whole_launch") else {
        return;
    };
    let (global, local) = (Range::d1(19 * 16), Range::d1(16));
    let k = root.program(SOURCE).unwrap().kernel("sizes").unwrap();
    let out = unwritten::<u32>(&root, 3 * global.len(), 3 * 16);
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let ev = unsafe { k.launch().arg(&out).arg(0u32).nd_range(global, local) }.unwrap();
    ev.wait().unwrap();
    let got = out.read().unwrap();
    let subs = ev.partition().sub_ranges(global, local);
    assert!(subs.iter().filter(|s| s.is_some()).count() >= 2);
    for (off, size) in subs.into_iter().flatten() {
        for i in off.get(0)..off.get(0) + size.get(0) {
            let want = [global.get(0) as u32, (i / 16) as u32, 19];
            assert_eq!(got[3 * i..3 * i + 3], want, "work-item {i}");
        }
        assert_ne!(size.get(0), global.get(0));
    }
}

#[test]
fn one_work_group_runs_on_device_0_only() {
    let Some(root) = root("one_work_group_runs_on_device_0_only") else {
        return;
    };
    let k = root.program(SOURCE).unwrap().kernel("sizes").unwrap();
    let out = ColoredBuffer::<u32>::with_access(&root, 3 * 64, Access::Partitioned).unwrap();
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let ev = unsafe {
        k.launch()
            .arg(&out)
            .arg(0u32)
            .nd_range(Range::d1(64), Range::d1(64))
    }
    .unwrap();
    let launched: Vec<bool> = ev.events().iter().map(Option::is_some).collect();
    let mut want = vec![false; root.len()];
    want[0] = true;
    assert_eq!(launched, want);
    assert_eq!(ev.partition().chunks[0], 1);
    assert!(ev.duration().unwrap() > std::time::Duration::ZERO);
    assert_eq!(out.read().unwrap()[..3], [64, 0, 1]);
}

#[test]
fn every_device_gets_its_chunk_with_an_offset() {
    let Some(root) = root("every_device_gets_its_chunk_with_an_offset") else {
        return;
    };
    let n = root.len();
    let k = root.program(SOURCE).unwrap().kernel("sizes").unwrap();
    let mut out = unwritten::<u32>(&root, 3 * 64 * (4 * n + 1), 3 * 64);
    out.fill(7).unwrap();
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let ev = unsafe {
        k.launch()
            .arg(&out)
            .arg(0u32)
            .offset(Range::d1(64))
            .nd_range(Range::d1(64 * 4 * n), Range::d1(64))
    }
    .unwrap();
    assert_eq!(ev.partition().chunks, vec![4; n]);
    let durations = ev.device_durations().unwrap();
    assert!(durations
        .iter()
        .all(|d| d.is_some_and(|d| d > std::time::Duration::ZERO)));
    let total = ev.duration().unwrap();
    assert!(durations.iter().all(|d| d.unwrap() <= total));
    let got = out.read().unwrap();
    assert_eq!(got[..3 * 64], vec![7; 3 * 64][..], "before the offset");
    let (size, groups) = (64 * 4 * n as u32, 4 * n as u32);
    assert_eq!(got[3 * 64..3 * 64 + 3], [size, 0, groups]);
    assert_eq!(got[3 * (64 * 4 * n + 63)..], [size, groups - 1, groups]);
}

#[test]
fn invalid_launches_fail_before_enqueueing() {
    let Some(root) = root("invalid_launches_fail_before_enqueueing") else {
        return;
    };
    let k = root.program(SOURCE).unwrap().kernel("sizes").unwrap();
    let mut out = unwritten::<u32>(&root, 3 * 1024, 3 * 64);
    out.fill(9).unwrap();
    let bad = [
        (Range::d1(1000), Range::d1(64), "does not divide"),
        (Range::d2(64, 4), Range::d1(64), "dimensions"),
    ];
    for (global, local, msg) in bad {
        // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
        let e = unsafe { k.launch().arg(&out).arg(0u32).nd_range(global, local) }
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidLaunch { .. }) && e.to_string().contains(msg),
            "{e}"
        );
    }
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let e = unsafe {
        k.launch()
            .arg(&out)
            .offset(Range::d2(0, 0))
            .arg(0u32)
            .nd_range(Range::d1(1024), Range::d1(64))
    }
    .map(|_| ())
    .unwrap_err();
    assert!(e.to_string().contains("another rank"), "{e}");
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let e = unsafe {
        k.launch()
            .arg(&out)
            .nd_range(Range::d1(1024), Range::d1(64))
    }
    .map(|_| ())
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    root.finish().unwrap();
    assert!(out.read().unwrap().iter().all(|&v| v == 9), "something ran");
}

#[test]
fn root_device_rejects_bad_device_sets() {
    let e = RootDevice::new(&[]).unwrap_err();
    assert!(e.to_string().contains("at least one device"), "{e}");
    let d = common::device();
    let e = RootDevice::new(&[d.clone(), d]).unwrap_err();
    assert!(e.to_string().contains("device 1 repeats device 0"), "{e}");
}

#[test]
fn colored_buffers_follow_the_coloring_plan() {
    let Some(root) = root("colored_buffers_follow_the_coloring_plan") else {
        return;
    };
    let page = root.default_page_size();
    assert_eq!(page % 65536, 0);
    for d in root.devices() {
        assert_eq!(page % d.limits().mem_base_addr_align, 0);
    }
    let len = 3 * page / 4 + 5; // three pages and a bit of floats: 4 pages
    let data = input(len);
    let buf = ColoredBuffer::from_slice(&root, &data).unwrap();
    // The default page: the root device's in shared placement, one element in partitioned.
    let shared = root.placement() == Placement::Shared;
    assert_eq!(buf.page_size(), if shared { page } else { 4 });
    let want: Vec<usize> = color_elements::<f32>(len, buf.page_size(), 1, root.len())
        .unwrap()
        .iter()
        .map(|b| b / 4)
        .collect();
    assert_eq!(buf.chunks(), want);
    assert_eq!(buf.chunks().iter().sum::<usize>(), len);
    for (i, &c) in buf.chunks().iter().enumerate() {
        assert_eq!(buf.part(i).map(|p| p.len()), (c > 0).then_some(c));
    }
    assert_eq!(buf.read().unwrap(), data);
    let small = ColoredBuffer::from_slice(&root, &[1u8, 2, 3]).unwrap();
    let want = color_elements::<u8>(3, small.page_size(), 1, root.len()).unwrap();
    assert_eq!(small.chunks(), want);
    if shared {
        // Less than a page: device 0 alone.
        assert_eq!(small.chunks()[0], 3);
        assert!(small.part(1).is_none());
    }
    if root.placement() == Placement::Shared {
        assert!(ColoredBuffer::<f32>::with_page(&root, 10, page + 1).is_err());
    }
    assert!(ColoredBuffer::<f32>::new(&root, 0).is_err());
    let mut b = ColoredBuffer::<f32>::new(&root, 8).unwrap();
    assert!(b.write(&[1.0; 7]).is_err());
}

/// In partitioned placement and strict mode, a device whose work leaves its chunk is refused
/// before anything runs, with the buffer, device, ranges and a page that fits.
#[test]
fn partitioned_launches_outside_a_chunk_fail_before_enqueueing() {
    let Some(root) = root("partitioned_launches_outside_a_chunk_fail_before_enqueueing") else {
        return;
    };
    // Strict: refused as the contract says (without it, merged: tests/scaling_implicit.rs).
    let root = root.with_placement(Placement::Partitioned).strict();
    let k = root.program(SOURCE).unwrap().kernel("sizes").unwrap();
    let n = 64 * 2 * root.len();
    // 64 KiB pages: every element on device 0.
    let page = root.default_page_size();
    let mut out =
        ColoredBuffer::<u32>::with_layout(&root, 3 * n, page, Access::Partitioned).unwrap();
    assert_eq!(out.chunks()[0], 3 * n);
    assert_eq!(out.placement(), Placement::Partitioned);
    assert!(out.parent().is_none());
    out.fill(5).unwrap();
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    let e = unsafe {
        k.launch()
            .arg(&out)
            .arg(0u32)
            .nd_range(Range::d1(n), Range::d1(64))
    }
    .map(|_| ())
    .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    let (lo, hi) = (3 * n / root.len(), 3 * 2 * n / root.len());
    let want = format!("device 1 works on elements [{lo}, {hi}) of argument 0 (ColoredBuffer<uint> of {} elements), but holds only [{}, {})", 3 * n, 3 * n, 3 * n);
    assert!(text.contains(&want), "{text}");
    let fix = format!("ColoredBuffer::with_page(&root, {}, {})", 3 * n, 3 * 64 * 4);
    assert!(text.contains(&fix), "{text}");
    root.finish().unwrap();
    assert!(out.read().unwrap().iter().all(|&v| v == 5), "something ran");
    // The suggested page works.
    let good =
        ColoredBuffer::<u32>::with_layout(&root, 3 * n, 3 * 64 * 4, Access::Partitioned).unwrap();
    // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
    unsafe {
        k.launch()
            .arg(&good)
            .arg(0u32)
            .nd_range(Range::d1(n), Range::d1(64))
    }
    .unwrap()
    .wait()
    .unwrap();
    let got = good.read().unwrap();
    assert_eq!(
        got[3 * (n - 1)..],
        [n as u32, (n / 64 - 1) as u32, (n / 64) as u32]
    );
}

/// A buffer colored for one launch (`ColoredBuffer::for_launch`) follows its partition in any
/// dimension, and only that launch takes it in partitioned placement and strict mode.
#[test]
fn buffers_colored_for_a_launch() {
    let Some(root) = root("buffers_colored_for_a_launch") else {
        return;
    };
    const DOUBLE: &str = "kernel void double_it(global int *y, global const int *x) {
        size_t i = get_global_linear_id();
        y[i] = 2 * x[i];
    }";
    // 19 rows of 4 x-groups: the split is in x (dimension 0) on two devices.
    let (global, local) = (Range::d2(64, 19), Range::d2(16, 1));
    let xs = common::values(global.len(), 5);
    for placement in common::placements(&root) {
        // Strict: what the coloring does not fit is refused, not merged.
        let root = root.clone().with_placement(placement).strict();
        let k = root.program(DOUBLE).unwrap().kernel("double_it").unwrap();
        let mut x = ColoredBuffer::for_launch(&root, global, local, Access::Auto).unwrap();
        x.write(&xs).unwrap();
        assert_eq!(x.read().unwrap(), xs);
        let mut y = ColoredBuffer::for_launch(&root, global, local, Access::Auto).unwrap();
        y.fill(-1).unwrap();
        // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
        let ev = unsafe { k.launch().arg(&y).arg(&x).nd_range(global, local) }.unwrap();
        if root.len() == 2 {
            assert_eq!(ev.partition().dim, 0);
        }
        let want: Vec<i32> = xs.iter().map(|v| 2 * v).collect();
        assert_eq!(y.read().unwrap(), want, "{placement}");
        // Another launch shape: refused in partitioned placement, nothing enqueued.
        y.fill(-1).unwrap();
        // SAFETY: the kernels touch their buffers only at indices derived from global ids of the launched range, which the buffers hold.
        let other = unsafe {
            k.launch()
                .arg(&y)
                .arg(&x)
                .nd_range(global, Range::d2(32, 1))
        };
        match placement {
            Placement::Shared => assert_eq!(y.read().unwrap(), want),
            // Refused before anything is enqueued, unless the kernel's footprints let the
            // launch move what each device lacks: then the answer is the one-device answer.
            Placement::Partitioned => match other {
                Err(e) => {
                    let e = e.to_string();
                    assert!(e.contains("is colored for an ND-range of"), "{e}");
                    assert!(y.read().unwrap().iter().all(|&v| v == -1));
                }
                Ok(_) => assert_eq!(y.read().unwrap(), want, "{placement}"),
            },
        }
    }
}
