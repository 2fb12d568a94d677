//! [`ColoredBuffer`]: an array colored over a root device's devices.

use super::access::stored_range;
use super::arg::{ColoredArg, RootArgValue, Tiling, Value};
use super::margins::{Coherence, Margins};
use super::residence::Residence;
use super::{Access, Placement, RootDevice};
use crate::buffer::{Buffer, Pod};
use crate::error::{Error, InputFault, Result};
use crate::ffi;
use crate::launch::KernelArg;
use crate::plan::coloring::{element_shares, starts_of};
use crate::plan::partition::{linear_runs, partition};
use crate::plan::shares::Devices;
use crate::plan::weighted::weighted;
use crate::queue::Queue;
use crate::range::Range;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

mod host;
mod impls;
mod whole;

/// An array colored over a [`RootDevice`]'s devices: device `i` owns elements
/// `[starts[i], starts[i] + chunks[i])` (or, colored [for a launch](ColoredBuffer::for_launch),
/// the runs [`owned`](ColoredBuffer::owned)`()[i]`), in one buffer of the shared context with a
/// sub-buffer per chunk ([`Placement::Shared`]) or in one buffer per device
/// ([`Placement::Partitioned`]) that holds its elements and whatever else its [`Access`] asks
/// for. Host reads and writes see one contiguous array. Elements are any [`Pod`] type that is
/// `Send + Sync` (numbers, `[f32; 4]` for `float4`, `#[repr(C)]` structs, `half::f16`), so
/// that the buffer and the kernels launched with it move between threads.
///
/// ```
/// use clgroups::{ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let x = ColoredBuffer::from_slice(&root, &(0..100_000u32).collect::<Vec<_>>())?;
/// // Every device owns one contiguous chunk; together they cover the array.
/// assert_eq!(x.chunks().iter().sum::<usize>(), x.len());
/// assert_eq!(x.starts()[0], 0);
/// assert_eq!(x.read()?[99_999], 99_999);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct ColoredBuffer<T: Pod> {
    parent: Option<Buffer<T>>,
    parts: Vec<Option<Buffer<T>>>,
    chunks: Vec<usize>,
    /// Per device, the runs `[start, end)` it owns (one or none unless it follows a launch).
    owned: Vec<Vec<(usize, usize)>>,
    /// Per device, the elements `[lo, hi)` its part holds.
    stored: Vec<(usize, usize)>,
    /// The launch partition the buffer follows ([`ColoredBuffer::for_launch`]).
    tiling: Option<Tiling>,
    len: usize,
    page: usize,
    queues: Vec<Queue>,
    placement: Placement,
    access: Access,
    /// Parts that keep their halos ([`super::margins`]).
    margins: Arc<Margins<T>>,
    /// Where the valid data is: the parts, or whole on one device ([`super::resident`]).
    residence: Arc<Residence>,
    /// The last [`ColoredBuffer::root_arg`], shared by the launches while it is current.
    arg: ArgCache<T>,
}

/// The last launch argument taken of a colored buffer of `T`.
/// Made at the first launch and read without a lock by the next ones.
struct ArgCache<T>(OnceLock<Arc<ColoredArg>>, PhantomData<fn() -> T>);

impl<T> ArgCache<T> {
    /// Forgets the cached argument (which holds the buffer's margins and residence).
    fn clear(&mut self) {
        self.0.take();
    }
}

// A colored buffer (its cached launch argument included) moves and is shared between threads.
const _: fn() = || {
    fn both<X: Send + Sync>() {}
    both::<ColoredBuffer<u8>>();
};

impl<T: Pod + Send + Sync> ColoredBuffer<T> {
    /// An uninitialised buffer of `len` (≥ 1) elements in the root device's placement, in its
    /// [default page](RootDevice::default_page_size) (shared) or pages of one element
    /// (partitioned: chunks follow 1-D launches, cut by the same rule as the launch).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let mut x = clgroups::ColoredBuffer::<f64>::new(&root, 1 << 20)?;
    /// x.fill(0.0)?; // the contents are undefined until written
    /// let shared = root.placement() == clgroups::scaling::Placement::Shared;
    /// assert_eq!(x.page_size(), if shared { root.default_page_size() } else { 8 });
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(root: &RootDevice, len: usize) -> Result<Self> {
        ColoredBuffer::with_page(root, len, root.page_of::<T>())
    }

    /// An uninitialised buffer of `len` (≥ 1) elements colored in pages of `page` bytes (see
    /// `element_shares`). In shared placement `page` must be a multiple of every device's
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`; in partitioned placement any page works, and a page of
    /// one work-group slab makes the chunks match a launch's partition (see the
    /// [module docs](super)).
    ///
    /// ```
    /// use clgroups::scaling::{ColoredBuffer, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// // 1-D launches in work-groups of 64: one page per work-group of floats.
    /// let x = ColoredBuffer::<f32>::with_page(&root, 19 * 64, 64 * 4)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_page(root: &RootDevice, len: usize, page: usize) -> Result<Self> {
        ColoredBuffer::with_layout(root, len, page, Access::Auto)
    }

    /// An uninitialised buffer of `len` (≥ 1) elements with the default page, reached by
    /// kernels as `access` says.
    ///
    /// ```
    /// use clgroups::scaling::{Access, ColoredBuffer, RootDevice};
    /// let root = RootDevice::from_env()?;
    /// // A 3-point stencil's input: each device also holds one element either side.
    /// let x = ColoredBuffer::<f32>::with_access(&root, 1 << 20, Access::Halo(1))?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_access(root: &RootDevice, len: usize, access: Access) -> Result<Self> {
        ColoredBuffer::with_layout(root, len, root.page_of::<T>(), access)
    }

    /// [`with_page`](Self::with_page) and [`with_access`](Self::with_access) together.
    ///
    /// ```
    /// use clgroups::scaling::{Access, ColoredBuffer};
    /// let root = clgroups::RootDevice::from_env()?;
    /// let page = root.default_page_size();
    /// let lut = ColoredBuffer::<u32>::with_layout(&root, 4096, page, Access::Replicated)?;
    /// assert_eq!(lut.access(), Access::Replicated);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_layout(root: &RootDevice, len: usize, page: usize, access: Access) -> Result<Self> {
        if len == 0 {
            return Err(Error::input(InputFault::EmptyBuffer { colored: true }));
        }
        let placement = root.placement();
        let align = match placement {
            Placement::Shared => root.alignment(),
            Placement::Partitioned => 1,
        };
        let devices = root.weights().map(Devices::Weighted);
        let devices = devices.unwrap_or(Devices::Even(root.len()));
        let chunks = element_shares(len, size_of::<T>(), page, align, devices)?;
        let parent = match placement {
            Placement::Shared => Some(Buffer::new(root.context(), len)?),
            Placement::Partitioned => None,
        };
        let starts = starts_of(&chunks);
        let stored: Vec<(usize, usize)> = starts
            .iter()
            .zip(&chunks)
            .map(|(&start, &n)| match placement {
                Placement::Shared => (start, start + n),
                Placement::Partitioned => stored_range(access, len, start, n),
            })
            .collect();
        let owned = starts
            .iter()
            .zip(&chunks)
            .map(|(&s, &n)| if n > 0 { vec![(s, s + n)] } else { Vec::new() })
            .collect();
        let elem = crate::buffer::ElemType::of::<T>();
        log::debug!("colored buffer of {len} x {elem} in {page}-byte pages, {placement} placement, {access:?}: elements per device {chunks:?}, stored {stored:?}");
        ColoredBuffer::create(root, len, page, access, owned, stored, None, parent)
    }

    /// An uninitialised buffer of `global.len()` elements (`global`'s linear ids, OpenCL
    /// order) colored like the partition of a launch of `global` in work-groups of `local`:
    /// in partitioned placement each device owns the elements of its own work-items, whatever
    /// dimension the partition splits, and holds the smallest range containing them. Launches
    /// accept it as an argument of an ND-range of exactly `global` and `local` (no offset).
    /// `access` is [`Access::Auto`] or [`Access::Partitioned`]. Shared placement colors it as
    /// [`with_access`](Self::with_access) does.
    ///
    /// ```
    /// use clgroups::scaling::{Access, ColoredBuffer, RootDevice};
    /// use clgroups::Range;
    /// let root = RootDevice::from_env()?;
    /// // SYCL's {19, 512, 512} in work-groups of {1, 1, 16}: the split is in y.
    /// let (global, local) = (Range::d3(512, 512, 19), Range::d3(16, 1, 1));
    /// let y = ColoredBuffer::<f32>::for_launch(&root, global, local, Access::Auto)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn for_launch(
        root: &RootDevice,
        global: Range,
        local: Range,
        access: Access,
    ) -> Result<Self> {
        if !matches!(access, Access::Auto | Access::Partitioned) {
            return Err(Error::input(InputFault::LaunchAccess {
                access: format!("{access:?}"),
            }));
        }
        if root.placement() == Placement::Shared {
            return ColoredBuffer::with_access(root, global.len(), access);
        }
        let plan = match root.weights() {
            Some(w) => weighted(global, local, w)?,
            None => partition(global, local, root.len())?,
        };
        let subs = plan.sub_ranges(global, local).into_iter();
        let owned: Vec<Vec<(usize, usize)>> = subs
            .map(|sub| sub.map_or(Vec::new(), |(o, s)| linear_runs(global, o, s)))
            .collect();
        let stored = owned
            .iter()
            .map(|r| match (r.first(), r.last()) {
                (Some(a), Some(b)) => (a.0, b.1),
                _ => (0, 0),
            })
            .collect();
        let tiling = Tiling {
            global,
            local,
            partition: plan,
        };
        log::debug!("colored buffer for {tiling:?}: stored {stored:?}");
        let page = root.page_of::<T>();
        ColoredBuffer::create(
            root,
            global.len(),
            page,
            access,
            owned,
            stored,
            Some(tiling),
            None,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        root: &RootDevice,
        len: usize,
        page: usize,
        access: Access,
        owned: Vec<Vec<(usize, usize)>>,
        stored: Vec<(usize, usize)>,
        tiling: Option<Tiling>,
        parent: Option<Buffer<T>>,
    ) -> Result<Self> {
        let parts = stored
            .iter()
            .map(|&(lo, hi)| {
                (hi > lo)
                    .then(|| match &parent {
                        Some(p) => p.sub_buffer(lo, hi - lo),
                        None => Buffer::new(root.context(), hi - lo),
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>>>()?;
        let chunks = owned
            .iter()
            .map(|r| r.iter().map(|(a, b)| b - a).sum())
            .collect();
        // Parts that may keep margins: partitioned, undeclared, one run per device.
        let own = (owned.iter().zip(&stored))
            .map(
                |(runs, &s)| match (runs.as_slice(), root.placement(), access, &tiling) {
                    ([r], Placement::Partitioned, Access::Auto, None) if *r == s => Some(s),
                    _ => None,
                },
            )
            .collect();
        let margins = Arc::new(Margins::new(own, root.alignment()));
        let buf = ColoredBuffer {
            margins,
            residence: Arc::default(),
            parent,
            parts,
            chunks,
            owned,
            stored,
            tiling,
            len,
            page,
            queues: root.queues().to_vec(),
            placement: root.placement(),
            access,
            arg: ArgCache(OnceLock::new(), PhantomData),
        };
        buf.migrate()?;
        Ok(buf)
    }

    /// A colored buffer holding a copy of `data` (non-empty).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[1i32, 2, 3])?;
    /// assert_eq!(x.read()?, [1, 2, 3]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_slice(root: &RootDevice, data: &[T]) -> Result<Self> {
        let mut buf = ColoredBuffer::new(root, data.len())?;
        buf.write(data)?;
        Ok(buf)
    }

    /// Number of elements.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(clgroups::ColoredBuffer::<u8>::new(&root, 10)?.len(), 10);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers have at least one element.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert!(!clgroups::ColoredBuffer::<u8>::new(&root, 1)?.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Elements held by each device, in device order (they add up to [`len`](Self::len)).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::<f32>::new(&root, 1 << 20)?;
    /// assert_eq!(x.chunks().len(), root.len());
    /// assert_eq!(x.chunks().iter().sum::<usize>(), 1 << 20);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn chunks(&self) -> &[usize] {
        &self.chunks
    }

    /// The index of each device's first element, in device order (for a device that owns
    /// none, where its elements would start).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::<f32>::new(&root, 1 << 20)?;
    /// let (starts, chunks) = (x.starts(), x.chunks());
    /// for i in 1..root.len() {
    ///     assert_eq!(starts[i], starts[i - 1] + chunks[i - 1]);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn starts(&self) -> Vec<usize> {
        let mut next = 0;
        self.owned
            .iter()
            .map(|r| {
                let start = r.first().map_or(next, |f| f.0);
                next = r.last().map_or(next, |l| l.1);
                start
            })
            .collect()
    }

    /// Per device, the runs `[start, end)` of the elements it owns, in order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::<f32>::new(&root, 1000)?;
    /// let owned: usize = x.owned().iter().flatten().map(|(a, b)| b - a).sum();
    /// assert_eq!(owned, 1000);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn owned(&self) -> &[Vec<(usize, usize)>] {
        &self.owned
    }

    /// How kernels reach this buffer in partitioned placement.
    ///
    /// ```
    /// use clgroups::scaling::Access;
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(clgroups::ColoredBuffer::<f32>::new(&root, 8)?.access(), Access::Auto);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn access(&self) -> Access {
        self.access
    }

    /// Per device, the elements `[lo, hi)` its part holds: its chunk, plus the halo or the
    /// whole array its [`Access`] asks for in partitioned placement.
    ///
    /// ```
    /// use clgroups::scaling::{Access, ColoredBuffer, Placement};
    /// let root = clgroups::RootDevice::from_env()?.with_placement(Placement::Partitioned);
    /// let x = ColoredBuffer::<f32>::with_access(&root, 1 << 16, Access::Halo(4))?;
    /// for (i, &(lo, hi)) in x.stored().iter().enumerate() {
    ///     println!("device {i} holds [{lo}, {hi})"); // its chunk and 4 elements either side
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn stored(&self) -> &[(usize, usize)] {
        &self.stored
    }

    /// The coloring page in bytes.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::<f32>::with_page(&root, 1 << 16, 64 * 1024)?;
    /// assert_eq!(x.page_size(), 64 * 1024);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// Where the chunks live.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(clgroups::ColoredBuffer::<f32>::new(&root, 8)?.placement(), root.placement());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// The whole buffer (what kernels receive) in shared placement; `None` in partitioned
    /// placement, which has no whole buffer.
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[5u32; 64])?;
    /// if let Some(whole) = x.parent() {
    ///     assert_eq!(root.placement(), Placement::Shared);
    ///     assert_eq!(whole.read(&root.queues()[0])?, [5; 64]);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn parent(&self) -> Option<&Buffer<T>> {
        self.parent.as_ref()
    }

    /// Device `i`'s part, elements [`stored`](Self::stored)`()[i]` (a sub-buffer in shared
    /// placement, its own buffer in partitioned placement, or a sub-buffer of its allocation
    /// with margins once a launch made one: see [parts that keep their
    /// halos](super#memory-two-placements)), `None` when it holds no
    /// elements or `i` is out of range. Writes through it are not tracked, so from this call on
    /// the buffer's parts keep no margins (launches copy halos as without them), and a launch
    /// that moves it whole to one device moves it back to its parts after.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[5u32; 1 << 16])?;
    /// let part = x.part(0).expect("device 0 holds a chunk");
    /// assert_eq!(part.len(), x.stored()[0].1 - x.stored()[0].0);
    /// assert!(x.part(root.len()).is_none());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn part(&self, i: usize) -> Option<&Buffer<T>> {
        // A buffer held whole on one device moves back to its parts first (and the copies
        // finish: the part may be used on any queue).
        if self.residence.holder().is_some() {
            if let Err(e) = self.settle().and_then(|()| self.finish()) {
                log::error!("colored buffer: moving it back to its parts failed: {e}");
                return None;
            }
        }
        // Writes through the part would not be seen by the validity record of the other
        // devices' margins, nor reach a part that moves into margins later: none from now on.
        self.margins.lend();
        self.held_part(i)
    }

    /// Device `i`'s part, to read: inside its allocation with margins once it keeps them.
    pub(super) fn held_part(&self, i: usize) -> Option<&Buffer<T>> {
        (self.margins.part(i)).or_else(|| self.parts.get(i).and_then(Option::as_ref))
    }

    /// Device and part of every device that holds elements, in device order.
    #[cfg(feature = "algorithms")]
    pub(super) fn parts_mut(&mut self) -> Result<Vec<(usize, &mut Buffer<T>)>> {
        let parts = self.parts_to_write()?.into_iter().enumerate();
        Ok(parts.filter_map(|(d, p)| Some((d, p?))).collect())
    }

    /// Number of devices the buffer is colored over.
    #[cfg(feature = "algorithms")]
    pub(super) fn queues_len(&self) -> usize {
        self.queues.len()
    }

    /// Moves each device's chunk to its device (`clEnqueueMigrateMemObjects` on its queue)
    /// and waits, where the device migrates safely (not NVIDIA's OpenCL, which places a chunk
    /// where it is first used: its migrations crashed beside another thread's buffers). Done
    /// on creation and after every host write.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[0u8; 4096])?;
    /// x.migrate()?; // already where it belongs: a no-op in effect
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn migrate(&self) -> Result<()> {
        let events = self
            .parts
            .iter()
            .zip(&self.queues)
            .filter(|(_, q)| q.device().migrates_safely())
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

    /// What a launch needs to pass this buffer to each device: made once and shared by the
    /// launches (nothing is rebuilt per launch).
    pub(super) fn root_arg(&self) -> RootArgValue {
        // Its fields never change once made (the parts are replaced only through
        // `parts_to_write`, which forgets it).
        let arg = self.arg.0.get_or_init(|| {
            // An `Arc`, not an `Rc`: launches on other threads drop their clones.
            Arc::new(ColoredArg {
                elem: crate::buffer::ElemType::of::<T>(),
                elem_size: size_of::<T>(),
                len: self.len,
                placement: self.placement,
                access: self.access,
                stored: self.stored.clone(),
                tiling: self.tiling.clone(),
                whole: self.parent.as_ref().map(|p| p.to_arg()),
                parts: self
                    .parts
                    .iter()
                    .map(|p| p.as_ref().map(|p| p.to_arg()))
                    .collect(),
                starts: self.starts(),
                chunks: self.chunks.clone(),
                owned: self.owned.clone(),
                margins: Some(self.margins.clone() as Arc<dyn Coherence>),
                residence: Some(self.residence.clone()),
            })
        });
        RootArgValue(Value::Colored(Arc::clone(arg)))
    }
}
