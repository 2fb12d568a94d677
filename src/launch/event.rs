//! The event of a launch: waits and profiling times.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use std::time::Duration;

/// A finished-or-running command (or several in one in-order queue, for a plain range that
/// runs as pieces), with profiling times.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let x = Buffer::from_slice(&queue, &[1u32; 1 << 16])?;
/// let mut y = Buffer::<u32>::new(queue.context(), 1 << 16)?;
/// let event: Event = x.copy_to(&queue, &mut y)?;
/// event.wait()?;
/// println!("copied 256 KiB in {:?}", event.duration()?);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug)]
pub struct Event {
    pub(super) raw: Vec<crate::ffi::Owned<opencl3::event::Event>>,
    pub(super) device: Device,
    pub(super) kernel: Option<Kernel>,
}

impl Event {
    pub(crate) fn new(
        raw: crate::ffi::Owned<opencl3::event::Event>,
        device: Device,
        kernel: Option<Kernel>,
    ) -> Self {
        Event {
            raw: vec![raw],
            device,
            kernel,
        }
    }

    /// This command followed by `later`, a command enqueued after it on the same in-order
    /// queue: one event whose wait and span cover both.
    #[cfg_attr(
        not(any(feature = "scaling", feature = "algorithms")),
        allow(dead_code)
    )]
    pub(crate) fn then(mut self, later: Event) -> Event {
        self.raw.extend(later.raw);
        Event {
            raw: self.raw,
            ..later
        }
    }

    /// What the event is for, in error messages (built only when needed: launches stay cheap).
    fn context(&self) -> String {
        match &self.kernel {
            Some(k) => format!("`{}` on {}", k.name(), self.device),
            None => self.device.to_string(),
        }
    }

    /// Waits for the command(s) to finish, each at most [`crate::wait::limit`]
    /// ([`Error::Timeout`] otherwise).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(queue.context(), 64)?;
    /// let event = x.copy_to(&queue, &mut y)?;
    /// event.wait()?; // the copy has finished
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn wait(&self) -> Result<()> {
        self.raw
            .iter()
            .try_for_each(|e| crate::wait::event(e, || self.context()))
    }

    /// Device time from the start of the first command to the end of the last (waits first).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(queue.context(), 64)?;
    /// let time: std::time::Duration = x.copy_to(&queue, &mut y)?.duration()?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn duration(&self) -> Result<Duration> {
        let (start, end) = self.span()?;
        Ok(Duration::from_nanos(end.saturating_sub(start)))
    }

    /// Profiling start of the first command and end of the last, in device nanoseconds.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(queue.context(), 64)?;
    /// let (start, end) = x.copy_to(&queue, &mut y)?.span()?;
    /// assert!(start <= end);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn span(&self) -> Result<(u64, u64)> {
        self.wait()?;
        let err = |e: opencl3::error_codes::ClError| {
            Error::cl("clGetEventProfilingInfo", e.0, self.context())
        };
        let (first, last) = (&self.raw[0], &self.raw[self.raw.len() - 1]);
        let start = first.profiling_command_start().map_err(err)?;
        let end = last.profiling_command_end().map_err(err)?;
        Ok((start, end))
    }
}
