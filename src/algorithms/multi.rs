//! The per-device parts of [`crate::scaling::algorithms`], every device in flight at once from
//! one host thread: each part is enqueued on its queue, all queues are flushed, and only then
//! are the results awaited (posts on NVIDIA, reads elsewhere), so the devices run together and
//! the host waits about as long as the slowest one, not the sum.
//!
//! Devices that compile alone ([`crate::Device::compiles_alone`]: PoCL before 4 on CPUs, which
//! compiles a kernel's work-group function at its first run and could crash doing so for two
//! devices at once) need nothing here: every first run on them runs alone in the process, in
//! the launch path every kernel goes through (`kernel::first_run`).

use super::plan::LaunchPlan;
use super::post::Post;
use super::{cache, launch, lock, same_context, Element, ReduceOp, ScanKind, State, Track};
use crate::buffer::{Buffer, PendingRead};
use crate::error::{Error, InputFault, Result};
use crate::launch::{Event, KernelArg};
use crate::program::Program;
use crate::queue::Queue;
use std::sync::{Arc, Mutex, MutexGuard};

/// The states of `op` for `queues`, locked in one order (by queue) whatever the order given,
/// so that callers over the same queues cannot deadlock; guards in the order of `queues`.
fn locked<'a, T: Element>(
    states: &'a [Arc<Mutex<State<T>>>],
    queues: &[&Queue],
) -> Vec<MutexGuard<'a, State<T>>> {
    let mut order: Vec<usize> = (0..states.len()).collect();
    order.sort_by_key(|&i| queues[i].key());
    let mut guards: Vec<(usize, MutexGuard<'a, State<T>>)> =
        order.into_iter().map(|i| (i, lock(&states[i]))).collect();
    guards.sort_by_key(|g| g.0);
    guards.into_iter().map(|g| g.1).collect()
}

/// The reduction by `op` of each `(queue, input)`, all devices at once.
pub(crate) fn reduce_each<T: Element>(
    jobs: &[(&Queue, &Buffer<T>)],
    op: ReduceOp,
) -> Result<Vec<T>> {
    let queues: Vec<&Queue> = jobs.iter().map(|j| j.0).collect();
    let states = (jobs.iter())
        .map(|&(q, input)| {
            same_context(q, input, "reduce")?;
            cache::state::<T>(q, op)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut guards = locked(&states, &queues);
    // Per device: its post, or the read of its result, enqueued at once (read one after the
    // other, two remote devices paid their round trips in turn: 0.91x of one over two PoCL-R
    // servers, one H200 each).
    let mut ends: Vec<std::result::Result<Post, PendingRead<T>>> = Vec::new();
    for (s, &(q, input)) in guards.iter_mut().zip(jobs) {
        let post = match s.posts()? && s.posts_reduce() {
            true => s.next_post(),
            false => None,
        };
        s.enqueue_reduce(input, &s.result, post)?;
        ends.push(match post {
            Some(post) => Ok(post),
            None => Err(s.result.read_pending(q, 0, 1)?),
        });
        q.flush()?;
    }
    (guards.iter_mut().zip(ends))
        .map(|(s, end)| match end {
            Ok(post) => s.finish_reduce(post),
            Err(read) => Ok(read.wait()?[0]),
        })
        .collect()
}

/// Scans each `(queue, input, output)` (`kind`), all devices at once, and returns each
/// part's total (its inclusive scan's last element; the last output plus the last input for
/// an exclusive scan, as the next element of one scan over both would be).
pub(crate) fn scan_each<T: Element>(
    jobs: &[(&Queue, &Buffer<T>, &Buffer<T>)],
    kind: ScanKind,
) -> Result<Vec<T>> {
    let queues: Vec<&Queue> = jobs.iter().map(|j| j.0).collect();
    let states = (jobs.iter())
        .map(|&(q, x, y)| super::scan::checked_state(q, x, y))
        .collect::<Result<Vec<_>>>()?;
    let mut guards = locked(&states, &queues);
    // Per device: the reads of its total.
    let mut started: Vec<Vec<PendingRead<T>>> = Vec::with_capacity(jobs.len());
    for (s, &(q, x, y)) in guards.iter_mut().zip(jobs) {
        s.enqueue_scan(x, y, kind, Track::Events)?;
        let last = x
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::input(InputFault::ScanEmpty))?;
        let mut reads = vec![y.read_pending(q, last, 1)?];
        if kind == ScanKind::Exclusive {
            reads.push(x.read_pending(q, last, 1)?);
        }
        q.flush()?;
        started.push(reads);
    }
    started.into_iter().map(total).collect()
}

/// The sum of the single elements `reads` bring.
fn total<T: Element>(reads: Vec<PendingRead<T>>) -> Result<T> {
    reads.into_iter().try_fold(T::default(), |sum, r| {
        Ok(sum.combine(ReduceOp::Sum, r.wait()?[0]))
    })
}

/// `y[i] += carry` for every element of each `(queue, y, carry)`, all devices at once; blocks.
pub(crate) fn add_each<T: Element>(jobs: &mut [(&Queue, &mut Buffer<T>, T)]) -> Result<()> {
    let queues: Vec<&Queue> = jobs.iter().map(|j| j.0).collect();
    let states = (jobs.iter())
        .map(|j| cache::state::<T>(j.0, ReduceOp::Sum))
        .collect::<Result<Vec<_>>>()?;
    let mut guards = locked(&states, &queues);
    let mut events: Vec<Event> = Vec::with_capacity(jobs.len());
    for (s, (q, y, carry)) in guards.iter_mut().zip(jobs.iter_mut()) {
        let ev = s.enqueue_carry(y, *carry)?;
        q.flush()?;
        events.push(ev);
    }
    events.iter().try_for_each(Event::wait)
}

/// The carry kernel: `y[i] += c` below `n`, launched in work-groups of a fixed size (one
/// work-group function for every length, so that it compiles once).
const CARRY: &str = "kernel void clg_add_carry(global CLG_T *y, const CLG_T c, const ulong n) {
    size_t i = get_global_id(0);
    if (i < n) y[i] += c;
}";

/// The carry kernel's work-group size (at most the kernel's limit).
const CARRY_LOCAL: usize = 64;

impl<T: Element> State<T> {
    /// Awaits a reduce enqueued with `post` (reads its result where the post never came).
    fn finish_reduce(&mut self, post: Post) -> Result<T> {
        match self.await_post(post)? {
            Some(v) => Ok(v),
            None => self.read_result(),
        }
    }

    /// Enqueues `y[i] += carry` (the kernel built on first use).
    fn enqueue_carry(&mut self, y: &mut Buffer<T>, carry: T) -> Result<Event> {
        if self.carry.is_none() {
            let fp64 = match T::NEEDS_FP64 {
                true => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
                false => "",
            };
            let src = format!("{fp64}#define CLG_T {}\n{CARRY}", T::CL_NAME);
            self.carry = Some(Program::from_source(&self.queue, &src)?.kernel("clg_add_carry")?);
        }
        let k = self.carry.as_ref().expect("built above");
        let local = CARRY_LOCAL.min(k.limits().max_work_group_size).max(1);
        let p = LaunchPlan {
            local,
            groups: y.len().div_ceil(local),
        };
        let args = vec![(&*y).to_arg(), carry.to_arg(), (y.len() as u64).to_arg()];
        // SAFETY: work-item i < n = y.len() updates y[i]; the others return at once.
        unsafe { launch(k, args, p, &[(y.len(), y.len())], Track::Events) }
    }
}
