//! Devices: discovery (cached), selection through `CLGROUPS_DEVICE`, and capabilities.
//!
//! ```no_run
//! let dev = clgroups::default_device()?;
//! let caps = dev.sub_groups();
//! println!("{dev}: backend {}, primary sub-group size {}",
//!     caps.effective.shuffle_backend, caps.effective.primary_sub_group_size);
//! # Ok::<(), clgroups::Error>(())
//! ```

mod caps;
mod discover;
mod select;

pub use caps::{
    backend_available, choose_backend, effective_view, provision, DriverSubGroups,
    EffectiveSubGroups, Provision, ShuffleBackend, SubGroupCapabilities, POLYFILLED_EXTENSIONS,
    SUB_GROUP_EXTENSIONS,
};
pub use discover::{default_device, devices, select_device};
pub use select::Selector;

use crate::plan::local_size::DeviceKind;
use opencl3::types::cl_device_id;
use std::fmt;
use std::sync::Arc;

/// Work-group limits and memory facts of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Whether the device has `cl_khr_fp64`.
    pub fp64: bool,
    /// `CL_DEVICE_HOST_UNIFIED_MEMORY`: whether the device shares the host's memory (true
    /// when the driver does not say).
    pub host_unified_memory: bool,
}

/// One OpenCL device, with its platform and capabilities. Cheap to clone; `Send + Sync`.
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
    limits: DeviceLimits,
    sub_groups: SubGroupCapabilities,
}

impl Device {
    /// Index of the platform in discovery order.
    pub fn platform_index(&self) -> usize {
        self.inner.platform_index
    }

    /// Index of the device within its platform.
    pub fn device_index(&self) -> usize {
        self.inner.device_index
    }

    /// `CL_PLATFORM_NAME`.
    pub fn platform_name(&self) -> &str {
        &self.inner.platform
    }

    /// `CL_DEVICE_NAME`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The platform's name, vendor and version, as device selectors match them.
    pub fn platform_words(&self) -> &str {
        &self.inner.platform_words
    }

    /// CPU, GPU, accelerator or other.
    pub fn kind(&self) -> DeviceKind {
        self.inner.kind
    }

    /// Work-group limits and memory facts.
    pub fn limits(&self) -> &DeviceLimits {
        &self.inner.limits
    }

    /// Sub-group capabilities: the driver's answers and clgroups' effective view.
    pub fn sub_groups(&self) -> &SubGroupCapabilities {
        &self.inner.sub_groups
    }

    /// The raw OpenCL device id (valid while this `Device` lives).
    pub fn id(&self) -> cl_device_id {
        self.inner.raw.id()
    }

    /// The opencl3 device.
    pub(crate) fn raw(&self) -> &opencl3::device::Device {
        &self.inner.raw
    }

    /// Whether this is NVIDIA's own OpenCL platform (not PoCL's CUDA driver).
    pub fn is_nvidia_platform(&self) -> bool {
        is_nvidia_platform(&self.inner.platform)
    }

    /// The same device seen with another effective shuffle backend (e.g. to compare
    /// `emulated` with `khr` on one device). Errors if the device cannot run `backend`.
    pub fn with_backend(&self, backend: ShuffleBackend) -> crate::Result<Device> {
        let driver = &self.inner.sub_groups.driver;
        if !backend_available(backend, driver, self.is_nvidia_platform()) {
            return Err(crate::Error::Unsupported {
                device: self.to_string(),
                what: format!("the `{backend}` shuffle backend"),
                missing: backend_requirement(backend).into(),
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
                limits: i.limits.clone(),
                sub_groups,
            }),
        })
    }
}

/// What a backend needs, for error messages.
pub(crate) fn backend_requirement(backend: ShuffleBackend) -> &'static str {
    match backend {
        ShuffleBackend::Khr => "cl_khr_subgroups and cl_khr_subgroup_shuffle",
        ShuffleBackend::Intel => "cl_intel_subgroups",
        ShuffleBackend::NvidiaPtx => "NVIDIA's OpenCL platform",
        ShuffleBackend::Emulated => "nothing",
    }
}

pub(crate) fn is_nvidia_platform(platform: &str) -> bool {
    platform.to_ascii_lowercase().starts_with("nvidia")
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
