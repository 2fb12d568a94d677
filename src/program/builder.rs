//! [`ProgramBuilder`]: a source and its build settings (options, file name, default sub-group
//! size, rounding).

use super::{Program, SubGroupSize};
use crate::error::Result;
use crate::plan::rounding::RoundingConfig;
use crate::queue::Queue;

/// Builds a [`Program`]: source, options, default sub-group size, file name for messages.
///
/// ```
/// use clgroups::program::SubGroupSize;
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let program = Program::builder("kernel void k(global float *x) { x[0] = 1.0f; }")
///     .options("-cl-fast-relaxed-math")
///     .file_name("k.cl")
///     .default_sub_group_size(SubGroupSize::Automatic)
///     .build(&queue)?;
/// assert_eq!(program.kernel_names(), ["k"]);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ProgramBuilder {
    pub(super) source: String,
    pub(super) file_name: String,
    pub(super) options: String,
    pub(super) default_size: SubGroupSize,
    pub(super) rounding: Option<RoundingConfig>,
}

impl ProgramBuilder {
    /// Compiler options passed through (e.g. `-cl-fast-relaxed-math`).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = N; }")
    ///     .options("-D N=7")
    ///     .build(&queue)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn options(mut self, options: &str) -> Self {
        self.options = options.to_string();
        self
    }

    /// The name compiler messages use for the source (default `kernel.cl`).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// // The build log names `mine.cl`, with the user's line numbers.
    /// let err = Program::builder("kernel void k() { oops; }").file_name("mine.cl").build(&queue);
    /// assert!(matches!(err, Err(clgroups::Error::Build { .. })));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn file_name(mut self, name: &str) -> Self {
        self.file_name = name.to_string();
        self
    }

    /// The sub-group size of kernels that say nothing (default [`SubGroupSize::Primary`]).
    ///
    /// ```
    /// use clgroups::program::SubGroupSize;
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = 1; }")
    ///     .default_sub_group_size(SubGroupSize::Automatic)
    ///     .build(&queue)?;
    /// assert_eq!(p.default_sub_group_size(), SubGroupSize::Automatic);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn default_sub_group_size(mut self, size: SubGroupSize) -> Self {
        self.default_size = size;
        self
    }

    /// Range-rounding settings (default: [`RoundingConfig::from_env`]).
    ///
    /// ```
    /// use clgroups::plan::rounding::{RoundingConfig, RoundingMode};
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let config = RoundingConfig { mode: RoundingMode::Disable, ..RoundingConfig::from_env() };
    /// let p = Program::builder("kernel void k(global int *x) { x[get_global_id(0)] = 1; }")
    ///     .rounding(config)
    ///     .build(&queue)?;
    /// assert_eq!(p.rounding().mode, RoundingMode::Disable);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn rounding(mut self, config: RoundingConfig) -> Self {
        self.rounding = Some(config);
        self
    }

    /// Builds for the queue's device.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// let queue = Queue::new(&default_device()?)?;
    /// let p = Program::builder("kernel void k(global int *x) { x[0] = 1; }").build(&queue)?;
    /// assert_eq!(p.device(), queue.device());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn build(self, queue: &Queue) -> Result<Program> {
        Program::build(self, queue)
    }

    /// The source to build.
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// The compiler options.
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn options_text(&self) -> &str {
        &self.options
    }

    /// This builder with another source (e.g. with generated variants).
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
    pub(crate) fn with_source(mut self, source: String) -> Self {
        self.source = source;
        self
    }
}
