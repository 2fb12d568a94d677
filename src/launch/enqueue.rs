//! Executing a [`Prepared`] launch: set the arguments of each piece's variant and enqueue it,
//! nothing else to decide.

use super::{Arg, Event, Launch, Prepared};
use crate::error::{Error, Result};
use crate::ffi;
use crate::plan::Refusal;
use crate::range::Range;

impl Launch<'_> {
    /// Enqueues every piece of `prepared` in order; in checked mode, waits and reports.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::nd_range`] for the work-items `prepared` was made for (its
    /// pieces run exactly them, or guarded variants whose extra work-items exit at once).
    pub(crate) unsafe fn execute(&self, prepared: Prepared) -> Result<Event> {
        // Detached pieces (enqueued without an event) leave nothing to wait for here.
        let mut raw = Vec::with_capacity(prepared.pieces.len());
        for piece in &prepared.pieces {
            // SAFETY: forwarded from the caller; the arguments were checked by `prepared`.
            raw.extend(unsafe { self.enqueue_piece(piece, &prepared.extra)? });
        }
        let ev = Event {
            raw,
            device: self.queue.device().clone(),
            kernel: Some(self.kernel.shared_name()),
        };
        self.verified(ev, &self.args)
    }

    /// Sets the launch's arguments, then `extra`, on the piece's variant and enqueues it
    /// (`None`: without an event).
    ///
    /// # Safety
    ///
    /// As [`Launch::execute`].
    unsafe fn enqueue_piece(
        &self,
        piece: &crate::plan::launch::Piece,
        extra: &[Arg],
    ) -> Result<Option<ffi::Owned<opencl3::event::Event>>> {
        let (name, dev) = (self.kernel.name(), self.queue.device());
        let (global, local, offset) = (piece.global, piece.local, piece.offset);
        let guard = self
            .kernel
            .raw_variant(piece.variant)
            .ok_or_else(|| self.invalid(global, local, Refusal::NoVariant(piece.variant)))?;
        let args = self.args.iter().chain(extra);
        for (i, a) in args.enumerate() {
            ffi::set_arg(&guard, i as u32, &a.raw()).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("argument {i} of `{name}` on {dev}"),
                )
            })?;
        }
        if self.kernel.hidden_scratch() {
            let bytes = self.scratch_bytes(local);
            let at = (self.args.len() + extra.len()) as u32;
            ffi::set_arg(&guard, at, &ffi::RawArg::Local(bytes)).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("the {bytes}-byte sub-group scratch of `{name}` on {dev}"),
                )
            })?;
        }
        let local_v = local.map(|l| l.as_slice().to_vec());
        let detached = self.detached && self.waits.is_empty() && !crate::checked::enabled();
        let waits = crate::event::wait_list(&self.waits)?;
        // A zero offset is passed as NULL, as raw OpenCL programs do (drivers may take a
        // slower path for an explicit offset).
        let at = Some(offset.as_slice()).filter(|o| o.iter().any(|&v| v != 0));
        let q = self.queue.raw();
        let (g, l) = (global.as_slice(), local_v.as_deref());
        // SAFETY: every argument was just set; the caller vouches for the kernel's accesses;
        // the events waited for are live (the launch borrows them).
        unsafe {
            match detached {
                true => ffi::enqueue_kernel_detached(q, &guard, at, g, l).map(|()| None),
                false => ffi::enqueue_kernel(q, &guard, at, g, l, &waits).map(Some),
            }
        }
        .map_err(|e| self.enqueue_error(e.0, global, local, offset))
    }

    fn enqueue_error(
        &self,
        code: i32,
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> Error {
        let (name, dev) = (self.kernel.name(), self.queue.device());
        Error::cl(
            "clEnqueueNDRangeKernel",
            code,
            format!("`{name}` on {dev}, global {global:?}, local {local:?}, offset {offset:?}"),
        )
    }
}
