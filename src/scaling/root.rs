//! [`RootDevice`], [`RootProgram`] and [`RootKernel`].

use super::{Placement, RootLaunch, DEVICES_ENV};
use crate::device::{default_device, devices, select_device, Device};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::plan::coloring::DEFAULT_PAGE_SIZE;
use crate::program::partitioned::{is_global_pointer, partitioned_name, with_partitioned_variants};
use crate::program::source::scan_kernels;
use crate::program::Program;
use crate::queue::{names, Context, Queue};
use std::fmt;

/// Several devices of one platform used as one: a shared context and one queue per device.
/// Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct RootDevice {
    context: Context,
    queues: Vec<Queue>,
    placement: Placement,
}

impl RootDevice {
    /// A root device over `devices`, in order (device 0 takes the first chunk of every launch).
    ///
    /// Its [`Placement`] is [`Placement::choose`]`(devices)`.
    ///
    /// Errors ([`Error::InvalidInput`]): no devices, devices of different platforms, one
    /// device given twice, or a bad [`PLACEMENT_ENV`].
    pub fn new(devices: &[Device]) -> Result<Self> {
        let keys: Vec<(usize, usize)> = devices
            .iter()
            .map(|d| (d.platform_index(), d.id() as usize))
            .collect();
        check_devices(&keys).map_err(|r| Error::input(format!("{r} ({})", names(devices))))?;
        let placement = Placement::choose(devices)?;
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
        })
    }

    /// The devices [`DEVICES_ENV`] (`CLGROUPS_DEVICES`) names, or else every device of the
    /// default device's platform ([`default_device`]).
    ///
    /// `CLGROUPS_DEVICES` is a comma-separated list of device selectors, each as
    /// `CLGROUPS_DEVICE` takes it ([`crate::device::Selector`]): `0:0,0:1` (platform:device
    /// indices) is the unambiguous form; a name selects the first device it matches.
    pub fn from_env() -> Result<Self> {
        match std::env::var(DEVICES_ENV) {
            Ok(list) if !list.trim().is_empty() => {
                let chosen = list
                    .split(',')
                    .map(|s| select_device(s.trim()))
                    .collect::<Result<Vec<_>>>()?;
                log::debug!("{DEVICES_ENV}={list:?} chose {}", names(&chosen));
                RootDevice::new(&chosen)
            }
            _ => {
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
    pub fn split(device: &Device, n: usize) -> Result<Self> {
        RootDevice::new(&device.split_equally(n)?)
    }

    /// Number of devices (at least 1).
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Always false: a root device has at least one device.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The devices, in order.
    pub fn devices(&self) -> &[Device] {
        self.context.devices()
    }

    /// The shared context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// One queue per device, in device order.
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    /// Where colored buffers of this root device live.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// This root device with another placement (for buffers and programs made afterwards).
    pub fn with_placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }

    /// `source` built for every device; in partitioned placement with the `__clg_part`
    /// variant of every kernel ([`with_partitioned_variants`]) after it.
    pub fn program(&self, source: &str) -> Result<RootProgram> {
        let text = match self.placement {
            Placement::Shared => source.to_string(),
            Placement::Partitioned => with_partitioned_variants(source, &scan_kernels(source)?)?,
        };
        let programs = self
            .queues
            .iter()
            .map(|q| Program::from_source(q, &text))
            .collect::<Result<Vec<_>>>()?;
        Ok(RootProgram {
            programs,
            placement: self.placement,
        })
    }

    /// Waits for every queue.
    pub fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)
    }

    /// The coloring page for this device set: [`DEFAULT_PAGE_SIZE`] rounded up to a multiple
    /// of every device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
    pub fn default_page_size(&self) -> usize {
        let align = self.alignment();
        DEFAULT_PAGE_SIZE.div_ceil(align) * align
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

/// Checks `(platform index, device id)` pairs: at least one, one platform, no repeats.
fn check_devices(keys: &[(usize, usize)]) -> std::result::Result<(), String> {
    let Some(&(platform, _)) = keys.first() else {
        return Err("a root device needs at least one device".into());
    };
    if let Some(i) = keys.iter().position(|&(p, _)| p != platform) {
        return Err(format!(
            "devices of a root device must share a platform: device {i} is on platform {}, \
             device 0 on {platform}",
            keys[i].0
        ));
    }
    for (i, key) in keys.iter().enumerate() {
        if let Some(j) = keys[..i].iter().position(|k| k == key) {
            return Err(format!("device {i} repeats device {j}"));
        }
    }
    Ok(())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One source built for every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootProgram {
    programs: Vec<Program>,
    placement: Placement,
}

impl RootProgram {
    /// The kernel called `name`, on every device (its `__clg_part` variant in partitioned
    /// placement).
    pub fn kernel(&self, name: &str) -> Result<RootKernel> {
        let variant = match self.placement {
            Placement::Shared => name.to_string(),
            Placement::Partitioned => partitioned_name(name),
        };
        let kernels = self
            .programs
            .iter()
            .map(|p| p.kernel(&variant))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| match e {
                Error::NoSuchKernel { .. } => Error::NoSuchKernel {
                    kernel: name.to_string(),
                    available: self.programs[0].kernel_names(),
                },
                other => other,
            })?;
        let globals = self.programs[0]
            .decl(name)
            .map(|k| k.params.iter().map(is_global_pointer).collect())
            .unwrap_or_default();
        Ok(RootKernel {
            kernels,
            name: name.to_string(),
            globals,
            placement: self.placement,
        })
    }

    /// The per-device programs, in device order.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The placement the program was built for.
    pub fn placement(&self) -> Placement {
        self.placement
    }
}

/// One kernel on every device of a [`RootDevice`].
#[derive(Clone)]
pub struct RootKernel {
    pub(super) kernels: Vec<Kernel>,
    pub(super) name: String,
    /// Per parameter of the original kernel: whether it is a global pointer.
    pub(super) globals: Vec<bool>,
    pub(super) placement: Placement,
}

impl RootKernel {
    /// Starts a launch over all devices.
    pub fn launch(&self) -> RootLaunch<'_> {
        RootLaunch::new(self)
    }

    /// The per-device kernels, in device order: the kernel itself in shared placement (device
    /// 0's alone is a single-device launch), its `__clg_part` variant in partitioned placement.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_sets_are_checked() {
        assert!(check_devices(&[(0, 10), (0, 11)]).is_ok());
        assert!(check_devices(&[(1, 10)]).is_ok());
        let e = check_devices(&[]).unwrap_err();
        assert!(e.contains("at least one"), "{e}");
        let e = check_devices(&[(0, 10), (1, 20)]).unwrap_err();
        assert!(e.contains("device 1 is on platform 1"), "{e}");
        let e = check_devices(&[(0, 10), (0, 11), (0, 10)]).unwrap_err();
        assert!(e.contains("device 2 repeats device 0"), "{e}");
        assert_eq!(gcd(128, 48), 16);
    }
}
