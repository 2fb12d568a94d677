//! [`MultiEvent`]: the sub-launches of one launch over several devices.

use crate::error::Result;
use crate::launch::Event;
use crate::plan::cost::Priced;
use crate::plan::partition::Partition;
use std::sync::Arc;
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
    pub(super) partition: Arc<Partition>,
    pub(super) events: Vec<Option<Event>>,
    pub(super) spread: Spread,
    /// The cost model's decision and its figures, where it priced the launch.
    pub(super) priced: Option<Arc<Priced>>,
}

/// How a launch over several devices ran ([`MultiEvent::spread`]; see [the
/// contract](super#the-contract)); `RUST_LOG=info` logs every launch that was not
/// [`Split`](Spread::Split), with the reason and the declaration that would split it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Spread {
    /// Each device ran its part on what it holds (its chunks in partitioned placement, whole
    /// buffers in shared placement).
    Split,
    /// Each device ran its part on whole copies of the buffer arguments the split could not
    /// serve: `replicated` (argument indices; only read) copied to every device, `merged`
    /// (written) copied to every device, then merged element by element (each changed
    /// element taken from the device that changed it).
    Merged {
        /// Read-only arguments copied whole to every device.
        replicated: Vec<usize>,
        /// Written arguments copied whole to every device and merged after.
        merged: Vec<usize>,
    },
    /// The whole launch ran on device 0, for this reason (its `Display` words it).
    OneDevice(crate::plan::Refusal),
    /// The whole launch ran on `device` alone, where its colored buffers are held whole: the
    /// cost model found it faster than the split (or the policy forces it, see
    /// [`RootDevice::with_spread`](super::RootDevice::with_spread)). The buffers moved there
    /// whole once (`moved` bytes, between devices, by this launch) and stay there until a
    /// launch split over the devices, `part()`, a reduce or a scan moves them back (see
    /// [whole-buffer placement](super#whole-buffer-placement)).
    Resident {
        /// The device that ran the launch.
        device: usize,
        /// Bytes this launch moved between devices to hold its buffers whole there.
        moved: u64,
    },
    /// Split as the kernel's footprints prove (the indices of its accesses, read from its
    /// source and evaluated with the launch's values): each device first fetched the elements
    /// beyond its chunk that it reads (halos; whole copies of read-only buffers read at unknown
    /// indices) from the devices that own them, and what it wrote beyond its chunk (no other
    /// device reaching it) went back to their owners after. Where a device reads a margin and
    /// writes only its own elements, its part keeps that margin across launches and only the
    /// margin elements written since are fetched (see the [module docs](super)). A plain
    /// buffer the launch writes is split the same way: each device on a copy of what it
    /// reaches, its written runs copied back (on device 0's queue: `between` counts the
    /// other devices' copies, `within` device 0's).
    Fetched {
        /// The arguments some device fetched (and possibly wrote back) elements of, or keeps
        /// margins of.
        arguments: Vec<usize>,
        /// Bytes copied from one device to another, both ways.
        between: u64,
        /// Bytes copied within a device: its own elements into its fetched copy, or once into
        /// its part's allocation with margins.
        within: u64,
    },
}

impl MultiEvent {
    /// The partition the launch used (OpenCL dimension numbering, chunks in work-groups; a
    /// kernel run as written on device 0 alone, see `plan::root_fallback`, reports
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

    /// How the launch ran: split, merged, or on one device (and why).
    ///
    /// ```
    /// use clgroups::scaling::{ColoredBuffer, Spread};
    /// let root = clgroups::RootDevice::from_env()?;
    /// let p = root.program("kernel void rev(global int *y, global const int *x) {
    ///     size_t i = get_global_id(0); y[i] = x[get_global_size(0) - 1 - i]; }")?;
    /// let x = ColoredBuffer::from_slice(&root, &(0..4096).collect::<Vec<i32>>())?;
    /// let y = ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i reads x[4095 - i] and writes y[i], inside both (4096).
    /// let ev = unsafe { p.kernel("rev")?.launch().arg(&y).arg(&x).range(4096)? };
    /// println!("{:?}", ev.spread()); // Merged { replicated: [1], merged: [0] } when partitioned
    /// assert_eq!(y.read()?[0], 4095);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn spread(&self) -> &Spread {
        &self.spread
    }

    /// The cost model's decision for this launch with the figures it used (times measured or
    /// estimated, bytes, the link), or `None` where it did not price it (a kernel without a
    /// partitioned variant, a forced split, one device).
    ///
    /// ```
    /// use clgroups::scaling::{ColoredBuffer, RootDevice, SpreadPolicy};
    /// let root = RootDevice::from_env()?.with_spread(SpreadPolicy::OneDevice);
    /// let p = root.program("kernel void z(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// let mut x = ColoredBuffer::<i32>::new(&root, 4096)?;
    /// // SAFETY: work-item i writes x[i], i < 4096 = x.len().
    /// let ev = unsafe { p.kernel("z")?.launch().arg(&mut x).range(4096)? };
    /// if let Some(priced) = ev.priced() {
    ///     println!("{priced}"); // device 0 alone (forced (one)): ...
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn priced(&self) -> Option<&Priced> {
        self.priced.as_deref()
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
