//! Discovery: every platform and device, queried once per process.

use super::caps::{
    backend_available, choose_backend, effective_view, DriverSubGroups, ShuffleBackend,
    SubGroupCapabilities, SUB_GROUP_EXTENSIONS,
};
use super::{Device, DeviceInner, DeviceLimits, Identity, Implementation, Selector};
use crate::error::{Error, InputFault, NoRuntime, Result, Unsupported};
use crate::plan::local_size::DeviceKind;
use once_cell::sync::Lazy;
use opencl3::device::{
    Device as ClDevice, SubDevice, CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_TYPE_ACCELERATOR,
    CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::ClError;
use std::sync::Arc;

/// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`.
const CL_DEVICE_SUB_GROUP_SIZES_INTEL: u32 = 0x4108;
/// ocl-icd: no platform found (`CL_PLATFORM_NOT_FOUND_KHR`).
const CL_PLATFORM_NOT_FOUND_KHR: i32 = -1001;
/// opencl3 (`dynamic`): libOpenCL could not be loaded.
const DLOPEN_RUNTIME_LOAD_FAILED: i32 = -2000;

/// The devices found, and why each skipped device was skipped.
struct Discovered {
    devices: Vec<Device>,
    skipped: Vec<Error>,
}

static DEVICES: Lazy<Result<Discovered>> = Lazy::new(discover);

/// Every device of every platform, in platform order then device order. Discovered once.
/// A device clgroups cannot use (e.g. one that cannot run a forced `CLGROUPS_SHUFFLE_BACKEND`)
/// is left out; [`default_device`] and [`select_device`] report why.
///
/// Errors with [`Error::NoRuntime`] when there is no OpenCL loader or no driver, and with
/// [`Error::NoDevices`] when drivers are present but none offers a usable device (the error
/// names the environment variables that decide it, such as `POCL_DEVICES`).
///
/// ```
/// let all = clgroups::devices()?;
/// assert!(!all.is_empty());
/// for dev in all {
///     println!("{dev}: {:?}, {} backend", dev.kind(), dev.sub_groups().effective.shuffle_backend);
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn devices() -> Result<&'static [Device]> {
    discovered().map(|d| d.devices.as_slice())
}

fn discovered() -> Result<&'static Discovered> {
    DEVICES.as_ref().map_err(Clone::clone)
}

/// The device `CLGROUPS_DEVICE` names (see [`Selector`]), or else the first GPU, else
/// accelerator, else CPU. The usual start of a program.
///
/// ```
/// // `CLGROUPS_DEVICE=gpu`, `=1:0` or `=pocl:cpu` choose; unset, the first GPU wins.
/// let dev = clgroups::default_device()?;
/// let queue = clgroups::Queue::new(&dev)?;
/// println!("running on {}", queue.device());
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn default_device() -> Result<Device> {
    match crate::config::device_selector() {
        Some(sel) => select_device(&sel),
        None => {
            // Discovery fails with Error::NoDevices when no device is usable: `all` is not empty.
            let all = devices()?;
            let pick = [DeviceKind::Gpu, DeviceKind::Accelerator, DeviceKind::Cpu]
                .iter()
                .find_map(|k| all.iter().find(|d| d.kind() == *k))
                .unwrap_or(&all[0]);
            log::debug!("default device: {pick} (first GPU, else accelerator, else CPU)");
            Ok(pick.clone())
        }
    }
}

/// The default device for a unit test, or `None` with the reason printed (no OpenCL device
/// here: the test does not run).
#[cfg(all(test, feature = "algorithms"))]
pub(crate) fn test_device() -> Option<Device> {
    let device = default_device().map_err(|e| eprintln!("not run: no OpenCL device ({e})"));
    device.ok()
}

/// The first device a selector (see [`Selector`]) matches; the error,
/// [`Error::NoDevice`], lists every device.
///
/// ```
/// use clgroups::device::select_device;
/// let first = &clgroups::devices()?[0];
/// let by_index = format!("{}:{}", first.platform_index(), first.device_index()); // often "0:0"
/// assert_eq!(&select_device(&by_index)?, first);
/// let err = select_device("no-such-device").unwrap_err();
/// assert!(matches!(err, clgroups::Error::NoDevice { .. }));
/// assert!(err.to_string().contains(&first.to_string()));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn select_device(selector: &str) -> Result<Device> {
    let all = devices()?;
    let sel: Selector = selector.parse()?;
    let found = all.iter().find(|d| {
        sel.matches(
            d.platform_index(),
            d.device_index(),
            d.platform_words(),
            d.name(),
            d.kind(),
        )
    });
    match found {
        Some(d) => {
            log::debug!("device selector {selector:?} chose {d}");
            Ok(d.clone())
        }
        None => Err(Error::NoDevice {
            request: selector.to_string(),
            available: all
                .iter()
                .map(|d| format!("  {d}"))
                .chain(
                    discovered()?
                        .skipped
                        .iter()
                        .map(|e| format!("  skipped: {e}")),
                )
                .collect::<Vec<_>>()
                .join("\n"),
        }),
    }
}

impl Device {
    /// Splits this device into `n` equal sub-devices (`clCreateSubDevices`,
    /// `CL_DEVICE_PARTITION_EQUALLY`), e.g. a CPU into several "stacks". Errors when the device
    /// has fewer than `n` compute units or cannot be partitioned (most GPUs).
    ///
    /// ```
    /// let dev = clgroups::default_device()?;
    /// match dev.split_equally(2) {
    ///     Ok(halves) => {
    ///         assert_eq!(halves.len(), 2);
    ///         for half in &halves {
    ///             println!("{half}"); // e.g. "0:1 Portable ... / cpu-... [sub-device 1]"
    ///             clgroups::Queue::new(half)?;
    ///         }
    ///     }
    ///     Err(e) => println!("{dev} cannot be split: {e}"),
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn split_equally(&self, n: usize) -> Result<Vec<Device>> {
        let units = self
            .raw()
            .max_compute_units()
            .map_err(|e| cl_err("clGetDeviceInfo", e, self))? as usize;
        if n == 0 || units < n {
            return Err(Error::input(InputFault::SubDevices {
                device: self.to_string(),
                units,
                parts: n,
            }));
        }
        let props = [CL_DEVICE_PARTITION_EQUALLY, (units / n) as isize, 0];
        let subs = self
            .raw()
            .create_sub_devices(&props)
            .map_err(|e| cl_err("clCreateSubDevices", e, self))?;
        subs.into_iter()
            .take(n)
            .enumerate()
            .map(|(i, sub)| {
                let raw = ClDevice::new(sub.id());
                let name = format!("{} [sub-device {i}]", self.name());
                let platform = (
                    self.platform_name().to_string(),
                    self.platform_words().to_string(),
                );
                build(
                    self.platform_index(),
                    i,
                    platform,
                    name,
                    raw,
                    Some(Arc::new(sub)),
                )
            })
            .collect()
    }
}

fn cl_err(call: &'static str, e: ClError, dev: &Device) -> Error {
    Error::cl(call, e.0, dev.to_string())
}

fn discover() -> Result<Discovered> {
    let platforms = opencl3::platform::get_platforms().map_err(|e| match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED => Error::NoRuntime {
            detail: NoRuntime::NoLoader,
        },
        CL_PLATFORM_NOT_FOUND_KHR => Error::NoRuntime {
            detail: NoRuntime::NoPlatform,
        },
        code => Error::NoRuntime {
            detail: NoRuntime::Failed(code),
        },
    })?;
    if platforms.is_empty() {
        return Err(Error::NoRuntime {
            detail: NoRuntime::NoPlatform,
        });
    }
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    let mut passed_over = Vec::new();
    for (pi, p) in platforms.iter().enumerate() {
        let pname = p.name().unwrap_or_default();
        let words = format!(
            "{pname} {} {}",
            p.vendor().unwrap_or_default(),
            p.version().unwrap_or_default()
        )
        .to_lowercase();
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                log::warn!("platform {pi} ({pname}): no devices ({e})");
                passed_over.push(format!("  platform {pi} ({pname}): no devices ({e})"));
                continue;
            }
        };
        for (di, id) in ids.into_iter().enumerate() {
            let raw = ClDevice::new(id);
            let name = raw.name().unwrap_or_default();
            match build(pi, di, (pname.clone(), words.clone()), name, raw, None) {
                Ok(d) => out.push(d),
                Err(e) => {
                    log::warn!("skipping device {pi}:{di}: {e}");
                    passed_over.push(format!("  device {pi}:{di}: {e}"));
                    skipped.push(e);
                }
            }
        }
    }
    if out.is_empty() {
        return Err(no_devices(&platforms, passed_over));
    }
    log::debug!(
        "discovered {} device(s): {:?}",
        out.len(),
        out.iter().map(|d| d.to_string()).collect::<Vec<_>>()
    );
    Ok(Discovered {
        devices: out,
        skipped,
    })
}

/// The error for platforms without a usable device, with the environment that likely caused it.
fn no_devices(platforms: &[opencl3::platform::Platform], reasons: Vec<String>) -> Error {
    let names: Vec<String> = platforms
        .iter()
        .map(|p| p.name().unwrap_or_default())
        .collect();
    let env = crate::config::device_environment();
    Error::NoDevices {
        platforms: names.join(", "),
        reasons: if reasons.is_empty() {
            "  (every platform answered with an empty device list)".into()
        } else {
            reasons.join("\n")
        },
        environment: if env.is_empty() {
            "(none set)".into()
        } else {
            env.join(" ")
        },
    }
}

fn build(
    platform_index: usize,
    device_index: usize,
    (platform, platform_words): (String, String),
    name: String,
    raw: ClDevice,
    sub_device: Option<Arc<SubDevice>>,
) -> Result<Device> {
    let ctx = format!("{platform_index}:{device_index} {platform} / {name}");
    let err = |call: &'static str| {
        let ctx = ctx.clone();
        move |e: ClError| Error::cl(call, e.0, ctx)
    };
    let ty = raw.dev_type().map_err(err("clGetDeviceInfo(TYPE)"))?;
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceKind::Accelerator
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    let ext_string = raw.extensions().unwrap_or_default();
    let exts: Vec<&str> = ext_string.split_whitespace().collect();
    let features: Vec<String> = raw
        .opencl_c_features()
        .map(|v| v.iter().map(|f| cstr_name(&f.name)).collect())
        .unwrap_or_default();
    let has = |e: &str| exts.contains(&e) || features.iter().any(|f| f == e);
    let extensions = SUB_GROUP_EXTENSIONS.iter().map(|e| (*e, has(e))).collect();
    let sizes = if has("cl_intel_required_subgroup_size") {
        raw.get_data(CL_DEVICE_SUB_GROUP_SIZES_INTEL)
            .map(|b| decode_sizes(&b))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let items = raw
        .max_work_item_sizes()
        .map_err(err("clGetDeviceInfo(MAX_WORK_ITEM_SIZES)"))?;
    let mut max_work_item_sizes = [1; 3];
    for (d, s) in max_work_item_sizes.iter_mut().zip(&items) {
        *d = *s;
    }
    let max_work_group_size = raw
        .max_work_group_size()
        .map_err(err("clGetDeviceInfo(MAX_WORK_GROUP_SIZE)"))?;
    let driver = DriverSubGroups {
        max_num_sub_groups: raw.max_num_sub_groups().unwrap_or(0),
        independent_forward_progress: raw
            .sub_group_independent_forward_progress()
            .unwrap_or(false),
        sub_group_sizes: sizes,
        max_work_group_size,
        preferred_work_group_size_multiple: raw.preferred_work_group_size_multiple().unwrap_or(0),
        opencl_c_version: raw.opencl_c_version().unwrap_or_default(),
        opencl_c_features: features.clone(),
        extensions,
        warp_size_nv: if has("cl_nv_device_attribute_query") {
            raw.wrap_size_nv().ok()
        } else {
            None
        },
        compute_capability_nv: if has("cl_nv_device_attribute_query") {
            raw.compute_capability_major_nv()
                .ok()
                .zip(raw.compute_capability_minor_nv().ok())
        } else {
            None
        },
    };
    // What the device is, from its own answers (a PoCL-R device is its server's device).
    let identity = Identity::from_device_info(
        &raw.vendor().unwrap_or_default(),
        &raw.version().unwrap_or_default(),
    );
    let nvidia = identity.implementation == Implementation::Nvidia;
    let backend = backend_from_env(&driver, nvidia, &ctx)?;
    let limits = DeviceLimits {
        max_work_group_size,
        max_work_item_sizes,
        non_uniform_work_groups: raw.non_uniform_work_group_support().unwrap_or(false),
        mem_base_addr_align: raw.mem_base_addr_align().unwrap_or(1024) as usize / 8,
        global_mem_size: raw.global_mem_size().unwrap_or(0),
        local_mem_size: raw.local_mem_size().unwrap_or(0),
        address_bits: raw.address_bits().unwrap_or(32),
        fp64: has("cl_khr_fp64"),
        // PoCL's remote driver forwards the server's answer, but the client's memory is not the
        // server's: shared placement would migrate buffers over the network at every launch.
        host_unified_memory: raw.host_unified_memory().unwrap_or(true) && !identity.remote,
    };
    let sub_groups = SubGroupCapabilities {
        effective: effective_view(&driver, backend),
        driver,
    };
    log::debug!(
        "{ctx}: {kind:?}, {identity:?}, backend {backend}, primary sub-group size {}, sizes {:?}",
        sub_groups.effective.primary_sub_group_size,
        sub_groups.effective.sub_group_sizes
    );
    let compiles_alone = super::compiles_alone(&platform_words, kind, &identity);
    let at = (platform_index, device_index);
    let binary_tag = super::binary_tag(&platform_words, kind, &identity, at, sub_device.is_some());
    if let Some(tag) = &binary_tag {
        log::debug!(
            "{ctx}: PoCL before 6 shares loaded kernels between devices \
             (pocl_release_dlhandle_cache): its programs are built with -D{tag}"
        );
    }
    Ok(Device {
        inner: Arc::new(DeviceInner {
            platform_index,
            device_index,
            platform,
            platform_words,
            name,
            kind,
            raw,
            sub_device,
            identity,
            compiles_alone,
            binary_tag,
            limits,
            sub_groups,
        }),
    })
}

/// The backend for a device: `CLGROUPS_SHUFFLE_BACKEND` if set (an error if the device cannot
/// run it), else [`choose_backend`].
fn backend_from_env(driver: &DriverSubGroups, nvidia: bool, ctx: &str) -> Result<ShuffleBackend> {
    let auto = choose_backend(driver, nvidia);
    let Some(forced) = crate::config::typed(crate::config::SHUFFLE_BACKEND, |v| v.parse().ok())?
    else {
        return Ok(auto);
    };
    if backend_available(forced, driver, nvidia) {
        log::debug!("{ctx}: backend {forced} forced by CLGROUPS_SHUFFLE_BACKEND (auto: {auto})");
        Ok(forced)
    } else {
        Err(Error::Unsupported {
            device: ctx.to_string(),
            what: Unsupported::Backend {
                backend: forced,
                forced: true,
            },
        })
    }
}

/// Decodes a `size_t[]` device-info answer.
fn decode_sizes(bytes: &[u8]) -> Vec<usize> {
    bytes
        .chunks_exact(std::mem::size_of::<usize>())
        .map(|c| usize::from_ne_bytes(c.try_into().expect("chunks_exact yields full chunks")))
        .collect()
}

fn cstr_name(raw: &[u8]) -> String {
    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_size_lists() {
        let mut bytes = Vec::new();
        for s in [1usize, 2, 4, 512] {
            bytes.extend_from_slice(&s.to_ne_bytes());
        }
        assert_eq!(decode_sizes(&bytes), vec![1, 2, 4, 512]);
        assert!(decode_sizes(&[]).is_empty());
    }

    #[test]
    fn reads_nul_terminated_names() {
        let mut raw = [0u8; 64];
        raw[..20].copy_from_slice(b"__opencl_c_subgroups");
        assert_eq!(cstr_name(&raw), "__opencl_c_subgroups");
    }
}
