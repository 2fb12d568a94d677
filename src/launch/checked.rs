//! Checked mode (`CLGROUPS_CHECKED=1`): out-of-bounds accesses of single-device launches
//! become an [`Error::OutOfBounds`] instead of corrupted memory. Launches wait for completion,
//! so checked mode is for tests and debugging, not for timing. Two mechanisms:
//!
//! 1. **Instrumented kernels.** Programs get a checked variant of every kernel the scanner can
//!    rewrite (`k__clg_checked` variants), and every [`Launch::nd_range`](super::Launch::nd_range)
//!    and [`Launch::range`](super::Launch::range) piece (rounded, sized, bulk + tail, required
//!    work-groups) runs it: every `p[index]`, `*p`, `*(p + e)`, `*(p - e)`, `vloadN(off, p)`
//!    and `vstoreN(v, off, p)` of a `global` or `constant` pointer parameter is
//!    compared with the buffer's length (in the kernel's element type: a `float4*` over a
//!    `Buffer<f32>` of 400 holds 100), reads and writes alike, negative indices included. An
//!    index out of bounds is redirected to the element right after the end (in the guard
//!    below: a write changes no element of any buffer, a read gives the canary), and the first
//!    one is reported with the kernel, argument index and name, index, length and work-item.
//!    However far out the index is: `o[get_global_id(0)]` over `range(100_000)` on 100
//!    elements is reported, not written.
//! 2. **Guard regions**, for what the rewriter cannot see: every [`Buffer`] is allocated with
//!    a guard after its elements (at least 64 KiB, and at least the buffer's own size) and one
//!    of 64 KiB before them (the buffer is then a sub-buffer of the allocation), filled with a
//!    canary byte; after each launch clgroups compares the guards of every buffer argument
//!    with the canary, reports the first changed element (a negative index before the start)
//!    and restores the canary.
//!    This catches writes just past the end made through the uses of `p` the rewriter leaves
//!    alone (`RUST_LOG=debug` names each one): pointer arithmetic kept in a variable (`q = p + i`,
//!    `p++`), casts, helper functions receiving `p`, and macros that subscript their arguments;
//!    and all writes of kernels that are not instrumented (made by macros, defined twice under
//!    `#if`, or a checked build the compiler refused: `RUST_LOG=debug` says why).
//!
//! Not caught: reads through those uses; writes through them further from the buffer than its
//! guards, or of the canary's own bit pattern;
//! local memory; a pointer parameter whose name the body declares again (`{ int x[4]; ... }`),
//! which is left unchecked. Sub-buffers (the chunks
//! of a [`ColoredBuffer`](crate::scaling::ColoredBuffer) in shared placement) have no guard:
//! instrumented accesses out of their bounds go to their element 0. Launches over several
//! devices have checks of their own ([`crate::scaling::checked_mode`]).
//!
//! ```no_run
//! // CLGROUPS_CHECKED=1 cargo test
//! use clgroups::{Buffer, Error, Program, Queue};
//! let q = Queue::new(&clgroups::default_device()?)?;
//! let p = Program::from_source(&q, "kernel void k(global int *o) { o[get_global_id(0)] = 1; }")?;
//! let o = Buffer::<i32>::new(&q, 100)?;
//! // SAFETY: not in bounds (100 000 work-items, 100 elements): only sound in checked mode,
//! // which redirects the stray writes.
//! let r = unsafe { p.kernel("k")?.launch().arg(&o).range(100_000) };
//! if clgroups::launch::checked::enabled() {
//!     assert!(matches!(r, Err(Error::OutOfBounds { argument: 0, len: 100, .. })));
//! }
//! # Ok::<(), clgroups::Error>(())
//! ```

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;
use crate::kernel::Kernel;
use crate::launch::{Arg, KernelArg};
use crate::queue::Queue;
use crate::transform::Violation;
use crate::transform::CHECK_WORDS;

pub use crate::checked::{enabled, single_device, CANARY, FRONT_GUARD_BYTES, MIN_GUARD_BYTES};

/// The name of `kernel`'s argument `i`: the driver's, else the scanner's, else `?`.
fn arg_name(kernel: &Kernel, i: usize) -> String {
    let scanned = || {
        let decl = kernel.program().decl(kernel.name())?;
        Some(decl.params.get(i)?.name.clone())
    };
    kernel
        .args()
        .get(i)
        .and_then(|a| a.name.clone())
        .or_else(scanned)
        .unwrap_or_else(|| "?".into())
}

/// The first out-of-bounds access the checked variants of a finished launch recorded in
/// `check`, as an error (after restoring the guards that redirected writes reached).
pub(crate) fn report(
    queue: &Queue,
    kernel: &Kernel,
    check: &Buffer<u32>,
    args: &[Arg],
) -> Result<()> {
    let Some(v) = Violation::decode(&check.read(queue)?) else {
        return Ok(());
    };
    // Redirected writes went to the guards: restore them (what they saw is this violation).
    let _ = verify(queue, kernel, args);
    Err(Error::OutOfBounds {
        kernel: kernel.name().to_string(),
        device: queue.device().to_string(),
        argument: v.param,
        name: arg_name(kernel, v.param),
        index: v.index,
        len: v.hi,
        global_id: Some(v.global_id),
    })
}

/// Verifies (and restores) the guards of every buffer argument of a finished launch of
/// `kernel` on `queue`: the first changed element is reported (before the buffer: a negative
/// index).
pub(crate) fn verify(queue: &Queue, kernel: &Kernel, args: &[Arg]) -> Result<()> {
    let name = kernel.name();
    for (argument, a) in args.iter().enumerate() {
        let Arg::Buffer { mem, .. } = a else { continue };
        let Some(g) = mem.guard() else { continue };
        let err = |call, e: opencl3::error_codes::ClError| {
            Error::cl(
                call,
                e.0,
                format!("checked mode: guard of argument {argument} of `{name}`"),
            )
        };
        // (memory object, byte offset, elements, index of its first element)
        let regions = [
            (mem.raw(), g.len * g.elem, g.guard, g.len as i64),
            (g.whole, 0, g.front, -(g.front as i64)),
        ];
        for (raw, start, elems, first_index) in regions.into_iter().filter(|r| r.2 > 0) {
            let mut bytes = vec![0u8; elems * g.elem];
            // SAFETY: the buffer was allocated with its guards (`Buffer::new` in checked mode:
            // `len + guard` elements of `elem` bytes in `raw`, `front` before them in `whole`),
            // and the launch borrowing it is still alive.
            unsafe { ffi::read_bytes(queue.raw(), raw, start, &mut bytes) }
                .map_err(|e| err("clEnqueueReadBuffer", e))?;
            let Some(first) = bytes.iter().position(|&b| b != CANARY) else {
                continue;
            };
            bytes.fill(CANARY);
            // SAFETY: as above.
            unsafe { ffi::write_bytes(queue.raw(), raw, start, &bytes) }
                .map_err(|e| err("clEnqueueWriteBuffer", e))?;
            return Err(Error::OutOfBounds {
                kernel: name.to_string(),
                device: queue.device().to_string(),
                argument,
                name: arg_name(kernel, argument),
                index: first_index + (first / g.elem) as i64,
                len: g.len as u64,
                global_id: None,
            });
        }
    }
    Ok(())
}

impl super::Launch<'_> {
    /// `ev`, after the checks of [checked mode](checked) (which waits for it first): the first
    /// out-of-bounds access a checked variant recorded, else the guards of the buffer
    /// arguments.
    pub(super) fn verified(&self, ev: Event, args: &[Arg]) -> Result<Event> {
        if enabled() {
            ev.wait()?;
            if let Some(check) = self.check.get() {
                report(&self.queue, self.kernel, check, args)?;
            }
            verify(&self.queue, self.kernel, args)?;
        }
        Ok(ev)
    }

    /// The hidden arguments of checked variants (see [`checked`]): each
    /// checked pointer's size in bytes and spare element (right after the end, in the guard;
    /// element 0 for a buffer without one), then the check buffer (made on first use).
    pub(super) fn hidden_args(&self, pointers: &[(usize, String)]) -> Result<Vec<Arg>> {
        let mut out = Vec::with_capacity(pointers.len() * 2 + 1);
        for &(i, _) in pointers {
            let (bytes, spare) = match self.args.get(i) {
                Some(Arg::Buffer { mem, .. }) => {
                    (mem.bytes(), mem.guard().map_or(0, |_| mem.bytes()))
                }
                _ => (0, 0),
            };
            out.push((bytes as u64).to_arg());
            out.push((spare as u64).to_arg());
        }
        let check = match self.check.get() {
            Some(c) => c,
            None => {
                let zeros = Buffer::from_slice(&self.queue, &[0u32; CHECK_WORDS])?;
                self.check.get_or_init(|| zeros)
            }
        };
        out.push(check.to_arg());
        Ok(out)
    }
}
