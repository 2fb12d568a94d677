//! Reduce: the blocking calls, the enqueue form, and the reusable [`Reduction`].

use super::plan::{self, LaunchPlan, ReducePath};
use super::post::Post;
use super::{cache, launch, lock, per_sub_group, same_context, Element, ReduceOp, State, Track};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::launch::{Event, KernelArg};
use crate::queue::Queue;
use crate::{ffi, wait};
use std::sync::{Arc, Mutex};

impl<T: Element> State<T> {
    /// Enqueues the reduction of `input` into `out[0]` (one or two launches, one event).
    /// With `post`, the launch writing `out[0]` also posts it (the one-launch path only:
    /// [`State::posts_reduce`]) and makes no event.
    pub(super) fn enqueue_reduce(
        &self,
        input: &Buffer<T>,
        out: &Buffer<T>,
        post: Option<Post>,
    ) -> Result<Event> {
        let n = input.len() as u64;
        let how = post.map_or(Track::Events, |_| Track::Posted);
        let post = post.unwrap_or(Post { address: 0, seq: 0 });
        let (k, parts, counters) = (&self.k, &self.partials, &self.counters);
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
                ];
                let needs = [(out.len(), 1), (parts.len(), p.groups), (counters.len(), 1)];
                // SAFETY: `clg_reduce_seq` reads `in` below `n` = its length, writes `out[0]`,
                // `partials[g]` for the plan's groups and `counter[0]` (lengths in `needs`).
                unsafe { launch(&k.reduce_seq, args, p, &needs, how) }
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
                        per_sub_group::<T>(p.local).to_arg(),
                        post.address.to_arg(),
                        post.seq.to_arg(),
                    ]
                };
                let needs =
                    |groups: usize| [(out.len(), 1), (parts.len(), groups), (counters.len(), 1)];
                // SAFETY: `clg_reduce` reads `in` below `n` = its length (vector reads below
                // n / 4 * 4), writes `out[0]`, `partials[group]` for the plan's groups (the
                // finishing group reads them back), `counter[0]`, and `tmp` below the sub-group
                // count, at most one slot per work-item (the `Local` size).
                let first = unsafe {
                    launch(
                        &k.reduce,
                        args(input, n, one_launch),
                        p,
                        &needs(p.groups),
                        how,
                    )?
                };
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
                        how,
                    )?
                };
                Ok(first.then(second))
            }
        }
    }
}

impl<T: Element> State<T> {
    /// Enqueues the reduction of `input` into `out` (`None`: the state's `result`) and, where
    /// the device takes posts, waits for the posted value. `None`: no post (not taken, or it
    /// never came though the launch completed): the caller reads `out`.
    fn reduce_posted(&mut self, input: &Buffer<T>, out: Option<&Buffer<T>>) -> Result<Option<T>> {
        let post = match self.posts()? && self.posts_reduce() {
            true => self.next_post(),
            false => None,
        };
        self.enqueue_reduce(input, out.unwrap_or(&self.result), post)?;
        post.map_or(Ok(None), |p| self.await_post(p))
    }

    /// Whether the reduce's kernel posts its result itself (one launch on NVIDIA).
    pub(super) fn posts_reduce(&self) -> bool {
        plan::reduce_path(&self.inputs) == (ReducePath::Groups { one_launch: true })
    }

    /// Reads `result[0]`: a direct transfer into pinned memory and one bounded wait where
    /// the device has pinned memory, else [`Buffer::read_into`].
    pub(super) fn read_result(&mut self) -> Result<T> {
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

/// The reduction of `input` by `op`: one launch (two on GPUs other than NVIDIA's) and one read
/// (on NVIDIA a post instead: see the module docs).
pub fn reduce<T: Element>(queue: &Queue, input: &Buffer<T>, op: ReduceOp) -> Result<T> {
    same_context(queue, input, "reduce")?;
    let state = cache::state::<T>(queue, op)?;
    // Held until the read: calls on this queue from other threads would overwrite `result`.
    let mut s = lock(&state);
    match s.reduce_posted(input, None)? {
        Some(v) => Ok(v),
        None => s.read_result(),
    }
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

    /// Reduces `input` and returns the result (on NVIDIA from a post, as [`reduce`]).
    pub fn run(&mut self, input: &Buffer<T>) -> Result<T> {
        same_context(&self.queue, input, "reduce")?;
        let posted = lock(&self.state).reduce_posted(input, Some(&self.result))?;
        self.enqueued = true;
        posted.map_or_else(|| self.result(), Ok)
    }

    /// Reads the result of the last [`Reduction::enqueue`] (blocking); an
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) before the first.
    pub fn result(&self) -> Result<T> {
        if !self.enqueued {
            return Err(crate::Error::input(crate::error::InputFault::NoResultYet));
        }
        let mut v = [T::default()];
        self.result.read_into(&self.queue, 0, &mut v)?;
        Ok(v[0])
    }
}
