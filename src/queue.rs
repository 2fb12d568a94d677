//! [`Context`] and [`Queue`]: an OpenCL context over one or more devices, and an in-order,
//! profiling command queue on one of them.

use crate::device::Device;
use crate::error::{Error, Result};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use std::fmt;
use std::sync::Arc;

/// An OpenCL context over one or more devices of one platform. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    raw: opencl3::context::Context,
    devices: Vec<Device>,
}

impl Context {
    /// A context over `devices`, which must be non-empty and share one platform.
    pub fn new(devices: &[Device]) -> Result<Self> {
        let first = devices
            .first()
            .ok_or_else(|| Error::input("a context needs at least one device"))?;
        if let Some(other) = devices
            .iter()
            .find(|d| d.platform_index() != first.platform_index())
        {
            return Err(Error::input(format!(
                "devices of one context must share a platform: {first} and {other} do not"
            )));
        }
        let ids: Vec<_> = devices.iter().map(Device::id).collect();
        let raw = opencl3::context::Context::from_devices(&ids, &[], None, std::ptr::null_mut())
            .map_err(|e| Error::cl("clCreateContext", e.0, names(devices)))?;
        log::debug!("context over {}", names(devices));
        Ok(Context {
            inner: Arc::new(ContextInner {
                raw,
                devices: devices.to_vec(),
            }),
        })
    }

    /// The context's devices, in the order given.
    pub fn devices(&self) -> &[Device] {
        &self.inner.devices
    }

    pub(crate) fn raw(&self) -> &opencl3::context::Context {
        &self.inner.raw
    }

    /// Identity of the context (for caches).
    pub(crate) fn key(&self) -> usize {
        self.inner.raw.get() as usize
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

/// An in-order command queue with profiling on one device of a [`Context`].
/// Cheap to clone; `Send + Sync`.
///
/// ```no_run
/// let queue = clgroups::Queue::new(&clgroups::default_device()?)?;
/// println!("{}", queue.device());
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Queue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    raw: CommandQueue,
    context: Context,
    device: Device,
}

impl Queue {
    /// A new context with this one device, and a queue on it.
    pub fn new(device: &Device) -> Result<Self> {
        Queue::on(&Context::new(std::slice::from_ref(device))?, device)
    }

    /// A queue on `device`, which must belong to `context`.
    pub fn on(context: &Context, device: &Device) -> Result<Self> {
        if !context.devices().iter().any(|d| d.id() == device.id()) {
            return Err(Error::input(format!("{device} is not in this context")));
        }
        let raw = crate::ffi::create_queue(context.raw(), device, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| {
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
            }),
        })
    }

    /// The queue's device.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The queue's context.
    pub fn context(&self) -> &Context {
        &self.inner.context
    }

    /// Waits until every command enqueued so far has finished, at most
    /// [`crate::wait::limit`] ([`Error::Timeout`] otherwise).
    pub fn finish(&self) -> Result<()> {
        crate::wait::queue(&self.inner.raw, || {
            format!("the commands enqueued on {}", self.device())
        })
    }

    pub(crate) fn raw(&self) -> &CommandQueue {
        &self.inner.raw
    }
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Queue({})", self.device())
    }
}
