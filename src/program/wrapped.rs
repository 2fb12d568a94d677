//! Wrapper programs: the program's text with one kernel's wrapper appended
//! (`crate::transform::wrapper_source`), built on the first launch that needs it, once per
//! kernel.

use super::compile::build_cached;
use super::Program;
use crate::ffi::ClProgram;
use crate::plan::rounding::RoundingMode;
use crate::transform::{self, DriverCall, Obstacle};
use std::sync::Arc;

impl Program {
    /// Whether kernel `name` may be launched through a wrapper, or why not (before anything is
    /// built): rounding enabled, a kernel of the user's that the scanner found, without the
    /// emulated scratch, whose every definition is blind to a rounded-up range, in a source
    /// whose code the scanner reads whole (no other headers, no macros in the options that
    /// name what it refuses).
    pub(crate) fn wrap_support(&self, name: &str) -> Result<(), Obstacle> {
        let inner = &self.inner;
        if inner.rounding.mode == RoundingMode::Disable {
            return Err(Obstacle::RoundingDisabled);
        }
        if transform::is_generated(name) {
            return Err(Obstacle::GeneratedWrapped);
        }
        if inner.plans.get(name).is_some_and(|p| p.scratch) {
            return Err(Obstacle::TakesScratch);
        }
        if let Some(why) = crate::transform::unseen_code(&inner.facts.includes, &inner.options) {
            return Err(why);
        }
        match inner.facts.wrap_obstacles.get(name) {
            None => Err(Obstacle::NotFound),
            Some(Some(why)) => Err(why.clone()),
            Some(None) => Ok(()),
        }
    }

    /// The program holding kernel `name`'s wrapper, whose text is `wrapper`: the text of the
    /// kernel's build as the driver reports it (`CL_PROGRAM_SOURCE`) with `wrapper` appended,
    /// built with the program's options. Built once per kernel; a failure is remembered too.
    pub(crate) fn wrapper_program(
        &self,
        name: &str,
        wrapper: &str,
    ) -> Result<Arc<ClProgram>, Obstacle> {
        let mut cache = self
            .inner
            .wrappers
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(done) = cache.get(name) {
            return done.clone();
        }
        let built = self.build_wrapper(name, wrapper);
        match &built {
            Ok(_) => log::debug!("kernel `{name}`: wrapper program built"),
            Err(why) => log::debug!("kernel `{name}`: no wrapper program: {why}"),
        }
        cache.insert(name.to_string(), built.clone());
        built
    }

    fn build_wrapper(&self, name: &str, wrapper: &str) -> Result<Arc<ClProgram>, Obstacle> {
        let parts = self
            .kernel_parts(name)
            .map_err(|e| Obstacle::WrapperBuild(Box::new(e)))?;
        let source = parts.build.get_source().map_err(|e| Obstacle::Driver {
            call: DriverCall::ProgramSource,
            code: Some(e.0),
        })?;
        let source = source.trim_end_matches('\0');
        if source.trim().is_empty() {
            return Err(Obstacle::Driver {
                call: DriverCall::ProgramSource,
                code: None,
            });
        }
        build_cached(
            self.queue(),
            // The wrapper's guard calls the real queries, bound before the user's code.
            &transform::with_real_queries(format!("{source}\n{wrapper}")),
            &self.inner.options,
        )
        .map_err(|e| Obstacle::WrapperBuild(Box::new(e)))
    }
}
