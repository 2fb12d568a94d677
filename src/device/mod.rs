//! Devices: discovery (cached), selection through `CLGROUPS_DEVICE`, and capabilities.
//!
//! [`devices`] lists every device of every platform, found once per process;
//! [`default_device`] picks the one `CLGROUPS_DEVICE` names (see [`Selector`]), else the first
//! GPU, accelerator or CPU. Each [`Device`] carries its [`DeviceLimits`] and its
//! [`SubGroupCapabilities`]: what the driver reports ([`DriverSubGroups`]) and what clgroups
//! provides on top ([`EffectiveSubGroups`]: the [`ShuffleBackend`] of the OpenCL C sub-group
//! layer, its sub-group sizes and primary size).
//!
//! ```
//! for dev in clgroups::devices()? {
//!     let caps = dev.sub_groups();
//!     println!(
//!         "{dev}: {:?}, backend {}, sub-group sizes {:?} (primary {}), native sub-groups: {}",
//!         dev.kind(),
//!         caps.effective.shuffle_backend,
//!         caps.effective.sub_group_sizes,
//!         caps.effective.primary_sub_group_size,
//!         caps.driver.native(),
//!     );
//! }
//! # Ok::<(), clgroups::Error>(())
//! ```

mod caps;
mod discover;
mod identity;
mod select;

pub use caps::{
    backend_available, choose_backend, effective_view, provision, DriverSubGroups,
    EffectiveSubGroups, Provision, ShuffleBackend, SubGroupCapabilities, POLYFILLED_EXTENSIONS,
    SUB_GROUP_EXTENSIONS, UNKNOWN_SIMD_WIDTH,
};
#[cfg(all(test, feature = "algorithms"))]
pub(crate) use discover::test_device;
pub use discover::{default_device, devices, select_device};
pub use identity::{Identity, Implementation};
pub use select::Selector;

use crate::error::Unsupported;
/// CPU, GPU, accelerator or other, as [`Device::kind`] reports it.
pub use crate::plan::local_size::DeviceKind;
pub use crate::plan::uniform_branch::GroupBarriers;
use opencl3::types::cl_device_id;
use std::fmt;
use std::sync::Arc;

/// Work-group limits and memory facts of a device.
///
/// ```
/// let dev = clgroups::default_device()?;
/// let l = dev.limits();
/// println!("{dev}: work-groups up to {} ({:?} per dimension), {} KiB local memory",
///     l.max_work_group_size, l.max_work_item_sizes, l.local_mem_size / 1024);
/// assert!(l.max_work_group_size >= 1 && l.max_work_item_sizes.iter().all(|&s| s >= 1));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceLimits {
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`, padded to three dimensions.
    pub max_work_item_sizes: [usize; 3],
    /// `CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT` (false before OpenCL 2.0).
    pub non_uniform_work_groups: bool,
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` in bytes (sub-buffer origin alignment).
    pub mem_base_addr_align: usize,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE` in bytes.
    pub global_mem_size: u64,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem_size: u64,
    /// `CL_DEVICE_ADDRESS_BITS`: the width of the device's `size_t` (32 when not reported).
    pub address_bits: u32,
    /// Whether the device has `cl_khr_fp64`.
    pub fp64: bool,
    /// `CL_DEVICE_HOST_UNIFIED_MEMORY`: whether the device shares the host's memory (true
    /// when the driver does not say).
    pub host_unified_memory: bool,
}

/// One OpenCL device, with its platform and capabilities. Cheap to clone; `Send + Sync`.
///
/// Get one from [`devices`], [`default_device`] or [`select_device`]; make a
/// [`Queue`](crate::Queue) on it to run work. It prints as `platform:device platform name /
/// device name`, the indices that `CLGROUPS_DEVICE` accepts.
///
/// ```
/// let dev = clgroups::default_device()?;
/// let shown = dev.to_string();
/// assert!(shown.starts_with(&format!("{}:{} ", dev.platform_index(), dev.device_index())));
/// assert!(shown.ends_with(dev.name()));
/// let queue = clgroups::Queue::new(&dev)?;
/// assert_eq!(queue.device(), &dev);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

struct DeviceInner {
    platform_index: usize,
    device_index: usize,
    platform: String,
    /// Platform name, vendor and version, lower case: what selectors match.
    platform_words: String,
    name: String,
    kind: DeviceKind,
    raw: opencl3::device::Device,
    /// Keeps a sub-device alive (released when the last clone goes).
    sub_device: Option<Arc<opencl3::device::SubDevice>>,
    identity: Identity,
    /// [`compiles_alone`] of the above, decided once at discovery (launches ask it).
    compiles_alone: bool,
    /// [`binary_tag`] of the above (programs built on the device define it).
    binary_tag: Option<String>,
    limits: DeviceLimits,
    sub_groups: SubGroupCapabilities,
}

impl Device {
    /// Index of the platform in discovery order.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// // Every device of a context shares one platform.
    /// let same_platform: Vec<_> = clgroups::devices()?
    ///     .iter()
    ///     .filter(|d| d.platform_index() == dev.platform_index())
    ///     .cloned()
    ///     .collect();
    /// let context = clgroups::Context::new(&same_platform)?;
    /// assert!(context.devices().contains(&dev));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn platform_index(&self) -> usize {
        self.inner.platform_index
    }

    /// Index of the device within its platform.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// let selector = format!("{}:{}", dev.platform_index(), dev.device_index());
    /// assert_eq!(clgroups::device::select_device(&selector)?, dev);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn device_index(&self) -> usize {
        self.inner.device_index
    }

    /// `CL_PLATFORM_NAME`.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// println!("{} on {}", dev.name(), dev.platform_name());
    /// assert!(!dev.platform_name().is_empty());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn platform_name(&self) -> &str {
        &self.inner.platform
    }

    /// `CL_DEVICE_NAME`.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// // A substring of the name selects the device, as `CLGROUPS_DEVICE=:name` does.
    /// let by_name = clgroups::device::select_device(&format!(":{}", dev.name()))?;
    /// assert_eq!(by_name.name(), dev.name());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The platform's name, vendor and version, in lower case, as device selectors match
    /// them (PoCL's platform is named "Portable Computing Language"; `pocl` matches its vendor).
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// assert!(dev.platform_words().contains(&dev.platform_name().to_lowercase()));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn platform_words(&self) -> &str {
        &self.inner.platform_words
    }

    /// CPU, GPU, accelerator or other.
    ///
    /// ```
    /// use clgroups::device::DeviceKind;
    /// let dev = clgroups::default_device()?;
    /// let what = match dev.kind() {
    ///     DeviceKind::Gpu => "a GPU",
    ///     DeviceKind::Cpu => "a CPU",
    ///     DeviceKind::Accelerator => "an accelerator",
    ///     DeviceKind::Other => "another kind of device",
    /// };
    /// println!("{dev} is {what}");
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kind(&self) -> DeviceKind {
        self.inner.kind
    }

    /// Whether kernels for this device must not be compiled while another device's are
    /// (PoCL before 4 on CPUs, see [`compiles_alone`]): a kernel's first runs there run one
    /// at a time in the process (`kernel::first_run`).
    pub(crate) fn compiles_alone(&self) -> bool {
        self.inner.compiles_alone
    }

    /// The define every program built on this device gets, where the driver would otherwise
    /// share its loaded kernels between devices (PoCL before 6 on CPUs, see [`binary_tag`]).
    pub(crate) fn binary_tag(&self) -> Option<&str> {
        self.inner.binary_tag.as_deref()
    }

    /// Work-group limits and memory facts.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// let bytes = (1usize << 20) * std::mem::size_of::<f32>();
    /// assert!(bytes as u64 <= dev.limits().global_mem_size, "{dev} is too small for this");
    /// // `double` in kernels and in the algorithms needs cl_khr_fp64:
    /// println!("{dev}: fp64 {}", dev.limits().fp64);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn limits(&self) -> &DeviceLimits {
        &self.inner.limits
    }

    /// Sub-group capabilities: the driver's answers and clgroups' effective view.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// let caps = dev.sub_groups();
    /// // What the OpenCL driver itself offers (nothing on PoCL 3.1 or NVIDIA's OpenCL) ...
    /// println!("cl_khr_subgroups: {}", caps.driver.has("cl_khr_subgroups"));
    /// // ... and what kernels get through `#include <clgroups/subgroup.h>`, on every device.
    /// let eff = &caps.effective;
    /// assert!(eff.sub_group_sizes.contains(&eff.primary_sub_group_size));
    /// println!("{dev}: {} backend, primary size {}", eff.shuffle_backend, eff.primary_sub_group_size);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn sub_groups(&self) -> &SubGroupCapabilities {
        &self.inner.sub_groups
    }

    /// The raw OpenCL device id (valid while this `Device` lives), for OpenCL calls clgroups
    /// does not wrap.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// let raw = opencl3::device::Device::new(dev.id());
    /// let units = raw.max_compute_units().expect("CL_DEVICE_MAX_COMPUTE_UNITS");
    /// println!("{dev}: {units} compute units");
    /// assert!(units >= 1);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn id(&self) -> cl_device_id {
        self.inner.raw.id()
    }

    /// The opencl3 device.
    pub(crate) fn raw(&self) -> &opencl3::device::Device {
        &self.inner.raw
    }

    /// What the device is: whose OpenCL runs its kernels, and whether it is reached through
    /// PoCL's remote driver. Read from the device's vendor and version, not the platform's name.
    ///
    /// ```
    /// use clgroups::device::Implementation;
    /// let dev = clgroups::default_device()?;
    /// let id = dev.identity();
    /// assert_eq!(dev.is_nvidia_platform(), id.implementation == Implementation::Nvidia);
    /// println!("{dev}: {:?}{}", id.implementation, if id.remote { ", through PoCL-R" } else { "" });
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn identity(&self) -> &Identity {
        &self.inner.identity
    }

    /// Whether NVIDIA's own OpenCL (not PoCL's CUDA driver) compiles and runs this device's
    /// kernels: on NVIDIA's platform, or behind a PoCL-R server of it. Such devices get the
    /// `nvidia-ptx` backend.
    ///
    /// ```
    /// use clgroups::device::ShuffleBackend;
    /// let dev = clgroups::default_device()?;
    /// if dev.is_nvidia_platform() {
    ///     assert_eq!(dev.sub_groups().effective.primary_sub_group_size, 32);
    /// }
    /// // `nvidia-ptx` runs on NVIDIA's platform only.
    /// assert_eq!(dev.with_backend(ShuffleBackend::NvidiaPtx).is_ok(), dev.is_nvidia_platform());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn is_nvidia_platform(&self) -> bool {
        self.inner.identity.implementation == Implementation::Nvidia
    }

    /// Whether this device's sub-group collectives are work-group barriers, which every
    /// work-item of the work-group must reach: the `emulated` backend, and PoCL's CPU devices
    /// with native sub-groups (PoCL 6.0 runs a collective under a branch that splits a
    /// work-group as its first work-item does: measured, `if (i < n)` with n = 72 in groups
    /// of 64 wrote 128 elements). PoCL-R serving a CPU device reports the CPU type and counts;
    /// PoCL's GPU drivers (CUDA, Level Zero) do not. The build then refuses collectives under
    /// work-group-divergent branches and each launch decides `get_global_id(d) OP n`
    /// (`plan::uniform_branch`).
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// if dev.needs_group_uniform_collectives() {
    ///     println!("{dev}: {}", dev.group_uniform_reason().unwrap());
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn needs_group_uniform_collectives(&self) -> bool {
        self.group_uniform_reason().is_some()
    }

    /// Why [`needs_group_uniform_collectives`](Self::needs_group_uniform_collectives) holds, for
    /// error messages; `None` where it does not.
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// assert_eq!(dev.group_uniform_reason().is_some(), dev.needs_group_uniform_collectives());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn group_uniform_reason(&self) -> Option<GroupBarriers> {
        let backend = self.sub_groups().effective.shuffle_backend;
        group_barrier_reason(backend, self.is_pocl(), self.kind())
    }

    /// Whether buffers may be moved to this device ahead of use (`clEnqueueMigrateMemObjects`):
    /// not on NVIDIA's own OpenCL, which crashed (SIGSEGV) when one thread migrated buffers of
    /// a two-GPU context while another created or wrote buffers of it (two H200s,
    /// `tests/thread_safety.rs`); it places a buffer on the device that first uses it anyway.
    #[cfg(feature = "scaling")]
    pub(crate) fn migrates_safely(&self) -> bool {
        let id = &self.inner.identity;
        id.implementation != Implementation::Nvidia || id.remote
    }

    /// Whether PoCL runs the device's kernels: a PoCL device, or one PoCL serves behind PoCL-R
    /// (not a GPU another implementation serves through PoCL-R's client).
    pub(crate) fn is_pocl(&self) -> bool {
        self.inner.identity.implementation == Implementation::Pocl
    }

    /// The same device seen with another effective shuffle backend (e.g. to compare
    /// `emulated` with `khr` on one device). Programs built on a queue of the returned device
    /// use that backend. Errors with [`Error::Unsupported`](crate::Error::Unsupported) if the
    /// device cannot run `backend`; `emulated` runs everywhere.
    ///
    /// ```
    /// use clgroups::device::ShuffleBackend;
    /// let dev = clgroups::default_device()?;
    /// let emulated = dev.with_backend(ShuffleBackend::Emulated)?;
    /// assert_eq!(emulated.sub_groups().effective.shuffle_backend, ShuffleBackend::Emulated);
    /// assert_eq!(emulated.id(), dev.id()); // the same OpenCL device
    /// let queue = clgroups::Queue::new(&emulated)?; // its programs use the emulated layer
    /// assert_eq!(queue.device().sub_groups().effective.shuffle_backend, ShuffleBackend::Emulated);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn with_backend(&self, backend: ShuffleBackend) -> crate::Result<Device> {
        let driver = &self.inner.sub_groups.driver;
        if !backend_available(backend, driver, self.is_nvidia_platform()) {
            return Err(crate::Error::Unsupported {
                device: self.to_string(),
                what: Unsupported::Backend {
                    backend,
                    forced: false,
                },
            });
        }
        let sub_groups = SubGroupCapabilities {
            driver: driver.clone(),
            effective: effective_view(driver, backend),
        };
        let i = &self.inner;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                platform_index: i.platform_index,
                device_index: i.device_index,
                platform: i.platform.clone(),
                platform_words: i.platform_words.clone(),
                name: i.name.clone(),
                kind: i.kind,
                raw: opencl3::device::Device::new(i.raw.id()),
                sub_device: i.sub_device.clone(),
                identity: i.identity.clone(),
                compiles_alone: i.compiles_alone,
                binary_tag: i.binary_tag.clone(),
                limits: i.limits.clone(),
                sub_groups,
            }),
        })
    }
}

/// Why collectives of `backend` on a device of `kind` (`pocl`: of PoCL's platform) are
/// work-group barriers, or `None` (see [`Device::needs_group_uniform_collectives`]).
pub(crate) fn group_barrier_reason(
    backend: ShuffleBackend,
    pocl: bool,
    kind: DeviceKind,
) -> Option<GroupBarriers> {
    match backend {
        ShuffleBackend::Emulated => Some(GroupBarriers::Emulated),
        ShuffleBackend::Khr | ShuffleBackend::Intel if pocl && kind == DeviceKind::Cpu => {
            Some(GroupBarriers::PoclCpu)
        }
        _ => None,
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
            && self.sub_groups().effective.shuffle_backend
                == other.sub_groups().effective.shuffle_backend
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} {} / {}",
            self.inner.platform_index,
            self.inner.device_index,
            self.inner.platform,
            self.inner.name
        )
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({self})")
    }
}

/// Whether a device of the platform described by `platform_words` (its name, vendor and
/// version, lower case) must compile its kernels alone: PoCL before 4 compiles a kernel's
/// work-group function in its worker threads at the first enqueue, and with two CPU devices
/// of one context compiling at once it sometimes aborted ("Failed to create kernel compiler
/// pass") or crashed in LLVM's pass manager (docs/devices.md). A first run on such a device
/// (a kernel object, global and local size, offset) then runs alone in the process, waited for
/// where it is enqueued (`kernel::first_run`) (pure).
pub(crate) fn compiles_alone(platform_words: &str, kind: DeviceKind, identity: &Identity) -> bool {
    local_pocl_cpu(identity, kind) && pocl_major(platform_words).is_some_and(|m| m < 4)
}

/// The define that gives a device of PoCL before 6 (on CPUs, not through PoCL-R) programs of
/// its own, `device` its (platform, device) indices: PoCL keeps one process-wide cache of
/// loaded work-group functions, keyed by the program's build hash (source and options, not the
/// device), and before 6.0 a finished command releases the first entry of its kernel and local
/// size, not the one it took, so one kernel in flight on two devices at once (different global
/// offsets or grid widths) aborts in `pocl_release_dlhandle_cache` (`ref_count > 0`, where
/// asserts are on) or miscounts (docs/devices.md). Programs built with this define on each
/// device share no entry between devices; `None` elsewhere (pure).
pub(crate) fn binary_tag(
    platform_words: &str,
    kind: DeviceKind,
    identity: &Identity,
    (platform, device): (usize, usize),
    sub_device: bool,
) -> Option<String> {
    let affected = local_pocl_cpu(identity, kind) && pocl_major(platform_words)? < 6;
    let sub = if sub_device { "SUB_" } else { "" };
    affected.then(|| format!("__CLG_POCL_{sub}DEVICE_{platform}_{device}"))
}

fn local_pocl_cpu(identity: &Identity, kind: DeviceKind) -> bool {
    identity.implementation == Implementation::Pocl && !identity.remote && kind == DeviceKind::Cpu
}

/// The major version after the first "pocl " followed by one ("the pocl project" precedes it).
fn pocl_major(platform_words: &str) -> Option<u32> {
    platform_words.match_indices("pocl ").find_map(|(i, m)| {
        let (major, rest) = platform_words[i + m.len()..].split_once('.')?;
        major.parse::<u32>().ok().filter(|_| !rest.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::{binary_tag, compiles_alone, Identity};

    #[test]
    fn pocl_before_4_compiles_alone_on_cpus() {
        let words = |v: &str| {
            format!("portable computing language the pocl project opencl 3.0 pocl {v} linux")
        };
        let pocl = Identity::from_device_info("The pocl project", "OpenCL 3.0 PoCL HSTR: pthread");
        let remote = Identity::from_device_info(
            "The pocl project",
            "OpenCL 3.0 PoCL HSTR: pthread HSTR: pocl-remote: 127.0.0.1",
        );
        let nvidia = Identity::from_device_info("NVIDIA Corporation", "OpenCL 3.0 CUDA");
        assert!(compiles_alone(&words("3.1+debian"), DeviceKind::Cpu, &pocl));
        assert!(!compiles_alone(
            &words("6.0+debian"),
            DeviceKind::Cpu,
            &pocl
        ));
        assert!(!compiles_alone(&words("3.1"), DeviceKind::Gpu, &pocl));
        assert!(!compiles_alone(&words("3.1"), DeviceKind::Cpu, &remote));
        assert!(!compiles_alone(
            "nvidia cuda opencl 3.0 cuda 13.0",
            DeviceKind::Cpu,
            &nvidia
        ));
    }

    #[test]
    fn pocl_before_6_tags_programs_per_device_on_cpus() {
        let words = |v: &str| {
            format!("portable computing language the pocl project opencl 3.0 pocl {v}  linux, none+asserts")
        };
        let pocl = Identity::from_device_info("The pocl project", "OpenCL 3.0 PoCL HSTR: pthread");
        let remote = Identity::from_device_info(
            "The pocl project",
            "OpenCL 3.0 PoCL HSTR: pthread HSTR: pocl-remote: 127.0.0.1",
        );
        let cpu = DeviceKind::Cpu;
        let tag = |v: &str, id: &Identity, kind, at, sub| binary_tag(&words(v), kind, id, at, sub);
        // Ubuntu 24.04's PoCL 5.0 (asserts on: it aborts) and Debian 12's 3.1.
        let five = tag("5.0+debian", &pocl, cpu, (0, 1), false);
        assert_eq!(five.as_deref(), Some("__CLG_POCL_DEVICE_0_1"));
        let sub = tag("3.1+debian", &pocl, cpu, (0, 1), true);
        assert_eq!(sub.as_deref(), Some("__CLG_POCL_SUB_DEVICE_0_1"));
        assert_ne!(tag("5.0", &pocl, cpu, (0, 0), false), five);
        // Fixed in 6.0 (c9ac4c0c3); GPU drivers and PoCL-R's client have no such cache.
        assert_eq!(tag("6.0+debian", &pocl, cpu, (0, 1), false), None);
        assert_eq!(tag("7.2-rc1", &pocl, cpu, (0, 1), false), None);
        assert_eq!(tag("5.0", &pocl, DeviceKind::Gpu, (0, 1), false), None);
        assert_eq!(tag("5.0", &remote, cpu, (0, 1), false), None);
        let nvidia = Identity::from_device_info("NVIDIA Corporation", "OpenCL 3.0 CUDA");
        assert_eq!(
            binary_tag(
                "nvidia cuda opencl 3.0 cuda 13.0",
                cpu,
                &nvidia,
                (1, 0),
                false
            ),
            None
        );
    }

    use super::{group_barrier_reason, DeviceKind, ShuffleBackend};

    #[test]
    fn collectives_are_work_group_barriers_when_emulated_or_on_pocl_cpus() {
        use ShuffleBackend::{Emulated, Intel, Khr, NvidiaPtx};
        let barriers = |b, pocl, kind| group_barrier_reason(b, pocl, kind).is_some();
        // Emulated everywhere; PoCL's CPU devices (PoCL 6.0, PoCL-R serving a CPU).
        assert!(barriers(Emulated, false, DeviceKind::Gpu));
        assert!(barriers(Khr, true, DeviceKind::Cpu) && barriers(Intel, true, DeviceKind::Cpu));
        // PoCL's GPU drivers (CUDA, Level Zero, PoCL-R serving a GPU), other vendors, NVIDIA.
        assert!(!barriers(Khr, true, DeviceKind::Gpu));
        assert!(!barriers(Intel, false, DeviceKind::Cpu));
        assert!(!barriers(NvidiaPtx, false, DeviceKind::Gpu));
    }
}
