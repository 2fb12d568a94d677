//! Scans (sum): the blocking calls and the enqueue form.

use super::plan::{self, LaunchPlan, ScanForm, ScanPath};
use super::post::Post;
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

/// A look-back scan's launch.
pub(super) enum Walk {
    /// `clg_scan_lookback`: one tile per work-group of `plan`, each waiting `wait` ns before
    /// its first look back.
    Tiles {
        kernel: Kernel,
        plan: LaunchPlan,
        wait: u32,
    },
    /// `clg_scan_persist`: the work-groups of `plan` take `tiles` tiles in turn; the last one
    /// done posts to `post` (a blocking call's) when given.
    Persistent {
        kernel: Kernel,
        plan: LaunchPlan,
        tiles: usize,
        post: Option<Post>,
    },
}

impl Walk {
    /// The post the launch makes itself.
    fn post(&self) -> Option<Post> {
        match self {
            Walk::Persistent { post, .. } => *post,
            Walk::Tiles { .. } => None,
        }
    }
}

impl<T: Element> State<T> {
    pub(super) fn enqueue_scan(
        &mut self,
        input: &Buffer<T>,
        output: &Buffer<T>,
        kind: ScanKind,
        how: Track,
    ) -> Result<(Event, Option<Post>)> {
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
                let walk = match persistent {
                    Some(kernel) => {
                        let (plan, tiles) = plan::persistent(n, self.inputs.compute_units);
                        // A blocking call's post comes from the kernel's last work-group.
                        let post = match how {
                            Track::Posted => self.next_post(),
                            Track::Events => None,
                        };
                        Walk::Persistent {
                            kernel,
                            plan,
                            tiles,
                            post,
                        }
                    }
                    None => Walk::Tiles {
                        kernel: lookback,
                        plan: plan::lookback(n, tile),
                        wait,
                    },
                };
                self.lookback(&walk, input, output, exclusive, how)
                    .map(|e| (e, walk.post()))
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
                let second = unsafe { launch(&self.k.scan_seq, args, p, &needs, how)? };
                Ok((first.then(second), None))
            }
            _ => Ok((self.reduce_then_scan(input, output, exclusive, how)?, None)),
        }
    }

    /// One look-back scan as `walk` says.
    pub(super) fn lookback(
        &mut self,
        walk: &Walk,
        input: &Buffer<T>,
        output: &Buffer<T>,
        exclusive: i32,
        how: Track,
    ) -> Result<Event> {
        let n = input.len();
        let (kernel, p, tiles, wait, post) = match walk {
            Walk::Tiles { kernel, plan, wait } => (kernel, *plan, plan.groups, *wait, None),
            Walk::Persistent {
                kernel,
                plan,
                tiles,
                post,
            } => (kernel, *plan, *tiles, 0, Some(post.unwrap_or_default())),
        };
        log::debug!(
            "algorithms: {} of {n}: {tiles} tiles, {} groups of {}, waiting {wait} ns{}",
            kernel.name(),
            p.groups,
            p.local,
            match post {
                Some(Post { address: 1.., .. }) => ", posting its end",
                _ => "",
            }
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
        let mut args = vec![
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
        if let Some(post) = post {
            args.extend([post.address.to_arg(), post.seq.to_arg()]);
        }
        let needs = [
            (output.len(), n),
            (states.len(), count),
            (self.counters.len(), 1),
        ];
        // SAFETY: `clg_scan_lookback` and `clg_scan_persist` read `in` and write `out` below `n`
        // (checked against both lengths), use `state[tile]` for tile < `tiles` (checked) and
        // `counter[0]` as the ticket; `clg_scan_persist`'s last work-group writes the 12 bytes
        // of a mailbox only at an address `next_post` gave (the device reaches it, checked by
        // `reachable`; it stays allocated until the post is seen), else none (address 0).
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
        .map(|(e, _)| e)
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
        let (_, posted) = s.enqueue_scan(input, output, kind, Track::Posted)?;
        // Seen or not, the post comes after the scan's launches: they have completed.
        return match posted {
            Some(post) => s.await_post(post).map(drop),
            None => s.post_result().map(drop),
        };
    }
    s.enqueue_scan(input, output, kind, Track::Events)?.0.wait()
}
