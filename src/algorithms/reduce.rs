//! Reduce: the blocking calls, the enqueue form, and the reusable [`Reduction`].

use super::mailbox::{self, Mailbox};
use super::plan::{self, LaunchPlan, ReducePath};
use super::{cache, launch, lock, per_sub_group, same_context, Element, ReduceOp, State};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::launch::{Event, KernelArg};
use crate::queue::Queue;
use crate::{ffi, wait};
use std::sync::{Arc, Mutex};

impl<T: Element> State<T> {
    /// Enqueues the reduction of `input` into `out[0]` (one or two launches, one event); with
    /// `post`, the launch that writes `out[0]` then writes the number to the buffer
    /// ([`Mailbox`]).
    pub(super) fn enqueue_reduce(
        &self,
        input: &Buffer<T>,
        out: &Buffer<T>,
        post: Option<(&Buffer<u32>, u32)>,
    ) -> Result<Event> {
        let n = input.len() as u64;
        let (k, parts, counters) = (&self.k, &self.partials, &self.counters);
        // Without a mailbox: number 0 to the counter, which every launch leaves 0 anyway.
        let (done, seq) = post.unwrap_or((counters, 0));
        match plan::reduce_path(&self.inputs) {
            ReducePath::Sequential => {
                let (chunk, p) = plan::sequential(input.len(), &self.inputs);
                let args = vec![
                    input.to_arg(),
                    out.to_arg(),
                    n.to_arg(),
                    (chunk as u64).to_arg(),
                    parts.to_arg(),
                    counters.to_arg(),
                    done.to_arg(),
                    seq.to_arg(),
                ];
                let needs = [
                    (out.len(), 1),
                    (parts.len(), p.groups),
                    (counters.len(), 1),
                    (done.len(), 1),
                ];
                // SAFETY: `clg_reduce_seq` reads `in` below `n` = its length, writes `out[0]`,
                // `partials[g]` for the plan's groups, `counter[0]` and `done[0]` (lengths in
                // `needs`).
                unsafe { launch(&k.reduce_seq, args, p, &needs) }
            }
            ReducePath::Groups { one_launch } => {
                let p = plan::reduce(input.len(), &self.inputs);
                let args = |input: &Buffer<T>, n: u64, finish: bool| {
                    vec![
                        input.to_arg(),
                        out.to_arg(),
                        n.to_arg(),
                        parts.to_arg(),
                        counters.to_arg(),
                        i32::from(finish).to_arg(),
                        done.to_arg(),
                        seq.to_arg(),
                        per_sub_group::<T>(p.local).to_arg(),
                    ]
                };
                let needs = |groups: usize| {
                    [
                        (out.len(), 1),
                        (parts.len(), groups),
                        (counters.len(), 1),
                        (done.len(), 1),
                    ]
                };
                // SAFETY: `clg_reduce` reads `in` below `n` = its length (vector reads below
                // n / 4 * 4), writes `out[0]`, `done[0]`, `partials[group]` for the plan's
                // groups (the finishing group reads them back), `counter[0]`, and `tmp` below the sub-group
                // count, at most one slot per work-item (the `Local` size).
                let first =
                    unsafe { launch(&k.reduce, args(input, n, one_launch), p, &needs(p.groups))? };
                if p.groups == 1 || one_launch {
                    return Ok(first);
                }
                let one = LaunchPlan { groups: 1, ..p };
                // SAFETY: as above, one group over the first `p.groups` partials (its input).
                let second = unsafe {
                    launch(
                        &k.reduce,
                        args(parts, p.groups as u64, false),
                        one,
                        &needs(1),
                    )?
                };
                Ok(first.then(second))
            }
        }
    }
}

impl<T: Element> State<T> {
    /// The reduction of `input`, blocking: through the [`Mailbox`] where the mode and the
    /// probe allow it, else a launch into `result` and [`State::read_result`].
    pub(super) fn reduce_now(&mut self, input: &Buffer<T>) -> Result<T> {
        let nvidia = self.inputs.nvidia;
        let opened = self
            .mailbox
            .get_or_insert_with(|| Mailbox::open(&self.queue, nvidia, mailbox::mode()));
        let Some(mut mb) = opened.take() else {
            self.enqueue_reduce(input, &self.result, None)?;
            return self.read_result();
        };
        let (out, post) = mb.next();
        let got = self
            .enqueue_reduce(input, out, Some(post))
            .and_then(|launch| mb.collect(&self.queue, launch));
        let keep = match got {
            // A failed launch or a timeout: the mailbox stays (the next number tells its
            // result from this call's).
            Err(e) => {
                self.mailbox = Some(Some(mb));
                return Err(e);
            }
            Ok(posted) if mb.probing() => {
                let mut v = [T::default()];
                mb.result().read_into(&self.queue, 0, &mut v)?;
                let same =
                    posted.is_some_and(|p| bytemuck::bytes_of(&p) == bytemuck::bytes_of(&v[0]));
                log::debug!(
                    "algorithms: reduce mailbox probe on {}: posted {}",
                    self.queue.device(),
                    match (posted.is_some(), same) {
                        (true, true) => "the result: polled from now on",
                        (true, false) => "another value: results are read",
                        (false, _) => "nothing by the launch's end: results are read",
                    }
                );
                mb.admit();
                (v[0], same)
            }
            Ok(Some(v)) => (v, true),
            Ok(None) => {
                let mut v = [T::default()];
                mb.result().read_into(&self.queue, 0, &mut v)?;
                (v[0], true)
            }
        };
        self.mailbox = Some(keep.1.then_some(mb));
        Ok(keep.0)
    }

    /// Reads `result[0]`: a direct transfer into pinned memory and one bounded wait where
    /// the device has pinned memory, else [`Buffer::read_into`].
    fn read_result(&mut self) -> Result<T> {
        let mut v = [T::default()];
        let (queue, result) = (&self.queue, &self.result);
        let pinned = self.pinned.get_or_insert_with(|| {
            ffi::Pinned::new(queue.context().raw(), queue.raw(), 1).map_err(|e| {
                log::debug!("algorithms: no pinned memory on {} ({e}): results are read through a buffer read", queue.device());
            })
        });
        let Ok(slot) = pinned else {
            result.read_into(queue, 0, &mut v)?;
            return Ok(v[0]);
        };
        let what = || format!("read of a reduce result on {}", queue.device());
        // The first call waits for the memory's map (after the commands before it).
        let done = slot
            .pending()
            .map_or(Ok(()), |ev| wait::event(ev, what))
            .and_then(|()| {
                slot.read(queue.raw(), result.as_raw(), 0)
                    .map_err(|e| Error::cl("clEnqueueReadBuffer", e.0, what()))
            })
            .and_then(|ev| wait::event(ev, what))
            .and_then(|()| {
                slot.take(&mut v)
                    .map_err(|e| Error::cl("clGetEventInfo", e.0, what()))
            });
        match done {
            Ok(true) => Ok(v[0]),
            failed => {
                // The read may still be pending: the slot is dropped, its memory leaked.
                self.pinned = None;
                failed.and(Err(Error::Timeout {
                    command: what(),
                    waited: wait::limit()?,
                }))
            }
        }
    }
}

/// Enqueues the reduction of `input` by `op` into `out[0]` and returns without waiting: the
/// result stays on the device, where later launches on the same queue see it (or wait on the
/// event). `input` and `out` may be dropped meanwhile (OpenCL keeps them until the launch ends).
pub fn enqueue_reduce<T: Element>(
    queue: &Queue,
    input: &Buffer<T>,
    op: ReduceOp,
    out: &Buffer<T>,
) -> Result<Event> {
    same_context(queue, input, "reduce")?;
    same_context(queue, out, "reduce output")?;
    let state = cache::state::<T>(queue, op)?;
    let s = lock(&state);
    s.enqueue_reduce(input, out, None)
}

/// The reduction of `input` by `op`: one launch (two on GPUs other than NVIDIA's) and one read.
pub fn reduce<T: Element>(queue: &Queue, input: &Buffer<T>, op: ReduceOp) -> Result<T> {
    same_context(queue, input, "reduce")?;
    let state = cache::state::<T>(queue, op)?;
    // Held until the read: calls on this queue from other threads would overwrite `result`.
    let mut s = lock(&state);
    s.reduce_now(input)
}

/// The sum of `input`'s elements (see the module's accuracy note for floats).
pub fn reduce_sum<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    reduce(queue, input, ReduceOp::Sum)
}

/// The smallest element of `input`.
pub fn reduce_min<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    reduce(queue, input, ReduceOp::Min)
}

/// The largest element of `input`.
pub fn reduce_max<T: Element>(queue: &Queue, input: &Buffer<T>) -> Result<T> {
    reduce(queue, input, ReduceOp::Max)
}

/// A reduction with its own result buffer on one queue (sharing the queue's cached kernels
/// and partials): [`Reduction::enqueue`] only launches, [`Reduction::result`] reads.
///
/// ```no_run
/// use clgroups::{algorithms::{ReduceOp, Reduction}, Buffer, Queue};
/// let q = Queue::new(&clgroups::default_device()?)?;
/// let x = Buffer::from_slice(&q, &[1.5f32, 2.5, 3.0])?;
/// let mut sum = Reduction::<f32>::new(&q, ReduceOp::Sum)?;
/// assert_eq!(sum.run(&x)?, 7.0);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub struct Reduction<T: Element> {
    queue: Queue,
    state: Arc<Mutex<State<T>>>,
    result: Buffer<T>,
    /// Whether a reduction was enqueued (before that, `result` holds no value).
    enqueued: bool,
}

impl<T: Element> Reduction<T> {
    /// Builds (or finds in the queue's cache) the kernels of `op` on `T`.
    pub fn new(queue: &Queue, op: ReduceOp) -> Result<Self> {
        Ok(Reduction {
            queue: queue.clone(),
            state: cache::state::<T>(queue, op)?,
            result: Buffer::new(queue.context(), 1)?,
            enqueued: false,
        })
    }

    /// The plan of the first launch for an input of `n` elements.
    pub fn plan(&self, n: usize) -> LaunchPlan {
        let inputs = lock(&self.state).inputs;
        match plan::reduce_path(&inputs) {
            ReducePath::Sequential => plan::sequential(n, &inputs).1,
            ReducePath::Groups { .. } => plan::reduce(n, &inputs),
        }
    }

    /// Enqueues the reduction of `input` into the result buffer; the event covers every
    /// launch (one, or two on GPUs other than NVIDIA's).
    pub fn enqueue(&mut self, input: &Buffer<T>) -> Result<Event> {
        same_context(&self.queue, input, "reduce")?;
        let ev = lock(&self.state).enqueue_reduce(input, &self.result, None)?;
        self.enqueued = true;
        Ok(ev)
    }

    /// Reduces `input` and returns the result.
    pub fn run(&mut self, input: &Buffer<T>) -> Result<T> {
        self.enqueue(input)?;
        self.result()
    }

    /// Reads the result of the last [`Reduction::enqueue`] (blocking); an
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) before the first.
    pub fn result(&self) -> Result<T> {
        if !self.enqueued {
            return Err(crate::Error::input(
                "Reduction::result before any enqueue or run: there is no result yet",
            ));
        }
        let mut v = [T::default()];
        self.result.read_into(&self.queue, 0, &mut v)?;
        Ok(v[0])
    }
}
