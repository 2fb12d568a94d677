//! Whose OpenCL runs a device's kernels, read from the device itself (`CL_DEVICE_VENDOR`,
//! `CL_DEVICE_VERSION`), never from the platform's name: a device behind PoCL's remote driver
//! (PoCL-R) sits on the client's "Portable Computing Language" platform but is compiled for and
//! run by its server's OpenCL, and is driven as that.

/// The OpenCL implementation that compiles and runs a device's kernels.
///
/// ```
/// use clgroups::device::Implementation;
/// let dev = clgroups::default_device()?;
/// match dev.identity().implementation {
///     Implementation::Nvidia => println!("{dev}: NVIDIA's compiler (inline PTX works)"),
///     Implementation::Pocl => println!("{dev}: PoCL"),
///     _ => println!("{dev}: another implementation"),
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Implementation {
    /// NVIDIA's own OpenCL (`CL_DEVICE_VERSION` "OpenCL 3.0 CUDA"), not PoCL's CUDA driver.
    Nvidia,
    /// PoCL (any of its drivers: CPU, CUDA, Level Zero, ...).
    Pocl,
    /// Any other implementation.
    Other,
}

/// What a device is, beyond its name: whose OpenCL runs it, and whether it is reached through
/// PoCL's remote driver.
///
/// ```
/// use clgroups::device::{Identity, Implementation};
/// // An H100 served by `pocld`: the client's platform is PoCL's, the device is NVIDIA's.
/// let id = Identity::from_device_info(
///     "NVIDIA Corporation",
///     "OpenCL 3.0 CUDA HSTR: pocl-remote: NVIDIA H100 80GB HBM3",
/// );
/// assert_eq!(id.implementation, Implementation::Nvidia);
/// assert!(id.remote);
/// let dev = clgroups::default_device()?;
/// println!("{dev}: {:?}", dev.identity());
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// Whose OpenCL compiles and runs the device's kernels (the server's, for a remote device).
    pub implementation: Implementation,
    /// Whether the device is reached through PoCL-R (its memory is not the client's).
    pub remote: bool,
}

/// What PoCL's remote client appends to its server's `CL_DEVICE_VERSION`.
const REMOTE_MARK: &str = " HSTR: pocl-remote";

impl Identity {
    /// The identity a device's `CL_DEVICE_VENDOR` and `CL_DEVICE_VERSION` give (pure).
    ///
    /// PoCL's devices say `PoCL` in their version (`OpenCL 3.0 PoCL HSTR: ...`, also its CUDA
    /// driver, whose vendor is NVIDIA's); PoCL-R's client appends ` HSTR: pocl-remote: NAME` to
    /// its server's version, so the server's part decides.
    ///
    /// ```
    /// use clgroups::device::{Identity, Implementation};
    /// let local = Identity::from_device_info("NVIDIA Corporation", "OpenCL 3.0 CUDA");
    /// assert_eq!((local.implementation, local.remote), (Implementation::Nvidia, false));
    /// let pocl_cuda = Identity::from_device_info("NVIDIA Corporation", "OpenCL 3.0 PoCL HSTR: CUDA-sm_90");
    /// assert_eq!(pocl_cuda.implementation, Implementation::Pocl);
    /// ```
    pub fn from_device_info(vendor: &str, version: &str) -> Identity {
        let (served, remote) = match version.find(REMOTE_MARK) {
            Some(at) => (&version[..at], true),
            None => (version, false),
        };
        let implementation = if served.contains("PoCL") {
            Implementation::Pocl
        } else if vendor.to_ascii_lowercase().contains("nvidia") {
            Implementation::Nvidia
        } else {
            Implementation::Other
        };
        Identity {
            implementation,
            remote,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_devices_keep_their_servers_identity() {
        let cpu = Identity::from_device_info(
            "AuthenticAMD",
            "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512 \
             HSTR: pocl-remote: pthread-skylake-avx512-AMD EPYC",
        );
        assert_eq!(cpu.implementation, Implementation::Pocl);
        assert!(cpu.remote);
        let gpu = Identity::from_device_info(
            "NVIDIA Corporation",
            "OpenCL 3.0 CUDA HSTR: pocl-remote: NVIDIA H100 80GB HBM3",
        );
        assert_eq!(
            (gpu.implementation, gpu.remote),
            (Implementation::Nvidia, true)
        );
    }

    #[test]
    fn local_devices() {
        let pocl = Identity::from_device_info(
            "AuthenticAMD",
            "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512",
        );
        assert_eq!(
            (pocl.implementation, pocl.remote),
            (Implementation::Pocl, false)
        );
        let intel = Identity::from_device_info("Intel(R) Corporation", "OpenCL 3.0 NEO ");
        assert_eq!(intel.implementation, Implementation::Other);
        let nv = Identity::from_device_info("NVIDIA Corporation", "OpenCL 3.0 CUDA");
        assert_eq!(
            (nv.implementation, nv.remote),
            (Implementation::Nvidia, false)
        );
    }
}
