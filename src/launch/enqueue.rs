//! Executing a [`Prepared`] launch: set the arguments of each piece's variant and enqueue it,
//! nothing else to decide (but, on a device that compiles alone, whether a piece is a first
//! run, which runs alone: [`first_run`]).

use super::{Arg, Event, Launch, Prepared};
use crate::error::{Error, Result};
use crate::ffi;
use crate::kernel::first_run::{self, RunKey};
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
        let pieces = &prepared.plan.pieces;
        let mut raw = Vec::with_capacity(pieces.len());
        for piece in pieces {
            // SAFETY: forwarded from the caller; the arguments were checked by `prepared`.
            raw.extend(unsafe { self.enqueue_piece(piece, &prepared)? });
        }
        let ev = Event {
            raw,
            device: self.queue.device().clone(),
            kernel: Some(self.kernel.shared_name()),
        };
        self.verified(ev, &self.args)
    }

    /// Sets the launch's arguments, then those `prepared` adds, on the piece's variant and
    /// enqueues it (`None`: without an event).
    ///
    /// # Safety
    ///
    /// As [`Launch::execute`].
    unsafe fn enqueue_piece(
        &self,
        piece: &crate::plan::launch::Piece,
        prepared: &Prepared,
    ) -> Result<Option<ffi::Owned<opencl3::event::Event>>> {
        let (name, dev) = (self.kernel.name(), self.queue.device());
        let (global, local, offset) = (piece.global, piece.local, piece.offset);
        let guard = self
            .kernel
            .raw_variant(piece.variant)
            .ok_or_else(|| self.invalid(global, local, Refusal::NoVariant(piece.variant)))?;
        let user_range = prepared.user_range.iter().flatten();
        let args = (self.args.iter().map(Arg::raw))
            .chain(user_range.map(|v| ffi::RawArg::Bytes(bytemuck::bytes_of(v))))
            .chain(prepared.hidden.iter().map(Arg::raw));
        let mut count = 0;
        for (i, a) in args.enumerate() {
            count = i + 1;
            ffi::set_arg(&guard, i as u32, &a).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("argument {i} of `{name}` on {dev}"),
                )
            })?;
        }
        if self.kernel.hidden_scratch() {
            let bytes = self.scratch_bytes(local);
            ffi::set_arg(&guard, count as u32, &ffi::RawArg::Local(bytes)).map_err(|e| {
                Error::cl(
                    "clSetKernelArg",
                    e.0,
                    format!("the {bytes}-byte sub-group scratch of `{name}` on {dev}"),
                )
            })?;
        }
        // On a device that compiles alone, a first run runs alone (`first_run`; the kernel's
        // handle is locked, so no other thread runs this key meanwhile).
        let first = match dev.compiles_alone() {
            true => Some(RunKey {
                kernel: guard.get() as usize,
                global,
                local,
                offset,
            })
            .filter(|key| !self.kernel.first_runs().ran(key)),
            false => None,
        };
        let alone = first.map(|_| first_run::alone());
        let detached =
            self.detached && self.waits.is_empty() && !crate::checked::enabled() && first.is_none();
        let waits = crate::event::wait_list(&self.waits)?;
        // A zero offset is passed as NULL, as raw OpenCL programs do (drivers may take a
        // slower path for an explicit offset).
        let at = Some(offset.as_slice()).filter(|o| o.iter().any(|&v| v != 0));
        let q = self.queue.raw();
        let (g, l) = (global.as_slice(), local.as_ref().map(Range::as_slice));
        // SAFETY: every argument was just set; the caller vouches for the kernel's accesses;
        // the events waited for are live (the launch borrows them).
        let event = unsafe {
            match detached {
                true => ffi::enqueue_kernel_detached(q, &guard, at, g, l).map(|()| None),
                false => ffi::enqueue_kernel(q, &guard, at, g, l, &waits).map(Some),
            }
        }
        .map_err(|e| self.enqueue_error(e.0, global, local, offset))?;
        if let (Some(key), Some(ev)) = (first, &event) {
            log::debug!(
                "kernel `{name}` on {dev}: first run of global {global:?}, local {local:?}, \
                 offset {offset:?}: alone in the process (the driver compiles it now)"
            );
            // Alone until the driver has compiled it (it marks a kernel command running once
            // it has its work-group function), not until it ends: the launch stays
            // asynchronous. Past the wait limit the launch goes on, not recorded (its own wait
            // reports a stuck command).
            let what = || format!("the first run of `{name}` on {dev}, global {global:?}");
            if crate::wait::started(ev, what)? {
                self.kernel.first_runs().record(key);
            }
        }
        drop(alone);
        Ok(event)
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
