//! Checked mode (`CLGROUPS_CHECKED=1`): out-of-bounds writes past the end of a buffer become
//! an [`Error::OutOfBounds`] instead of corrupted memory.
//!
//! In checked mode every [`Buffer`](crate::Buffer) is allocated with a guard region after its
//! elements (at least 64 KiB, and at least the buffer's own size), filled with a canary byte.
//! After each launch, clgroups waits for it and compares the guard of every buffer argument
//! with the canary; the first changed element is reported with the kernel, the argument index
//! and the element index, and the canary is restored. A write that lands in the guard cannot
//! reach other allocations, so the process survives to report it.
//!
//! Limits: writes further past the end than the guard, writes before the start, and writes
//! of the canary's own bit pattern are not seen; reads are not checked. Launches wait for
//! completion, so checked mode is for tests and debugging, not for timing. Sub-buffers (the
//! chunks of a [`ColoredBuffer`](crate::scaling::ColoredBuffer) in shared placement) are
//! checked through their parent only when it is an argument.
//!
//! ```
//! // CLGROUPS_CHECKED=1 cargo test
//! use clgroups::{Buffer, Error, Program, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, "kernel void k(global int *o) { o[get_global_id(0)] = 1; }")?;
//! let o = Buffer::<i32>::new(q.context(), 100)?;
//! if clgroups::launch::checked::enabled() {
//!     // SAFETY: not in bounds (200 work-items, 100 elements): only sound in checked mode,
//!     // whose guard absorbs the 100 stray writes.
//!     let r = unsafe { p.kernel("k")?.launch().arg(&o).range(200) };
//!     assert!(matches!(r, Err(Error::OutOfBounds { argument: 0, index: 100, .. })));
//! }
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::ffi;
use crate::launch::Arg;
use crate::queue::Queue;
use once_cell::sync::Lazy;

/// The environment variable that turns checked mode on (`1`).
pub const CHECKED_ENV: &str = "CLGROUPS_CHECKED";

/// The byte guard regions are filled with.
pub const CANARY: u8 = 0xA5;

/// The smallest guard region, in bytes.
pub const MIN_GUARD_BYTES: usize = 64 * 1024;

/// Whether checked mode is on ([`CHECKED_ENV`]` = 1`, read once).
///
/// ```
/// // `CLGROUPS_CHECKED=1 cargo test` runs the tests in checked mode.
/// if clgroups::launch::checked::enabled() {
///     println!("buffers have guard regions; launches wait and check them");
/// }
/// ```
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

/// Where a buffer argument's guard lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Guard {
    /// The buffer's length in elements (the guard starts right after).
    pub len: usize,
    /// Guard elements.
    pub guard: usize,
    /// Element size in bytes.
    pub elem: usize,
}

/// Verifies (and restores) the guard of every buffer argument of a finished launch of
/// `kernel` on `queue`.
pub(crate) fn verify(queue: &Queue, kernel: &str, args: &[Arg]) -> Result<()> {
    for (argument, a) in args.iter().enumerate() {
        let Arg::Buffer { mem, .. } = a else { continue };
        let Some(g) = mem.guard() else { continue };
        let start = g.len * g.elem;
        let mut bytes = vec![0u8; g.guard * g.elem];
        let err = |call, e: opencl3::error_codes::ClError| {
            Error::cl(
                call,
                e.0,
                format!("checked mode: guard of argument {argument} of `{kernel}`"),
            )
        };
        // SAFETY: the buffer was allocated with `len + guard` elements of `elem` bytes
        // (`Buffer::new` in checked mode), and the launch borrowing it is still alive.
        unsafe { ffi::read_bytes(queue.raw(), mem.raw(), start, &mut bytes) }
            .map_err(|e| err("clEnqueueReadBuffer", e))?;
        let Some(first) = bytes.iter().position(|&b| b != CANARY) else {
            continue;
        };
        bytes.fill(CANARY);
        // SAFETY: as above.
        unsafe { ffi::write_bytes(queue.raw(), mem.raw(), start, &bytes) }
            .map_err(|e| err("clEnqueueWriteBuffer", e))?;
        return Err(Error::OutOfBounds {
            kernel: kernel.to_string(),
            device: queue.device().to_string(),
            argument,
            index: g.len + first / g.elem,
            len: g.len,
        });
    }
    Ok(())
}
