//! Device discovery, selection and sub-group capability queries, checked against `clinfo` and
//! against what kernels observe.

mod common;

use clgroups::device::{select_device, ShuffleBackend, SUB_GROUP_EXTENSIONS};
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Error, Program, Range};
use std::collections::HashMap;
use std::process::Command;

#[test]
fn discovery_lists_devices_and_picks_a_default() {
    let all = clgroups::devices().expect("devices");
    assert!(!all.is_empty());
    let d = common::device();
    assert!(all.iter().any(|x| x.id() == d.id()));
    for (i, x) in all.iter().enumerate() {
        let again = select_device(&format!("{}:{}", x.platform_index(), x.device_index()));
        assert_eq!(again.unwrap().id(), x.id(), "device {i} by index");
    }
}

#[test]
fn unknown_selector_lists_every_device() {
    let e = select_device("no-such-device-anywhere").unwrap_err();
    let Error::NoDevice { available, .. } = &e else {
        panic!("wrong error {e:?}")
    };
    for d in clgroups::devices().unwrap() {
        assert!(available.contains(d.name()), "{e}");
    }
    assert!(e.to_string().contains("no-such-device-anywhere"));
    assert!(select_device("7:7").is_err());
}

#[test]
fn backend_matches_the_driver() {
    for d in clgroups::devices().unwrap() {
        let sg = d.sub_groups();
        let (drv, eff) = (&sg.driver, &sg.effective);
        assert!(
            eff.sub_group_sizes.contains(&eff.primary_sub_group_size),
            "{d}"
        );
        if d.is_nvidia_platform() {
            assert_eq!(eff.shuffle_backend, ShuffleBackend::NvidiaPtx);
            assert_eq!(eff.primary_sub_group_size, 32);
        } else if drv.native() {
            // PoCL >= 5: khr, 128 sub-groups, Intel sizes 1..512.
            assert_eq!(eff.shuffle_backend, ShuffleBackend::Khr, "{d}");
            assert!(drv.has("cl_khr_subgroups") && drv.has("cl_khr_subgroup_shuffle"));
            if d.identity().implementation == clgroups::device::Implementation::Pocl {
                assert_eq!(drv.max_num_sub_groups, 128, "{d}");
                let want: Vec<usize> = (0..10).map(|b| 1 << b).collect();
                assert_eq!(drv.sub_group_sizes, want, "{d}");
                assert_eq!(eff.sub_group_sizes, want, "{d}");
            }
        } else {
            // PoCL 3.1: no sub-groups at all.
            assert_eq!(drv.max_num_sub_groups, 0, "{d}");
            assert!(drv.sub_group_sizes.is_empty());
            assert!(!drv.has("cl_khr_subgroups"));
            assert_eq!(eff.shuffle_backend, ShuffleBackend::Emulated, "{d}");
            // The preferred multiple (8); UNKNOWN_SIMD_WIDTH where the driver reports 0 (PoCL's
            // remote driver).
            let simd = match drv.preferred_work_group_size_multiple {
                0 => clgroups::device::UNKNOWN_SIMD_WIDTH,
                m => m,
            };
            assert_eq!(
                eff.primary_sub_group_size,
                simd.min(drv.max_work_group_size)
            );
        }
    }
    let d = common::device();
    if common::subgroups_required() {
        assert!(
            d.sub_groups().driver.native(),
            "{d} should have native sub-groups"
        );
    }
}

/// `clinfo --raw` values per device name (`None` if clinfo is missing).
fn clinfo() -> Option<HashMap<String, HashMap<String, String>>> {
    let out = Command::new("clinfo").arg("--raw").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut by_key: HashMap<String, HashMap<String, String>> = HashMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix('[') else {
            continue;
        };
        let Some((tag, kv)) = rest.split_once(']') else {
            continue;
        };
        let mut parts = kv.trim().splitn(2, char::is_whitespace);
        let (Some(k), v) = (parts.next(), parts.next().unwrap_or("").trim()) else {
            continue;
        };
        by_key
            .entry(tag.to_string())
            .or_default()
            .insert(k.to_string(), v.to_string());
    }
    // Re-key by device name.
    Some(
        by_key
            .into_values()
            .filter_map(|m| m.get("CL_DEVICE_NAME").cloned().map(|n| (n, m)))
            .collect(),
    )
}

#[test]
fn driver_values_equal_clinfo() {
    let Some(info) = clinfo() else {
        eprintln!("driver_values_equal_clinfo: not run: clinfo is not installed");
        return;
    };
    for d in clgroups::devices().unwrap() {
        let c = info
            .get(d.name())
            .unwrap_or_else(|| panic!("clinfo does not list {d}"));
        let drv = &d.sub_groups().driver;
        let get = |k: &str| c.get(k).map(String::as_str).unwrap_or("");
        assert_eq!(
            get("CL_DEVICE_MAX_WORK_GROUP_SIZE"),
            drv.max_work_group_size.to_string()
        );
        assert_eq!(
            get("CL_DEVICE_MAX_NUM_SUB_GROUPS"),
            drv.max_num_sub_groups.to_string(),
            "{d}"
        );
        let fp = if drv.independent_forward_progress {
            "CL_TRUE"
        } else {
            "CL_FALSE"
        };
        assert_eq!(
            get("CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS"),
            fp,
            "{d}"
        );
        let sizes: Vec<String> = drv.sub_group_sizes.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            get("CL_DEVICE_SUB_GROUP_SIZES_INTEL"),
            sizes.join(" "),
            "{d}"
        );
        assert_eq!(
            get("CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"),
            drv.preferred_work_group_size_multiple.to_string(),
            "{d}"
        );
        if let Some(w) = drv.warp_size_nv {
            assert_eq!(get("CL_DEVICE_WARP_SIZE_NV"), w.to_string(), "{d}");
        }
        let exts: Vec<&str> = get("CL_DEVICE_EXTENSIONS").split_whitespace().collect();
        let feats = get("CL_DEVICE_OPENCL_C_FEATURES");
        for e in SUB_GROUP_EXTENSIONS {
            let listed = exts.contains(&e)
                || feats
                    .split_whitespace()
                    .any(|f| f.starts_with(&format!("{e}:")));
            assert_eq!(drv.has(e), listed, "{d}: {e}");
        }
    }
}

/// Observes the driver's own sub-groups (native devices only).
const NATIVE_PROBE: &str = r#"
#include <clgroups/subgroup.h>
CLG_NAMED_SUB_GROUP_SIZE(automatic)
kernel void probe_auto(global uint *out) {
    uint l = get_local_linear_id();
    out[2 * l] = get_sub_group_size();
    out[2 * l + 1] = get_num_sub_groups();
}
"#;

/// Observes the layer's sub-groups (every device).
const PROBE: &str = r#"
#include <clgroups/subgroup.h>
CLG_NAMED_SUB_GROUP_SIZE(automatic)
kernel void probe_layer_auto(global uint *out) {
    uint l = sg_get_local_linear_id() + sg_get_group_linear_id() * sg_get_max_local_range();
    out[2 * l] = sg_get_max_local_range();
    out[2 * l + 1] = sg_get_group_range();
}
kernel void probe_primary(global uint *out) {
    uint l = sg_get_local_linear_id() + sg_get_group_linear_id() * sg_get_max_local_range();
    out[2 * l] = sg_get_max_local_range();
    out[2 * l + 1] = sg_get_group_range();
}
"#;

fn observe(p: &Program, kernel: &str, local: Range) -> (usize, usize) {
    let q = p.queue();
    let n = local.len();
    let mut out = Buffer::<u32>::new(q.context(), 2 * n).unwrap();
    out.fill(q, 0xdead).unwrap();
    let k = p.kernel(kernel).unwrap();
    // SAFETY: one work-group of n work-items; the probes write out[2l] and out[2l + 1] for a
    // linear id l < n, and `out` has 2n elements.
    let ev = unsafe {
        k.launch()
            .arg(&out)
            .nd_range(local, LocalSize::Exact(local))
    };
    ev.unwrap().wait().unwrap();
    let v = out.read(q).unwrap();
    let max = v.iter().step_by(2).copied().max().unwrap() as usize;
    (max, v[1] as usize)
}

#[test]
fn kernel_queries_equal_what_kernels_observe() {
    let q = common::queue();
    let d = q.device().clone();
    let p = Program::from_source(&q, PROBE).unwrap();
    let primary = d.sub_groups().effective.primary_sub_group_size;
    let k = p.kernel("probe_primary").unwrap();
    assert_eq!(k.sub_groups().compile_sub_group_size().unwrap(), primary);
    let auto = p.kernel("probe_layer_auto").unwrap();
    assert_eq!(auto.sub_groups().compile_sub_group_size().unwrap(), 0);
    // Partial sub-groups included (partial warps on NVIDIA).
    let locals = [
        Range::d1(64),
        Range::d1(24),
        Range::d2(8, 4),
        Range::d3(4, 2, 2),
        Range::d1(96),
    ];
    for local in locals {
        let (max, count) = observe(&p, "probe_primary", local);
        assert_eq!(
            k.sub_groups().max_sub_group_size(local).unwrap(),
            max,
            "{local:?}"
        );
        assert_eq!(
            k.sub_groups().sub_group_count(local).unwrap(),
            count,
            "{local:?}"
        );
    }
    let want = primary * 2;
    assert_eq!(
        k.sub_groups().local_size_for_sub_group_count(2).unwrap(),
        Some(Range::d1(want))
    );
    assert!(k.sub_groups().max_num_sub_groups().unwrap() >= 1);
    for local in [Range::d1(32), Range::d2(8, 4)] {
        let (max, count) = observe(&p, "probe_layer_auto", local);
        assert_eq!(
            auto.sub_groups().max_sub_group_size(local).unwrap(),
            max,
            "{local:?}"
        );
        assert_eq!(
            auto.sub_groups().sub_group_count(local).unwrap(),
            count,
            "{local:?}"
        );
    }
    if !common::native_or_skip(
        &d,
        "kernel_queries_equal_what_kernels_observe (driver part)",
    ) {
        let e = auto.driver_sub_groups().max_num_sub_groups();
        assert!(matches!(e, Err(Error::Unsupported { .. })), "{e:?}");
        assert!(e.unwrap_err().to_string().contains("cl_khr_subgroups"));
        return;
    }
    let p = Program::from_source(&q, NATIVE_PROBE).unwrap();
    let ka = p.kernel("probe_auto").unwrap();
    for local in [
        Range::d1(32),
        Range::d1(16),
        Range::d2(8, 4),
        Range::d2(2, 4),
    ] {
        let (max, count) = observe(&p, "probe_auto", local);
        let drv = ka.driver_sub_groups();
        assert_eq!(drv.max_sub_group_size(local).unwrap(), max, "{local:?}");
        assert_eq!(drv.sub_group_count(local).unwrap(), count, "{local:?}");
        assert_eq!(ka.sub_groups().max_sub_group_size(local).unwrap(), max);
    }
    let device_max = d.sub_groups().driver.max_num_sub_groups as usize;
    let driver_max = ka.driver_sub_groups().max_num_sub_groups().unwrap();
    eprintln!("driver CL_KERNEL_MAX_NUM_SUB_GROUPS: {driver_max} (device: {device_max})");
    let max = ka.sub_groups().max_num_sub_groups().unwrap();
    assert!(max >= 4 && max <= device_max, "{max}");
    assert!(
        driver_max == 0 || driver_max == max,
        "{driver_max} vs {max}"
    );
}

#[test]
fn no_runtime_gives_a_clear_error() {
    if std::env::var("CLGROUPS_TEST_CHILD").is_ok() {
        match clgroups::devices() {
            Ok(d) => println!("CHILD-FOUND {}", d.len()),
            Err(e) => println!("CHILD-ERROR {e}"),
        }
        return;
    }
    let empty = std::env::temp_dir().join("clgroups-no-icds");
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "no_runtime_gives_a_clear_error", "--nocapture"])
        .env("CLGROUPS_TEST_CHILD", "1")
        .env("OCL_ICD_VENDORS", &empty)
        .env("OCL_ICD_FILENAMES", "")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "CHILD-ERROR no OpenCL runtime found: install an ICD such as pocl-opencl-icd"
        ),
        "{text}"
    );
}

/// A loader with a driver that offers no device (here: PoCL told to create none) names the
/// platform and the environment that caused it, instead of asking for a driver install.
#[test]
fn platforms_without_devices_name_the_environment() {
    if std::env::var("CLGROUPS_TEST_CHILD").is_ok() {
        match clgroups::devices() {
            Ok(d) => println!("CHILD-FOUND {}", d.len()),
            Err(e) => println!("CHILD-ERROR {e}"),
        }
        return;
    }
    let pocl_only = clgroups::devices()
        .unwrap()
        .iter()
        .all(|d| d.platform_name().contains("Portable Computing Language"));
    if !pocl_only {
        eprintln!(
            "not run: a platform other than PoCL is present, and POCL_DEVICES hides only PoCL's"
        );
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "platforms_without_devices_name_the_environment",
            "--nocapture",
        ])
        .env("CLGROUPS_TEST_CHILD", "1")
        .env("POCL_DEVICES", "no-such-driver")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "CHILD-ERROR the OpenCL platforms Portable Computing Language offer no usable device"
        ),
        "{text}"
    );
    assert!(text.contains("POCL_DEVICES=\"no-such-driver\""), "{text}");
}
