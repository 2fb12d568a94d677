//! The driver's side of a build: compile OpenCL C for one device, through the context's
//! program cache, with the build log mapped back to the user's lines on failure.

use crate::error::{Error, InputFault, Result};
use crate::ffi::ClProgram;
use crate::queue::Queue;
use crate::transform::build_log;
use std::sync::Arc;

/// Builds (or finds in the cache) `text` for the queue's device.
pub(super) fn build_cached(queue: &Queue, text: &str, options: &str) -> Result<Arc<ClProgram>> {
    let device = queue.device();
    // A device of PoCL before 6 gets programs of its own (`Device::binary_tag`).
    let tag = device
        .binary_tag()
        .map(|t| format!(" -D{t}"))
        .unwrap_or_default();
    let options = format!("{options} -cl-kernel-arg-info{tag}")
        .trim()
        .to_string();
    let key = (device.id() as usize, text.to_string(), options.clone());
    if let Some(p) = queue.context().programs().get(&key) {
        log::debug!("program cache hit on {device}");
        return Ok(Arc::clone(p));
    }
    let program = opencl3::program::Program::create_from_source(queue.context().raw(), text)
        .map(crate::ffi::Owned::new)
        .map_err(|e| Error::cl("clCreateProgramWithSource", e.0, device.to_string()))?;
    log::debug!("building program on {device} with options {options:?}");
    log::trace!("the text built on {device}:\n{text}");
    let c_options = std::ffi::CString::new(options.as_str()).map_err(|_| {
        Error::input(InputFault::OptionsNul {
            options: options.clone(),
        })
    })?;
    // Built for this device only: opencl3's `Program::build` would then ask for the kernel
    // names, which drivers refuse (CL_INVALID_PROGRAM_EXECUTABLE) until every device of a
    // multi-device context has a build.
    let built = cl3::program::build_program(
        program.get(),
        &[device.id()],
        &c_options,
        None,
        std::ptr::null_mut(),
    );
    if let Err(code) = built {
        let e = opencl3::error_codes::ClError(code);
        let log = build_log::map_positions(
            &program.get_build_log(device.id()).unwrap_or_default(),
            text,
        );
        log::debug!("build failed ({e}):\n{log}");
        return Err(Error::Build {
            device: device.to_string(),
            options,
            log: if log.trim().is_empty() {
                format!("(the driver gave no log; status {e})")
            } else {
                log
            },
        });
    }
    let program = Arc::new(program);
    queue.context().programs().insert(key, Arc::clone(&program));
    Ok(program)
}
