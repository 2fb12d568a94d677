//! The event of a launch: waits and profiling times.

use crate::device::Device;
use crate::error::{Error, Result, Unsupported};
use opencl3::error_codes::CL_PROFILING_INFO_NOT_AVAILABLE;
use opencl3::types::cl_event;
use std::sync::Arc;
use std::time::Duration;

/// A finished-or-running command (or several in one in-order queue, for a plain range that
/// runs as pieces), with profiling times.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::with_profiling(&default_device()?)?;
/// let x = Buffer::from_slice(&queue, &[1u32; 1 << 16])?;
/// let mut y = Buffer::<u32>::new(&queue, 1 << 16)?;
/// let event: Event = x.copy_to(&queue, &mut y)?;
/// event.wait()?;
/// println!("copied 256 KiB in {:?}", event.duration()?);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug)]
pub struct Event {
    pub(crate) raw: Vec<crate::ffi::Owned<opencl3::event::Event>>,
    pub(crate) device: Device,
    /// The kernel's name, for messages.
    pub(crate) kernel: Option<Arc<str>>,
}

impl Event {
    pub(crate) fn new(
        raw: crate::ffi::Owned<opencl3::event::Event>,
        device: Device,
        kernel: Option<Arc<str>>,
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

    /// `later` appended to the event in `slot` ([`Event::then`]), or put there if it is empty.
    #[cfg(feature = "scaling")]
    pub(crate) fn push(slot: &mut Option<Event>, later: Event) {
        *slot = Some(match slot.take() {
            Some(first) => first.then(later),
            None => later,
        });
    }

    /// What the event is for, in error messages (built only when needed: launches stay cheap).
    fn context(&self) -> String {
        match &self.kernel {
            Some(k) => format!("`{k}` on {}", self.device),
            None => self.device.to_string(),
        }
    }

    /// Waits for the command(s) to finish, each at most [`crate::config::timeout`]
    /// ([`Error::Timeout`] otherwise).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::with_profiling(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(&queue, 64)?;
    /// let event = x.copy_to(&queue, &mut y)?;
    /// event.wait()?; // the copy has finished
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn wait(&self) -> Result<()> {
        let on_cpu = self.device.kind() == crate::plan::local_size::DeviceKind::Cpu;
        self.raw
            .iter()
            .try_for_each(|e| crate::wait::event_on(e, on_cpu, || self.context()))
    }

    /// Device time from the start of the first command to the end of the last (waits first).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::with_profiling(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(&queue, 64)?;
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
    /// # let queue = Queue::with_profiling(&default_device()?)?;
    /// # let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// # let mut y = Buffer::<u32>::new(&queue, 64)?;
    /// let (start, end) = x.copy_to(&queue, &mut y)?.span()?;
    /// assert!(start <= end);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn span(&self) -> Result<(u64, u64)> {
        self.wait()?;
        let err = |e: opencl3::error_codes::ClError| match e.0 {
            CL_PROFILING_INFO_NOT_AVAILABLE => Error::Unsupported {
                device: self.device.to_string(),
                what: Unsupported::DeviceTime {
                    command: self.context(),
                },
            },
            code => Error::cl("clGetEventProfilingInfo", code, self.context()),
        };
        let (first, last) = (&self.raw[0], &self.raw[self.raw.len() - 1]);
        let start = first.profiling_command_start().map_err(err)?;
        let end = last.profiling_command_end().map_err(err)?;
        Ok((start, end))
    }
}

/// Why a launch on a queue of context `context` (its key) cannot wait for `events`: an event
/// of another context (OpenCL refuses it at enqueue), or one whose context cannot be queried.
pub(crate) fn foreign_wait(events: &[&Event], context: usize) -> Option<crate::plan::Refusal> {
    events.iter().find_map(|e| {
        e.raw.iter().find_map(|r| match r.context() {
            Ok(c) if c as usize == context => None,
            Ok(_) => Some(crate::plan::Refusal::ForeignEvent {
                command: e.context(),
            }),
            Err(err) => Some(crate::plan::Refusal::EventContextUnknown {
                code: err.0,
                command: e.context(),
            }),
        })
    })
}

/// The wait list for `events`, after flushing their queues (a command that waits for an event
/// of another queue may otherwise wait for a command that is never submitted).
pub(crate) fn wait_list(events: &[&Event]) -> Result<Vec<cl_event>> {
    let mut list = Vec::new();
    for e in events {
        for r in &e.raw {
            let flushed = r
                .command_queue()
                .and_then(|q| opencl3::command_queue::flush(q).map_err(Into::into));
            flushed.map_err(|err| Error::cl("clFlush", err.0, e.context()))?;
            list.push(r.get());
        }
    }
    Ok(list)
}
