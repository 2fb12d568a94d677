//! [`InputFault`]: what is wrong with an input ([`Error::InvalidInput`](crate::Error)'s
//! reason), as data; `Display` words it for users.

mod words;

/// What is wrong with a range, plan parameter, size, buffer, device set or kernel source;
/// `Display` gives the sentence the error shows (after `invalid input: `).
///
/// ```
/// use clgroups::error::InputFault;
/// use clgroups::{Error, Range};
/// let Err(Error::InvalidInput { reason }) = Range::new(&[1, 2, 3, 4]) else { panic!() };
/// assert_eq!(*reason, InputFault::Dimensions { dims: vec![1, 2, 3, 4] });
/// assert_eq!(reason.to_string(), "a range has 1 to 3 dimensions, got 4 ([1, 2, 3, 4])");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFault {
    /// A range of other than 1 to 3 dimensions.
    Dimensions {
        /// The sizes given.
        dims: Vec<usize>,
    },
    /// A range's text (`"1024x64"`) holds a part that is not a size.
    NotASize {
        /// The whole text.
        range: String,
        /// The part.
        part: String,
    },
    /// A global and a local range of different ranks.
    RanksDiffer {
        /// The global range.
        global: Vec<usize>,
        /// The local range.
        local: Vec<usize>,
    },
    /// A global or local range with a zero size.
    ZeroSize {
        /// The global range.
        global: Vec<usize>,
        /// The local range.
        local: Vec<usize>,
    },
    /// A local size that does not divide the global size in dimension `dim`.
    NotDivisible {
        /// The dimension.
        dim: usize,
        /// The global range.
        global: Vec<usize>,
        /// The local range.
        local: Vec<usize>,
    },
    /// Range rounding parameters (`text`) of other than three fields.
    RoundingFields {
        /// The parameters as given.
        text: String,
        /// Their fields.
        fields: usize,
    },
    /// Range rounding parameters (`text`) whose MinFactor or GoodFactor is 0.
    RoundingFactorZero {
        /// The parameters as given.
        text: String,
    },
    /// Range rounding parameters (`text`) whose field `name` is not a non-negative integer.
    RoundingField {
        /// The parameters as given.
        text: String,
        /// The field's name (`MinFactor`, `GoodFactor`, `MinRange`).
        name: &'static str,
        /// The field as given.
        field: String,
    },
    /// A range rounding mode other than on, force or disable.
    RoundingMode {
        /// The mode as given.
        text: String,
    },
    /// A shuffle backend clgroups does not know.
    ShuffleBackend {
        /// The backend as given.
        text: String,
    },
    /// A partition of a launch over no devices.
    PartitionOverNoDevices,
    /// A split of work over no devices.
    SplitOverNoDevices,
    /// A split with a zero granule or no devices.
    Granule {
        /// The granule.
        granule: usize,
        /// The devices.
        devices: usize,
    },
    /// A weight that is not a positive finite number.
    Weight {
        /// The weight.
        weight: Weight,
    },
    /// Not one weight per device of a root device.
    WeightCount {
        /// The weights given.
        weights: usize,
        /// The root device's devices.
        devices: usize,
    },
    /// A coloring with a zero page or zero-sized elements.
    ColoringUnits,
    /// A coloring with a zero page or no devices.
    ColoringPage {
        /// The page.
        page: usize,
        /// The devices.
        devices: usize,
    },
    /// An element coloring whose page is not a non-zero multiple of a non-zero alignment, or
    /// whose element type is zero-sized.
    ElementColoring {
        /// The page.
        page: usize,
        /// The alignment.
        align: usize,
        /// The element's bytes.
        size: usize,
    },
    /// `len` elements of `size` bytes overflow the address space.
    Overflow {
        /// The elements.
        len: usize,
        /// Their bytes.
        size: usize,
    },
    /// A page widened to whole elements overflows.
    PageOverflow {
        /// The page.
        page: usize,
        /// The element's bytes.
        size: usize,
    },
    /// A context of no devices.
    EmptyContext,
    /// Devices of one context on different platforms.
    MixedPlatforms {
        /// The first device.
        first: String,
        /// A device on another platform.
        other: String,
    },
    /// A queue on a device that is not in the context.
    NotInContext {
        /// The device.
        device: String,
    },
    /// An empty device selector.
    EmptySelector,
    /// A device that cannot be split into `parts` sub-devices.
    SubDevices {
        /// The device.
        device: String,
        /// Its compute units.
        units: usize,
        /// The sub-devices asked for.
        parts: usize,
    },
    /// A set of devices that cannot make a root device (`devices` names them).
    RootDevices {
        /// What is wrong.
        fault: RootFault,
        /// The devices, by name.
        devices: String,
    },
    /// A buffer of no elements (a colored one where `colored`).
    EmptyBuffer {
        /// Whether the buffer is a colored one.
        colored: bool,
    },
    /// A buffer whose bytes overflow.
    BufferOverflow {
        /// Its elements.
        len: usize,
        /// Its element type.
        elem: String,
    },
    /// A device-to-device copy of a launch's plan that would leave one of its buffers (an
    /// internal error, caught before enqueueing).
    CopyOutside {
        /// Bytes to copy.
        bytes: usize,
        /// Its first byte in the buffer.
        at: usize,
        /// `source` or `destination`.
        what: &'static str,
        /// The buffer's bytes.
        size: usize,
    },
    /// A copy between buffers of different lengths.
    CopyLengths {
        /// The source's elements.
        from: usize,
        /// The destination's elements.
        to: usize,
    },
    /// A transfer (`what`: `read`, `write`, ...) on a queue of another context than the
    /// buffer's.
    QueueContext {
        /// The transfer.
        what: &'static str,
        /// The queue's device.
        device: String,
    },
    /// A transfer of `n` elements at `offset` past a buffer's `len` elements.
    Exceeds {
        /// The transfer.
        what: &'static str,
        /// Its elements.
        n: usize,
        /// Its offset.
        offset: usize,
        /// The buffer's elements.
        len: usize,
    },
    /// A buffer of another context than the queue an algorithm (`what`) runs on.
    BufferContext {
        /// The algorithm's use of the buffer.
        what: &'static str,
        /// The queue's device.
        device: String,
    },
    /// An algorithm's buffer shorter than its plan needs.
    PlanBuffer {
        /// The algorithm's kernel.
        kernel: String,
        /// The buffer's elements.
        len: usize,
        /// The plan.
        plan: String,
        /// The elements the plan needs.
        need: usize,
    },
    /// `Reduction::result` before any enqueue or run.
    NoResultYet,
    /// A scan of no elements.
    ScanEmpty,
    /// A scan of more than 2^32 tiles.
    ScanTiles {
        /// The elements.
        n: usize,
    },
    /// A scan into a buffer of another length.
    ScanInto {
        /// The input's elements.
        input: usize,
        /// The output's elements.
        output: usize,
    },
    /// A scan over colored buffers whose chunks differ.
    ScanChunks {
        /// The output's chunks.
        output: Vec<usize>,
        /// The input's chunks.
        input: Vec<usize>,
    },
    /// A scan over colored buffers that do not hold exactly their chunks.
    ScanParts,
    /// A scan (or a reduce on remote devices) of a colored buffer whose devices do not each
    /// hold the one run they own.
    NotOwnedRuns {
        /// The element type.
        elem: &'static str,
        /// The buffer's access.
        access: String,
        /// The owned runs per device.
        owned: Vec<usize>,
    },
    /// A write into a colored buffer of another length.
    ColoredWrite {
        /// The elements written.
        data: usize,
        /// The buffer's elements.
        len: usize,
    },
    /// A colored buffer whose margins are shared with a live copy of its launch argument.
    MarginsShared,
    /// A buffer colored for a launch with an access other than Auto or Partitioned.
    LaunchAccess {
        /// The access.
        access: String,
    },
    /// A colored buffer used with a root device of another size.
    ColoredDevices {
        /// The buffer's devices.
        buffer: usize,
        /// The root device's devices.
        root: usize,
    },
    /// A colored buffer argument that cannot be passed to a device of a root launch.
    NotPassable {
        /// The kernel.
        kernel: String,
        /// The launch's placement.
        placement: String,
        /// The argument's index.
        argument: usize,
        /// Its element type.
        elem: String,
        /// The device.
        device: usize,
        /// The buffer's placement where it differs from the launch's; `None`: the device
        /// holds none of its elements.
        held_in: Option<String>,
    },
    /// A merged argument that is not a buffer.
    NotABuffer {
        /// The argument's index.
        argument: usize,
    },
    /// A command that had not completed after its wait.
    NotComplete {
        /// The command.
        command: String,
    },
    /// Build options holding a NUL byte.
    OptionsNul {
        /// The options.
        options: String,
    },
    /// A source file that cannot be read.
    Unreadable {
        /// The file.
        path: String,
        /// What the system said.
        error: String,
    },
    /// An `#include <clgroups/...>` of a header clgroups does not ship.
    NoHeader {
        /// The including file.
        file: String,
        /// The include's line.
        line: usize,
        /// The header asked for.
        name: String,
        /// The headers clgroups ships.
        known: Vec<&'static str>,
    },
    /// A kernel with two sub-group size attributes (the second at `line`; the kernel's own
    /// `intel_reqd_sub_group_size` where `first` is `None`).
    TwoSubGroupSizes {
        /// The kernel.
        kernel: String,
        /// The first attribute's line.
        first: Option<usize>,
        /// The second's.
        line: usize,
    },
    /// A sub-group size attribute macro whose argument is not what it needs.
    SubGroupSizeArgument {
        /// The kernel.
        kernel: String,
        /// The attribute's line.
        line: usize,
        /// The macro.
        attribute: String,
        /// Its argument as written.
        argument: String,
        /// What it needs.
        want: &'static str,
    },
    /// A kernel parameter without a name.
    UnnamedParameter {
        /// The kernel.
        kernel: String,
        /// Its line.
        line: usize,
        /// The parameter's index.
        index: usize,
    },
    /// A closing bracket that closes nothing.
    Unmatched {
        /// The bracket.
        token: String,
        /// Its line.
        line: usize,
        /// The kernel it stands in, if any.
        kernel: Option<String>,
    },
    /// A bracket closed by another kind of bracket.
    Mismatched {
        /// The opening bracket.
        open: String,
        /// Its line.
        open_line: usize,
        /// The closing one.
        close: String,
        /// Its line.
        line: usize,
        /// The kernel it stands in, if any.
        kernel: Option<String>,
    },
    /// A bracket never closed.
    Unclosed {
        /// The bracket.
        token: String,
        /// Its line.
        line: usize,
        /// The kernel it stands in, if any.
        kernel: Option<String>,
    },
    /// A comment never closed.
    UnterminatedComment {
        /// Its first line.
        line: usize,
    },
    /// A string or character literal never closed.
    UnterminatedLiteral {
        /// Its first line.
        line: usize,
    },
    /// A kernel whose text overlaps the kernel before it.
    KernelOverlaps {
        /// The kernel.
        kernel: String,
    },
    /// A kernel declaration that does not match the source it is applied to.
    DeclarationMismatch {
        /// The kernel.
        kernel: String,
    },
    /// A bookkeeping state clgroups expected and did not find (a bug in clgroups).
    Internal(Internal),
}

/// Why a set of devices cannot make a root device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RootFault {
    /// No devices.
    NoDevice,
    /// Device `device` is on platform `platform`, device 0 on `first`.
    Platforms {
        /// The device.
        device: usize,
        /// Its platform.
        platform: usize,
        /// Device 0's platform.
        first: usize,
    },
    /// Device `device` repeats device `of`.
    Repeats {
        /// The device.
        device: usize,
        /// The device it repeats.
        of: usize,
    },
}

/// A bookkeeping state clgroups expected and did not find ([`InputFault::Internal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Internal {
    /// A buffer a one-device reduce expected whole on its device.
    NotWhole,
    /// A colored buffer without a residence.
    NoResidence,
    /// A part whose margins were to be kept.
    NoPartToKeep,
    /// Margins that were to be kept.
    NoMarginsKept,
    /// A post without its mailbox.
    NoMailbox,
    /// A driver query that answered nothing.
    EmptyAnswer,
}

/// A weight as given; equal to another of the same bits (so a NaN equals itself).
#[derive(Clone, Copy, Debug)]
pub struct Weight(pub f64);

impl PartialEq for Weight {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Weight {}
