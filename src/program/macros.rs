//! The macros a build's text starts with, as far as clgroups can tell them.

use super::build::{derived_geometry, prelude};
use super::{polyfill, ProgramBuilder};
use crate::queue::Queue;
use crate::transform::{self, pp_eval::PpState, BuildOption, SourceFacts};

/// The macros a build's text starts with, as far as clgroups can tell them (see
/// [`transform::pp_eval`]): the device's extensions and OpenCL C features
/// (`CL_DEVICE_EXTENSIONS`, `CL_DEVICE_OPENCL_C_FEATURES`, as its compiler defines them),
/// `__OPENCL_VERSION__`, `CL_VERSION_*` up to the device's OpenCL C version,
/// `__OPENCL_C_VERSION__` where `-cl-std` sets it, the `-D`/`-U` options, then the backend's
/// defines and the polyfill's for the source of `facts` ([`prelude`], with `CLG_SUB_GROUP_SIZE`
/// unknown: each of a program's builds sets its own).
pub(super) fn compiler_macros(queue: &Queue, b: &ProgramBuilder, facts: &SourceFacts) -> PpState {
    let device = queue.device();
    let mut st = PpState::default();
    let exts = device.raw().extensions().unwrap_or_default();
    let features = &device.sub_groups().driver.opencl_c_features;
    for name in exts
        .split_whitespace()
        .chain(features.iter().map(String::as_str))
    {
        st.define(name, "1");
    }
    let version = |text: &str| {
        let word = text.split_whitespace().find(|w| w.contains('.'))?;
        let (major, minor) = word.split_once('.')?;
        Some(100 * major.parse::<u32>().ok()? + 10 * minor.get(..1)?.parse::<u32>().ok()?)
    };
    if let Some(v) = device.raw().version().ok().as_deref().and_then(version) {
        st.define("__OPENCL_VERSION__", &v.to_string());
    }
    let c_version = version(&device.sub_groups().driver.opencl_c_version).unwrap_or(120);
    for v in [100, 110, 120, 200, 300]
        .into_iter()
        .filter(|&v| v <= c_version)
    {
        st.define(
            &format!("CL_VERSION_{}_{}", v / 100, v / 10 % 10),
            &v.to_string(),
        );
    }
    for o in transform::build_options(&b.options) {
        match o {
            BuildOption::Undefine(name) => st.undefine(name),
            // A function-like macro's value is not known to `#if`s (only that it is defined).
            BuildOption::Define { name, params, .. } if !params.is_empty() => st.forget(name),
            BuildOption::Define { name, value, .. } => match value.unwrap_or("1") {
                v if v.contains(['"', '\'']) => st.forget(name),
                v => st.define(name, v),
            },
            BuildOption::Other(w) => {
                if let Some(v) = w.strip_prefix("-cl-std=CL").and_then(version) {
                    st.define("__OPENCL_C_VERSION__", &v.to_string());
                }
            }
            BuildOption::IncludePath(_) | BuildOption::Include(_) => {}
        }
    }
    let mut text = prelude(device, 0);
    text.push_str(&polyfill::prelude(
        queue,
        facts,
        derived_geometry(device, 0, facts),
    ));
    transform::pp_eval::evaluate(&text, &mut st);
    st.forget("CLG_SUB_GROUP_SIZE");
    st
}
