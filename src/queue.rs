//! [`Context`] and [`Queue`]: an OpenCL context over one or more devices, and an in-order
//! command queue (profiling on request) on one of them.

use crate::device::Device;
use crate::error::{Error, InputFault, Result};
use crate::ffi::ClProgram;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
#[cfg(feature = "scaling")]
use opencl3::{error_codes::ClError, event::Event as ClEvent};
use std::collections::HashMap;
use std::fmt;
#[cfg(feature = "scaling")]
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// An OpenCL context over one or more devices of one platform. Cheap to clone; `Send + Sync`.
///
/// Buffers belong to a context; programs and launches to a [`Queue`] on one of its devices.
/// [`Queue::new`] makes a context for one device; make one yourself to share buffers between
/// the queues of several devices.
///
/// ```
/// use clgroups::{Buffer, Context, Queue};
/// let dev = clgroups::default_device()?;
/// let context = Context::new(std::slice::from_ref(&dev))?;
/// let (a, b) = (Queue::on(&context, &dev)?, Queue::on(&context, &dev)?);
/// let x = Buffer::from_slice(&a, &[1u32, 2, 3])?; // written through queue `a`
/// a.finish()?;
/// assert_eq!(x.read(&b)?, [1, 2, 3]); // read through queue `b` of the same context
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    /// Programs built in this context (see [`Context::programs`]); dropped with it, before
    /// the context is released.
    programs: Mutex<HashMap<ProgramKey, Arc<ClProgram>>>,
    raw: crate::ffi::Owned<opencl3::context::Context>,
    devices: Vec<Device>,
}

/// A build: device id, final source, options.
pub(crate) type ProgramKey = (usize, String, String);

impl Context {
    /// A context over `devices`, which must be non-empty and share one platform
    /// ([`Error::InvalidInput`] otherwise, before any OpenCL call).
    ///
    /// ```
    /// use clgroups::Context;
    /// let dev = clgroups::default_device()?;
    /// let platform: Vec<_> = clgroups::devices()?
    ///     .iter()
    ///     .filter(|d| d.platform_index() == dev.platform_index())
    ///     .cloned()
    ///     .collect();
    /// let context = Context::new(&platform)?; // e.g. both devices of POCL_DEVICES="cpu cpu"
    /// assert_eq!(context.devices(), &platform[..]);
    /// assert!(Context::new(&[]).is_err());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(devices: &[Device]) -> Result<Self> {
        let first = devices
            .first()
            .ok_or_else(|| Error::input(InputFault::EmptyContext))?;
        if let Some(other) = devices
            .iter()
            .find(|d| d.platform_index() != first.platform_index())
        {
            return Err(Error::input(InputFault::MixedPlatforms {
                first: first.to_string(),
                other: other.to_string(),
            }));
        }
        let ids: Vec<_> = devices.iter().map(Device::id).collect();
        let raw = opencl3::context::Context::from_devices(&ids, &[], None, std::ptr::null_mut())
            .map(crate::ffi::Owned::new)
            .map_err(|e| Error::cl("clCreateContext", e.0, names(devices)))?;
        log::debug!("context over {}", names(devices));
        Ok(Context {
            inner: Arc::new(ContextInner {
                programs: Mutex::default(),
                raw,
                devices: devices.to_vec(),
            }),
        })
    }

    /// The context's devices, in the order given.
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// assert_eq!(queue.context().devices(), std::slice::from_ref(queue.device()));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    pub(crate) fn raw(&self) -> &opencl3::context::Context {
        &self.inner.raw
    }

    /// The underlying [`opencl3`] context, for OpenCL calls clgroups does not wrap.
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// let raw: &opencl3::context::Context = queue.context().as_opencl3();
    /// assert_eq!(raw.devices().len(), 1);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn as_opencl3(&self) -> &opencl3::context::Context {
        &self.inner.raw
    }

    /// Identity of the context (for caches).
    pub(crate) fn key(&self) -> usize {
        self.inner.raw.get() as usize
    }

    /// The program builds of this context, by device, source and options: a cache that
    /// lives exactly as long as the context, so dropping the last handle of a context frees
    /// its programs.
    pub(crate) fn programs(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ProgramKey, Arc<ClProgram>>> {
        // A poisoned lock only means a panic elsewhere while it was held; the map is intact.
        self.inner
            .programs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// What buffers are made in: a [`Queue`] (its context) or a [`Context`]. Sealed. The queue is
/// the usual handle, so that making, writing and reading a buffer all take the same one;
/// a context serves buffers shared by the queues of several devices.
///
/// ```
/// # use clgroups::prelude::*;
/// let queue = Queue::new(&default_device()?)?;
/// let a = Buffer::<f32>::new(&queue, 16)?; // in the queue's context
/// let b = Buffer::<f32>::new(queue.context(), 16)?; // the same context, named directly
/// assert_eq!(a.context().devices(), b.context().devices());
/// # Ok::<(), clgroups::Error>(())
/// ```
pub trait InContext: sealed::Sealed {
    /// The context new buffers are made in.
    ///
    /// ```
    /// use clgroups::InContext;
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// assert_eq!(queue.in_context().devices(), queue.context().devices());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    fn in_context(&self) -> &Context;
}

impl sealed::Sealed for Context {}
impl sealed::Sealed for Queue {}
impl<T: InContext> sealed::Sealed for &T {}

impl InContext for Context {
    fn in_context(&self) -> &Context {
        self
    }
}

impl InContext for Queue {
    fn in_context(&self) -> &Context {
        self.context()
    }
}

/// So that `Buffer::new(&queue, n)` also works where `queue` is already a reference.
impl<T: InContext> InContext for &T {
    fn in_context(&self) -> &Context {
        (**self).in_context()
    }
}

/// The devices as one line, `P:D platform / device` each, comma-separated.
pub(crate) fn names(devices: &[Device]) -> String {
    devices
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// An in-order command queue on one device of a [`Context`]. Cheap to clone; `Send + Sync`.
///
/// Commands run in the order they were enqueued; transfers such as
/// [`Buffer::read`](crate::Buffer::read) wait for the commands before them, and every launch
/// returns an [`Event`](crate::Event). Queues from [`Queue::new`] and [`Queue::on`] do not
/// profile (an event costs NVIDIA's driver ~7 µs more host time on a profiling queue: launches
/// then cost what raw OpenCL's do); [`Queue::with_profiling`] and [`Queue::profiled_on`] make
/// queues whose events know their device time ([`Event::duration`](crate::Event::duration)).
///
/// ```
/// use clgroups::{Buffer, Queue};
/// let queue = Queue::new(&clgroups::default_device()?)?;
/// let mut x = Buffer::<f32>::new(&queue, 4)?;
/// x.fill(&queue, 2.5)?;
/// assert_eq!(x.read(&queue)?, [2.5; 4]);
/// println!("{queue:?}");
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Queue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    raw: crate::ffi::Owned<CommandQueue>,
    context: Context,
    device: Device,
    profiling: bool,
    #[cfg(feature = "scaling")]
    uses: Uses,
}

/// What a root device's launches read to skip waiting for this queue: its serial number (never
/// reused, unlike its handle's address), how many times its handle was taken for a command,
/// whether it was lent out, and per other queue (by serial) how many of that queue's commands
/// this queue's commands follow already.
#[cfg(feature = "scaling")]
struct Uses {
    serial: u64,
    taken: std::sync::atomic::AtomicU64,
    lent: std::sync::atomic::AtomicBool,
    follows: Mutex<Vec<(u64, u64)>>,
}

#[cfg(feature = "scaling")]
impl Uses {
    fn new() -> Self {
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Uses {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            taken: Default::default(),
            lent: Default::default(),
            follows: Default::default(),
        }
    }
}

impl Queue {
    /// A new context with this one device, and a queue on it.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// let queue = clgroups::Queue::new(&dev)?;
    /// assert_eq!(queue.device(), &dev);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(device: &Device) -> Result<Self> {
        Queue::on(&Context::new(std::slice::from_ref(device))?, device)
    }

    /// [`Queue::new`] with profiling: every event knows its device time
    /// ([`Event::duration`](crate::Event::duration)).
    ///
    /// ```
    /// use clgroups::{Buffer, Queue};
    /// let queue = Queue::with_profiling(&clgroups::default_device()?)?;
    /// assert!(queue.profiling());
    /// let x = Buffer::from_slice(&queue, &[1u32; 64])?;
    /// let mut y = Buffer::<u32>::new(&queue, 64)?;
    /// println!("copy: {:?}", x.copy_to(&queue, &mut y)?.duration()?);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_profiling(device: &Device) -> Result<Self> {
        Queue::profiled_on(&Context::new(std::slice::from_ref(device))?, device)
    }

    /// A queue on `device`, which must belong to `context` ([`Error::InvalidInput`]
    /// otherwise). One queue per device of a shared context lets several devices work on the
    /// same buffers.
    ///
    /// ```
    /// use clgroups::{Context, Queue};
    /// let dev = clgroups::default_device()?;
    /// let platform: Vec<_> = clgroups::devices()?
    ///     .iter()
    ///     .filter(|d| d.platform_index() == dev.platform_index())
    ///     .cloned()
    ///     .collect();
    /// let context = Context::new(&platform)?;
    /// let queues = platform.iter().map(|d| Queue::on(&context, d)).collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(queues.len(), context.devices().len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn on(context: &Context, device: &Device) -> Result<Self> {
        Queue::create(context, device, false)
    }

    /// [`Queue::on`] with profiling (see [`Queue::with_profiling`]).
    ///
    /// ```
    /// use clgroups::{Context, Queue};
    /// let dev = clgroups::default_device()?;
    /// let queue = Queue::profiled_on(&Context::new(std::slice::from_ref(&dev))?, &dev)?;
    /// assert!(queue.profiling());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn profiled_on(context: &Context, device: &Device) -> Result<Self> {
        Queue::create(context, device, true)
    }

    fn create(context: &Context, device: &Device, profiling: bool) -> Result<Self> {
        if !context.devices().iter().any(|d| d.id() == device.id()) {
            return Err(Error::input(InputFault::NotInContext {
                device: device.to_string(),
            }));
        }
        let properties = match profiling {
            true => CL_QUEUE_PROFILING_ENABLE,
            false => 0,
        };
        let raw =
            crate::ffi::create_queue(context.raw(), device.raw(), properties).map_err(|e| {
                Error::cl(
                    "clCreateCommandQueueWithProperties",
                    e.0,
                    device.to_string(),
                )
            })?;
        Ok(Queue {
            inner: Arc::new(QueueInner {
                raw,
                context: context.clone(),
                device: device.clone(),
                profiling,
                #[cfg(feature = "scaling")]
                uses: Uses::new(),
            }),
        })
    }

    /// Whether the queue's events know their device time ([`Queue::with_profiling`]).
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// assert!(!queue.profiling());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn profiling(&self) -> bool {
        self.inner.profiling
    }

    /// The queue's device.
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// let primary = queue.device().sub_groups().effective.primary_sub_group_size;
    /// println!("{}: primary sub-group size {primary}", queue.device());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The queue's context, which buffers made with the queue belong to.
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// let out = clgroups::Buffer::<i32>::new(&queue, 1024)?;
    /// assert_eq!(out.context().devices(), queue.context().devices());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn context(&self) -> &Context {
        &self.inner.context
    }

    /// Waits until every command enqueued so far has finished, at most
    /// [`crate::config::timeout`] ([`Error::Timeout`] otherwise).
    ///
    /// ```
    /// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
    /// let (a, mut b) = (
    ///     clgroups::Buffer::from_slice(&queue, &[7u8; 64])?,
    ///     clgroups::Buffer::<u8>::new(&queue, 64)?,
    /// );
    /// a.copy_to(&queue, &mut b)?; // enqueued, not waited for
    /// queue.finish()?;            // now done
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn finish(&self) -> Result<()> {
        crate::wait::queue(&self.inner.raw, || {
            format!("the commands enqueued on {}", self.device())
        })
    }

    /// Submits everything enqueued so far to the device (`clFlush`), without waiting: what
    /// another queue's command waits for, or what should start at once, must be flushed.
    #[cfg(any(feature = "scaling", feature = "algorithms"))]
    pub(crate) fn flush(&self) -> Result<()> {
        opencl3::command_queue::flush(self.inner.raw.get())
            .map_err(|e| crate::Error::cl("clFlush", e, self.device().to_string()))
    }

    pub(crate) fn raw(&self) -> &CommandQueue {
        #[cfg(feature = "scaling")]
        self.inner.uses.taken.fetch_add(1, Ordering::SeqCst);
        &self.inner.raw
    }

    /// How many commands were enqueued on the queue so far, or more (a count that only grows:
    /// every use of its handle but flushes, waits and [`Queue::marker`] counts); `None` once its
    /// handle was lent out ([`Queue::as_opencl3`]: what is enqueued through it is not seen).
    #[cfg(feature = "scaling")]
    pub(crate) fn commands(&self) -> Option<u64> {
        let uses = &self.inner.uses;
        (!uses.lent.load(Ordering::SeqCst)).then(|| uses.taken.load(Ordering::SeqCst))
    }

    /// Enqueues a marker (it touches no memory: not counted by [`Queue::commands`]).
    #[cfg(feature = "scaling")]
    pub(crate) fn marker(&self) -> std::result::Result<crate::ffi::Owned<ClEvent>, ClError> {
        crate::ffi::marker(&self.inner.raw)
    }

    /// Whether this queue's next command follows every command enqueued on `other` so far:
    /// a command of this queue waited for a marker after `other`'s first `n` commands, and
    /// `other` has had no other since ([`Queue::commands`]).
    #[cfg(feature = "scaling")]
    pub(crate) fn follows(&self, other: &Queue) -> bool {
        let Some(now) = other.commands() else {
            return false;
        };
        let follows = self.inner.uses.follows.lock();
        let follows = follows.unwrap_or_else(|p| p.into_inner());
        let serial = other.inner.uses.serial;
        follows.iter().any(|&(s, n)| s == serial && n == now)
    }

    /// A command of this queue was enqueued after a marker that followed `other`'s first `n`
    /// commands ([`Queue::commands`], read before the marker was enqueued).
    #[cfg(feature = "scaling")]
    pub(crate) fn now_follows(&self, other: &Queue, n: u64) {
        let follows = self.inner.uses.follows.lock();
        let mut follows = follows.unwrap_or_else(|p| p.into_inner());
        let serial = other.inner.uses.serial;
        match follows.iter_mut().find(|(s, _)| *s == serial) {
            Some(entry) => entry.1 = entry.1.max(n),
            None => follows.push((serial, n)),
        }
    }

    /// The underlying [`opencl3`] command queue (in order; profiling as made), for OpenCL calls
    /// clgroups does not wrap. Commands enqueued through it are ordered with clgroups' own.
    ///
    /// ```
    /// use opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE;
    /// let queue = clgroups::Queue::with_profiling(&clgroups::default_device()?)?;
    /// let raw = queue.as_opencl3();
    /// assert_eq!(raw.device().expect("CL_QUEUE_DEVICE"), queue.device().id());
    /// assert_ne!(raw.properties().expect("CL_QUEUE_PROPERTIES") & CL_QUEUE_PROFILING_ENABLE, 0);
    /// raw.flush().expect("clFlush");
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn as_opencl3(&self) -> &CommandQueue {
        // What is enqueued through it is not counted: root launches wait for this queue
        // from now on.
        #[cfg(feature = "scaling")]
        self.inner.uses.lent.store(true, Ordering::SeqCst);
        &self.inner.raw
    }

    /// Identity of the queue (for caches).
    #[cfg_attr(not(feature = "algorithms"), allow(dead_code))] // used by `algorithms` only
    pub(crate) fn key(&self) -> usize {
        self.inner.raw.get() as usize
    }

    /// How many `Queue` handles share this queue (caches drop their entry when only their own
    /// handles are left).
    #[cfg_attr(not(feature = "algorithms"), allow(dead_code))] // used by `algorithms` only
    pub(crate) fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Context({})", names(self.devices()))
    }
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Queue({})", self.device())
    }
}
