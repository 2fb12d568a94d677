//! The standard sub-group built-ins (`cl_khr_subgroups`, its shuffle, relative-shuffle,
//! extended-type, ballot, non-uniform vote and arithmetic, clustered-reduce and rotate
//! extensions, `cl_intel_subgroups`) on every device, with no change to the kernel: where a program names one and the device lacks some of them, the build prepends
//! `cl/clgroups/khr/polyfill.h`, which provides the missing extensions on the device's backend
//! and defines their extension macros. Programs that name none get nothing.
//!
//! ```no_run
//! use clgroups::{Program, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! for (ext, how) in clgroups::program::polyfill::extensions(&q) {
//!     println!("{ext}: {}", how.name());
//! }
//! let p = Program::from_source(&q, r#"
//!     #pragma OPENCL EXTENSION cl_khr_subgroups : enable
//!     kernel void sums(global const float *x, global float *out) {
//!         out[get_global_id(0)] = sub_group_reduce_add(x[get_global_id(0)]);
//!     }
//! "#)?;
//! # Ok::<(), clgroups::Error>(())
//! ```

use super::compile::build_cached;
use crate::device::{provision, Provision, ShuffleBackend, POLYFILLED_EXTENSIONS};
use crate::queue::Queue;
use crate::transform::{self, SourceFacts};
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Each polyfilled extension with where its built-ins come from.
pub type Provisions = Vec<(&'static str, Provision)>;

/// Where each of [`POLYFILLED_EXTENSIONS`] comes from on the queue's device (probes the driver
/// once per device and backend; see [`provision`]).
///
/// ```
/// use clgroups::device::Provision;
/// let q = clgroups::Queue::new(&clgroups::default_device()?)?;
/// let provided = clgroups::program::polyfill::extensions(&q)
///     .into_iter()
///     .filter(|&(_, how)| how == Provision::Provided)
///     .count();
/// println!("{provided} sub-group extensions provided by clgroups");
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn extensions(queue: &Queue) -> Provisions {
    static CACHE: Lazy<Mutex<HashMap<(usize, ShuffleBackend), Provisions>>> =
        Lazy::new(Default::default);
    let device = queue.device();
    let caps = device.sub_groups();
    let backend = caps.effective.shuffle_backend;
    let key = (device.id() as usize, backend);
    if let Some(v) = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return v.clone();
    }
    let v: Vec<_> = POLYFILLED_EXTENSIONS
        .iter()
        .map(|&ext| {
            let listed = matches!(backend, ShuffleBackend::Khr | ShuffleBackend::Intel)
                && caps.driver.has(ext);
            let builds = listed && probe_builds(queue, ext);
            let how = provision(ext, &caps.driver, backend, builds);
            log::debug!("{device}: {ext} {} (listed: {listed})", how.name());
            (ext, how)
        })
        .collect();
    CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, v.clone());
    v
}

/// The polyfill text for a build of a source (`facts`) on the queue's device (see
/// [`transform::polyfill_prelude`]): nothing when the source names no sub-group built-in;
/// every extension where `all` (a build whose fixed size the driver gets wrong, see
/// `build::fixed_builtins`).
pub(super) fn prelude(queue: &Queue, facts: &SourceFacts, all: bool) -> String {
    if !facts.mentions_sub_groups {
        return String::new();
    }
    let provided: Vec<&str> = match all {
        true => POLYFILLED_EXTENSIONS.to_vec(),
        false => extensions(queue)
            .into_iter()
            .filter(|&(_, how)| how == Provision::Provided)
            .map(|(ext, _)| ext)
            .collect(),
    };
    log::debug!("{}: polyfill provides {provided:?}", queue.device());
    transform::polyfill_prelude(&provided, facts.mentions_sub_groups)
}

/// Whether a kernel calling every built-in of `ext` builds (compiles and links) on the device.
fn probe_builds(queue: &Queue, ext: &str) -> bool {
    let ok = build_cached(queue, &transform::polyfill_probe(ext), "").is_ok();
    log::debug!(
        "{}: probe of {ext}: {}",
        queue.device(),
        if ok { "builds" } else { "fails" }
    );
    ok
}
