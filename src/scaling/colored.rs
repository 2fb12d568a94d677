//! [`ColoredBuffer`] and the arguments of a [`RootLaunch`](super::RootLaunch).

use super::{Placement, RootDevice};
use crate::buffer::{Buffer, Scalar};
use crate::error::{Error, Result};
use crate::ffi;
use crate::launch::{Arg, KernelArg};
use crate::plan::coloring::color_elements;
use crate::queue::Queue;
use std::fmt;

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
        events.iter().try_for_each(|ev| {
            ev.wait()
                .map_err(|e| Error::cl("clWaitForEvents", e.0, "buffer migration"))
        })
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
pub struct RootArgValue(pub(super) Value);

#[derive(Clone, Debug)]
pub(super) enum Value {
    Plain(Arg),
    Colored(ColoredArg),
}

/// A colored buffer as a launch sees it.
#[derive(Clone, Debug)]
pub(super) struct ColoredArg {
    pub(super) elem: &'static str,
    pub(super) elem_size: usize,
    pub(super) len: usize,
    pub(super) placement: Placement,
    pub(super) whole: Option<Arg>,
    pub(super) parts: Vec<Option<Arg>>,
    pub(super) starts: Vec<usize>,
    pub(super) chunks: Vec<usize>,
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
