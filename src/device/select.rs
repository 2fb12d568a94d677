//! `CLGROUPS_DEVICE`: choosing a device by index or by name (pure; no OpenCL).

use crate::error::{Error, InputFault, Result};
use crate::plan::local_size::DeviceKind;

/// A device selector, as `CLGROUPS_DEVICE` spells it.
///
/// * `P:D`: platform index `P`, device index `D` within it (both from 0);
/// * `platform:device`: case-insensitive substrings of the platform (its name, vendor or
///   version: `pocl` matches PoCL, whose platform is called "Portable Computing Language") and
///   of the device name (`pocl:cpu`, `nvidia:h100`); either side may be empty (`:h100`);
/// * one word: a substring of the platform or the device name, or a device type
///   (`gpu`, `cpu`, `accelerator`).
///
/// ```
/// use clgroups::device::{DeviceKind, Selector};
/// let s: Selector = "PoCL:cpu".parse().unwrap();
/// assert!(s.matches(0, 0, "Portable Computing Language (pocl)", "cpu-haswell", DeviceKind::Cpu));
/// let s: Selector = "1:0".parse().unwrap();
/// assert!(s.matches(1, 0, "NVIDIA CUDA", "NVIDIA H100", DeviceKind::Gpu));
/// assert!(!s.matches(0, 0, "NVIDIA CUDA", "NVIDIA H100", DeviceKind::Gpu));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Platform and device index.
    Index(usize, usize),
    /// Substrings of platform and device name (lower case).
    Names(String, String),
    /// One word: platform name, device name or device type.
    Word(String),
}

impl std::str::FromStr for Selector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.is_empty() {
            return Err(Error::input(InputFault::EmptySelector));
        }
        match s.split_once(':') {
            Some((p, d)) => match (p.trim().parse(), d.trim().parse()) {
                (Ok(p), Ok(d)) => Ok(Selector::Index(p, d)),
                _ => Ok(Selector::Names(
                    p.trim().to_lowercase(),
                    d.trim().to_lowercase(),
                )),
            },
            None => Ok(Selector::Word(s.to_lowercase())),
        }
    }
}

impl Selector {
    /// Whether a device with these properties matches (`platform` is matched as given, e.g.
    /// [`Device::platform_words`](crate::Device::platform_words)).
    ///
    /// ```
    /// use clgroups::device::{DeviceKind, Selector};
    /// let gpu: Selector = "gpu".parse()?;
    /// assert!(gpu.matches(1, 0, "NVIDIA CUDA", "NVIDIA H100 80GB HBM3", DeviceKind::Gpu));
    /// assert!(!gpu.matches(0, 0, "Portable Computing Language", "cpu-haswell", DeviceKind::Cpu));
    /// // The devices of this machine that `CLGROUPS_DEVICE=cpu` could choose:
    /// let cpu: Selector = "cpu".parse()?;
    /// let cpus = clgroups::devices()?.iter().filter(|d| {
    ///     cpu.matches(d.platform_index(), d.device_index(), d.platform_words(), d.name(), d.kind())
    /// });
    /// println!("{} CPU device(s)", cpus.count());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn matches(
        &self,
        platform_index: usize,
        device_index: usize,
        platform: &str,
        device: &str,
        kind: DeviceKind,
    ) -> bool {
        let (platform, device) = (platform.to_lowercase(), device.to_lowercase());
        match self {
            Selector::Index(p, d) => *p == platform_index && *d == device_index,
            Selector::Names(p, d) => platform.contains(p.as_str()) && device.contains(d.as_str()),
            Selector::Word(w) => {
                platform.contains(w.as_str())
                    || device.contains(w.as_str())
                    || kind_word(kind) == Some(w.as_str())
            }
        }
    }
}

fn kind_word(kind: DeviceKind) -> Option<&'static str> {
    match kind {
        DeviceKind::Cpu => Some("cpu"),
        DeviceKind::Gpu => Some("gpu"),
        DeviceKind::Accelerator => Some("accelerator"),
        DeviceKind::Other => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!("1:0".parse::<Selector>().unwrap(), Selector::Index(1, 0));
        assert_eq!(
            "PoCL:CPU".parse::<Selector>().unwrap(),
            Selector::Names("pocl".into(), "cpu".into())
        );
        assert_eq!(
            ":h100".parse::<Selector>().unwrap(),
            Selector::Names(String::new(), "h100".into())
        );
        assert_eq!(
            "GPU".parse::<Selector>().unwrap(),
            Selector::Word("gpu".into())
        );
        assert!("  ".parse::<Selector>().is_err());
    }

    #[test]
    fn matches_names_words_and_kinds() {
        let pocl = ("Portable Computing Language", "cpu-haswell-AMD EPYC");
        let nv = ("NVIDIA CUDA", "NVIDIA H100 80GB HBM3");
        let s: Selector = "portable:epyc".parse().unwrap();
        assert!(s.matches(0, 0, pocl.0, pocl.1, DeviceKind::Cpu));
        assert!(!s.matches(1, 0, nv.0, nv.1, DeviceKind::Gpu));
        let g: Selector = "gpu".parse().unwrap();
        assert!(g.matches(1, 0, nv.0, nv.1, DeviceKind::Gpu));
        assert!(!g.matches(0, 0, pocl.0, pocl.1, DeviceKind::Cpu));
        let n: Selector = "nvidia".parse().unwrap();
        assert!(n.matches(1, 0, nv.0, nv.1, DeviceKind::Gpu));
        // PoCL's platform words include its vendor and version
        let pocl_words = "portable computing language the pocl project opencl 3.0 pocl 3.1";
        let s: Selector = "pocl:cpu".parse().unwrap();
        assert!(s.matches(0, 0, pocl_words, pocl.1, DeviceKind::Cpu));
        let i: Selector = "0:1".parse().unwrap();
        assert!(!i.matches(0, 0, pocl.0, pocl.1, DeviceKind::Cpu));
        assert!(i.matches(0, 1, pocl.0, pocl.1, DeviceKind::Cpu));
    }
}
