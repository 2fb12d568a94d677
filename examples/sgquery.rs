//! `sgquery`: every OpenCL device's sub-group capabilities, as the driver reports them and as
//! clgroups provides them, including where each sub-group extension's standard built-ins come
//! from (the driver's own, or clgroups' polyfill). `--json` prints a JSON array, one object per
//! device.
//!
//! ```text
//! cargo run --example sgquery [-- --json]
//! ```

use clap::Parser;
use clgroups::device::{Device, SUB_GROUP_EXTENSIONS};
use clgroups::Queue;
use serde_json::{json, Value};

#[derive(Parser)]
#[command(about = "Sub-group capabilities of every OpenCL device")]
struct Args {
    /// Print a JSON array (one object per device) instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() {
    env_logger::init();
    let args = Args::parse();
    let devices = match clgroups::devices() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("sgquery: {e}");
            std::process::exit(1);
        }
    };
    if args.json {
        let all: Vec<Value> = devices.iter().map(to_json).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&all).expect("JSON values serialise")
        );
    } else {
        for d in devices {
            print_table(d);
        }
    }
}

/// Where each polyfilled extension's built-ins come from on `d` (`native` or `provided`).
fn builtin_extensions(d: &Device) -> Vec<(&'static str, &'static str)> {
    match Queue::new(d) {
        Ok(q) => clgroups::program::polyfill::extensions(&q)
            .into_iter()
            .map(|(e, how)| (e, how.name()))
            .collect(),
        Err(e) => {
            eprintln!("sgquery: {d}: no queue to probe the built-ins: {e}");
            Vec::new()
        }
    }
}

fn to_json(d: &Device) -> Value {
    let sg = d.sub_groups();
    let drv = &sg.driver;
    let eff = &sg.effective;
    let extensions: serde_json::Map<String, Value> = SUB_GROUP_EXTENSIONS
        .iter()
        .map(|e| (e.to_string(), Value::Bool(drv.has(e))))
        .collect();
    json!({
        "index": format!("{}:{}", d.platform_index(), d.device_index()),
        "platform": d.platform_name(),
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
            "extensions": builtin_extensions(d)
                .into_iter()
                .map(|(e, how)| (e.to_string(), Value::from(how)))
                .collect::<serde_json::Map<String, Value>>(),
        },
    })
}

fn print_table(d: &Device) {
    let sg = d.sub_groups();
    let drv = &sg.driver;
    let eff = &sg.effective;
    let yes = |b: bool| if b { "yes" } else { "no" };
    println!("Device {d}");
    println!("  {:<44}{:?}", "type", d.kind());
    let id = d.identity();
    let remote = if id.remote { " (through PoCL-R)" } else { "" };
    println!("  {:<44}{:?}{remote}", "implementation", id.implementation);
    println!("  {:<44}{}", "OpenCL C version", drv.opencl_c_version);
    println!("  {:<44}{}", "max work-group size", drv.max_work_group_size);
    println!(
        "  {:<44}{}",
        "preferred work-group size multiple", drv.preferred_work_group_size_multiple
    );
    println!("  driver");
    println!(
        "    {:<42}{}",
        "max sub-groups per work-group", drv.max_num_sub_groups
    );
    println!(
        "    {:<42}{}",
        "sub-group independent forward progress",
        yes(drv.independent_forward_progress)
    );
    println!(
        "    {:<42}{}",
        "sub-group sizes (Intel)",
        list(&drv.sub_group_sizes)
    );
    if let Some(w) = drv.warp_size_nv {
        println!("    {:<42}{w}", "warp size (NV)");
    }
    for e in SUB_GROUP_EXTENSIONS {
        println!("    {e:<42}{}", yes(drv.has(e)));
    }
    println!("  clgroups");
    println!("    {:<42}{}", "shuffle backend", eff.shuffle_backend);
    println!(
        "    {:<42}{}",
        "primary sub-group size", eff.primary_sub_group_size
    );
    println!(
        "    {:<42}{}",
        "sub-group sizes",
        list(&eff.sub_group_sizes)
    );
    for (e, how) in builtin_extensions(d) {
        println!("    {e:<42}{how}");
    }
    println!();
}

fn list(v: &[usize]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
