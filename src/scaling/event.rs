//! [`MultiEvent`]: the sub-launches of one launch over several devices.

use crate::error::Result;
use crate::launch::Event;
use crate::plan::partition::Partition;
use std::time::Duration;

/// The sub-launches of one launch over several devices: the partition used and one profiled
/// [`Event`] per device (`None` for a device whose chunk was empty).
#[derive(Debug)]
pub struct MultiEvent {
    pub(super) partition: Partition,
    pub(super) events: Vec<Option<Event>>,
}

impl MultiEvent {
    /// The partition the launch used (OpenCL dimension numbering, chunks in work-groups).
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// Per device, in device order, its sub-launch's event or `None` if it got no work.
    pub fn events(&self) -> &[Option<Event>] {
        &self.events
    }

    /// Waits for every sub-launch.
    pub fn wait(&self) -> Result<()> {
        self.launched().try_for_each(Event::wait)
    }

    /// Device time of the whole launch: the latest end minus the earliest start over the
    /// sub-launches' profiling events (waits first).
    ///
    /// This compares profiling clocks of different devices. PoCL's devices (and sub-devices)
    /// share one host clock; other platforms should use a common time base too
    /// (`CL_DEVICE_PROFILING_TIMER_RESOLUTION` aside), but where they do not, use the
    /// per-device [`device_durations`](Self::device_durations) or host time instead.
    pub fn duration(&self) -> Result<Duration> {
        self.wait()?;
        let mut span: Option<(u64, u64)> = None;
        for ev in self.launched() {
            let (s, e) = ev.span()?;
            span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
        }
        let (start, end) = span.unwrap_or_default();
        Ok(Duration::from_nanos(end.saturating_sub(start)))
    }

    /// Per device, the device time of its sub-launch (`None`: no work).
    pub fn device_durations(&self) -> Result<Vec<Option<Duration>>> {
        self.events
            .iter()
            .map(|e| e.as_ref().map(Event::duration).transpose())
            .collect()
    }

    fn launched(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().flatten()
    }
}
