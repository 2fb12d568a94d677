//! Implicit scaling: one launch over several devices, after Intel's root-device rules.
//!
//! A [`RootDevice`] is N OpenCL devices of one platform in one context (separate GPUs, PoCL
//! devices, or the sub-devices of one device), with a queue on each. A [`RootProgram`] is the
//! same source built once per device; a launch of one of its kernels
//! ([`RootKernel::launch`]) is split by [`plan::partition`](crate::plan::partition) into one
//! contiguous sub-launch per device, at work-group granularity, each enqueued on its device's
//! queue with the chunk's global offset and size. A [`ColoredBuffer`] is one buffer of the
//! shared context whose pages are spread over the devices by
//! [`plan::coloring`](crate::plan::coloring), each device's chunk a sub-buffer migrated to it.
//!
//! # What a kernel sees
//!
//! Each sub-launch is an ordinary ND-range launch with a global offset, so:
//!
//! * `get_global_id`, `get_local_id` and `get_local_size` are those of the whole launch: a
//!   kernel that indexes with `get_global_id` (and takes sizes as arguments) gives
//!   bit-identical results on one device and on several;
//! * `get_global_size`, `get_num_groups` and `get_group_id` report the *sub-launch* (its
//!   chunk size, its group count, group ids from 0 within the chunk), and `get_global_offset`
//!   the chunk's offset: OpenCL cannot change that. Pass the full sizes as arguments instead;
//! * work-items of one work-group always run on one device, so local memory, barriers and
//!   sub-groups work as usual; a launch of one work-group runs on device 0 only.
//!
//! # Memory
//!
//! Kernel arguments that are [`ColoredBuffer`]s pass the *parent* buffer, so kernels index the
//! whole array. OpenCL leaves concurrent writes to one buffer from queues of different
//! devices to the implementation: on PoCL (one host memory) and on implementations with
//! shared virtual addressing they are disjoint writes to one allocation; an implementation
//! that keeps one copy per device may not merge them. Check results on a new platform (the
//! `implicit_scaling` example verifies every element).
//!
//! ```no_run
//! use clgroups::scaling::{ColoredBuffer, RootDevice};
//! use clgroups::Range;
//! let root = RootDevice::from_env()?;
//! let prog = root.program("kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
//! let mut x = ColoredBuffer::from_slice(&root, &vec![1; 1 << 20])?;
//! let ev = prog.kernel("inc")?.launch().arg(&x).nd_range(Range::d1(1 << 20), Range::d1(64))?;
//! println!("{:?} over {} devices", ev.duration()?, root.len());
//! assert!(x.read()?.iter().all(|&v| v == 2));
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::buffer::{Buffer, Scalar};
use crate::device::{default_device, devices, select_device, Device};
use crate::error::{Error, Result};
use crate::ffi;
use crate::kernel::Kernel;
use crate::launch::{check_args, Arg, Event, KernelArg, LocalSize};
use crate::plan::coloring::{color_elements, DEFAULT_PAGE_SIZE};
use crate::plan::local_size;
use crate::plan::partition::{partition, Partition};
use crate::program::Program;
use crate::queue::{Context, Queue};
use crate::range::Range;
use std::fmt;
use std::time::Duration;

/// The environment variable naming the devices of [`RootDevice::from_env`].
pub const DEVICES_ENV: &str = "CLGROUPS_DEVICES";

/// Several devices of one platform used as one: a shared context and one queue per device.
/// Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct RootDevice {
    context: Context,
    queues: Vec<Queue>,
}

impl RootDevice {
    /// A root device over `devices`, in order (device 0 takes the first chunk of every launch).
    ///
    /// Errors ([`Error::InvalidInput`]): no devices, devices of different platforms, or one
    /// device given twice.
    pub fn new(devices: &[Device]) -> Result<Self> {
        let keys: Vec<(usize, usize)> = devices
            .iter()
            .map(|d| (d.platform_index(), d.id() as usize))
            .collect();
        check_devices(&keys).map_err(|r| Error::input(format!("{r} ({})", names(devices))))?;
        let context = Context::new(devices)?;
        let queues = devices
            .iter()
            .map(|d| Queue::on(&context, d))
            .collect::<Result<Vec<_>>>()?;
        log::debug!(
            "root device over {} device(s): {}",
            devices.len(),
            names(devices)
        );
        Ok(RootDevice { context, queues })
    }

    /// The devices [`DEVICES_ENV`] (`CLGROUPS_DEVICES`) names, or else every device of the
    /// default device's platform ([`default_device`]).
    ///
    /// `CLGROUPS_DEVICES` is a comma-separated list of device selectors, each as
    /// `CLGROUPS_DEVICE` takes it ([`crate::device::Selector`]): `0:0,0:1` (platform:device
    /// indices) is the unambiguous form; a name selects the first device it matches.
    pub fn from_env() -> Result<Self> {
        match std::env::var(DEVICES_ENV) {
            Ok(list) if !list.trim().is_empty() => {
                let chosen = list
                    .split(',')
                    .map(|s| select_device(s.trim()))
                    .collect::<Result<Vec<_>>>()?;
                log::debug!("{DEVICES_ENV}={list:?} chose {}", names(&chosen));
                RootDevice::new(&chosen)
            }
            _ => {
                let platform = default_device()?.platform_index();
                let all: Vec<Device> = devices()?
                    .iter()
                    .filter(|d| d.platform_index() == platform)
                    .cloned()
                    .collect();
                RootDevice::new(&all)
            }
        }
    }

    /// `device` split into `n` equal sub-devices ([`Device::split_equally`]), used as one.
    pub fn split(device: &Device, n: usize) -> Result<Self> {
        RootDevice::new(&device.split_equally(n)?)
    }

    /// Number of devices (at least 1).
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Always false: a root device has at least one device.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The devices, in order.
    pub fn devices(&self) -> &[Device] {
        self.context.devices()
    }

    /// The shared context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// One queue per device, in device order.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// `source` built for every device.
    pub fn program(&self, source: &str) -> Result<RootProgram> {
        let programs = self
            .queues
            .iter()
            .map(|q| Program::from_source(q, source))
            .collect::<Result<Vec<_>>>()?;
        Ok(RootProgram { programs })
    }

    /// Waits for every queue.
    pub fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }

    /// The coloring page for this device set: [`DEFAULT_PAGE_SIZE`] rounded up to a multiple
    /// of every device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
    pub fn default_page_size(&self) -> usize {
        let align = self.alignment();
        DEFAULT_PAGE_SIZE.div_ceil(align) * align
    }

    /// The least common multiple of the devices' sub-buffer alignments, in bytes.
    fn alignment(&self) -> usize {
        self.devices()
            .iter()
            .map(|d| d.limits().mem_base_addr_align.max(1))
            .fold(1, |a, b| a / gcd(a, b) * b)
    }

    fn describe(&self) -> String {
        format!("root device [{}]", names(self.devices()))
    }
}

impl fmt::Debug for RootDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Checks `(platform index, device id)` pairs: at least one, one platform, no repeats.
fn check_devices(keys: &[(usize, usize)]) -> std::result::Result<(), String> {
    let Some(&(platform, _)) = keys.first() else {
        return Err("a root device needs at least one device".into());
    };
    if let Some(i) = keys.iter().position(|&(p, _)| p != platform) {
        return Err(format!(
            "devices of a root device must share a platform: device {i} is on platform {}, \
             device 0 on {platform}",
            keys[i].0
        ));
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| k == key) {
            return Err(format!("device {i} repeats device {j}"));
        }
    }
    Ok(())
}

fn names(devices: &[Device]) -> String {
    let v: Vec<String> = devices.iter().map(Device::to_string).collect();
    v.join(", ")
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One buffer of a [`RootDevice`]'s context, colored over its devices: device `i` holds
/// elements `[offsets[i], offsets[i] + chunks[i])` as a sub-buffer migrated to it. Host reads
/// and writes see one contiguous array.
pub struct ColoredBuffer<T: Scalar> {
    parent: Buffer<T>,
    parts: Vec<Option<Buffer<T>>>,
    chunks: Vec<usize>,
    page: usize,
    queues: Vec<Queue>,
}

impl<T: Scalar> ColoredBuffer<T> {
    /// An uninitialised buffer of `len` (≥ 1) elements with the root device's
    /// [default page](RootDevice::default_page_size).
    pub fn new(root: &RootDevice, len: usize) -> Result<Self> {
        ColoredBuffer::with_page(root, len, root.default_page_size())
    }

    /// An uninitialised buffer of `len` (≥ 1) elements colored in pages of `page` bytes, a
    /// multiple of every device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN` (see
    /// [`color_elements`]).
    pub fn with_page(root: &RootDevice, len: usize, page: usize) -> Result<Self> {
        let bytes = color_elements::<T>(len, page, root.alignment(), root.len())?;
        let chunks: Vec<usize> = bytes.iter().map(|b| b / size_of::<T>()).collect();
        let parent = Buffer::new(root.context(), len)?;
        let mut origin = 0;
        let parts = chunks
            .iter()
            .map(|&n| {
                let part = (n > 0).then(|| parent.sub_buffer(origin, n)).transpose();
                origin += n;
                part
            })
            .collect::<Result<Vec<_>>>()?;
        log::debug!(
            "colored buffer of {len} x {} in {page}-byte pages: elements per device {chunks:?}",
            T::CL_NAME
        );
        let buf = ColoredBuffer {
            parent,
            parts,
            chunks,
            page,
            queues: root.queues().to_vec(),
        };
        buf.migrate()?;
        Ok(buf)
    }

    /// A colored buffer holding a copy of `data` (non-empty).
    pub fn from_slice(root: &RootDevice, data: &[T]) -> Result<Self> {
        let mut buf = ColoredBuffer::new(root, data.len())?;
        buf.write(data)?;
        Ok(buf)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Always false: buffers have at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Elements held by each device, in device order (they add up to [`len`](Self::len)).
    pub fn chunks(&self) -> &[usize] {
        &self.chunks
    }

    /// The coloring page in bytes.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// The whole buffer (what kernels receive).
    pub fn parent(&self) -> &Buffer<T> {
        &self.parent
    }

    /// Device `i`'s sub-buffer, `None` when it holds no elements or `i` is out of range.
    pub fn part(&self, i: usize) -> Option<&Buffer<T>> {
        self.parts.get(i).and_then(Option::as_ref)
    }

    /// Moves each device's chunk to its device (`clEnqueueMigrateMemObjects` on its queue)
    /// and waits. Done on creation and after every host write.
    pub fn migrate(&self) -> Result<()> {
        let events = self
            .parts
            .iter()
            .zip(&self.queues)
            .filter_map(|(part, q)| part.as_ref().map(|p| (p, q)))
            .map(|(p, q)| {
                ffi::migrate(q.raw(), &[p.as_raw()]).map_err(|e| {
                    Error::cl(
                        "clEnqueueMigrateMemObjects",
                        e.0,
                        format!("{} elements to {}", p.len(), q.device()),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        events.iter().try_for_each(|ev| {
            ev.wait()
                .map_err(|e| Error::cl("clWaitForEvents", e.0, "buffer migration"))
        })
    }

    /// Reads the whole array (blocking).
    pub fn read(&self) -> Result<Vec<T>> {
        self.finish()?;
        self.parent.read(&self.queues[0])
    }

    /// Writes `data` (exactly [`len`](Self::len) elements) and migrates the chunks back.
    pub fn write(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::input(format!(
                "write of {} elements into a colored buffer of {}",
                data.len(),
                self.len()
            )));
        }
        self.finish()?;
        self.parent.write(&self.queues[0], data)?;
        self.migrate()
    }

    /// Sets every element to `value` and migrates the chunks back.
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.finish()?;
        self.parent.fill(&self.queues[0], value)?;
        self.migrate()
    }

    /// Waits for every device's queue, so that host access sees finished launches.
    fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }
}

impl<T: Scalar> KernelArg for &ColoredBuffer<T> {
    fn to_arg(&self) -> Arg {
        (&self.parent).to_arg()
    }
}

impl<T: Scalar> KernelArg for &mut ColoredBuffer<T> {
    fn to_arg(&self) -> Arg {
        (&self.parent).to_arg()
    }
}

impl<T: Scalar> fmt::Debug for ColoredBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ColoredBuffer<{}>[{}] {:?}",
            T::CL_NAME,
            self.len(),
            self.chunks
        )
    }
}

/// One source built for every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootProgram {
    programs: Vec<Program>,
}

impl RootProgram {
    /// The kernel called `name`, on every device.
    pub fn kernel(&self, name: &str) -> Result<RootKernel> {
        let kernels = self
            .programs
            .iter()
            .map(|p| p.kernel(name))
            .collect::<Result<Vec<_>>>()?;
        Ok(RootKernel { kernels })
    }

    /// The per-device programs, in device order.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }
}

/// One kernel on every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootKernel {
    kernels: Vec<Kernel>,
}

impl RootKernel {
    /// Starts a launch over all devices.
    pub fn launch(&self) -> RootLaunch<'_> {
        RootLaunch {
            kernel: self,
            args: Vec::new(),
            offset: None,
        }
    }

    /// The per-device kernels, in device order (device 0's alone is a single-device launch).
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    fn name(&self) -> &str {
        self.kernels[0].name()
    }
}

/// A launch over several devices being prepared; [`RootLaunch::nd_range`] enqueues it.
#[must_use = "a launch does nothing until nd_range() is called"]
pub struct RootLaunch<'k> {
    kernel: &'k RootKernel,
    args: Vec<Arg>,
    offset: Option<Range>,
}

impl RootLaunch<'_> {
    /// Appends an argument: `&ColoredBuffer<T>` (passes the whole buffer), `&Buffer<T>` of
    /// the root device's context, a scalar, or [`crate::launch::Local`].
    pub fn arg(mut self, arg: impl KernelArg) -> Self {
        self.args.push(arg.to_arg());
        self
    }

    /// A global offset (OpenCL order) for the whole launch.
    pub fn offset(mut self, offset: Range) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Splits the ND-range `global` (work-groups of `local`, OpenCL order) over the devices
    /// and enqueues one sub-launch per non-empty chunk. Every check (ranks, `local` dividing
    /// `global`, arguments, each device's work-group limits) happens before anything is
    /// enqueued.
    pub fn nd_range(self, global: impl Into<Range>, local: impl Into<Range>) -> Result<MultiEvent> {
        let (global, local) = (global.into(), local.into());
        let kernels = &self.kernel.kernels;
        let plan = partition(global, local, kernels.len()).map_err(|e| match e {
            Error::InvalidInput { reason } => self.invalid(global, local, reason),
            other => other,
        })?;
        let base = match self.offset {
            Some(o) if o.rank() != global.rank() => {
                return Err(self.invalid(global, local, format!("offset {o:?} has another rank")))
            }
            Some(o) => o.padded(),
            None => [0; 3],
        };
        let subs = plan.sub_ranges(global, local);
        for (k, sub) in kernels.iter().zip(&subs) {
            if let Some((_, size)) = sub {
                self.check(k, *size, local)?;
            }
        }
        log::debug!(
            "kernel `{}` over {} devices: {plan:?}, sub-launches {subs:?}",
            self.kernel.name(),
            kernels.len()
        );
        let events = kernels
            .iter()
            .zip(&subs)
            .map(|(k, sub)| {
                sub.map(|(off, size)| self.enqueue(k, shift(off, base), size, local))
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        for k in kernels {
            let q = k.program().queue();
            q.raw()
                .flush()
                .map_err(|e| Error::cl("clFlush", e.0, q.device().to_string()))?;
        }
        Ok(MultiEvent {
            partition: plan,
            events,
        })
    }

    /// The checks one device's sub-launch must pass before anything is enqueued.
    fn check(&self, k: &Kernel, size: Range, local: Range) -> Result<()> {
        k.check_sub_group_size()?;
        check_args(k.name(), k.args(), &self.args)?;
        local_size::validate(size, local, k.limits()).map_err(|reason| Error::InvalidLaunch {
            kernel: k.name().to_string(),
            device: k.program().device().to_string(),
            global: size.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
            reason,
        })
    }

    fn enqueue(&self, k: &Kernel, offset: Range, size: Range, local: Range) -> Result<Event> {
        let launch = self
            .args
            .iter()
            .fold(k.launch(), |l, a| l.raw_arg(a.clone()));
        launch
            .offset(offset)
            .nd_range(size, LocalSize::Exact(local))
    }

    fn invalid(&self, global: Range, local: Range, reason: String) -> Error {
        let devices: Vec<Device> = self
            .kernel
            .kernels
            .iter()
            .map(|k| k.program().device().clone())
            .collect();
        Error::InvalidLaunch {
            kernel: self.kernel.name().to_string(),
            device: format!("root device [{}]", names(&devices)),
            global: global.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
            reason,
        }
    }
}

/// `offset` moved by `base` (padded), keeping `offset`'s rank.
fn shift(offset: Range, base: [usize; 3]) -> Range {
    let mut r = offset;
    for (d, b) in base.iter().enumerate().take(offset.rank()) {
        r = r.with(d, offset.get(d) + b);
    }
    r
}

/// The sub-launches of one launch over several devices: the partition used and one profiled
/// [`Event`] per device (`None` for a device whose chunk was empty).
pub struct MultiEvent {
    partition: Partition,
    events: Vec<Option<Event>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_sets_are_checked() {
        assert!(check_devices(&[(0, 10), (0, 11)]).is_ok());
        assert!(check_devices(&[(1, 10)]).is_ok());
        let e = check_devices(&[]).unwrap_err();
        assert!(e.contains("at least one"), "{e}");
        let e = check_devices(&[(0, 10), (1, 20)]).unwrap_err();
        assert!(e.contains("device 1 is on platform 1"), "{e}");
        let e = check_devices(&[(0, 10), (0, 11), (0, 10)]).unwrap_err();
        assert!(e.contains("device 2 repeats device 0"), "{e}");
    }

    #[test]
    fn offsets_shift_by_the_launch_offset() {
        assert_eq!(shift(Range::d2(0, 32), [5, 7, 0]), Range::d2(5, 39));
        assert_eq!(shift(Range::d1(64), [0; 3]), Range::d1(64));
        assert_eq!(gcd(128, 48), 16);
    }
}
