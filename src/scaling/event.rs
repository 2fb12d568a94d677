//! [`MultiEvent`]: the sub-launches of one launch over several devices.

use crate::error::Result;
use crate::launch::Event;
use crate::plan::partition::Partition;
use std::time::Duration;

/// The sub-launches of one launch over several devices: the partition used and one profiled
/// [`Event`] per device (`None` for a device whose chunk was empty).
///
/// ```
/// use clgroups::{ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?.with_profiling()?;
/// let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
/// let z = p.kernel("z")?;
/// let mut x = ColoredBuffer::<i32>::new(&root, 1 << 16)?;
/// // SAFETY: work-item i writes x[i], i < 2^16 = x.len().
/// let ev = unsafe { z.launch().arg(&mut x).range(1 << 16)? };
/// println!("{:?} in all; per device {:?}; chunks {:?}",
///     ev.duration()?, ev.device_durations()?, ev.partition().chunks);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Debug)]
pub struct MultiEvent {
    pub(super) partition: Partition,
    pub(super) events: Vec<Option<Event>>,
}

impl MultiEvent {
    /// The partition the launch used (OpenCL dimension numbering, chunks in work-groups; a
    /// kernel run as written on device 0 alone, see [`crate::plan::root_fallback`], reports
    /// one chunk there).
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// # let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// # let z = p.kernel("z")?;
    /// # let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
    /// let ev = unsafe { z.launch().arg(&mut x).nd_range(4096, clgroups::Range::d1(64))? };
    /// assert_eq!(ev.partition().chunks.iter().sum::<usize>(), 4096 / 64); // work-groups
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// Per device, in device order, its sub-launch's event or `None` if it got no work.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// # let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// # let z = p.kernel("z")?;
    /// # let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 64)?;
    /// // One work-group: device 0 only.
    /// // SAFETY: work-item i writes x[i], i < 64 = x.len().
    /// let ev = unsafe { z.launch().arg(&mut x).nd_range(64, clgroups::Range::d1(64))? };
    /// assert!(ev.events()[0].is_some());
    /// assert!(ev.events()[1..].iter().all(Option::is_none));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn events(&self) -> &[Option<Event>] {
        &self.events
    }

    /// Waits for every sub-launch.
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// # let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// # let z = p.kernel("z")?;
    /// # let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
    /// unsafe { z.launch().arg(&mut x).range(4096)? }.wait()?; // every device has finished
    /// # Ok::<(), clgroups::Error>(())
    /// ```
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
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// # let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// # let z = p.kernel("z")?;
    /// # let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
    /// let time = unsafe { z.launch().arg(&mut x).range(4096)? }.duration()?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
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
    ///
    /// ```
    /// # let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// # let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// # let z = p.kernel("z")?;
    /// # let mut x = clgroups::ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
    /// let per_device = unsafe { z.launch().arg(&mut x).range(4096)? }.device_durations()?;
    /// assert_eq!(per_device.len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
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
