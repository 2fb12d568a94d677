//! The event of a launch: waits and profiling times.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use std::time::Duration;

/// A finished-or-running command (or several in one in-order queue, for a plain range that
/// runs as pieces), with profiling times.
#[derive(Debug)]
pub struct Event {
    pub(super) raw: Vec<opencl3::event::Event>,
    pub(super) device: Device,
    pub(super) kernel: Option<Kernel>,
}

impl Event {
    pub(crate) fn new(raw: opencl3::event::Event, device: Device, kernel: Option<Kernel>) -> Self {
        Event {
            raw: vec![raw],
            device,
            kernel,
        }
    }

    /// This command followed by `later`, a command enqueued after it on the same in-order
    /// queue: one event whose wait and span cover both.
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

    /// Waits for the command(s) to finish.
    pub fn wait(&self) -> Result<()> {
        for e in &self.raw {
            e.wait()
                .map_err(|e| Error::cl("clWaitForEvents", e.0, self.context()))?;
        }
        Ok(())
    }

    /// Device time from the start of the first command to the end of the last (waits first).
    pub fn duration(&self) -> Result<Duration> {
        let (start, end) = self.span()?;
        Ok(Duration::from_nanos(end.saturating_sub(start)))
    }

    /// Profiling start of the first command and end of the last, in device nanoseconds.
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
