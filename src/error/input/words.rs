//! How [`InputFault`] and its parts read in messages.

use super::{InputFault, Internal, RootFault, Weight};
use std::fmt;

impl fmt::Display for InputFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use InputFault as F;
        match self {
            F::Dimensions { dims } => write!(
                f,
                "a range has 1 to 3 dimensions, got {} ({dims:?})",
                dims.len()
            ),
            F::NotASize { range, part } => write!(f, "bad range {range:?}: {part:?} is not a size"),
            F::RanksDiffer { global, local } => write!(
                f,
                "global range {global:?} has {} dimensions but local range {local:?} has {}",
                global.len(),
                local.len()
            ),
            F::ZeroSize { global, local } => write!(
                f,
                "global {global:?} and local {local:?} must have no zero sizes"
            ),
            F::NotDivisible { dim, global, local } => write!(
                f,
                "local size {} does not divide global size {} in dimension {dim} \
                 (global {global:?}, local {local:?})",
                local[*dim], global[*dim]
            ),
            F::RoundingFields { text, fields } => write!(
                f,
                "range rounding parameters {text:?}: want MinFactor:GoodFactor:MinRange, \
                 got {fields} field(s)"
            ),
            F::RoundingFactorZero { text } => write!(
                f,
                "range rounding parameters {text:?}: MinFactor and GoodFactor must be above 0"
            ),
            F::RoundingField { text, name, field } => write!(
                f,
                "range rounding parameters {text:?}: {name} {field:?} is not a non-negative integer"
            ),
            F::RoundingMode { text } => {
                write!(f, "range rounding mode {text:?}: want on, force or disable")
            }
            F::ShuffleBackend { text } => write!(
                f,
                "unknown shuffle backend {text:?} (expected khr, intel, nvidia-ptx or emulated)"
            ),
            F::PartitionOverNoDevices => f.write_str("cannot partition a launch over 0 devices"),
            F::SplitOverNoDevices => f.write_str("cannot split work over 0 devices"),
            F::Granule { granule, devices } => write!(
                f,
                "a split needs a granule and a device count above 0 \
                 (granule {granule}, devices {devices})"
            ),
            F::Weight { weight } => write!(f, "weight {weight} is not a positive finite number"),
            F::WeightCount { weights, devices } => write!(
                f,
                "{weights} weights for a root device of {devices} devices"
            ),
            F::ColoringUnits => {
                f.write_str("a coloring needs a page and elements of at least one byte")
            }
            F::ColoringPage { page, devices } => write!(
                f,
                "coloring needs a page size and a device count above 0 \
                 (page {page}, devices {devices})"
            ),
            F::ElementColoring { page, align, size } => write!(
                f,
                "element coloring needs a page that is a non-zero multiple of a non-zero \
                 alignment and a sized element type (page {page}, align {align}, \
                 element size {size})"
            ),
            F::Overflow { len, size } => write!(
                f,
                "{len} elements of {size} bytes overflow the address space"
            ),
            F::PageOverflow { page, size } => {
                write!(f, "page {page} widened to {size}-byte elements overflows")
            }
            F::EmptyContext => f.write_str("a context needs at least one device"),
            F::MixedPlatforms { first, other } => write!(
                f,
                "devices of one context must share a platform: {first} and {other} do not"
            ),
            F::NotInContext { device } => write!(f, "{device} is not in this context"),
            F::EmptySelector => f.write_str("empty device selector"),
            F::SubDevices {
                device,
                units,
                parts,
            } => write!(
                f,
                "cannot split {device} ({units} compute units) into {parts} sub-devices"
            ),
            F::RootDevices { fault, devices } => write!(f, "{fault} ({devices})"),
            F::EmptyBuffer { colored } => write!(
                f,
                "a {}buffer needs at least one element",
                if *colored { "colored " } else { "" }
            ),
            F::BufferOverflow { len, elem } => write!(f, "a buffer of {len} x {elem} overflows"),
            F::CopyOutside {
                bytes,
                at,
                what,
                size,
            } => write!(
                f,
                "a copy of {bytes} bytes at byte {at} of its {what} would leave that buffer of \
                 {size} bytes (an internal error of the launch's plan)"
            ),
            F::CopyLengths { from, to } => {
                write!(f, "copy between buffers of {from} and {to} elements")
            }
            F::QueueContext { what, device } => write!(
                f,
                "{what}: the queue on {device} belongs to another context than the buffer"
            ),
            F::Exceeds {
                what,
                n,
                offset,
                len,
            } => write!(
                f,
                "{what} of {n} elements at offset {offset} exceeds the buffer's {len} elements"
            ),
            F::BufferContext { what, device } => write!(
                f,
                "{what}: the buffer belongs to another context than the queue on {device}"
            ),
            F::PlanBuffer {
                kernel,
                len,
                plan,
                need,
            } => write!(
                f,
                "`{kernel}`: a buffer of {len} elements where the plan {plan} needs {need}"
            ),
            F::NoResultYet => {
                f.write_str("Reduction::result before any enqueue or run: there is no result yet")
            }
            F::ScanEmpty => f.write_str("scan of 0 elements"),
            F::ScanTiles { n } => write!(f, "scan of {n} elements: more than 2^32 tiles"),
            F::ScanInto { input, output } => {
                write!(f, "scan of {input} elements into a buffer of {output}")
            }
            F::ScanChunks { output, input } => write!(
                f,
                "scan: the output's chunks {output:?} differ from the input's {input:?}: \
                 color both alike"
            ),
            F::ScanParts => f.write_str(
                "scan: input and output must both hold exactly their chunks on every device \
                 (Access::Auto or Access::Partitioned)",
            ),
            F::NotOwnedRuns {
                elem,
                access,
                owned,
            } => write!(
                f,
                "a scan (and a reduce on remote devices) needs each device to hold exactly the \
                 one run of elements it owns, or a replicated buffer; this ColoredBuffer<{elem}> \
                 is {access} in \
                 partitioned placement (owned runs per device: {owned:?}): use Access::Auto or \
                 Access::Partitioned without ColoredBuffer::for_launch, or Access::Replicated"
            ),
            F::ColoredWrite { data, len } => {
                write!(f, "write of {data} elements into a colored buffer of {len}")
            }
            F::MarginsShared => f.write_str(
                "a colored buffer whose parts keep margins written while a copy of its launch \
                 argument (RootArgValue) is alive",
            ),
            F::LaunchAccess { access } => write!(
                f,
                "a buffer colored for a launch is Access::Auto or Access::Partitioned, not {access}"
            ),
            F::ColoredDevices { buffer, root } => write!(
                f,
                "a colored buffer over {buffer} devices used with a root device of {root}"
            ),
            F::NotPassable {
                kernel,
                placement,
                argument,
                elem,
                device,
                held_in,
            } => {
                write!(
                    f,
                    "kernel `{kernel}` ({placement} placement): argument {argument}, a \
                     ColoredBuffer<{elem}>, cannot be passed to device {device}: "
                )?;
                match held_in {
                    Some(p) => write!(f, "it is in {p} placement"),
                    None => write!(f, "device {device} holds none of its elements"),
                }
            }
            F::NotABuffer { argument } => write!(f, "argument {argument} is not a buffer"),
            F::NotComplete { command } => write!(f, "{command}: not complete after its wait"),
            F::OptionsNul { options } => {
                write!(f, "build options contain a NUL byte: {options:?}")
            }
            F::Unreadable { path, error } => write!(f, "cannot read {path}: {error}"),
            F::NoHeader {
                file,
                line,
                name,
                known,
            } => write!(
                f,
                "{file}:{line}: no clgroups header {name:?} (known: {known:?})"
            ),
            F::TwoSubGroupSizes {
                kernel,
                first,
                line,
            } => {
                write!(
                    f,
                    "kernel `{kernel}` has more than one sub-group size attribute "
                )?;
                match first {
                    Some(first) => write!(f, "(lines {first} and {line})"),
                    None => write!(f, "(line {line} and its own intel_reqd_sub_group_size)"),
                }
            }
            F::SubGroupSizeArgument {
                kernel,
                line,
                attribute,
                argument,
                want,
            } => write!(
                f,
                "kernel `{kernel}` (line {line}): {attribute}({argument}) needs {want}"
            ),
            F::UnnamedParameter {
                kernel,
                line,
                index,
            } => write!(
                f,
                "parameter {index} of kernel `{kernel}` (line {line}) has no name"
            ),
            F::Unmatched {
                token,
                line,
                kernel,
            } => {
                write!(f, "unmatched `{token}` at line {line}{}", InKernel(kernel))
            }
            F::Mismatched {
                open,
                open_line,
                close,
                line,
                kernel,
            } => write!(
                f,
                "`{open}` at line {open_line} is closed by `{close}` at line {line}{}",
                InKernel(kernel)
            ),
            F::Unclosed {
                token,
                line,
                kernel,
            } => {
                write!(f, "unclosed `{token}` at line {line}{}", InKernel(kernel))
            }
            F::UnterminatedComment { line } => write!(f, "unterminated comment at line {line}"),
            F::UnterminatedLiteral { line } => write!(f, "unterminated literal at line {line}"),
            F::KernelOverlaps { kernel } => {
                write!(f, "kernel `{kernel}` overlaps the kernel before it")
            }
            F::DeclarationMismatch { kernel } => write!(
                f,
                "the declaration of kernel `{kernel}` does not match the source; \
                 pass scan_kernels(src)"
            ),
            F::Internal(what) => what.fmt(f),
        }
    }
}

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// ` (in kernel `k`)`, or nothing.
struct InKernel<'a>(&'a Option<String>);

impl fmt::Display for InKernel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(k) => write!(f, " (in kernel `{k}`)"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for RootFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RootFault::NoDevice => f.write_str("a root device needs at least one device"),
            RootFault::Platforms {
                device,
                platform,
                first,
            } => write!(
                f,
                "devices of a root device must share a platform: device {device} is on \
                 platform {platform}, device 0 on {first}"
            ),
            RootFault::Repeats { device, of } => write!(f, "device {device} repeats device {of}"),
        }
    }
}

impl fmt::Display for Internal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Internal::NotWhole => "not whole",
            Internal::NoResidence => "no residence",
            Internal::NoPartToKeep => "no part to keep",
            Internal::NoMarginsKept => "no margins kept",
            Internal::NoMailbox => "algorithms: post without a mailbox",
            Internal::EmptyAnswer => "the driver returned an empty answer",
        })
    }
}
