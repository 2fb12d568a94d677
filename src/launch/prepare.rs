//! Preparing a launch: every check, the local size from [`crate::plan::work_group::choose`],
//! the pieces to enqueue and their arguments, into a [`Prepared`] that
//! [`Launch::execute`](super::Launch::execute) only carries out. Nothing here enqueues a
//! kernel, so an error leaves the queue untouched; a multi-device launch prepares every
//! device's part before it enqueues the first.

use super::{bounds, uniform, Arg, Launch, LocalSize};
use crate::error::{Error, Result};
use crate::event;
use crate::plan::rounding::Variant;
use crate::range::Range;

/// One enqueue of a prepared launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) variant: Variant,
    pub(crate) global: Range,
    /// `None`: the driver chooses (NULL).
    pub(crate) local: Option<Range>,
    /// The absolute global offset.
    pub(crate) offset: Range,
}

/// A launch with every check done: the pieces enqueued in order, each with the launch's own
/// arguments followed by `extra`.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) pieces: Vec<Piece>,
    /// After the user's arguments (which stay in the launch: a launch copies none): the
    /// rounded variants' user range (when a piece needs it), then checked mode's hidden
    /// arguments (when the kernel is instrumented).
    pub(crate) extra: Vec<Arg>,
}

impl Launch<'_> {
    /// Prepares an ND-range launch of `global` in work-groups of `asked`.
    pub(crate) fn prepare_nd(&self, global: Range, asked: LocalSize) -> Result<Prepared> {
        self.check_common(global)?;
        let shown = match asked {
            LocalSize::Exact(l) => Some(l),
            _ => None,
        };
        let c = self.kernel.constraints();
        // Launch-time id conditions on PoCL's native collectives: `check_uniform` picks a size
        // that keeps them uniform (and is not too small) where the driver would choose.
        let uniform_picks = asked == LocalSize::Auto
            && !self.kernel.id_conditions().is_empty()
            && c.min_group > 1
            && c.required.is_none();
        let local = match uniform_picks {
            true => None,
            false => (self.kernel.local_size(global, asked))
                .map_err(|r| self.invalid(global, shown, r))?,
        };
        let offset = self.base(global);
        let local = self.checked_piece(global, local, offset)?;
        let piece = Piece {
            variant: Variant::Original,
            global,
            local,
            offset,
        };
        self.prepared(vec![piece], Vec::new(), global)
    }

    /// The launch's offset, or zeros at `global`'s rank.
    pub(super) fn base(&self, global: Range) -> Range {
        self.offset.unwrap_or(global.zeros_like())
    }

    /// Finishes a preparation: the arguments against the kernel's signature and the device
    /// (local memory for each piece's work-group), then checked mode's hidden arguments after
    /// `extra` (the arguments that follow the user's).
    pub(super) fn prepared(
        &self,
        pieces: Vec<Piece>,
        mut extra: Vec<Arg>,
        user: Range,
    ) -> Result<Prepared> {
        self.check_arguments(user)?;
        for p in &pieces {
            self.check_local_mem(p.global, p.local)?;
        }
        match self.kernel.checked_pointers() {
            Ok(pointers) => extra.extend(self.hidden_args(pointers)?),
            Err(why) if crate::checked::enabled() => {
                log::debug!(
                    "kernel `{}`: not instrumented ({why}): guard regions only",
                    self.kernel.name()
                );
            }
            Err(_) => {}
        }
        Ok(Prepared { pieces, extra })
    }

    /// A piece's local size (the uniform one for launch-time id conditions where the driver
    /// would choose), checked against group counts and those conditions.
    pub(super) fn checked_piece(
        &self,
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> Result<Option<Range>> {
        self.piece_local(global, local, offset)
            .map_err(|r| self.invalid(global, local, r))
    }

    /// [`Launch::checked_piece`], or why not as text (for callers that try another plan).
    pub(super) fn piece_local(
        &self,
        global: Range,
        local: Option<Range>,
        offset: Range,
    ) -> std::result::Result<Option<Range>, String> {
        bounds::check_groups(global, local)?;
        uniform::check_uniform(self.kernel, &self.args, global, local, offset)
    }

    /// What every launch of the kernel needs: a supported sub-group size, a non-empty range,
    /// an offset of its rank, and ids within the device's `size_t`.
    pub(super) fn check_common(&self, global: Range) -> Result<()> {
        self.kernel.check_sub_group_size()?;
        if global.is_empty() {
            return Err(self.invalid(global, None, "a global range has no zero sizes".into()));
        }
        if let Some(o) = self.offset {
            if o.rank() != global.rank() {
                return Err(self.invalid(global, None, format!("offset {o:?} has another rank")));
            }
        }
        let bits = self.queue.device().limits().address_bits;
        bounds::check_global(global, self.base(global), bits)
            .map_err(|r| self.invalid(global, None, r))
    }

    /// The user's arguments against the signature (once per kinds and types of arguments:
    /// a launch like the last asks nothing again), buffers and events against the queue's
    /// context.
    fn check_arguments(&self, global: Range) -> Result<()> {
        let name = self.kernel.name();
        let mut last = self.kernel.last_args();
        let same = last.as_ref().is_some_and(|keys| {
            keys.len() == self.args.len() && keys.iter().zip(&self.args).all(|(k, a)| *k == a.key())
        });
        if !same {
            *last = None;
            super::check_args(name, self.kernel.args(), &self.args)?;
            *last = Some(self.args.iter().map(Arg::key).collect());
        }
        drop(last);
        let context = self.queue.context().key();
        if let Some(reason) = event::foreign_wait(&self.waits, context) {
            return Err(self.invalid(global, None, reason));
        }
        for (index, a) in self.args.iter().enumerate() {
            if let Arg::Buffer { mem, .. } = a {
                if mem.context() != context {
                    return Err(Error::InvalidArgument {
                        kernel: name.to_string(),
                        index,
                        reason: format!(
                            "the buffer belongs to another context than the queue on {}",
                            self.queue.device()
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Local memory (arguments and the emulated sub-group scratch) against the device's.
    fn check_local_mem(&self, global: Range, local: Option<Range>) -> Result<()> {
        let mut bytes: Vec<usize> = self
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Local(n) => Some(*n),
                _ => None,
            })
            .collect();
        if self.kernel.hidden_scratch() {
            bytes.push(self.scratch_bytes(local));
        }
        let device = self.queue.device().limits().local_mem_size;
        bounds::check_local_mem(&bytes, device).map_err(|r| self.invalid(global, local, r))
    }

    /// Bytes of the emulated sub-group scratch: one `ulong` per work-item of the work-group (of
    /// the largest one the kernel allows when the driver picks the local size).
    pub(super) fn scratch_bytes(&self, local: Option<Range>) -> usize {
        let items = local.map_or(self.kernel.limits().max_work_group_size, |l| l.len());
        items.saturating_mul(std::mem::size_of::<u64>())
    }

    pub(super) fn invalid(&self, global: Range, local: Option<Range>, reason: String) -> Error {
        Error::InvalidLaunch {
            kernel: self.kernel.name().to_string(),
            device: self.queue.device().to_string(),
            global: global.as_slice().to_vec(),
            local: local.map(|l| l.as_slice().to_vec()).unwrap_or_default(),
            reason,
        }
    }
}
