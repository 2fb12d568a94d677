//! Implicit scaling: one launch over several devices, after Intel's root-device rules.
//!
//! A [`RootDevice`] is N OpenCL devices of one platform in one context (separate GPUs, PoCL
//! devices, or the sub-devices of one device), with a queue on each. A [`RootProgram`] is the
//! same source built once per device; a launch of one of its kernels
//! ([`RootKernel::launch`]) is split by `plan::partition` into one
//! contiguous sub-launch per device, at work-group granularity, each enqueued on its device's
//! queue with the chunk's global offset and size. A [`ColoredBuffer`] is an array whose pages
//! are spread over the devices by `plan::coloring`, each device
//! holding one contiguous chunk.
//!
//! # What a kernel sees
//!
//! Each sub-launch is an ND-range launch with a global offset of a generated variant of the
//! kernel (`k__clg_part`), so a kernel sees the whole launch, as on one
//! device:
//!
//! * `get_global_id`, `get_local_id`, `get_local_size` and `get_work_dim` are those of the
//!   whole launch by construction;
//! * `get_global_size`, `get_global_offset`, `get_global_linear_id`, `get_num_groups` and
//!   `get_group_id` are redefined in the variant to report the whole launch (a grid-stride loop
//!   covers the array once, not once per device). Functions the kernel calls cannot be
//!   redefined: a launch over several devices of a kernel whose helpers ask for these is
//!   refused, naming the helper;
//! * work-items of one work-group always run on one device, so local memory, barriers and
//!   sub-groups work as usual; a launch of one work-group runs on device 0 only.
//!
//! A kernel the scanner cannot rewrite (a name made by a macro, ...) has no such variant and
//! runs as written: per device in shared placement where that is correct, else the whole
//! launch on device 0 (see `plan::root_fallback` and
//! [`RootKernel::rewrite_obstacle`]).
//!
//! # Memory: two placements
//!
//! A root device picks a [`Placement`] for its [`ColoredBuffer`]s when it is made:
//! [`Placement::Shared`] when every device shares the host's memory
//! (`CL_DEVICE_HOST_UNIFIED_MEMORY`, e.g. PoCL, integrated GPUs), else
//! [`Placement::Partitioned`] (e.g. several discrete GPUs). `CLGROUPS_PLACEMENT`
//! (`CLGROUPS_PLACEMENT=shared|partitioned`) overrides the choice.
//!
//! * **Shared**: a colored buffer is one buffer of the shared context with one sub-buffer per
//!   device chunk, migrated to its device; kernels receive the whole (*parent*) buffer and may
//!   index any element. Concurrent writes from several devices to one buffer are disjoint
//!   writes to one allocation on PoCL and on shared-memory devices; a driver that keeps one
//!   copy per device may lose them (measured on two NVIDIA GPUs): use partitioned placement
//!   there.
//! * **Partitioned**: a colored buffer is one separate buffer per device holding its chunk
//!   (plus what its [`Access`] asks for), written and read through that device's queue (host
//!   reads and writes still see one contiguous array). Each colored argument is the device's
//!   part, shifted so that whole-array indices address it. No data moves between devices
//!   during launches, except what a launch split by its kernel's footprint reads beyond a
//!   device's chunk: where the device writes only its own elements, its part of an undeclared
//!   buffer then keeps that margin (moved once into an allocation with room for it, the part a
//!   sub-buffer of it), and later launches fetch only the margin elements written since.
//!
//! # Whole-buffer placement
//!
//! A launch that is right split (or merged) is also right on one device, and on small
//! launches or iterated stencils one device is often faster: the split
//! pays a launch per device and a chain of cross-device dependencies per launch. The cost
//! model (`plan::cost`, pure) prices both from this kernel's measured launches of the same
//! shape (host wall time, the median of the latest measured launches of each option: five
//! where a launch is cheap, else three), the bytes each moves and the root device's link (bandwidth and the latency of one
//! cross-device dependency, measured once per root device); a new shape is split (measured from
//! its second launch), then tried on one device unless moving its buffers costs too much. Where one device
//! wins, the launch runs there ([`Spread::Resident`]) and the [`ColoredBuffer`]s it touches
//! move there whole once and *stay* (the buffer records where its valid data is:
//! [`ColoredBuffer::whole_on`]), so the next launches of an iterated chain move nothing. A
//! launch that splits moves them back to their parts first (only buffers written since: the
//! parts of a buffer only read are still valid); a host read reads the whole buffer where it
//! is; `write` and `fill` replace it (the parts hold the data again); `part()`, reduces and
//! scans move it back first. [`MultiEvent::priced`] returns the decision with its figures
//! ([`Priced`]; `RUST_LOG=info` logs it when it is made or changes). The split runs only
//! where it is cheaper by more than 10 %. The option chosen keeps being observed (one launch
//! in every 16, and every 50 ms, timed): where it runs clearly slower than the other
//! option's figure (10 %, three observations in a row) both are measured again and the
//! model chooses anew (`RUST_LOG=debug` shows each observation), so a choice made
//! under a passing load does not stick. [`RootDevice::with_spread`] (`CLGROUPS_SPREAD`)
//! forces the split ([`SpreadPolicy::Split`], the analysis's answer as before) or one device
//! ([`SpreadPolicy::OneDevice`]); strict mode refuses as before, whatever the policy. In
//! shared placement nothing is copied: a buffer "moved whole" is its parent buffer used by
//! one device alone (the other queues finish once when it moves there, and its queue
//! finishes when it goes back), so the model prices launch times only.
//!
//! # The contract
//!
//! A kernel that is correct on one device is correct over a root device, with no
//! declaration: each launch is *split* (each device works on what it holds), *merged* or
//! runs on *one device*, as [`MultiEvent::spread`] reports and `RUST_LOG=info` logs (with the
//! reason and the declaration that would split it). Launches keep the order of one in-order
//! queue: each device's part waits for what was enqueued before it on the other devices (its
//! own queue's order suffices where only its own queue touched its colored buffers' parts).
//!
//! | argument (partitioned placement) | what each device gets |
//! |---|---|
//! | colored, proven or declared (below), chunks match the partition | split: its chunk (and halo) |
//! | colored, only read (driver: `const`), not proven | replicated: a whole copy |
//! | colored or plain buffer the kernel may write, in a launch that does not split | merged: a whole copy; after the launch each element one device changed is taken from it |
//! | any, where the source uses atomics, a helper asks for whole-launch values, two devices changed one element differently, or one work-group | the whole launch on device 0 (colored buffers gathered there and copied back) |
//!
//! Merging keeps the single-device answer of every race-free kernel (no element written by
//! two work-items, none read by a work-item other than its writer), at the price of whole
//! copies; declarations make the split cheap. [Strict mode](RootDevice::strict)
//! (`CLGROUPS_STRICT=1`) refuses instead, with [`Error::InvalidLaunch`] before anything is
//! enqueued, naming the argument and what to declare, every launch that does not split. In
//! shared placement every device sees every buffer whole, so every launch may split (the cost
//! model still chooses between the split and one device), except that several devices that do not share the host's memory may not write one buffer (lost
//! writes, measured on two NVIDIA GPUs): such launches run on device 0. In partitioned
//! placement a launch splits when each buffer argument is one of:
//!
//! * a [`ColoredBuffer`] with [`Access::Auto`] (the default) that the library *proves* is
//!   indexed only at the work-item's own global linear id: every use in the kernel body is
//!   `p[get_global_id(0)]` (1-D), `p[get_global_linear_id()]` (no offset), or `p[i]` with `i`
//!   initialised once to one of them and never changed; no macro names `p` and `p` is never
//!   passed on. SAXPY-style kernels need no declaration;
//! * a [`ColoredBuffer`] whose [`Access`] the user declares: [`Access::Replicated`] (only read,
//!   any index: each device holds a copy), [`Access::Halo`]`(n)` (only read, within `n`
//!   elements of its own: each device holds its chunk and `n` elements either side; a 2-D
//!   stencil over rows of width `w` needs `Halo(w)`), or [`Access::Partitioned`] (read and
//!   written at the global linear id `i`, or at `m * i + j` for a buffer `m` times as long);
//! * a plain [`crate::Buffer`] the kernel only reads (a `const` pointee), or any plain buffer
//!   when one device does all the work.
//!
//! "Only read" comes from the driver (`CL_KERNEL_ARG_TYPE_QUALIFIER` has `const`), else from
//! the parameter's text, unless the source may write through the pointer anyway (a cast, a
//! macro, a helper or a variable without `const`); a kernel that writes a replicated or halo
//! buffer, or a plain buffer from several devices, is refused. The *global linear id* is
//! `x + X * (y + Y * z)` (global ids `x, y, z` with the global offset included, `X` and `Y` the
//! offset plus the global size of dimensions 0 and 1; `x` alone in 1-D). Each device's share of
//! those ids must lie in its chunk of every proven, partitioned or halo buffer; when it does
//! not, the error suggests a page size ([`ColoredBuffer::with_page`]) that makes the chunks
//! match the partition.
//!
//! Chunks match the partition when the partition splits the slowest dimension and the page
//! is one work-group slab: `plan::coloring` and
//! `plan::partition` (and their weighted forms) cut by one rule,
//! `plan::shares`, so a page of exactly one slab (`m * X * Y *
//! local_z` elements for a 3-D split of z, `m * local_x` for 1-D) gives the same chunks on any
//! number of devices. In partitioned placement [`ColoredBuffer::new`] colors in pages of one
//! element, which follow every 1-D launch over the buffer in work-groups of a power of two
//! (and slowest-dimension splits whose slab is a power of two), whatever the element type,
//! device count or weights. When the partition splits a faster dimension (Intel's rule does for small odd slowest
//! dimensions), a device's work-items are not one contiguous run of linear ids: color the
//! buffer for that launch with [`ColoredBuffer::for_launch`] (each device owns its work-items'
//! elements and holds the smallest range containing them); launches of that exact ND-range
//! accept it, others are refused.
//!
//! A declaration is trusted (strict mode or not): [checked mode](checked_mode) (debug builds, or
//! `CLGROUPS_CHECKED=1`) verifies every `p[index]` of every launch and reports the first
//! index outside what the device holds as [`Error::OutOfChunk`] after the launch.
//!
//! ```
//! use clgroups::scaling::{ColoredBuffer, RootDevice};
//! use clgroups::Range;
//! let root = RootDevice::from_env()?.with_profiling()?;
//! let prog = root.program("kernel void inc(global int *x) { x[get_global_id(0)] += 1; }")?;
//! let x = ColoredBuffer::from_slice(&root, &vec![1; 1 << 20])?;
//! let inc = prog.kernel("inc")?;
//! let launch = inc.launch().arg(&x);
//! // SAFETY: work-item i touches x[i] only, for i < 2^20 = x.len().
//! let ev = unsafe { launch.nd_range(Range::d1(1 << 20), Range::d1(64))? };
//! println!("{:?} over {} devices", ev.duration()?, root.len());
//! assert!(x.read()?.iter().all(|&v| v == 2));
//! # Ok::<(), clgroups::Error>(())
//! ```

mod access;
// Reduce and scan over several devices, as `scaling::reduce_sum` etc. (the module's own path is
// kept, hidden, for code written before).
#[cfg(feature = "algorithms")]
#[doc(hidden)]
pub mod algorithms;
mod arg;
mod colored;
mod contract;
mod deep;
mod event;
mod kernel;
mod launch;
mod margins;
mod program;
mod residence;
mod resident;
mod root;

pub use crate::plan::cost::{Choice, Link, Priced, SpreadPolicy, Time, Why};
pub use crate::plan::partition::Partition;
pub use access::Access;
#[cfg(feature = "algorithms")]
pub use algorithms::{exclusive_scan_sum, inclusive_scan_sum, reduce_max, reduce_min, reduce_sum};
pub use arg::{RootArg, RootArgValue};
pub use colored::ColoredBuffer;
pub use event::{MultiEvent, Spread};
pub use kernel::RootKernel;
pub use launch::RootLaunch;
pub use program::RootProgram;
pub use root::RootDevice;

use crate::device::Device;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use std::fmt;

/// Whether programs made now get checked variants: `CLGROUPS_CHECKED` if set (see
/// [`crate::config`] for its values), else on where clgroups itself was built with
/// `debug_assertions` (the profile of the crate's build, not necessarily the caller's). In
/// checked mode every launch over a root device waits for its sub-launches and fails with
/// [`Error::OutOfChunk`] if a work-item indexed a buffer outside the elements its device holds
/// (see `RootLaunch`'s checked `__clg_part` variants); the check costs a comparison per
/// access.
///
/// ```
/// let on = clgroups::scaling::checked_mode()?;
/// match std::env::var("CLGROUPS_CHECKED").as_deref() {
///     Ok("1") => assert!(on),
///     Ok("0") => assert!(!on),
///     _ => println!("multi-device checked mode: {on} (the library's build profile)"),
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn checked_mode() -> Result<bool> {
    crate::checked::multi_device(cfg!(debug_assertions))
}

/// Where the chunks of a [`ColoredBuffer`] live (see the [module docs](self)).
///
/// ```
/// use clgroups::scaling::{Placement, RootDevice};
/// let root = RootDevice::from_env()?;
/// // Explicitly partitioned, whatever the devices' memory: each device holds only its chunk.
/// let root = root.with_placement(Placement::Partitioned);
/// assert_eq!(root.placement(), Placement::Partitioned);
/// assert_eq!(Placement::Shared.to_string(), "shared");
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// One buffer in the shared context; kernels receive all of it.
    Shared,
    /// One buffer per device holding its chunk; kernels run as `__clg_part` variants.
    Partitioned,
}

impl Placement {
    /// `CLGROUPS_PLACEMENT` if set, else `Shared` when every device has host-unified memory
    /// and `Partitioned` otherwise. Errors ([`Error::InvalidEnvironment`]) for another value
    /// of the variable.
    ///
    /// ```
    /// use clgroups::scaling::Placement;
    /// let devices = clgroups::devices()?;
    /// let placement = Placement::choose(&devices)?;
    /// let unified = devices.iter().all(|d| d.limits().host_unified_memory);
    /// if std::env::var("CLGROUPS_PLACEMENT").is_err() {
    ///     assert_eq!(placement == Placement::Shared, unified);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn choose(devices: &[Device]) -> Result<Self> {
        let unified = devices.iter().all(|d| d.limits().host_unified_memory);
        let set = crate::config::typed(crate::config::PLACEMENT, Placement::from_word)?;
        let chosen = Placement::pick(set, unified);
        log::debug!(
            "placement {chosen} (CLGROUPS_PLACEMENT {set:?}, host-unified memory {unified})"
        );
        Ok(chosen)
    }

    /// The placement the environment sets, else the one for whether all memory is
    /// host-unified.
    fn pick(set: Option<Placement>, unified: bool) -> Self {
        match set {
            Some(placement) => placement,
            None if unified => Placement::Shared,
            None => Placement::Partitioned,
        }
    }
}

impl Placement {
    /// The placement a word names (`shared` or `partitioned`, as
    /// [`Display`](fmt::Display) writes them; ASCII case ignored).
    pub(crate) fn from_word(text: &str) -> Option<Self> {
        let all = [Placement::Shared, Placement::Partitioned];
        all.into_iter()
            .find(|p| p.to_string().eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Placement::Shared => "shared",
            Placement::Partitioned => "partitioned",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_follows_the_environment_value_then_the_memory() {
        assert_eq!(Placement::pick(None, true), Placement::Shared);
        assert_eq!(Placement::pick(None, false), Placement::Partitioned);
        let set = Some(Placement::Partitioned);
        assert_eq!(Placement::pick(set, true), Placement::Partitioned);
        assert_eq!(
            Placement::pick(Some(Placement::Shared), false),
            Placement::Shared
        );
        // Each type parses its own words (ASCII case ignored).
        assert_eq!(
            Placement::from_word("Partitioned"),
            Some(Placement::Partitioned)
        );
        assert_eq!(Placement::from_word("split"), None);
    }
}
