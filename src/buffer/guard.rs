//! Checked mode's guard regions: every [`Buffer`](super::Buffer) is allocated with a guard
//! after its elements, filled with a canary, when checked mode is on (see
//! [`crate::launch::checked`], which launches verify them).

use once_cell::sync::Lazy;

/// The environment variable that turns checked mode on (`1`).
pub const CHECKED_ENV: &str = "CLGROUPS_CHECKED";

/// The byte guard regions are filled with.
pub const CANARY: u8 = 0xA5;

/// The smallest guard region, in bytes.
pub const MIN_GUARD_BYTES: usize = 64 * 1024;

/// The guard region before a buffer, in bytes (a multiple of every device's base address
/// alignment: the buffer is a sub-buffer starting there), for element sizes that divide it.
pub const FRONT_GUARD_BYTES: usize = 64 * 1024;

/// Whether checked mode is on ([`CHECKED_ENV`]` = 1`, read once).
pub fn enabled() -> bool {
    static ON: Lazy<bool> = Lazy::new(|| std::env::var(CHECKED_ENV).is_ok_and(|v| v.trim() == "1"));
    *ON
}

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
