//! Implicit scaling: one launch over several devices, after Intel's root-device rules.
//!
//! A [`RootDevice`] is N OpenCL devices of one platform in one context (separate GPUs, PoCL
//! devices, or the sub-devices of one device), with a queue on each. A [`RootProgram`] is the
//! same source built once per device; a launch of one of its kernels
//! ([`RootKernel::launch`]) is split by [`plan::partition`](crate::plan::partition) into one
//! contiguous sub-launch per device, at work-group granularity, each enqueued on its device's
//! queue with the chunk's global offset and size. A [`ColoredBuffer`] is an array whose pages
//! are spread over the devices by [`plan::coloring`](crate::plan::coloring), each device
//! holding one contiguous chunk.
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
//! # Memory: two placements
//!
//! A root device picks a [`Placement`] for its [`ColoredBuffer`]s when it is made:
//! [`Placement::Shared`] when every device shares the host's memory
//! (`CL_DEVICE_HOST_UNIFIED_MEMORY`, e.g. PoCL, integrated GPUs), else
//! [`Placement::Partitioned`] (e.g. several discrete GPUs). [`PLACEMENT_ENV`]
//! (`CLGROUPS_PLACEMENT=shared|partitioned`) overrides the choice.
//!
//! * **Shared**: a colored buffer is one buffer of the shared context with one sub-buffer per
//!   device chunk, migrated to its device; kernels receive the whole (*parent*) buffer and may
//!   index any element. Concurrent writes from several devices to one buffer are disjoint
//!   writes to one allocation on PoCL and on shared-memory devices; a driver that keeps one
//!   copy per device may lose them (measured on two NVIDIA GPUs): use partitioned placement
//!   there.
//! * **Partitioned**: a colored buffer is one separate buffer per device holding exactly its
//!   chunk, written and read through that device's queue (host reads and writes still see one
//!   contiguous array). Kernels run as their `__clg_part` variant
//!   ([`crate::program::partitioned`]): each colored argument is the device's chunk, shifted so
//!   that whole-array indices address it. No data moves between devices during launches.
//!
//! ## The partitioned contract
//!
//! In partitioned placement a device can only reach its own chunk, so each launch checks,
//! before enqueueing anything, that every device's work lies inside its chunk of every
//! colored argument, assuming that a colored buffer is indexed by the launch's *global linear
//! id* `x + X * (y + Y * z)` (global ids `x, y, z` with the global offset included, `X` and `Y`
//! the offset plus the global size of dimensions 0 and 1; `x` alone for a 1-D launch), or, for a
//! buffer of `m` times as many elements, by `m * id + j` with `0 <= j < m`. A launch that
//! breaks this fails with [`Error::InvalidLaunch`], which suggests a page size (see
//! [`ColoredBuffer::with_page`]) that makes the chunks match the partition.
//!
//! Chunks match the partition when the partition splits the slowest dimension and the page
//! holds a whole number of work-group slabs: [`plan::coloring`](crate::plan::coloring) and
//! [`plan::partition`](crate::plan::partition) both give the first devices one extra unit,
//! so a page of exactly one slab (`m * X * Y * local_z` elements for a 3-D split of z, `m *
//! local_x` for 1-D) gives the same chunks. [`ColoredBuffer::new`] keeps 64 KiB pages, so
//! large power-of-two arrays split evenly over a power-of-two device count match without
//! care; kernels that index colored buffers otherwise need shared placement.
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
use crate::program::partitioned::{is_global_pointer, partitioned_name, with_partitioned_variants};
use crate::program::source::scan_kernels;
use crate::program::Program;
use crate::queue::{names, Context, Queue};
use crate::range::Range;
use std::fmt;
use std::time::Duration;

/// The environment variable naming the devices of [`RootDevice::from_env`].
pub const DEVICES_ENV: &str = "CLGROUPS_DEVICES";

/// The environment variable overriding the [`Placement`] of new root devices: `shared` or
/// `partitioned`.
pub const PLACEMENT_ENV: &str = "CLGROUPS_PLACEMENT";

/// Where the chunks of a [`ColoredBuffer`] live (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// One buffer in the shared context; kernels receive all of it.
    Shared,
    /// One buffer per device holding its chunk; kernels run as `__clg_part` variants.
    Partitioned,
}

impl Placement {
    /// [`PLACEMENT_ENV`] if set, else `Shared` when every device has host-unified memory and
    /// `Partitioned` otherwise. Errors ([`Error::InvalidInput`]) for another value of the
    /// variable.
    pub fn choose(devices: &[Device]) -> Result<Self> {
        let unified = devices.iter().all(|d| d.limits().host_unified_memory);
        let env = std::env::var(PLACEMENT_ENV).ok();
        let chosen = Placement::pick(env.as_deref(), unified)?;
        log::debug!("placement {chosen} ({PLACEMENT_ENV}={env:?}, host-unified memory {unified})");
        Ok(chosen)
    }

    /// The placement for an environment value and whether all memory is host-unified.
    fn pick(env: Option<&str>, unified: bool) -> Result<Self> {
        match env.map(str::trim) {
            Some("shared") => Ok(Placement::Shared),
            Some("partitioned") => Ok(Placement::Partitioned),
            Some("") | None if unified => Ok(Placement::Shared),
            Some("") | None => Ok(Placement::Partitioned),
            Some(other) => Err(Error::input(format!(
                "{PLACEMENT_ENV}={other:?}: expected `shared` or `partitioned`"
            ))),
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Placement::Shared => "shared",
            Placement::Partitioned => "partitioned",
        })
    }
}

/// Several devices of one platform used as one: a shared context and one queue per device.
/// Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct RootDevice {
    context: Context,
    queues: Vec<Queue>,
    placement: Placement,
}

impl RootDevice {
    /// A root device over `devices`, in order (device 0 takes the first chunk of every launch).
    ///
    /// Its [`Placement`] is [`Placement::choose`]`(devices)`.
    ///
    /// Errors ([`Error::InvalidInput`]): no devices, devices of different platforms, one
    /// device given twice, or a bad [`PLACEMENT_ENV`].
    pub fn new(devices: &[Device]) -> Result<Self> {
        let keys: Vec<(usize, usize)> = devices
            .iter()
            .map(|d| (d.platform_index(), d.id() as usize))
            .collect();
        check_devices(&keys).map_err(|r| Error::input(format!("{r} ({})", names(devices))))?;
        let placement = Placement::choose(devices)?;
        let context = Context::new(devices)?;
        let queues = devices
            .iter()
            .map(|d| Queue::on(&context, d))
            .collect::<Result<Vec<_>>>()?;
        log::debug!(
            "root device over {} device(s), {placement} placement: {}",
            devices.len(),
            names(devices)
        );
        Ok(RootDevice {
            context,
            queues,
            placement,
        })
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

    /// Where colored buffers of this root device live.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// This root device with another placement (for buffers and programs made afterwards).
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// `source` built for every device; in partitioned placement with the `__clg_part`
    /// variant of every kernel ([`with_partitioned_variants`]) after it.
    pub fn program(&self, source: &str) -> Result<RootProgram> {
        let text = match self.placement {
            Placement::Shared => source.to_string(),
            Placement::Partitioned => with_partitioned_variants(source, &scan_kernels(source)?)?,
        };
        let programs = self
            .queues
            .iter()
            .map(|q| Program::from_source(q, &text))
            .collect::<Result<Vec<_>>>()?;
        Ok(RootProgram {
            programs,
            placement: self.placement,
        })
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
        format!(
            "root device [{}], {} placement",
            names(self.devices()),
            self.placement
        )
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

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// An array colored over a [`RootDevice`]'s devices: device `i` holds elements
/// `[starts[i], starts[i] + chunks[i])`, in one buffer of the shared context with a sub-buffer
/// per chunk ([`Placement::Shared`]) or in one buffer per device ([`Placement::Partitioned`]).
/// Host reads and writes see one contiguous array.
pub struct ColoredBuffer<T: Scalar> {
    parent: Option<Buffer<T>>,
    parts: Vec<Option<Buffer<T>>>,
    chunks: Vec<usize>,
    len: usize,
    page: usize,
    queues: Vec<Queue>,
    placement: Placement,
}

impl<T: Scalar> ColoredBuffer<T> {
    /// An uninitialised buffer of `len` (≥ 1) elements with the root device's
    /// [default page](RootDevice::default_page_size), in the root device's placement.
    pub fn new(root: &RootDevice, len: usize) -> Result<Self> {
        ColoredBuffer::with_page(root, len, root.default_page_size())
    }

    /// An uninitialised buffer of `len` (≥ 1) elements colored in pages of `page` bytes (see
    /// [`color_elements`]). In shared placement `page` must be a multiple of every device's
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`; in partitioned placement any page works, and a page of
    /// one work-group slab makes the chunks match a launch's partition (see the
    /// [module docs](self)).
    ///
    /// ```no_run
    /// use clgroups::scaling::{ColoredBuffer, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// // 1-D launches in work-groups of 64: one page per work-group of floats.
    /// let x = ColoredBuffer::<f32>::with_page(&root, 19 * 64, 64 * 4)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_page(root: &RootDevice, len: usize, page: usize) -> Result<Self> {
        if len == 0 {
            return Err(Error::input("a colored buffer needs at least one element"));
        }
        let placement = root.placement();
        let align = match placement {
            Placement::Shared => root.alignment(),
            Placement::Partitioned => 1,
        };
        let bytes = color_elements::<T>(len, page, align, root.len())?;
        let chunks: Vec<usize> = bytes.iter().map(|b| b / size_of::<T>()).collect();
        let parent = match placement {
            Placement::Shared => Some(Buffer::new(root.context(), len)?),
            Placement::Partitioned => None,
        };
        let mut origin = 0;
        let parts = chunks
            .iter()
            .map(|&n| {
                let part = (n > 0)
                    .then(|| match &parent {
                        Some(p) => p.sub_buffer(origin, n),
                        None => Buffer::new(root.context(), n),
                    })
                    .transpose();
                origin += n;
                part
            })
            .collect::<Result<Vec<_>>>()?;
        log::debug!(
            "colored buffer of {len} x {} in {page}-byte pages, {placement} placement: \
             elements per device {chunks:?}",
            T::CL_NAME
        );
        let buf = ColoredBuffer {
            parent,
            parts,
            chunks,
            len,
            page,
            queues: root.queues().to_vec(),
            placement,
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
        self.len
    }

    /// Always false: buffers have at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Elements held by each device, in device order (they add up to [`len`](Self::len)).
    pub fn chunks(&self) -> &[usize] {
        &self.chunks
    }

    /// The index of each device's first element, in device order.
    pub fn starts(&self) -> Vec<usize> {
        self.chunks
            .iter()
            .scan(0, |at, &n| {
                let start = *at;
                *at += n;
                Some(start)
            })
            .collect()
    }

    /// The coloring page in bytes.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// Where the chunks live.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The whole buffer (what kernels receive) in shared placement; `None` in partitioned
    /// placement, which has no whole buffer.
    pub fn parent(&self) -> Option<&Buffer<T>> {
        self.parent.as_ref()
    }

    /// Device `i`'s chunk (a sub-buffer in shared placement, its own buffer in partitioned
    /// placement), `None` when it holds no elements or `i` is out of range.
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
        events
            .iter()
            .try_for_each(|ev| crate::wait::event(ev, || "buffer migration".into()))
    }

    /// Reads the whole array (blocking); in partitioned placement each chunk through its
    /// device's queue.
    pub fn read(&self) -> Result<Vec<T>> {
        self.finish()?;
        if let Some(parent) = &self.parent {
            return parent.read(&self.queues[0]);
        }
        let mut out = vec![T::default(); self.len];
        for ((part, q), start) in self.parts.iter().zip(&self.queues).zip(self.starts()) {
            if let Some(p) = part {
                p.read_into(q, 0, &mut out[start..start + p.len()])?;
            }
        }
        Ok(out)
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
        if let Some(parent) = &mut self.parent {
            parent.write(&self.queues[0], data)?;
            return self.migrate();
        }
        let starts = self.starts();
        for ((part, q), start) in self.parts.iter_mut().zip(&self.queues).zip(starts) {
            if let Some(p) = part {
                let n = p.len();
                p.write(q, &data[start..start + n])?;
            }
        }
        Ok(())
    }

    /// Sets every element to `value` and migrates the chunks back.
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.finish()?;
        if let Some(parent) = &mut self.parent {
            parent.fill(&self.queues[0], value)?;
            return self.migrate();
        }
        for (part, q) in self.parts.iter_mut().zip(&self.queues) {
            if let Some(p) = part {
                p.fill(q, value)?;
            }
        }
        Ok(())
    }

    /// Waits for every device's queue, so that host access sees finished launches.
    fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }

    /// What a launch needs to pass this buffer to each device.
    fn root_arg(&self) -> RootArgValue {
        RootArgValue(Value::Colored(ColoredArg {
            elem: T::CL_NAME,
            elem_size: size_of::<T>(),
            len: self.len,
            placement: self.placement,
            whole: self.parent.as_ref().map(|p| p.to_arg()),
            parts: self
                .parts
                .iter()
                .map(|p| p.as_ref().map(|p| p.to_arg()))
                .collect(),
            starts: self.starts(),
            chunks: self.chunks.clone(),
        }))
    }
}

impl<T: Scalar> fmt::Debug for ColoredBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ColoredBuffer<{}>[{}] {:?} ({})",
            T::CL_NAME,
            self.len(),
            self.chunks,
            self.placement
        )
    }
}

/// An argument of a [`RootLaunch`]: `&ColoredBuffer<T>`, or anything a single-device launch
/// takes ([`KernelArg`]: `&Buffer<T>` of the root device's context, a scalar,
/// [`crate::launch::Local`]).
pub trait RootArg {
    /// The argument's value for every device.
    fn to_root_arg(&self) -> RootArgValue;
}

/// The value of a [`RootArg`] (opaque).
#[derive(Clone, Debug)]
pub struct RootArgValue(Value);

#[derive(Clone, Debug)]
enum Value {
    Plain(Arg),
    Colored(ColoredArg),
}

/// A colored buffer as a launch sees it.
#[derive(Clone, Debug)]
struct ColoredArg {
    elem: &'static str,
    elem_size: usize,
    len: usize,
    placement: Placement,
    whole: Option<Arg>,
    parts: Vec<Option<Arg>>,
    starts: Vec<usize>,
    chunks: Vec<usize>,
}

impl<A: KernelArg> RootArg for A {
    fn to_root_arg(&self) -> RootArgValue {
        RootArgValue(Value::Plain(self.to_arg()))
    }
}

impl<T: Scalar> RootArg for &ColoredBuffer<T> {
    fn to_root_arg(&self) -> RootArgValue {
        self.root_arg()
    }
}

impl<T: Scalar> RootArg for &mut ColoredBuffer<T> {
    fn to_root_arg(&self) -> RootArgValue {
        self.root_arg()
    }
}

/// One source built for every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootProgram {
    programs: Vec<Program>,
    placement: Placement,
}

impl RootProgram {
    /// The kernel called `name`, on every device (its `__clg_part` variant in partitioned
    /// placement).
    pub fn kernel(&self, name: &str) -> Result<RootKernel> {
        let variant = match self.placement {
            Placement::Shared => name.to_string(),
            Placement::Partitioned => partitioned_name(name),
        };
        let kernels = self
            .programs
            .iter()
            .map(|p| p.kernel(&variant))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| match e {
                Error::NoSuchKernel { .. } => Error::NoSuchKernel {
                    kernel: name.to_string(),
                    available: self.programs[0].kernel_names(),
                },
                other => other,
            })?;
        let globals = self.programs[0]
            .decl(name)
            .map(|k| k.params.iter().map(is_global_pointer).collect())
            .unwrap_or_default();
        Ok(RootKernel {
            kernels,
            name: name.to_string(),
            globals,
            placement: self.placement,
        })
    }

    /// The per-device programs, in device order.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The placement the program was built for.
    pub fn placement(&self) -> Placement {
        self.placement
    }
}

/// One kernel on every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootKernel {
    kernels: Vec<Kernel>,
    name: String,
    /// Per parameter of the original kernel: whether it is a global pointer.
    globals: Vec<bool>,
    placement: Placement,
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

    /// The per-device kernels, in device order: the kernel itself in shared placement (device
    /// 0's alone is a single-device launch), its `__clg_part` variant in partitioned placement.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// A launch over several devices being prepared; [`RootLaunch::nd_range`] enqueues it.
#[must_use = "a launch does nothing until nd_range() is called"]
pub struct RootLaunch<'k> {
    kernel: &'k RootKernel,
    args: Vec<Value>,
    offset: Option<Range>,
}

impl RootLaunch<'_> {
    /// Appends an argument ([`RootArg`]): `&ColoredBuffer<T>` (the whole buffer in shared
    /// placement, the device's chunk in partitioned placement), `&Buffer<T>` of the root
    /// device's context (passed as it is), a scalar, or [`crate::launch::Local`].
    pub fn arg(mut self, arg: impl RootArg) -> Self {
        self.args.push(arg.to_root_arg().0);
        self
    }

    /// A global offset (OpenCL order) for the whole launch.
    pub fn offset(mut self, offset: Range) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Splits the ND-range `global` (work-groups of `local`, OpenCL order) over the devices
    /// and enqueues one sub-launch per non-empty chunk. Every check (ranks, `local` dividing
    /// `global`, arguments, each device's work-group limits, and in partitioned placement
    /// each device's work lying in its chunks) happens before anything is enqueued.
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
        let mut per_device = Vec::with_capacity(kernels.len());
        for (d, (k, sub)) in kernels.iter().zip(&subs).enumerate() {
            let args = match sub {
                Some((off, size)) => {
                    let span = Span::new(global, base, shift(*off, base), *size);
                    self.check_chunks(d, &span, local, &plan)?;
                    let args = self.device_args(d)?;
                    self.check(k, &args, *size, local)?;
                    args
                }
                None => Vec::new(),
            };
            per_device.push(args);
        }
        log::debug!(
            "kernel `{}` over {} devices ({} placement): {plan:?}, sub-launches {subs:?}",
            self.kernel.name(),
            kernels.len(),
            self.kernel.placement
        );
        let events = kernels
            .iter()
            .zip(&subs)
            .zip(per_device)
            .map(|((k, sub), args)| {
                sub.map(|(off, size)| enqueue(k, args, shift(off, base), size, local))
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

    /// Device `d`'s arguments: in partitioned placement, chunks for colored buffers and then
    /// one byte origin per global pointer parameter.
    fn device_args(&self, d: usize) -> Result<Vec<Arg>> {
        let mut args = Vec::with_capacity(self.args.len() * 2);
        for (i, value) in self.args.iter().enumerate() {
            args.push(match value {
                Value::Plain(a) => a.clone(),
                Value::Colored(c) => self.colored_arg(c, i, d)?,
            });
        }
        if self.kernel.placement == Placement::Partitioned {
            for (i, _) in self.kernel.globals.iter().enumerate().filter(|g| *g.1) {
                let origin = match self.args.get(i) {
                    Some(Value::Colored(c)) => (c.starts[d] * c.elem_size) as u64,
                    _ => 0,
                };
                args.push(origin.to_arg());
            }
        }
        Ok(args)
    }

    /// What device `d` receives for colored argument `i`.
    fn colored_arg(&self, c: &ColoredArg, i: usize, d: usize) -> Result<Arg> {
        let placement = self.kernel.placement;
        let got = match placement {
            Placement::Shared => c.whole.clone(),
            Placement::Partitioned => c.parts.get(d).cloned().flatten(),
        };
        got.ok_or_else(|| {
            let why = match c.placement == placement {
                true => format!("device {d} holds none of its elements"),
                false => format!("it is in {} placement", c.placement),
            };
            Error::input(format!(
                "kernel `{}` ({placement} placement): argument {i}, a ColoredBuffer<{}>, \
                 cannot be passed to device {d}: {why}",
                self.kernel.name(),
                c.elem,
            ))
        })
    }

    /// In partitioned placement, errors unless device `d`'s work lies in its chunk of every
    /// colored argument (the [contract](self#the-partitioned-contract)).
    fn check_chunks(&self, d: usize, span: &Span, local: Range, plan: &Partition) -> Result<()> {
        if self.kernel.placement != Placement::Partitioned {
            return Ok(());
        }
        for (i, value) in self.args.iter().enumerate() {
            let Value::Colored(c) = value else { continue };
            let m = if c.len % span.extent == 0 {
                c.len / span.extent
            } else {
                1
            };
            let (lo, hi) = (m * span.first, m * span.end);
            let (start, end) = (c.starts[d], c.starts[d] + c.chunks[d]);
            if start <= lo && hi <= end {
                continue;
            }
            let slab = m * span.extent / span.extents[plan.dim] * local.get(plan.dim);
            return Err(Error::InvalidLaunch {
                kernel: self.kernel.name().to_string(),
                device: self.kernel.kernels[d].program().device().to_string(),
                global: span.global.as_slice().to_vec(),
                local: local.as_slice().to_vec(),
                reason: format!(
                    "partitioned placement: device {d} works on elements [{lo}, {hi}) of \
                     argument {i} (ColoredBuffer<{}> of {} elements), but holds only \
                     [{start}, {end}). Colored buffers must be indexed by the global linear \
                     id (see clgroups::scaling) and colored like the launch's partition \
                     (dimension {}): e.g. ColoredBuffer::with_page(&root, {}, {}) (one \
                     work-group slab per page), or use CLGROUPS_PLACEMENT=shared",
                    c.elem,
                    c.len,
                    plan.dim,
                    c.len,
                    slab * c.elem_size
                ),
            });
        }
        Ok(())
    }

    /// The checks one device's sub-launch must pass before anything is enqueued.
    fn check(&self, k: &Kernel, args: &[Arg], size: Range, local: Range) -> Result<()> {
        k.check_sub_group_size()?;
        check_args(k.name(), k.args(), args)?;
        local_size::validate(size, local, k.limits()).map_err(|reason| Error::InvalidLaunch {
            kernel: k.name().to_string(),
            device: k.program().device().to_string(),
            global: size.as_slice().to_vec(),
            local: local.as_slice().to_vec(),
            reason,
        })
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

fn enqueue(k: &Kernel, args: Vec<Arg>, offset: Range, size: Range, local: Range) -> Result<Event> {
    let launch = args.into_iter().fold(k.launch(), |l, a| l.raw_arg(a));
    launch
        .offset(offset)
        .nd_range(size, LocalSize::Exact(local))
}

/// The global linear ids `[first, end)` one sub-launch covers, over the whole launch's
/// `extent` ids (global offset included).
#[derive(Debug, PartialEq, Eq)]
struct Span {
    global: Range,
    extents: [usize; 3],
    extent: usize,
    first: usize,
    end: usize,
}

impl Span {
    /// For a launch of `global` at offset `base` whose sub-launch starts at `offset` (base
    /// included) with `size`.
    fn new(global: Range, base: [usize; 3], offset: Range, size: Range) -> Self {
        let (g, s, rank) = (global.padded(), size.padded(), global.rank());
        // Offsets beyond the rank are 0 (`Range::padded` pads with 1).
        let zero_padded = |v: [usize; 3]| [0, 1, 2].map(|i| if i < rank { v[i] } else { 0 });
        let (o, base) = (zero_padded(offset.padded()), zero_padded(base));
        let extents = [0, 1, 2].map(|i| g[i] + base[i]);
        let linear = |v: [usize; 3]| v[0] + extents[0] * (v[1] + extents[1] * v[2]);
        let last = [0, 1, 2].map(|i| o[i] + s[i] - 1);
        Span {
            global,
            extents,
            extent: extents.iter().product(),
            first: linear(o),
            end: linear(last) + 1,
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

    #[test]
    fn placement_follows_the_environment_value_then_the_memory() {
        assert_eq!(Placement::pick(None, true).unwrap(), Placement::Shared);
        assert_eq!(
            Placement::pick(None, false).unwrap(),
            Placement::Partitioned
        );
        assert_eq!(
            Placement::pick(Some(""), false).unwrap(),
            Placement::Partitioned
        );
        assert_eq!(
            Placement::pick(Some("partitioned"), true).unwrap(),
            Placement::Partitioned
        );
        assert_eq!(
            Placement::pick(Some(" shared"), false).unwrap(),
            Placement::Shared
        );
        let e = Placement::pick(Some("split"), true).unwrap_err();
        assert!(
            e.to_string().contains("CLGROUPS_PLACEMENT=\"split\""),
            "{e}"
        );
    }

    #[test]
    fn spans_are_global_linear_ids() {
        // 1-D, 64 ids from 128 of a launch of 256 at offset 64: ids 192..256 of 320.
        let s = Span::new(Range::d1(256), [64, 1, 1], Range::d1(192), Range::d1(64));
        assert_eq!((s.extent, s.first, s.end), (320, 192, 256));
        // 3-D 8x4x6, z split at 3: rows z = 3..6 are ids 96..192.
        let s = Span::new(
            Range::d3(8, 4, 6),
            [0; 3],
            Range::d3(0, 0, 3),
            Range::d3(8, 4, 3),
        );
        assert_eq!((s.extents, s.first, s.end), ([8, 4, 6], 96, 192));
        // 2-D 8x4 split in x at 4: ids 4..32, not contiguous but bounded.
        let s = Span::new(Range::d2(8, 4), [0; 3], Range::d2(4, 0), Range::d2(4, 4));
        assert_eq!((s.first, s.end), (4, 32));
    }
}
