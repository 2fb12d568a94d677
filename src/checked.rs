//! Checked mode: out-of-bounds accesses become errors instead of corrupted memory, for tests
//! and debugging. This module owns the geometry of the guard regions every [`Buffer`](crate::Buffer) gets in checked mode. What a single-device
//! launch checks and reports is described in [`crate::launch::checked`]; launches over
//! several devices check every access against the chunk its device holds
//! ([`crate::scaling::checked_mode`]).
//!
//! `CLGROUPS_CHECKED` takes `1`, `true`, `yes` or `on` (checked), `0`, `false`, `no` or `off`
//! (unchecked), or nothing. Unset, single-device launches are unchecked and launches over
//! several devices are checked in debug builds of the program (its `debug_assertions`). Any
//! other value is an [`Error::InvalidEnvironment`] from the first call that asks (a new
//! buffer, program or root program), never a silent choice ([`crate::config`] reads it once).

use crate::error::Result;

/// Whether single-device buffers and launches are checked (off unless switched on).
///
/// ```
/// // Whatever the variable says, the answer is the same everywhere it is asked.
/// match std::env::var("CLGROUPS_CHECKED").as_deref() {
///     Ok("1") | Ok("yes") => assert!(clgroups::launch::checked::single_device()?),
///     Err(_) => assert!(!clgroups::launch::checked::single_device()?),
///     _ => {}
/// }
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn single_device() -> Result<bool> {
    Ok(crate::config::settings().checked()?.unwrap_or(false))
}

/// Whether launches over several devices are checked (unless switched, on in builds with
/// `debug_assertions`, which `default` says for the caller's build).
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // root launches
pub(crate) fn multi_device(default: bool) -> Result<bool> {
    Ok(crate::config::settings().checked()?.unwrap_or(default))
}

/// [`single_device`] where an invalid value was already reported: off.
pub fn enabled() -> bool {
    single_device().unwrap_or(false)
}

/// The byte guard regions are filled with.
pub const CANARY: u8 = 0xA5;

/// The smallest guard region, in bytes.
pub const MIN_GUARD_BYTES: usize = 64 * 1024;

/// The guard region before a buffer, in bytes (a multiple of every device's base address
/// alignment: the buffer is a sub-buffer starting there), for element sizes that divide it.
pub const FRONT_GUARD_BYTES: usize = 64 * 1024;

/// Guard elements after a buffer of `len` elements of `elem` bytes (0 outside checked mode).
pub(crate) fn guard_len(len: usize, elem: usize) -> usize {
    if enabled() {
        (MIN_GUARD_BYTES / elem.max(1)).max(len)
    } else {
        0
    }
}

/// Guard elements before a buffer of `elem`-byte elements in checked mode: a whole number of
/// elements filling [`FRONT_GUARD_BYTES`] (the sub-buffer after it then starts at an aligned
/// offset), else none.
pub(crate) fn front_len(elem: usize) -> usize {
    match FRONT_GUARD_BYTES % elem.max(1) {
        0 => FRONT_GUARD_BYTES / elem.max(1),
        _ => 0,
    }
}

/// Where a buffer argument's guard lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Guard {
    /// The buffer's length in elements (the guard starts right after).
    pub len: usize,
    /// Guard elements.
    pub guard: usize,
    /// Element size in bytes.
    pub elem: usize,
    /// Guard elements before the buffer, and the whole allocation they start (a buffer
    /// without a front guard: 0 and the buffer itself).
    pub front: usize,
    pub whole: opencl3::types::cl_mem,
}
