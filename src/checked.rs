//! Checked mode: out-of-bounds accesses become errors instead of corrupted memory, for tests
//! and debugging. This module owns its one switch, [`CHECKED_ENV`], and the geometry of the
//! guard regions every [`Buffer`](crate::Buffer) gets in checked mode. What a single-device
//! launch checks and reports is described in [`crate::launch::checked`]; launches over
//! several devices check every access against the chunk its device holds
//! ([`crate::scaling::checked_mode`]).
//!
//! `CLGROUPS_CHECKED` takes `1`, `true`, `yes` or `on` (checked), `0`, `false`, `no` or `off`
//! (unchecked), or nothing. Unset, single-device launches are unchecked and launches over
//! several devices are checked in debug builds of the program (its `debug_assertions`). Any
//! other value is an [`Error::InvalidInput`] from the first call that asks (a new buffer,
//! program or root program), never a silent choice.
//!
//! ```
//! // Whatever the variable says, the answer is the same everywhere it is asked.
//! match std::env::var("CLGROUPS_CHECKED").as_deref() {
//!     Ok("1") | Ok("yes") => assert!(clgroups::checked::single_device()?),
//!     Err(_) => assert!(!clgroups::checked::single_device()?),
//!     _ => {}
//! }
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::error::{Error, Result};
use once_cell::sync::Lazy;

/// The environment variable that switches checked mode.
pub const CHECKED_ENV: &str = "CLGROUPS_CHECKED";

/// [`CHECKED_ENV`], parsed once: `Some(on)` when set to a known value, `None` when unset or
/// empty, or the error for any other value.
fn setting() -> Result<Option<bool>> {
    static SETTING: Lazy<std::result::Result<Option<bool>, String>> = Lazy::new(|| {
        let value = std::env::var(CHECKED_ENV).unwrap_or_default();
        parse(&value).ok_or_else(|| {
            format!(
                "{CHECKED_ENV}={value:?}: expected 1, true, yes or on (checked), 0, false, no \
                 or off (unchecked)"
            )
        })
    });
    SETTING.clone().map_err(Error::input)
}

/// A value of [`CHECKED_ENV`]: `Some(Some(on))`, `Some(None)` for empty, `None` if unknown.
fn parse(value: &str) -> Option<Option<bool>> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Some(None),
        "1" | "true" | "yes" | "on" => Some(Some(true)),
        "0" | "false" | "no" | "off" => Some(Some(false)),
        _ => None,
    }
}

/// Whether single-device buffers and launches are checked (off unless switched on).
pub fn single_device() -> Result<bool> {
    Ok(setting()?.unwrap_or(false))
}

/// Whether launches over several devices are checked (unless switched, on in builds with
/// `debug_assertions`, which `default` says for the caller's build).
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // root launches
pub(crate) fn multi_device(default: bool) -> Result<bool> {
    Ok(setting()?.unwrap_or(default))
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

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn one_parser_for_every_spelling() {
        for on in ["1", "true", "YES", " on "] {
            assert_eq!(parse(on), Some(Some(true)), "{on}");
        }
        for off in ["0", "false", "No", "off"] {
            assert_eq!(parse(off), Some(Some(false)), "{off}");
        }
        assert_eq!(parse(""), Some(None));
        assert_eq!(parse("2"), None);
        assert_eq!(parse("checked"), None);
    }
}
