//! TODO (placeholder until the plans branch lands)

/// Kind of device, as far as planning cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A CPU device.
    Cpu,
    /// A GPU.
    Gpu,
    /// An accelerator.
    Accelerator,
    /// Anything else.
    Other,
}
