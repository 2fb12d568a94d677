//! A device behind PoCL-R is what its server serves: its facts (as `sgquery --json` prints them)
//! equal the local device's, field by field, platform and index aside.
//!
//! `CLGROUPS_REMOTE_EXPECTED` names a file with `sgquery --json` run where the servers run, on
//! the servers' OpenCL (scripts/test-all's PoCL-R pass and scripts/gpu-remote make it); every
//! remote device must then match the entry of the same device name. Without it, remote devices
//! are only checked for what PoCL-R used to lose (a preferred work-group size multiple of 0,
//! feature names with a leading space), and a run without remote devices checks nothing.

mod common;

use clgroups::device::{Device, Implementation, SUB_GROUP_EXTENSIONS};
use clgroups::Queue;
use serde_json::{json, Value};

/// The fields of `sgquery --json` that say what a device is (all but `index` and `platform`),
/// computed as `examples/sgquery.rs` does.
fn facts(d: &Device) -> Value {
    let sg = d.sub_groups();
    let (drv, eff) = (&sg.driver, &sg.effective);
    let extensions: serde_json::Map<String, Value> = SUB_GROUP_EXTENSIONS
        .iter()
        .map(|e| (e.to_string(), Value::Bool(drv.has(e))))
        .collect();
    let q = Queue::new(d).expect("a queue on the remote device");
    let builtins: serde_json::Map<String, Value> = clgroups::program::polyfill::extensions(&q)
        .into_iter()
        .map(|(e, how)| (e.to_string(), Value::from(how.name())))
        .collect();
    json!({
        "device": d.name(),
        "implementation": format!("{:?}", d.identity().implementation).to_lowercase(),
        "type": format!("{:?}", d.kind()).to_lowercase(),
        "max_work_group_size": drv.max_work_group_size,
        "preferred_work_group_size_multiple": drv.preferred_work_group_size_multiple,
        "max_num_sub_groups": drv.max_num_sub_groups,
        "sub_group_independent_forward_progress": drv.independent_forward_progress,
        "sub_group_sizes": drv.sub_group_sizes,
        "opencl_c_version": drv.opencl_c_version,
        "opencl_c_features": drv.opencl_c_features,
        "warp_size_nv": drv.warp_size_nv,
        "extensions": extensions,
        "effective": {
            "sub_group_sizes": eff.sub_group_sizes,
            "primary_sub_group_size": eff.primary_sub_group_size,
            "shuffle_backend": eff.shuffle_backend.name(),
            "extensions": builtins,
        },
    })
}

fn remote_devices() -> Vec<Device> {
    let all = clgroups::devices().expect("devices");
    all.iter()
        .filter(|d| d.identity().remote)
        .cloned()
        .collect()
}

#[test]
fn remote_devices_report_what_their_servers_serve() {
    let remote = remote_devices();
    let expected = std::env::var("CLGROUPS_REMOTE_EXPECTED").ok();
    if remote.is_empty() {
        assert!(
            expected.is_none(),
            "CLGROUPS_REMOTE_EXPECTED is set but no device is reached through PoCL-R"
        );
        eprintln!("not run: no device is reached through PoCL-R");
        return;
    }
    // Every difference of every remote device, then one failure listing them.
    let mut differences = Vec::new();
    for d in &remote {
        eprintln!("{d}: {:?}, {}", d.identity(), facts(d));
        let drv = &d.sub_groups().driver;
        if drv.preferred_work_group_size_multiple == 0 {
            differences.push(format!(
                "{d}: PoCL-R lost the preferred work-group size multiple (0)"
            ));
        }
        for name in drv
            .opencl_c_features
            .iter()
            .filter(|n| n.trim() != n.as_str())
        {
            differences.push(format!("{d}: feature name {name:?}"));
        }
    }
    let Some(path) = expected else {
        assert!(differences.is_empty(), "{}", differences.join("\n"));
        eprintln!("CLGROUPS_REMOTE_EXPECTED unset: remote facts not compared with local ones");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let local: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    for d in &remote {
        let got = facts(d);
        let Some(want) = local
            .iter()
            .find(|l| l["device"] == got["device"] && l["implementation"] == got["implementation"])
        else {
            differences.push(format!(
                "{d}: no local device of that name and implementation"
            ));
            continue;
        };
        let want = want.as_object().expect("sgquery prints objects");
        for (key, value) in want {
            if key == "index" || key == "platform" {
                continue;
            }
            match got.get(key) {
                Some(seen) if seen == value => {}
                Some(seen) => {
                    differences.push(format!("{d}: {key}: {seen} remotely, {value} locally"))
                }
                None => differences.push(format!("sgquery's {key:?} is not compared here: add it")),
            }
        }
        let compared = want.len() - 2;
        if got.as_object().map(|o| o.len()) != Some(compared) {
            differences.push(format!(
                "{d}: {} fields here, {compared} in sgquery",
                got.as_object().map_or(0, |o| o.len())
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "through PoCL-R vs locally ({path}):\n{}",
        differences.join("\n")
    );
}

#[test]
fn remote_devices_are_driven_as_their_servers_devices() {
    for d in remote_devices() {
        let id = d.identity();
        let backend = d.sub_groups().effective.shuffle_backend;
        match id.implementation {
            Implementation::Nvidia => {
                assert_eq!(backend.name(), "nvidia-ptx", "{d}");
                assert_eq!(d.sub_groups().driver.warp_size_nv, Some(32), "{d}");
                assert_eq!(d.sub_groups().effective.primary_sub_group_size, 32, "{d}");
            }
            Implementation::Pocl => assert_ne!(backend.name(), "nvidia-ptx", "{d}"),
            _ => {}
        }
        // Remote memory is not the client's.
        assert!(!d.limits().host_unified_memory, "{d}");
    }
}
