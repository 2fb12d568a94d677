//! Sub-group capabilities of a device: what the driver reports, and what clgroups provides.

use crate::plan::local_size::prev_power_of_two;
use std::collections::BTreeMap;
use std::fmt;

/// The sub-group extensions and features clgroups looks for, in report order.
pub const SUB_GROUP_EXTENSIONS: [&str; 12] = [
    "cl_khr_subgroups",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_intel_subgroups",
    "cl_intel_required_subgroup_size",
    "__opencl_c_subgroups",
];

/// How the `cl/` sub-group layer implements sub-groups on a device.
///
/// ```
/// use clgroups::device::ShuffleBackend;
/// let device = clgroups::default_device()?;
/// let backend = device.sub_groups().effective.shuffle_backend;
/// println!("{device}: the sub-group layer runs as `{backend}`");
/// // Every device can run the emulated layer (CLGROUPS_SHUFFLE_BACKEND=emulated does this too).
/// let emulated = device.with_backend(ShuffleBackend::Emulated)?;
/// assert_eq!(emulated.sub_groups().effective.shuffle_backend, ShuffleBackend::Emulated);
/// assert_eq!("ptx".parse::<ShuffleBackend>()?, ShuffleBackend::NvidiaPtx);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShuffleBackend {
    /// `cl_khr_subgroups` + `cl_khr_subgroup_shuffle` builtins.
    Khr,
    /// `cl_intel_subgroups` builtins.
    Intel,
    /// NVIDIA's OpenCL: inline PTX (`shfl.sync`, `%laneid`), warps of 32.
    NvidiaPtx,
    /// Any other device: local memory and work-group barriers.
    Emulated,
}

impl ShuffleBackend {
    /// The name used in reports, JSON and `CLGROUPS_SHUFFLE_BACKEND`.
    ///
    /// ```
    /// use clgroups::device::ShuffleBackend;
    /// assert_eq!(ShuffleBackend::NvidiaPtx.name(), "nvidia-ptx");
    /// assert_eq!(ShuffleBackend::Emulated.to_string(), "emulated");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ShuffleBackend::Khr => "khr",
            ShuffleBackend::Intel => "intel",
            ShuffleBackend::NvidiaPtx => "nvidia-ptx",
            ShuffleBackend::Emulated => "emulated",
        }
    }

    /// The OpenCL C define the layer selects this backend with.
    ///
    /// ```
    /// use clgroups::device::ShuffleBackend;
    /// assert_eq!(ShuffleBackend::Khr.define(), "CLG_BACKEND_KHR");
    /// ```
    pub const fn define(self) -> &'static str {
        match self {
            ShuffleBackend::Khr => "CLG_BACKEND_KHR",
            ShuffleBackend::Intel => "CLG_BACKEND_INTEL",
            ShuffleBackend::NvidiaPtx => "CLG_BACKEND_NVIDIA_PTX",
            ShuffleBackend::Emulated => "CLG_BACKEND_EMULATED",
        }
    }
}

impl fmt::Display for ShuffleBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ShuffleBackend {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "khr" => Ok(ShuffleBackend::Khr),
            "intel" => Ok(ShuffleBackend::Intel),
            "nvidia-ptx" | "ptx" => Ok(ShuffleBackend::NvidiaPtx),
            "emulated" => Ok(ShuffleBackend::Emulated),
            _ => Err(crate::Error::input(
                crate::error::InputFault::ShuffleBackend { text: s.into() },
            )),
        }
    }
}

/// The driver's own answers, exactly as `clinfo` shows them.
///
/// ```
/// let device = clgroups::default_device()?;
/// let driver = &device.sub_groups().driver;
/// println!("OpenCL C {}, max sub-groups {}, sizes {:?}",
///     driver.opencl_c_version, driver.max_num_sub_groups, driver.sub_group_sizes);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverSubGroups {
    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS` (0: no sub-groups).
    pub max_num_sub_groups: u32,
    /// `CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS`.
    pub independent_forward_progress: bool,
    /// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`; empty without `cl_intel_required_subgroup_size`.
    pub sub_group_sizes: Vec<usize>,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE` (0 where the driver has no such query).
    pub preferred_work_group_size_multiple: usize,
    /// `CL_DEVICE_OPENCL_C_VERSION`.
    pub opencl_c_version: String,
    /// `CL_DEVICE_OPENCL_C_FEATURES` names (OpenCL 3.0 drivers).
    pub opencl_c_features: Vec<String>,
    /// Presence of each of [`SUB_GROUP_EXTENSIONS`].
    pub extensions: BTreeMap<&'static str, bool>,
    /// `CL_DEVICE_WARP_SIZE_NV` where `cl_nv_device_attribute_query` is present.
    pub warp_size_nv: Option<u32>,
    /// `CL_DEVICE_COMPUTE_CAPABILITY_{MAJOR,MINOR}_NV` where `cl_nv_device_attribute_query` is
    /// present (the layer uses `redux.sync` from 8.0).
    pub compute_capability_nv: Option<(u32, u32)>,
}

impl DriverSubGroups {
    /// Whether the device has extension (or feature) `name`.
    ///
    /// ```
    /// let device = clgroups::default_device()?;
    /// let driver = &device.sub_groups().driver;
    /// if driver.has("cl_intel_subgroups") {
    ///     println!("{device} has Intel's sub-group built-ins");
    /// }
    /// assert!(!driver.has("cl_no_such_extension"));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn has(&self, name: &str) -> bool {
        self.extensions.get(name).copied().unwrap_or(false)
    }

    /// Whether the driver runs sub-groups natively (and so answers kernel sub-group queries).
    ///
    /// ```
    /// let device = clgroups::default_device()?;
    /// // PoCL 3.1 and most CPUs: no (the layer emulates); PoCL 6.0, Intel and AMD GPUs: yes.
    /// println!("native sub-groups: {}", device.sub_groups().driver.native());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn native(&self) -> bool {
        self.max_num_sub_groups > 0
            && (self.has("cl_khr_subgroups") || self.has("__opencl_c_subgroups"))
    }
}

/// What clgroups provides on a device, whatever the driver has.
///
/// ```
/// let device = clgroups::default_device()?;
/// let eff = &device.sub_groups().effective;
/// assert!(eff.sub_group_sizes.contains(&eff.primary_sub_group_size));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EffectiveSubGroups {
    /// Sub-group sizes a kernel may require (`CLG_REQD_SUB_GROUP_SIZE`), ascending.
    pub sub_group_sizes: Vec<usize>,
    /// The size guaranteed to support every feature of the layer; kernels that say nothing get it.
    pub primary_sub_group_size: usize,
    /// How the layer implements sub-groups here.
    pub shuffle_backend: ShuffleBackend,
}

/// A device's sub-group capabilities: the driver's view and clgroups' effective view.
///
/// ```
/// let device = clgroups::default_device()?;
/// let caps = device.sub_groups();
/// println!("driver: {} sub-groups at most; clgroups: sizes {:?} via {}",
///     caps.driver.max_num_sub_groups, caps.effective.sub_group_sizes,
///     caps.effective.shuffle_backend);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubGroupCapabilities {
    /// What the driver reports.
    pub driver: DriverSubGroups,
    /// What clgroups provides.
    pub effective: EffectiveSubGroups,
}

/// The sub-group extensions whose built-ins clgroups provides where a device lacks them
/// (`cl/clgroups/khr/polyfill.h`), in report order.
pub const POLYFILLED_EXTENSIONS: [&str; 10] = [
    "cl_khr_subgroups",
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_intel_subgroups",
];

/// Where a kernel's standard sub-group built-ins of one extension come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provision {
    /// The driver's own built-ins, used untouched.
    Native,
    /// clgroups' polyfill on the device's backend.
    Provided,
}

impl Provision {
    /// `native` or `provided`.
    pub const fn name(self) -> &'static str {
        match self {
            Provision::Native => "native",
            Provision::Provided => "provided",
        }
    }
}

/// Where the built-ins of `extension` (one of [`POLYFILLED_EXTENSIONS`]) come from (pure).
///
/// On `khr`/`intel` the driver's own when it lists the extension and a probe using every
/// built-in of it builds (`builds`; PoCL 6.0 lists `cl_khr_subgroup_ballot` but cannot link
/// `sub_group_ballot_bit_count`); on `emulated` and `nvidia-ptx` always provided, also over
/// native built-ins when `emulated` is forced (their sub-groups are not the layer's).
pub fn provision(
    extension: &str,
    driver: &DriverSubGroups,
    backend: ShuffleBackend,
    builds: bool,
) -> Provision {
    let native_backend = matches!(backend, ShuffleBackend::Khr | ShuffleBackend::Intel);
    if native_backend && driver.has(extension) && builds {
        Provision::Native
    } else {
        Provision::Provided
    }
}

/// The largest size emulation offers (matching the largest size native CPU drivers list).
const MAX_EMULATED_SIZE: usize = 512;

/// The backend clgroups picks for a device (pure).
///
/// A device run by NVIDIA's OpenCL (its platform, or a PoCL-R server of it) gets `nvidia-ptx`;
/// a device with `cl_khr_subgroups` and `cl_khr_subgroup_shuffle` gets `khr` (preferred over `intel`: PoCL 6.0 lists
/// `cl_intel_subgroups` but lacks `intel_sub_group_shuffle_down`); one with only
/// `cl_intel_subgroups` gets `intel`; anything else `emulated`.
///
/// ```
/// use clgroups::device::choose_backend;
/// let device = clgroups::default_device()?;
/// let caps = device.sub_groups();
/// if std::env::var("CLGROUPS_SHUFFLE_BACKEND").is_err() {
///     let chosen = choose_backend(&caps.driver, device.is_nvidia_platform());
///     assert_eq!(chosen, caps.effective.shuffle_backend);
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn choose_backend(driver: &DriverSubGroups, nvidia: bool) -> ShuffleBackend {
    if nvidia {
        ShuffleBackend::NvidiaPtx
    } else if driver.native() && driver.has("cl_khr_subgroup_shuffle") {
        ShuffleBackend::Khr
    } else if driver.has("cl_intel_subgroups") {
        ShuffleBackend::Intel
    } else {
        ShuffleBackend::Emulated
    }
}

/// Whether `backend` can run on this device at all.
///
/// ```
/// use clgroups::device::{backend_available, ShuffleBackend};
/// let device = clgroups::default_device()?;
/// let driver = &device.sub_groups().driver;
/// assert!(backend_available(ShuffleBackend::Emulated, driver, device.is_nvidia_platform()));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn backend_available(backend: ShuffleBackend, driver: &DriverSubGroups, nvidia: bool) -> bool {
    match backend {
        ShuffleBackend::Khr => driver.native() && driver.has("cl_khr_subgroup_shuffle"),
        ShuffleBackend::Intel => driver.has("cl_intel_subgroups"),
        ShuffleBackend::NvidiaPtx => nvidia,
        ShuffleBackend::Emulated => true,
    }
}

/// The SIMD width assumed where a driver reports a preferred work-group size multiple of 0: 8,
/// the width of 32-bit lanes in the AVX2 registers PoCL's CPU devices vectorise for.
pub const UNKNOWN_SIMD_WIDTH: usize = 8;

/// clgroups' effective view for a driver and backend (pure).
///
/// Primary size, per family:
/// * `nvidia-ptx`: the warp size (`CL_DEVICE_WARP_SIZE_NV`, 32);
/// * `khr`/`intel` with `cl_intel_required_subgroup_size`: the device's preferred work-group size
///   multiple (its SIMD width) if the driver lists it, else the largest listed size below it,
///   else the smallest listed; the layer pins it with `intel_reqd_sub_group_size`;
/// * `khr`/`intel` without it: the preferred multiple, the only size offered (kernels run the
///   driver's choice and the layer reads the real size at run time);
/// * `emulated`: the preferred multiple rounded down to a power of two, at most the maximum
///   work-group size.
///
/// A preferred multiple of 0 means the driver does not know (an OpenCL 1.x device; PoCL-R without
/// `scripts/pocl-remote.d/0002`);
/// clgroups then assumes [`UNKNOWN_SIMD_WIDTH`] rather than a primary size of 1.
///
/// Sizes: `nvidia-ptx` every power of two up to the warp size (1, 2, 4, 8, 16, 32: segments
/// of a warp), the warp being the primary; `khr`/`intel` the driver's list; `emulated` every
/// power of two up to `min(max work-group size, 512)`.
///
/// ```
/// use clgroups::device::{effective_view, ShuffleBackend};
/// let device = clgroups::default_device()?;
/// // What emulation would offer on this device: every power of two up to its work-group limit.
/// let emulated = effective_view(&device.sub_groups().driver, ShuffleBackend::Emulated);
/// assert!(emulated.sub_group_sizes.iter().all(|s| s.is_power_of_two()));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn effective_view(driver: &DriverSubGroups, backend: ShuffleBackend) -> EffectiveSubGroups {
    let simd = match driver.preferred_work_group_size_multiple {
        0 => UNKNOWN_SIMD_WIDTH,
        n => n,
    };
    let (sizes, primary) = match backend {
        ShuffleBackend::NvidiaPtx => {
            // Segments of a warp (shfl.sync's segment mask, member masks of the segment).
            let warp = driver.warp_size_nv.map_or(32, |w| w as usize);
            let sizes = (0..usize::BITS)
                .map(|b| 1usize << b)
                .take_while(|&s| s <= warp)
                .collect();
            (sizes, warp)
        }
        ShuffleBackend::Khr | ShuffleBackend::Intel if !driver.sub_group_sizes.is_empty() => {
            let mut sizes = driver.sub_group_sizes.clone();
            sizes.sort_unstable();
            let primary = sizes
                .iter()
                .copied()
                .filter(|&s| s <= simd)
                .max()
                .unwrap_or(sizes[0]);
            (sizes, primary)
        }
        ShuffleBackend::Khr | ShuffleBackend::Intel => (vec![simd], simd),
        ShuffleBackend::Emulated => {
            let limit = driver.max_work_group_size.clamp(1, MAX_EMULATED_SIZE);
            let sizes: Vec<usize> = (0..usize::BITS)
                .map(|b| 1usize << b)
                .take_while(|&s| s <= limit)
                .collect();
            let primary = prev_power_of_two(simd).min(*sizes.last().unwrap_or(&1));
            (sizes, primary)
        }
    };
    EffectiveSubGroups {
        sub_group_sizes: sizes,
        primary_sub_group_size: primary,
        shuffle_backend: backend,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(exts: &[&'static str], max_sg: u32, sizes: &[usize], simd: usize) -> DriverSubGroups {
        DriverSubGroups {
            max_num_sub_groups: max_sg,
            independent_forward_progress: max_sg > 0,
            sub_group_sizes: sizes.to_vec(),
            max_work_group_size: 4096,
            preferred_work_group_size_multiple: simd,
            opencl_c_version: "OpenCL C 1.2".into(),
            opencl_c_features: vec![],
            extensions: SUB_GROUP_EXTENSIONS
                .iter()
                .map(|e| (*e, exts.contains(e)))
                .collect(),
            warp_size_nv: None,
            compute_capability_nv: None,
        }
    }

    #[test]
    fn unknown_preferred_multiple_gives_a_sane_primary() {
        let d = driver(&[], 0, &[], 0);
        let e = effective_view(&d, ShuffleBackend::Emulated);
        assert_eq!(e.primary_sub_group_size, UNKNOWN_SIMD_WIDTH);
        let d = driver(&["cl_khr_subgroups", "cl_khr_subgroup_shuffle"], 1, &[], 0);
        let e = effective_view(&d, ShuffleBackend::Khr);
        assert_eq!(e.primary_sub_group_size, UNKNOWN_SIMD_WIDTH);
    }

    #[test]
    fn pocl3_is_emulated_with_simd_primary() {
        let d = driver(&[], 0, &[], 8);
        let b = choose_backend(&d, false);
        assert_eq!(b, ShuffleBackend::Emulated);
        let e = effective_view(&d, b);
        assert_eq!(e.primary_sub_group_size, 8);
        assert_eq!(
            e.sub_group_sizes,
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        );
    }

    #[test]
    fn unknown_preferred_multiple_is_not_size_1() {
        // OpenCL 1.x drivers (and PoCL-R before our patch) report a preferred multiple of 0.
        let d = driver(&[], 0, &[], 0);
        let e = effective_view(&d, choose_backend(&d, false));
        assert_eq!(e.primary_sub_group_size, UNKNOWN_SIMD_WIDTH);
    }

    #[test]
    fn pocl6_is_khr_with_listed_sizes() {
        let sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
        let d = driver(
            &[
                "cl_khr_subgroups",
                "cl_khr_subgroup_shuffle",
                "cl_intel_subgroups",
                "cl_intel_required_subgroup_size",
                "__opencl_c_subgroups",
            ],
            128,
            &sizes,
            8,
        );
        let b = choose_backend(&d, false);
        assert_eq!(b, ShuffleBackend::Khr);
        let e = effective_view(&d, b);
        assert_eq!(e.primary_sub_group_size, 8);
        assert_eq!(e.sub_group_sizes, sizes.to_vec());
        assert!(backend_available(ShuffleBackend::Intel, &d, false));
        assert!(!backend_available(ShuffleBackend::NvidiaPtx, &d, false));
    }

    #[test]
    fn nvidia_is_ptx_with_warp_primary() {
        let mut d = driver(&[], 0, &[], 32);
        d.warp_size_nv = Some(32);
        let b = choose_backend(&d, true);
        assert_eq!(b, ShuffleBackend::NvidiaPtx);
        let e = effective_view(&d, b);
        assert_eq!(
            (e.primary_sub_group_size, e.sub_group_sizes),
            (32, vec![1, 2, 4, 8, 16, 32])
        );
        assert!(!backend_available(ShuffleBackend::Khr, &d, true));
    }

    #[test]
    fn provision_follows_backend_listing_and_probe() {
        let d = driver(&["cl_khr_subgroups", "cl_khr_subgroup_ballot"], 128, &[], 8);
        let p = |e, b, builds| provision(e, &d, b, builds);
        assert_eq!(
            p("cl_khr_subgroups", ShuffleBackend::Khr, true),
            Provision::Native
        );
        assert_eq!(
            p("cl_khr_subgroup_ballot", ShuffleBackend::Khr, false),
            Provision::Provided
        );
        assert_eq!(
            p(
                "cl_khr_subgroup_shuffle_relative",
                ShuffleBackend::Khr,
                true
            ),
            Provision::Provided
        );
        assert_eq!(
            p("cl_khr_subgroups", ShuffleBackend::Emulated, true),
            Provision::Provided
        );
        assert_eq!(
            p("cl_khr_subgroups", ShuffleBackend::NvidiaPtx, true),
            Provision::Provided
        );
    }

    #[test]
    fn backend_names_round_trip() {
        for b in [
            ShuffleBackend::Khr,
            ShuffleBackend::Intel,
            ShuffleBackend::NvidiaPtx,
            ShuffleBackend::Emulated,
        ] {
            assert_eq!(b.name().parse::<ShuffleBackend>().unwrap(), b);
        }
        assert!("cuda".parse::<ShuffleBackend>().is_err());
    }
}
