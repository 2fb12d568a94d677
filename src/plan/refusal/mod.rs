//! [`Refusal`]: why a launch is refused or runs otherwise than asked, as data.
//!
//! Every reason a launch gives (in [`Error::InvalidLaunch`](crate::Error::InvalidLaunch), in
//! [`Spread::OneDevice`](crate::scaling::Spread) and in `RUST_LOG=debug` lines) is one of
//! these; its [`Display`](fmt::Display) is the sentence a user reads.
//!
//! ```
//! use clgroups::launch::Refusal;
//! let r = Refusal::GroupTooLarge { local: clgroups::Range::d1(2048), max: 1024 };
//! assert!(r.to_string().contains("exceeds the maximum work-group size 1024"));
//! ```

mod parts;

pub use parts::{Breach, GroupSplit, Unsplit};

use crate::obstacle::Obstacle;
use crate::plan::bounds::MAX_WORK_GROUPS;
use crate::range::Range;
use std::fmt;
use std::sync::Arc;

/// Why a launch is refused, or runs otherwise than asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A global range with a zero size.
    EmptyRange,
    /// An offset of another rank than the range.
    OffsetRank {
        /// The offset.
        offset: Range,
    },
    /// A piece's offset overflows.
    OffsetOverflow {
        /// The launch's offset.
        base: Range,
        /// The piece's offset within the launch.
        delta: Range,
    },
    /// A global size plus offset beyond the device's `size_t`.
    BeyondSizeT {
        /// The dimension.
        dim: usize,
        /// The global size there.
        global: usize,
        /// The offset there.
        offset: usize,
        /// `CL_DEVICE_ADDRESS_BITS`.
        bits: u32,
    },
    /// A range whose linear ids the device's `size_t` cannot count.
    SpanBeyondSizeT {
        /// The global range.
        global: Range,
        /// Its offset.
        offset: Range,
        /// `CL_DEVICE_ADDRESS_BITS`.
        bits: u32,
    },
    /// More work-groups than drivers index.
    TooManyGroups {
        /// The global range.
        global: Range,
        /// The local range.
        local: Range,
    },
    /// More work-items than drivers index, with the local size left to the driver.
    TooManyItems,
    /// Local memory arguments beyond the device's.
    LocalMemory {
        /// Their bytes (`None`: the sum overflows).
        total: Option<usize>,
        /// Each argument's bytes.
        bytes: Vec<usize>,
        /// `CL_DEVICE_LOCAL_MEM_SIZE`.
        device: u64,
    },
    /// Global and local ranges of different ranks.
    RankMismatch {
        /// The global range.
        global: Range,
        /// The local range.
        local: Range,
    },
    /// A zero global size.
    ZeroGlobal {
        /// The dimension.
        dim: usize,
    },
    /// A zero local size.
    ZeroLocal {
        /// The dimension.
        dim: usize,
    },
    /// A local size beyond `CL_DEVICE_MAX_WORK_ITEM_SIZES`.
    BeyondItemSize {
        /// The dimension.
        dim: usize,
        /// The local size there.
        local: usize,
        /// The maximum there.
        max: usize,
    },
    /// A local size that does not divide the global size, without non-uniform work-groups.
    NotDividing {
        /// The dimension.
        dim: usize,
        /// The local size there.
        local: usize,
        /// The global size there.
        global: usize,
    },
    /// A work-group larger than the kernel allows.
    GroupTooLarge {
        /// The local range.
        local: Range,
        /// The kernel's maximum work-group size.
        max: usize,
    },
    /// A work-group smaller than sub-group collectives on PoCL run in.
    GroupTooSmall {
        /// The smallest work-group.
        min: usize,
    },
    /// `reqd_work_group_size` of more dimensions than the range.
    RequiredRank {
        /// The required size.
        required: Range,
    },
    /// An exact local size other than `reqd_work_group_size`.
    RequiredExact {
        /// The required size.
        required: Range,
    },
    /// `reqd_work_group_size` that does not divide the range.
    RequiredNotDividing {
        /// The required size.
        required: Range,
    },
    /// A plain range in required work-groups that do not divide it, of a kernel that can be
    /// neither rounded nor wrapped.
    Unroundable {
        /// The required size.
        required: Range,
        /// Why it cannot be rounded (`None`: it has rounded variants, but not of its shape).
        round: Option<Arc<Obstacle>>,
        /// Why it cannot be wrapped.
        wrap: Arc<Obstacle>,
    },
    /// A rounded range far larger than the range asked for.
    Slack {
        /// The rounded range.
        launch: Range,
        /// The work-items asked for.
        asked: usize,
    },
    /// A local size no bulk + tail split avoids.
    PadTheRange(Box<Refusal>),
    /// No local size was chosen where one is needed.
    NoLocalSize,
    /// Only work-groups smaller than sub-group collectives on PoCL run in keep an id
    /// condition uniform.
    UniformTooSmall {
        /// The condition, as written.
        condition: String,
        /// The work-items of those groups.
        items: usize,
        /// The smallest work-group.
        min: usize,
    },
    /// An id condition around collectives that differs within a work-group.
    SplitsGroup(Box<GroupSplit>),
    /// The argument an id condition compares with is not a scalar.
    NotScalar {
        /// The argument.
        param: usize,
        /// The condition.
        condition: String,
    },
    /// The argument an id condition compares with is not an integer.
    NotInteger {
        /// The argument.
        param: usize,
        /// The condition.
        condition: String,
        /// Its bytes.
        bytes: usize,
    },
    /// The launch waits for an event of another context.
    ForeignEvent {
        /// The event's command.
        command: String,
    },
    /// The context of an event to wait for could not be asked.
    EventContextUnknown {
        /// The driver's OpenCL error code.
        code: i32,
        /// The event's command.
        command: String,
    },
    /// A rounded launch over several devices of a kernel without guarded variants.
    NoGuardedVariant,
    /// The kernel lacks the variant a piece runs.
    NoVariant(crate::plan::rounding::Variant),
    /// No partition of the launch over the devices.
    NoPartition,
    /// The kernel asks for whole-launch values a device's part would misdescribe.
    WholeValues(Arc<Obstacle>),
    /// The kernel has no partitioned variant: device 0 ran the whole launch.
    NoPartitionedVariant(Arc<Obstacle>),
    /// An argument breaks the contract of a launch over several devices (`partitioned`:
    /// in partitioned placement, else shared).
    Contract {
        /// Partitioned placement (else shared).
        partitioned: bool,
        /// How.
        breach: Breach,
    },
    /// A colored buffer colored for another launch.
    ColoredFor {
        /// The argument.
        arg: usize,
        /// Its element type.
        elem: String,
        /// The ND-range it is colored for.
        global: Range,
        /// In work-groups of.
        local: Range,
    },
    /// A device works on elements of a colored buffer it does not hold.
    NotHeld {
        /// The device.
        device: usize,
        /// The argument.
        arg: usize,
        /// Its element type.
        elem: String,
        /// Its length.
        len: usize,
        /// The elements the device works on.
        works: (usize, usize),
        /// The elements it holds.
        holds: (usize, usize),
        /// The partitioned dimension.
        dim: usize,
        /// The page size (bytes) that colors like the partition.
        page: usize,
    },
    /// A device that gets work holds none of a colored buffer's elements (it is shorter than
    /// the devices) and no copy of them: nothing can be passed there.
    NoPart {
        /// The device.
        device: usize,
        /// The argument.
        arg: usize,
    },
    /// Why the kernel's footprint does not split the launch.
    Footprint(Unsplit),
    /// The contract refuses the split ([`Refusal::Contract`] ...), and so does the footprint.
    NoFootprintSplit {
        /// Why the contract refuses it.
        why: Box<Refusal>,
        /// Why the footprint does.
        not: Box<Refusal>,
    },
    /// A launch of one work-group, which one device runs.
    OneGroup {
        /// The launched range.
        global: Range,
        /// Why it would not split anyway.
        why: Box<Refusal>,
    },
    /// A source with atomics: no merged copies.
    Atomics(Box<Refusal>),
    /// Devices of a merged launch changed one element differently.
    MergeRace {
        /// The busy devices.
        devices: usize,
        /// The element.
        element: usize,
        /// The argument.
        arg: usize,
        /// Why the launch was merged (`None`: it ran on one device).
        why: Option<Box<Refusal>>,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Refusal::*;
        match self {
            EmptyRange => f.write_str("a global range has no zero sizes"),
            OffsetRank { offset } => write!(f, "offset {offset:?} has another rank"),
            OffsetOverflow { base, delta } => write!(f, "offset {base:?} + {delta:?} overflows"),
            BeyondSizeT {
                dim,
                global,
                offset,
                bits,
            } => write!(
                f,
                "global size {global} plus offset {offset} in dimension {dim} exceeds the \
                 device's {bits}-bit size_t"
            ),
            SpanBeyondSizeT {
                global,
                offset,
                bits,
            } => write!(
                f,
                "{global:?} at offset {offset:?} spans more work-items than the device's \
                 {bits}-bit size_t counts"
            ),
            TooManyGroups { global, local } => write!(
                f,
                "{global:?} in work-groups of {local:?} is more than {MAX_WORK_GROUPS} work-groups"
            ),
            TooManyItems => write!(
                f,
                "more than {MAX_WORK_GROUPS} work-items with the local size left to the driver, \
                 which may pick one work-item per group (more work-groups than drivers index); \
                 give a local size (LocalSize::Tuned or Exact)"
            ),
            LocalMemory {
                total: Some(t),
                device,
                ..
            } => write!(
                f,
                "{t} bytes of local memory arguments exceed the device's {device} \
                 (CL_DEVICE_LOCAL_MEM_SIZE)"
            ),
            LocalMemory {
                total: None,
                bytes,
                device,
            } => write!(
                f,
                "the local memory arguments ({bytes:?} bytes) overflow; the device has \
                 {device} (CL_DEVICE_LOCAL_MEM_SIZE)"
            ),
            RankMismatch { global, local } => write!(
                f,
                "global range {global:?} has {} dimensions but local range {local:?} has {}",
                global.rank(),
                local.rank()
            ),
            ZeroGlobal { dim } => write!(f, "global size of dimension {dim} is 0"),
            ZeroLocal { dim } => write!(f, "local size of dimension {dim} is 0"),
            BeyondItemSize { dim, local, max } => write!(
                f,
                "local size {local} in dimension {dim} exceeds the maximum work-item size {max}"
            ),
            NotDividing { dim, local, global } => write!(
                f,
                "local size {local} does not divide global size {global} in dimension {dim}, \
                 and non-uniform work-groups are not available"
            ),
            GroupTooLarge { local, max } => write!(
                f,
                "work-group of {} work-items ({local:?}) exceeds the maximum work-group size {max}",
                local.len()
            ),
            GroupTooSmall { min } => write!(
                f,
                "a kernel with sub-group collectives in work-groups of fewer than {min} \
                 work-items aborts PoCL's process (undefined symbol __pocl_work_group_alloca); \
                 use a larger work-group or a plain range"
            ),
            RequiredRank { required } => {
                required_text(f, required, "more dimensions than the range")
            }
            RequiredExact { required } => required_text(f, required, "the local size must be that"),
            RequiredNotDividing { required } => {
                required_text(f, required, "they do not divide the global range")
            }
            Unroundable {
                required,
                round,
                wrap,
            } => {
                write!(
                    f,
                    "the kernel requires work-groups of {:?} (reqd_work_group_size), which do \
                     not divide the range, and ",
                    required.as_slice()
                )?;
                match round {
                    Some(round) if round == wrap => {
                        write!(f, "it cannot be rounded nor wrapped ({round})")
                    }
                    Some(round) => write!(f, "it cannot be rounded ({round}) nor wrapped ({wrap})"),
                    None => write!(f, "it cannot be rounded (?) nor wrapped ({wrap})"),
                }
            }
            Slack { launch, asked } => write!(
                f,
                "the rounded range {launch:?} has {} work-items, far more than the {asked} asked \
                 for (check CLGROUPS_RANGE_ROUNDING_PARAMS)",
                launch.len()
            ),
            PadTheRange(r) => write!(
                f,
                "{r}; no bulk + tail split avoids it (a single work-item, or the kernel asks for \
                 its global size, offset or group ids): pad the range"
            ),
            NoLocalSize => f.write_str("no local size"),
            UniformTooSmall {
                condition,
                items,
                min,
            } => write!(
                f,
                "the only work-groups that keep {condition} uniform have {items} work-item(s), \
                 and sub-group collectives in work-groups of fewer than {min} work-items abort \
                 PoCL's process (undefined symbol __pocl_work_group_alloca); choose a bound that \
                 shares a larger factor with the range"
            ),
            SplitsGroup(split) => {
                let GroupSplit {
                    condition,
                    param,
                    value,
                    local,
                    offset,
                    why,
                } = &**split;
                let why: &dyn fmt::Display = match why {
                    Some(why) => why,
                    None => &"sub-group collectives are work-group barriers here",
                };
                write!(
                    f,
                "its sub-group collectives sit under {condition} (argument {param} = {value}), \
                 which differs between the work-items of a work-group of {:?} at offset {:?}; \
                 {why}: make the bound a multiple of the local size (or beyond the range), or \
                 compute the collective unconditionally (`sg_reduce_add(i < n ? x[i] : 0)`)",
                local.as_slice(),
                offset.as_slice()
            )
            }
            NotScalar { param, condition } => {
                write!(f, "argument {param} of {condition} is not a scalar")
            }
            NotInteger {
                param,
                condition,
                bytes,
            } => write!(
                f,
                "argument {param} of {condition} has {bytes} bytes, not an integer's"
            ),
            ForeignEvent { command } => write!(
                f,
                "it waits for an event of another context (a command on {command})"
            ),
            EventContextUnknown { code, command } => write!(
                f,
                "the context of an event to wait for is unknown ({}, a command on {command})",
                opencl3::error_codes::ClError(*code)
            ),
            NoGuardedVariant => f.write_str("no guarded variant"),
            NoVariant(v) => write!(f, "no {v:?} variant"),
            NoPartition => f.write_str("no partition of the launch over the devices"),
            WholeValues(why) => write!(
                f,
                "{why}, which would describe one device's part of the launch there; pass the \
                 value as a kernel argument or ask for it in the kernel itself"
            ),
            NoPartitionedVariant(why) => write!(f, "no partitioned variant ({why})"),
            Contract {
                partitioned,
                breach,
            } => {
                let placement = if *partitioned {
                    "partitioned"
                } else {
                    "shared"
                };
                write!(f, "{placement} placement: {breach}")
            }
            ColoredFor {
                arg,
                elem,
                global,
                local,
            } => write!(
                f,
                "argument {arg} (ColoredBuffer<{elem}>) is colored for an ND-range of {global:?} \
                 in work-groups of {local:?} without offset, not for this launch"
            ),
            NoPart { device, arg } => write!(
                f,
                "partitioned placement: device {device} gets work but holds none of argument \
                 {arg} (a colored buffer shorter than the devices) and no copy of it"
            ),
            NotHeld {
                device,
                arg,
                elem,
                len,
                works,
                holds,
                dim,
                page,
            } => write!(
                f,
                "partitioned placement: device {device} works on elements [{}, {}) of argument \
                 {arg} (ColoredBuffer<{elem}> of {len} elements), but holds only [{}, {}). \
                 Colored buffers must be indexed by the global linear id (see clgroups::scaling) \
                 and colored like the launch's partition (dimension {dim}): e.g. \
                 ColoredBuffer::with_page(&root, {len}, {page}) (one work-group slab per page), \
                 or use CLGROUPS_PLACEMENT=shared",
                works.0, works.1, holds.0, holds.1
            ),
            Footprint(u) => write!(f, "{u}"),
            NoFootprintSplit { why, not } => {
                write!(f, "{why}; and its footprint does not split it: {not}")
            }
            OneGroup { global, why } => write!(f, "one work-group in {global:?}; {why}"),
            Atomics(why) => write!(
                f,
                "the source uses atomics, whose updates from several devices cannot be merged \
                 element by element; and {why}"
            ),
            MergeRace {
                devices,
                element,
                arg,
                why,
            } => {
                write!(
                    f,
                    "{devices} devices changed element {element} of argument {arg} differently \
                     (a race, or updates the merge cannot combine); "
                )?;
                why.as_ref().map_or(Ok(()), |why| write!(f, "{why}"))
            }
        }
    }
}

/// "the kernel requires work-groups of .. (reqd_work_group_size): `what`".
fn required_text(f: &mut fmt::Formatter<'_>, required: &Range, what: &str) -> fmt::Result {
    write!(
        f,
        "the kernel requires work-groups of {:?} (reqd_work_group_size): {what}",
        required.as_slice()
    )
}

impl std::error::Error for Refusal {}
