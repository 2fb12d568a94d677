//! Scans (sum): the blocking calls and the enqueue form.

use super::plan::{self, LaunchPlan, ScanForm, ScanPath};
use super::{
    at_least, cache, launch, lock, per_sub_group, same_context, Element, ReduceOp, State, Track,
};
use crate::buffer::Buffer;
use crate::error::{Error, InputFault, Result};
use crate::kernel::Kernel;
use crate::launch::{Event, KernelArg};
use crate::queue::Queue;
use std::sync::{Arc, Mutex};

/// Inclusive (`out[i] = x[0] + … + x[i]`) or exclusive (`out[i] = x[0] + … + x[i-1]`,
/// `out[0] = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// `out[i]` includes `x[i]`.
    Inclusive,
    /// `out[i]` stops before `x[i]`.
    Exclusive,
}

/// Epochs of the look-back tile states are 30 bits wide.
const EPOCHS: u32 = 1 << 30;

impl<T: Element> State<T> {
    pub(super) fn enqueue_scan(
        &mut self,
        input: &Buffer<T>,
        output: &Buffer<T>,
        kind: ScanKind,
        how: Track,
    ) -> Result<Event> {
        let n = input.len();
        let exclusive = i32::from(kind == ScanKind::Exclusive);
        let path = plan::scan_path(&self.inputs, size_of::<T>());
        let lookback = match &self.k.large {
            Some(large) if n >= plan::Tile::LARGE_FROM => Some((large, plan::Tile::LARGE)),
            _ => self.k.lookback.as_ref().map(|k| (k, self.tile)),
        };
        match (path, lookback) {
            (ScanPath::LookBack, Some((lookback, tile))) => {
                let lookback = lookback.clone();
                // From 2^24 the form is measured (where the large tiles exist: sums, no forced
                // tile), and the wait of the large tiles with it.
                let measured = self.k.large.is_some() && n >= plan::PERSISTENT_FROM;
                let (wait, form) = match (self.forced_wait, measured) {
                    (Some(w), _) => (w, ScanForm::Tiles),
                    (None, true) => self.scan_form((&lookback, tile), input, output, exclusive)?,
                    (None, false) => (0, ScanForm::Tiles),
                };
                let persistent = match form {
                    ScanForm::Persistent => self.persistent_kernel(),
                    ScanForm::Tiles => None,
                };
                match persistent {
                    Some(persistent) => {
                        let planned = plan::persistent(n, self.inputs.compute_units);
                        let args = (&persistent, planned, 0);
                        self.lookback(args, input, output, exclusive, how)
                    }
                    None => {
                        let args = (&lookback, plan::lookback(n, tile), wait);
                        self.lookback(args, input, output, exclusive, how)
                    }
                }
            }
            (ScanPath::Sequential, _) => {
                let (chunk, p) = plan::sequential(n, &self.inputs);
                let (n, chunk) = (n as u64, chunk as u64);
                let sums = &self.partials;
                let args = vec![input.to_arg(), sums.to_arg(), n.to_arg(), chunk.to_arg()];
                let needs = [(sums.len(), p.groups)];
                // SAFETY: `clg_scan_seq_sums` reads `in` below `n` = its length and writes
                // `sums[g]` for the plan's groups.
                let first = unsafe { launch(&self.k.scan_seq_sums, args, p, &needs, how)? };
                let args = vec![
                    input.to_arg(),
                    output.to_arg(),
                    n.to_arg(),
                    chunk.to_arg(),
                    sums.to_arg(),
                    exclusive.to_arg(),
                ];
                let needs = [(output.len(), n as usize), (sums.len(), p.groups)];
                // SAFETY: `clg_scan_seq` reads `in` and writes `out` below `n`, and reads
                // `sums[..g]` for the plan's groups.
                Ok(first.then(unsafe { launch(&self.k.scan_seq, args, p, &needs, how)? }))
            }
            _ => self.reduce_then_scan(input, output, exclusive, how),
        }
    }

    /// One look-back scan: `(kernel, (plan, tiles), wait)`, `kernel` launched as `plan` over
    /// `tiles` tiles (as [`plan::lookback`] or [`plan::persistent`] plan them), each waiting
    /// `wait` ns before its first look back (`clg_scan_lookback`; `clg_scan_persist` takes its
    /// tiles in turn and never waits).
    pub(super) fn lookback(
        &mut self,
        (kernel, (p, tiles), wait): (&Kernel, (LaunchPlan, usize), u32),
        input: &Buffer<T>,
        output: &Buffer<T>,
        exclusive: i32,
        how: Track,
    ) -> Result<Event> {
        let n = input.len();
        log::debug!(
            "algorithms: {} of {n}: {tiles} tiles, {} groups of {}, waiting {wait} ns",
            kernel.name(),
            p.groups,
            p.local
        );
        let count = tiles;
        let tiles = u32::try_from(count).map_err(|_| Error::input(InputFault::ScanTiles { n }))?;
        if self.tiles.as_ref().is_none_or(|b| b.len() < count) {
            let mut fresh = Buffer::new(self.queue.context(), count)?;
            fresh.fill(&self.queue, 0)?;
            self.tiles = Some(fresh);
        }
        let states = self.tiles.as_mut().expect("tile states");
        if self.epoch >= EPOCHS {
            states.fill(&self.queue, 0)?;
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.epoch += 1;
        let args = vec![
            input.to_arg(),
            output.to_arg(),
            (n as u64).to_arg(),
            (&*states).to_arg(),
            (&self.counters).to_arg(),
            tiles.to_arg(),
            epoch.to_arg(),
            exclusive.to_arg(),
            wait.to_arg(),
        ];
        let needs = [
            (output.len(), n),
            (states.len(), count),
            (self.counters.len(), 1),
        ];
        // SAFETY: `clg_scan_lookback` and `clg_scan_persist` read `in` and write `out` below `n`
        // (checked against both lengths), use `state[tile]` for tile < `tiles` (checked) and
        // `counter[0]` as the ticket.
        unsafe { launch(kernel, args, p, &needs, how) }
    }

    /// Chunk sums, their exclusive scan (one work-group), each chunk from its offset.
    fn reduce_then_scan(
        &mut self,
        input: &Buffer<T>,
        output: &Buffer<T>,
        exclusive: i32,
        how: Track,
    ) -> Result<Event> {
        let (chunk, p) = plan::scan(input.len(), &self.inputs);
        let scratch = per_sub_group::<T>(p.local);
        let chunk_scan = |input: &Buffer<T>,
                          output: &Buffer<T>,
                          n: usize,
                          offsets: Option<&Buffer<T>>,
                          exclusive: i32,
                          chunk: usize,
                          p: LaunchPlan| {
            let args = vec![
                input.to_arg(),
                output.to_arg(),
                (n as u64).to_arg(),
                (chunk as u64).to_arg(),
                offsets.unwrap_or(input).to_arg(),
                i32::from(offsets.is_some()).to_arg(),
                exclusive.to_arg(),
                scratch.to_arg(),
            ];
            let needs = [
                (input.len(), n),
                (output.len(), n),
                (
                    offsets.map_or(0, |o| o.len()),
                    offsets.map_or(0, |_| p.groups),
                ),
            ];
            // SAFETY: `clg_chunk_scan` reads `in` and writes `out` below `n`, reads
            // `offsets[g]` for the plan's groups only when given, and `tmp` below the
            // sub-group count (one slot per work-item is passed).
            unsafe { launch(&self.k.chunk_scan, args, p, &needs, how) }
        };
        let n = input.len();
        if p.groups == 1 {
            return chunk_scan(input, output, n, None, exclusive, chunk, p);
        }
        at_least(&mut self.offsets, &self.queue, p.groups)?;
        let (sums, offsets) = (&self.partials, self.offsets.as_ref().expect("offsets"));
        let args = vec![
            input.to_arg(),
            sums.to_arg(),
            (n as u64).to_arg(),
            (chunk as u64).to_arg(),
            scratch.to_arg(),
        ];
        let needs = [(sums.len(), p.groups)];
        // SAFETY: `clg_chunk_reduce` reads `in` below `n` = its length, writes `sums[g]` for
        // the plan's groups and `tmp` below the sub-group count (one slot per work-item).
        let first = unsafe { launch(&self.k.chunk_reduce, args, p, &needs, how)? };
        let one = LaunchPlan { groups: 1, ..p };
        let all = p.groups.div_ceil(4) * 4;
        chunk_scan(sums, offsets, p.groups, None, 1, all, one)?;
        let last = chunk_scan(input, output, n, Some(offsets), exclusive, chunk, p)?;
        Ok(first.then(last))
    }
}

/// Enqueues the scan of `input` into `output` (same length) and returns without waiting:
/// the result stays on the device, where later launches on the same queue see it.
pub fn enqueue_scan_sum<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
    kind: ScanKind,
) -> Result<Event> {
    enqueue(queue, input, output, kind)
}

fn enqueue<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &Buffer<T>,
    kind: ScanKind,
) -> Result<Event> {
    let state = checked_state(queue, input, output)?;
    let mut s = lock(&state);
    s.enqueue_scan(input, output, kind, Track::Events)
}

/// The queue's scan state, after checking the buffers.
pub(super) fn checked_state<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &Buffer<T>,
) -> Result<Arc<Mutex<State<T>>>> {
    same_context(queue, input, "scan input")?;
    same_context(queue, output, "scan output")?;
    if output.len() != input.len() {
        return Err(Error::input(InputFault::ScanInto {
            input: input.len(),
            output: output.len(),
        }));
    }
    cache::state::<T>(queue, ReduceOp::Sum)
}

/// `output[i] = input[0] + ... + input[i]`; `output` has `input`'s length. Blocks until done.
pub fn inclusive_scan_sum<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
) -> Result<()> {
    blocking(queue, input, output, ScanKind::Inclusive)
}

/// `output[i] = input[0] + ... + input[i - 1]` (`output[0] = 0`); `output` has `input`'s
/// length. Blocks until done.
pub fn exclusive_scan_sum<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
) -> Result<()> {
    blocking(queue, input, output, ScanKind::Exclusive)
}

fn blocking<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    output: &mut Buffer<T>,
    kind: ScanKind,
) -> Result<()> {
    let state = checked_state(queue, input, output)?;
    let mut s = lock(&state);
    if s.posts()? {
        s.enqueue_scan(input, output, kind, Track::Posted)?;
        // Seen or not, the post comes after the scan's launches: they have completed.
        return s.post_result().map(drop);
    }
    s.enqueue_scan(input, output, kind, Track::Events)?.wait()
}
