//! [`RootDevice`]: several devices of one platform used as one.

use super::Placement;
use crate::device::{default_device, devices, select_device, Device};
use crate::error::{Error, InputFault, Result, RootFault, Weight};
use crate::plan::coloring::DEFAULT_PAGE_SIZE;
use crate::plan::cost::Figures;
use crate::plan::cost::{Link, SpreadPolicy};
use crate::plan::gcd;
use crate::queue::{names, Context, Queue};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// Several devices of one platform used as one: a shared context and one queue per device.
/// Cheap to clone; `Send + Sync`.
///
/// ```
/// use clgroups::prelude::*;
/// // All devices of the default device's platform (or those CLGROUPS_DEVICES names).
/// let root = RootDevice::from_env()?;
/// println!("{root:?}: {} device(s), {} placement", root.len(), root.placement());
/// let program = root.program(r#"
///     kernel void saxpy(float a, global const float *x, global float *y) {
///         size_t i = get_global_id(0);
///         y[i] = a * x[i] + y[i];
///     }
/// "#)?;
/// let saxpy = program.kernel("saxpy")?;
/// let n = 1 << 16;
/// let x = ColoredBuffer::from_slice(&root, &vec![1.0f32; n])?;
/// let mut y = ColoredBuffer::from_slice(&root, &vec![2.0f32; n])?;
/// // SAFETY: work-item i reads x[i] and writes y[i], i < n = x.len() = y.len().
/// let ev = unsafe { saxpy.launch().arg(3.0f32).arg(&x).arg(&mut y).range(n)? };
/// ev.wait()?;
/// assert!(y.read()?.iter().all(|&v| v == 5.0));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct RootDevice {
    context: Context,
    queues: Vec<Queue>,
    placement: Placement,
    /// Refuse launches the contract cannot split instead of running them merged or on one
    /// device ([`RootDevice::strict`]).
    strict: bool,
    /// Relative throughput per device ([`RootDevice::with_weights`]); `None`: equal.
    weights: Option<Vec<f64>>,
    /// How launches spread over the devices ([`RootDevice::with_spread`]).
    spread: SpreadPolicy,
    /// Launches between halo exchanges, if forced ([`RootDevice::with_halo_depth`]).
    halo_depth: Option<usize>,
    /// The device-to-device link, measured at the first launch the cost model prices.
    link: Arc<OnceLock<Link>>,
    /// Measured reduces (length, element size, operation): over the parts, and whole on one
    /// device.
    reduces: Arc<Mutex<HashMap<ReduceKey, Figures>>>,
}

impl RootDevice {
    /// A root device over `devices`, in order (device 0 takes the first chunk of every launch).
    ///
    /// Its [`Placement`] is [`Placement::choose`]`(devices)`.
    ///
    /// Errors ([`Error::InvalidInput`]): no devices, devices of different platforms, or one
    /// device given twice; ([`Error::InvalidEnvironment`]) a bad `CLGROUPS_PLACEMENT` or
    /// `CLGROUPS_STRICT`.
    ///
    /// ```
    /// use clgroups::RootDevice;
    /// let first = clgroups::default_device()?;
    /// let same_platform: Vec<_> = clgroups::devices()?
    ///     .iter()
    ///     .filter(|d| d.platform_index() == first.platform_index())
    ///     .cloned()
    ///     .collect();
    /// let root = RootDevice::new(&same_platform)?;
    /// assert_eq!(root.len(), same_platform.len());
    /// assert!(RootDevice::new(&[]).is_err());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(devices: &[Device]) -> Result<Self> {
        let keys: Vec<(usize, usize)> = devices
            .iter()
            .map(|d| (d.platform_index(), d.id() as usize))
            .collect();
        check_devices(&keys, &names(devices))?;
        let placement = Placement::choose(devices)?;
        let strict = crate::config::settings().strict()?;
        let spread = crate::config::typed(crate::config::SPREAD, SpreadPolicy::from_word)?;
        let spread = spread.unwrap_or_default();
        let depth = |t: &str| t.parse::<usize>().ok().filter(|&k| k >= 1);
        let halo_depth = crate::config::typed(crate::config::HALO_DEPTH, depth)?;
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
            strict,
            weights: None,
            spread,
            halo_depth,
            link: Arc::default(),
            reduces: Arc::default(),
        })
    }

    /// The devices `CLGROUPS_DEVICES` names (read at each call), or else every device of the
    /// default device's platform ([`default_device`]).
    ///
    /// `CLGROUPS_DEVICES` is a comma-separated list of device selectors, each as
    /// `CLGROUPS_DEVICE` takes it ([`crate::device::Selector`]): `0:0,0:1` (platform:device
    /// indices) is the unambiguous form; a name selects the first device it matches.
    ///
    /// ```
    /// // CLGROUPS_DEVICES=0:0,0:1 picks two devices; unset, every device of the default platform.
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(root.queues().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        match crate::config::device_selectors() {
            Some(list) => {
                let chosen = list
                    .iter()
                    .map(|s| select_device(s))
                    .collect::<Result<Vec<_>>>()?;
                log::debug!("CLGROUPS_DEVICES chose {}", names(&chosen));
                RootDevice::new(&chosen)
            }
            None => {
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
    ///
    /// ```
    /// let device = clgroups::default_device()?;
    /// // Sub-devices need clCreateSubDevices (PoCL's CPU devices have it, most GPUs do not).
    /// match clgroups::RootDevice::split(&device, 2) {
    ///     Ok(root) => assert_eq!(root.len(), 2),
    ///     Err(e) => println!("{device} cannot be split: {e}"),
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn split(device: &Device, n: usize) -> Result<Self> {
        RootDevice::new(&device.split_equally(n)?)
    }

    /// Number of devices (at least 1).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert!(root.len() >= 1 && !root.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Always false: a root device has at least one device.
    ///
    /// ```
    /// assert!(!clgroups::RootDevice::from_env()?.is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The devices, in order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// for (i, d) in root.devices().iter().enumerate() {
    ///     println!("device {i}: {d}");
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn devices(&self) -> &[Device] {
        self.context.devices()
    }

    /// The shared context.
    ///
    /// ```
    /// use clgroups::Buffer;
    /// let root = clgroups::RootDevice::from_env()?;
    /// // A plain buffer in the shared context: every device's kernels may read it.
    /// let table = Buffer::<f32>::new(root.context(), 256)?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// One queue per device, in device order.
    ///
    /// ```
    /// use clgroups::Buffer;
    /// let root = clgroups::RootDevice::from_env()?;
    /// let q = &root.queues()[0];
    /// let b = Buffer::from_slice(q, &[1u8, 2])?;
    /// assert_eq!(b.read(q)?, [1, 2]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// Where colored buffers of this root device live.
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let root = clgroups::RootDevice::from_env()?;
    /// if std::env::var("CLGROUPS_PLACEMENT").is_err() {
    ///     assert_eq!(root.placement(), Placement::choose(root.devices())?);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// This root device with another placement (for buffers and programs made afterwards).
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let root = clgroups::RootDevice::from_env()?.with_placement(Placement::Partitioned);
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[1u32; 1000])?;
    /// assert_eq!(x.placement(), Placement::Partitioned);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// This root device in strict mode (for programs made afterwards): a launch that
    /// [the contract](super#the-contract) cannot split as declared is refused with
    /// [`Error::InvalidLaunch`] before anything is enqueued, as before implicit merging,
    /// instead of running merged or on one device. `STRICT_ENV`
    /// (`CLGROUPS_STRICT=1`) turns it on for every root device.
    ///
    /// ```
    /// use clgroups::scaling::{ColoredBuffer, Placement, RootDevice};
    /// let root = RootDevice::from_env()?.with_placement(Placement::Partitioned).strict();
    /// assert!(root.is_strict());
    /// let p = root.program("kernel void spread(global int *y, global const int *x, uint n) {
    ///     size_t i = get_global_id(0); y[(i * 7) % n] = x[i]; }")?;
    /// let x = ColoredBuffer::from_slice(&root, &[1i32; 1024])?;
    /// let y = ColoredBuffer::<i32>::new(&root, 1024)?;
    /// // SAFETY: work-item i reads x[i] and writes y[(7 i) % 1024], inside both (1024).
    /// let r = unsafe { p.kernel("spread")?.launch().arg(&y).arg(&x).arg(1024u32).range(1024) };
    /// // y is written where no footprint can bound (`%`), undeclared: refused (merged when not
    /// // strict).
    /// assert!(matches!(r, Err(clgroups::Error::InvalidLaunch { .. })));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// This root device with launches (of programs made afterwards) spread as `policy` says:
    /// [`SpreadPolicy::Model`] (the default; `CLGROUPS_SPREAD=model`) lets the cost model
    /// (`plan::cost`) choose between the split the analysis proved and the whole launch on one
    /// device, from measured times; [`SpreadPolicy::Split`] (`CLGROUPS_SPREAD=split`) always
    /// does what the analysis proves (split, merged or one device, as before the cost model);
    /// [`SpreadPolicy::OneDevice`] (`CLGROUPS_SPREAD=one`) always runs the whole launch on
    /// one device, its colored buffers moved there whole. For tests and benchmarks; strict
    /// mode refuses as before whatever the policy.
    ///
    /// ```
    /// use clgroups::scaling::{RootDevice, SpreadPolicy};
    /// let root = RootDevice::from_env()?.with_spread(SpreadPolicy::Split);
    /// assert_eq!(root.spread(), SpreadPolicy::Split);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_spread(mut self, policy: SpreadPolicy) -> Self {
        self.spread = policy;
        self
    }

    /// This root device with halos exchanged once every `k` launches (of programs made
    /// afterwards; `CLGROUPS_HALO_DEPTH`, else 1): where a launch split by footprints reads a
    /// margin beyond each device's part of an undeclared colored buffer and writes only its
    /// own part of another, each device keeps margins of `k - 1` more rows of work-groups and
    /// computes them redundantly into its own copy, so a ping-pong stencil chain fetches halos
    /// once every `k` launches; results are the one device's, bit for bit. Where the margins
    /// do not fit (a part narrower than them, a buffer read and written by one launch), the
    /// launch keeps margins as with `k = 1`. Values below 1 count as 1. Unforced, the cost
    /// model chooses `k` per kernel and shape ([`SpreadPolicy::Model`]; `plan::cost::
    /// halo_depth`, from the measured split launch and cross-device latency), else 1.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?.with_halo_depth(4);
    /// assert_eq!(root.halo_depth(), Some(4));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_halo_depth(mut self, k: usize) -> Self {
        self.halo_depth = Some(k.max(1));
        self
    }

    /// Launches between halo exchanges, if forced ([`RootDevice::with_halo_depth`]; `None`:
    /// the cost model chooses).
    pub fn halo_depth(&self) -> Option<usize> {
        self.halo_depth
    }

    /// How launches spread over the devices ([`RootDevice::with_spread`]).
    ///
    /// ```
    /// use clgroups::scaling::SpreadPolicy;
    /// let root = clgroups::RootDevice::from_env()?;
    /// if std::env::var_os("CLGROUPS_SPREAD").is_none() {
    ///     assert_eq!(root.spread(), SpreadPolicy::Model);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn spread(&self) -> SpreadPolicy {
        self.spread
    }

    /// The measured link between the devices, shared by the launches of programs made from
    /// this root device (measured once, at the first launch the cost model prices).
    pub(super) fn link_cell(&self) -> Arc<OnceLock<Link>> {
        self.link.clone()
    }

    /// The link a reduce is priced with ([`super::resident::priced_link`]).
    #[cfg(feature = "algorithms")]
    pub(super) fn priced_link(&self, moves: bool) -> Option<Link> {
        super::resident::priced_link(&self.link, || self.queues.iter().collect(), moves)
    }

    /// Runs `f` on the cost model's figures of the reduces of `key`.
    #[cfg_attr(not(feature = "algorithms"), allow(dead_code))]
    pub(super) fn reduce_figures<R>(&self, key: ReduceKey, f: impl FnOnce(&mut Figures) -> R) -> R {
        let mut r = self.reduces.lock().unwrap_or_else(|p| p.into_inner());
        f(r.entry(key).or_default())
    }

    /// Whether launches are refused rather than merged or sent to one device
    /// ([`RootDevice::strict`]).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert_eq!(root.is_strict(), std::env::var("CLGROUPS_STRICT").as_deref() == Ok("1"));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// This root device with the launches of programs made afterwards split in proportion to
    /// `weights` (one positive finite number per device: its relative throughput, e.g. a
    /// measured bandwidth), by `plan::weighted::weighted`: a device of weight 3
    /// gets about three times the work-groups of one of weight 1. Colored buffers keep their
    /// even coloring: buffers proven indexed at the own id no longer match the chunks and are
    /// merged ([the contract](super#the-contract)); color them for the launch
    /// ([`ColoredBuffer::for_launch`](super::ColoredBuffer::for_launch)) to keep them split.
    ///
    /// Errors ([`Error::InvalidInput`]): not one weight per device, or a weight that is not
    /// positive and finite.
    ///
    /// ```
    /// use clgroups::RootDevice;
    /// let root = RootDevice::from_env()?;
    /// let weights: Vec<f64> = (1..=root.len()).map(|i| i as f64).collect();
    /// let root = root.with_weights(&weights)?;
    /// assert_eq!(root.weights(), Some(&weights[..]));
    /// assert!(RootDevice::from_env()?.with_weights(&[]).is_err());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_weights(mut self, weights: &[f64]) -> Result<Self> {
        if weights.len() != self.queues.len() {
            return Err(Error::input(InputFault::WeightCount {
                weights: weights.len(),
                devices: self.queues.len(),
            }));
        }
        if let Some(w) = weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
            return Err(Error::input(InputFault::Weight { weight: Weight(*w) }));
        }
        self.weights = Some(weights.to_vec());
        Ok(self)
    }

    /// The devices' relative weights ([`RootDevice::with_weights`]), or `None` (equal).
    ///
    /// ```
    /// assert_eq!(clgroups::RootDevice::from_env()?.weights(), None);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }

    /// This root device with profiling queues on the same context: launches of programs made
    /// afterwards return [`MultiEvent`](super::MultiEvent)s that know their device time.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?.with_profiling()?;
    /// assert!(root.queues().iter().all(|q| q.profiling()));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_profiling(mut self) -> Result<Self> {
        self.finish()?;
        self.queues = (self.queues.iter())
            .map(|q| Queue::profiled_on(&self.context, q.device()))
            .collect::<Result<Vec<_>>>()?;
        Ok(self)
    }

    /// Waits for every queue.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// root.finish()?; // every queue is idle
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }

    /// The coloring page for this device set in shared placement: `DEFAULT_PAGE_SIZE` (64 KiB)
    /// rounded up to a multiple of every device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN` (in
    /// partitioned placement [`ColoredBuffer::new`](super::ColoredBuffer::new) colors in pages
    /// of one element, which follow launches: see `plan::shares`).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// assert!(root.default_page_size() >= 64 * 1024);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn default_page_size(&self) -> usize {
        let align = self.alignment();
        DEFAULT_PAGE_SIZE.div_ceil(align) * align
    }

    /// The page of [`ColoredBuffer::new`](super::ColoredBuffer::new) for elements of `T`:
    /// [`default_page_size`](Self::default_page_size) in shared placement (sub-buffers need
    /// aligned chunks), one element in partitioned placement (chunks follow launches).
    pub(super) fn page_of<T>(&self) -> usize {
        match self.placement {
            Placement::Shared => self.default_page_size(),
            Placement::Partitioned => size_of::<T>(),
        }
    }

    /// The least common multiple of the devices' sub-buffer alignments, in bytes.
    pub(super) fn alignment(&self) -> usize {
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

/// A reduce's figures key: length, element size, operation.
pub(super) type ReduceKey = (usize, usize, u8);

/// Checks `(platform index, device id)` pairs: at least one, one platform, no repeats (an
/// error naming the devices, `names`).
fn check_devices(keys: &[(usize, usize)], names: &str) -> Result<()> {
    let refuse = |fault| {
        Err(Error::input(InputFault::RootDevices {
            fault,
            devices: names.into(),
        }))
    };
    let Some(&(platform, _)) = keys.first() else {
        return refuse(RootFault::NoDevice);
    };
    if let Some(i) = keys.iter().position(|&(p, _)| p != platform) {
        return refuse(RootFault::Platforms {
            device: i,
            platform: keys[i].0,
            first: platform,
        });
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| k == key) {
            return refuse(RootFault::Repeats { device: i, of: j });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_sets_are_checked() {
        assert!(check_devices(&[(0, 10), (0, 11)], "a, b").is_ok());
        assert!(check_devices(&[(1, 10)], "a").is_ok());
        let e = check_devices(&[], "").unwrap_err().to_string();
        assert!(e.contains("at least one"), "{e}");
        let e = check_devices(&[(0, 10), (1, 20)], "a, b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("device 1 is on platform 1"), "{e}");
        let e = check_devices(&[(0, 10), (0, 11), (0, 10)], "a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("device 2 repeats device 0"), "{e}");
        assert_eq!(gcd(128, 48), 16);
    }
}
