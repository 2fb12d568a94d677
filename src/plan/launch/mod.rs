//! The launch planner: [`plan`], one pure function from a launch [`Request`] (the kernel's
//! facts as plain data, the devices' limits, the ranges) to the [`Plan`] of pieces that run
//! it, or a [`Refused`]. One device is the one-device case of the same function; a launch
//! over several devices is rounded and sized for the most limited device, then partitioned;
//! [`spread`] then makes the cost model's choice (split, merged, or one device) part of it.
//! The launch code only executes plans; `RUST_LOG=debug` shows each decision.
//!
//! ```
//! use clgroups::plan::launch::{plan, DeviceFacts, KernelFacts, Request, Shape};
//! use clgroups::plan::local_size::{DeviceKind, Limits};
//! use clgroups::plan::rounding::Variant;
//! use clgroups::plan::work_group::Constraints;
//! use clgroups::Range;
//! let limits = Limits { kind: DeviceKind::Gpu, max_work_group_size: 1024,
//!     max_work_item_sizes: [1024, 1024, 64], preferred_multiple: 32, non_uniform: false };
//! let kernel = KernelFacts::plain("sq", Constraints::new(limits.clone()));
//! let device = DeviceFacts { limits, address_bits: 64, barriers: None };
//! let request = Request::new(&kernel, std::slice::from_ref(&device), Range::d1(1_000_003), Shape::Plain);
//! let p = plan(&request).unwrap();
//! // A prime range: rounded up and guarded, the pieces covering it in whole work-groups.
//! assert!(p.pieces.iter().any(|piece| piece.variant == Variant::Rounded));
//! assert!(p.pieces.iter().map(|piece| piece.global.len()).sum::<usize>() >= 1_000_003);
//! ```

#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
mod several;
mod single;
#[cfg(test)]
mod tests;

#[cfg(any(feature = "scaling", feature = "unstable-internals"))]
pub use several::{split_pieces, spread, widened, Several};

use super::local_size::Limits;
use super::refusal::Refusal;
use super::rounding::{RoundingConfig, RoundingPlan, Variant};
use super::uniform_branch::{GroupBarriers, IdCondition};
use super::work_group::{choose, Constraints, LocalSize};
use crate::obstacle::Obstacle;
use crate::range::Range;

/// What the planner needs to know about a kernel (for several devices: its tightest
/// constraints over them).
pub struct KernelFacts<'a> {
    /// Its name, for `RUST_LOG=debug` lines.
    pub name: &'a str,
    /// What it imposes on its work-groups.
    pub constraints: Constraints,
    /// The rounding settings of its program.
    pub rounding: RoundingConfig,
    /// Whether it has rounded (guarded) variants, or why not.
    pub round: Result<(), &'a Obstacle>,
    /// Why rounding would change the work-group shape it asks for, if it would.
    pub shape: Option<&'a Obstacle>,
    /// Whether a wrapper runs it guarded, or why not (asked only where needed: making it
    /// builds it once).
    pub wrap: &'a dyn Fn() -> Result<(), Obstacle>,
    /// Whether its source allows bulk + tail launches (`plan::split::splittable`).
    pub splittable: bool,
    /// Its launch-time id conditions with their arguments' values (an error where an
    /// argument has no integer value).
    pub conditions: Result<Vec<(IdCondition, i128)>, Refusal>,
}

impl<'a> KernelFacts<'a> {
    /// A kernel that may be rounded, without id conditions, with default rounding settings.
    #[cfg(any(test, feature = "unstable-internals"))]
    pub fn plain(name: &'a str, constraints: Constraints) -> Self {
        KernelFacts {
            name,
            constraints,
            rounding: RoundingConfig::default(),
            round: Ok(()),
            shape: None,
            wrap: &|| Ok(()),
            splittable: true,
            conditions: Ok(Vec::new()),
        }
    }

    /// Whether the kernel has launch-time id conditions.
    fn has_conditions(&self) -> bool {
        !matches!(&self.conditions, Ok(c) if c.is_empty())
    }

    /// The local size of `global` for `asked`: [`choose`] with the constraints.
    fn local_size(&self, global: Range, asked: LocalSize) -> Result<Option<Range>, Refusal> {
        choose(global, asked, &self.constraints)
    }
}

/// What the planner needs to know about one device.
#[derive(Clone, Debug)]
pub struct DeviceFacts {
    /// The kernel's limits on it.
    pub limits: Limits,
    /// `CL_DEVICE_ADDRESS_BITS`.
    pub address_bits: u32,
    /// Why its sub-group collectives must be uniform over work-groups, where they must.
    pub barriers: Option<GroupBarriers>,
}

/// How the user asked for the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A plain range: the planner chooses work-groups, rounding and pieces.
    Plain,
    /// An ND-range in work-groups of this size.
    NdRange(LocalSize),
}

/// One launch to plan.
pub struct Request<'a> {
    /// The kernel.
    pub kernel: &'a KernelFacts<'a>,
    /// The devices it runs on (one, or those of a root device in order).
    pub devices: &'a [DeviceFacts],
    /// The user's global range.
    pub global: Range,
    /// How the user asked for it.
    pub shape: Shape,
    /// The launch's global offset.
    pub offset: Option<Range>,
    /// Relative device throughputs (several devices).
    #[cfg_attr(
        not(any(feature = "scaling", feature = "unstable-internals")),
        allow(dead_code)
    )] // read by the several-device planner only
    pub weights: Option<&'a [f64]>,
    /// A launch over a root device: split over its devices in whole work-groups (even over
    /// one device); else a launch on `devices[0]`.
    pub root: bool,
}

impl<'a> Request<'a> {
    /// A launch of `global` without offset or weights.
    pub fn new(
        kernel: &'a KernelFacts<'a>,
        devices: &'a [DeviceFacts],
        global: Range,
        shape: Shape,
    ) -> Self {
        Request {
            kernel,
            devices,
            global,
            shape,
            offset: None,
            weights: None,
            root: false,
        }
    }

    /// The launch's offset, or zeros at the range's rank.
    fn base(&self) -> Range {
        self.offset.unwrap_or(self.global.zeros_like())
    }
}

/// One enqueue of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The device (index into [`Request::devices`]).
    pub device: usize,
    /// The kernel it runs.
    pub variant: Variant,
    /// Its global range.
    pub global: Range,
    /// Its local range (`None`: the driver chooses).
    pub local: Option<Range>,
    /// Its absolute global offset.
    pub offset: Range,
}

/// How a launch runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The range the kernel observes.
    pub user: Range,
    /// The range launched (the user's, or a rounded one containing it).
    pub launch: Range,
    /// The local size of the launch (`None`: the driver chooses).
    pub local: Option<Range>,
    /// The enqueues, in order.
    pub pieces: Vec<Piece>,
    /// The rounded variants' trailing arguments (the user's range and offset) are passed.
    pub user_args: bool,
    /// The rounding plan of a plain range on one device, for `CLGROUPS_RANGE_ROUNDING_TRACE`.
    pub rounding: Option<RoundingPlan>,
    /// Over several devices: the partition of the pieces and the cost model's choice
    /// ([`spread`]).
    #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
    pub partition: Option<Several>,
}

/// A refused launch: why, and the ranges it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The global range refused.
    pub global: Range,
    /// Its local range, where one was asked or chosen.
    pub local: Option<Range>,
    /// Why.
    pub reason: Refusal,
}

impl Refused {
    pub(crate) fn new(global: Range, local: Option<Range>, reason: Refusal) -> Box<Self> {
        Box::new(Refused {
            global,
            local,
            reason,
        })
    }
}

/// The plan of `request`, or why it is refused (boxed: a refusal is large): on one device, or split over a root
/// device's devices.
pub fn plan(request: &Request) -> Result<Plan, Box<Refused>> {
    match (request.devices.len(), request.root) {
        (0, _) => Err(Refused::new(request.global, None, Refusal::NoPartition)),
        (_, false) => single::plan(request),
        #[cfg(any(feature = "scaling", feature = "unstable-internals"))]
        (_, true) => several::plan(request),
        #[cfg(not(any(feature = "scaling", feature = "unstable-internals")))]
        (_, true) => Err(Refused::new(request.global, None, Refusal::NoPartition)),
    }
}
