//! Launches over a root device keep the order of one in-order queue: each device's part
//! waits for everything enqueued before it on every other device's queue (an earlier
//! launch's writes to shared memory, a host write through another queue), except where its
//! own queue's order is enough ([`needs_markers`]); after a split launch, the halos of
//! [`Access::Stencil`] buffers move between devices.

use super::super::arg::Value;
use super::super::kernel::{HaloRun, Purpose};
use super::super::residence::Residence;
use super::super::resident;
use super::super::{Access, MultiEvent, Placement};
use super::terms::{clip, part_sized};
use super::RootLaunch;
use crate::error::Result;
use crate::event::Event;
use crate::launch::Arg;
use crate::queue::Queue;
use opencl3::event::CL_COMPLETE;
use opencl3::types::cl_event;

/// Markers on queues of a root device (by queue index), each complete when everything
/// enqueued on its queue before it is (none for a single device: its queue is in order),
/// with the queue's [`Queue::commands`] before it.
pub(super) struct Order(Vec<(usize, Event, Option<u64>)>);

impl Order {
    /// No markers: parts wait only for their own queue and the launch's events.
    pub(super) fn none() -> Order {
        Order(Vec::new())
    }

    /// The parts of a launch on the queues `busy` marks (queue `d`: `queue(d)`) were enqueued
    /// after these markers: from now on those queues follow what each marker followed
    /// ([`Queue::follows`]).
    pub(super) fn followed<'q>(&self, queue: impl Fn(usize) -> &'q Queue, busy: &[bool]) {
        for &(q, _, n) in &self.0 {
            let Some(n) = n else { continue };
            let after = (busy.iter().enumerate()).filter(|&(d, &b)| b && d != q);
            after.for_each(|(d, _)| queue(d).now_follows(queue(q), n));
        }
    }

    /// What device `d`'s part waits for: `waits`, then every other queue's marker that has
    /// not completed yet (a complete one orders nothing, and waiting for it would still cost
    /// a cross-device dependency on some drivers).
    pub(super) fn waits<'e>(&'e self, waits: &[&'e Event], d: usize) -> Vec<&'e Event> {
        let pending = |m: &Event| {
            (m.raw.iter()).any(|r| {
                r.command_execution_status()
                    .map_or(true, |s| s.0 != CL_COMPLETE)
            })
        };
        let others = (self.0.iter()).filter(|(i, m, _)| *i != d && pending(m));
        waits
            .iter()
            .copied()
            .chain(others.map(|(_, m, _)| m))
            .collect()
    }
}

/// What a launch's argument is, for its order across queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Held {
    /// A value, or local memory.
    Scalar,
    /// A plain buffer: one memory object that every device's part may touch.
    Plain,
    /// A colored buffer; `own_queues`: every command on its parts so far ran on the part's
    /// own queue or is ordered before its next use by events (`ColoredArg::own_queues`).
    Colored { own_queues: bool },
}

/// Whether each device's part of a launch must wait for a marker on every other queue.
///
/// Not where the placement is partitioned and every buffer argument is a colored buffer
/// whose parts only their own queues touched: a split or footprint-fetched launch then reads
/// and writes, on each device, only that device's parts and copies, and every move between
/// devices waits for its source by an event, so each queue's own order keeps the one-queue
/// order. On two H200s the markers cost a cross-device dependency per launch (heat 4096^2
/// at halo depth 16: 84 against 64 us a step).
///
/// ```text
/// needs_markers(Partitioned, [Colored { own_queues: true }, Scalar]) == false
/// needs_markers(Partitioned, [Colored { own_queues: true }, Plain]) == true
/// ```
pub(super) fn needs_markers(placement: Placement, held: impl IntoIterator<Item = Held>) -> bool {
    let own = |h: Held| matches!(h, Held::Scalar | Held::Colored { own_queues: true });
    placement != Placement::Partitioned || !held.into_iter().all(own)
}

/// The residences of the colored buffers among `args`.
fn residences(args: &[Value]) -> impl Iterator<Item = &Residence> {
    args.iter().filter_map(|v| match v {
        Value::Colored(c) => c.residence.as_deref(),
        Value::Plain(_) => None,
    })
}

/// A launch with `args` touched its colored buffers' parts from other devices' queues (a
/// merge's copies, a launch on one device, a fallback): later launches must wait for every
/// queue.
pub(super) fn cross_all(args: &[Value]) {
    residences(args).for_each(Residence::cross);
}

impl RootLaunch<'_> {
    /// Whether this launch's parts must wait for the other queues ([`needs_markers`]).
    pub(super) fn needs_markers(&self) -> bool {
        let held = self.args.iter().map(|v| match v {
            Value::Colored(c) => Held::Colored {
                own_queues: c.own_queues(),
            },
            Value::Plain(Arg::Buffer { .. }) => Held::Plain,
            Value::Plain(_) => Held::Scalar,
        });
        needs_markers(self.kernel.placement, held)
    }

    /// Markers on every queue ordered this launch's parts after everything enqueued before:
    /// its colored buffers' parts are touched by their own queues only, from here on.
    pub(super) fn ordered_all(&self) {
        residences(&self.args).for_each(Residence::ordered);
    }

    /// Whether a device of the root device compiles alone (`Device::compiles_alone`).
    pub(super) fn compile_alone(&self) -> bool {
        (self.kernel.kernels.iter()).any(|k| k.program().queue().device().compiles_alone())
    }

    /// Markers on every queue, enqueued now.
    pub(super) fn order(&self) -> Result<Order> {
        self.order_for(&vec![true; self.kernel.kernels.len()])
    }

    /// Markers, enqueued now, on the queues that a device with parts (`busy`) other than the
    /// queue's own waits for (a launch on one device puts none on its own queue: the queue
    /// keeps the order, and a marker there would only delay its part), except on a queue
    /// that every such device follows already ([`Queue::follows`]: nothing was enqueued on
    /// it since their last wait for it; a chain of launches on one device with a plain buffer
    /// put a marker on the other GPU's queue at every launch: 14 against 24 us on two H200s).
    pub(super) fn order_for(&self, busy: &[bool]) -> Result<Order> {
        let n = self.kernel.kernels.len();
        if n < 2 {
            return Ok(Order(Vec::new()));
        }
        let queue = |q: usize| self.queue(q);
        let waited = |q: usize| {
            (busy.iter().enumerate()).any(|(d, &b)| b && d != q && !queue(d).follows(queue(q)))
        };
        let markers = (0..n).filter(|&q| waited(q)).map(|q| {
            let commands = queue(q).commands();
            Ok((q, resident::marker(queue(q))?, commands))
        });
        Ok(Order(markers.collect::<Result<Vec<_>>>()?))
    }
}

impl RootLaunch<'_> {
    /// After a split launch: each device's halo of every [`Access::Stencil`] argument the
    /// kernel may write, copied from the devices that own those elements after their part of
    /// the launch (the copies join the devices' events). Each run goes through a staging
    /// buffer of its own size: copied into it on the owner's queue, then from it on the
    /// receiver's. A copy straight between two devices' parts would make the driver move the
    /// whole source part to the receiver first (PoCL-R migrates a whole buffer between
    /// servers; so do drivers whose devices have separate memories): a 1-row halo of a heat
    /// grid then moved the neighbour's whole chunk at every step.
    pub(super) fn exchange(&self, launched: &mut MultiEvent) -> Result<()> {
        let kernels = &self.kernel.kernels;
        for (i, v) in self.args.iter().enumerate() {
            let Value::Colored(c) = v else { continue };
            let written = self.kernel.params.get(i).is_none_or(|p| !p.read_only);
            let partitioned = self.kernel.placement == Placement::Partitioned;
            if !(matches!(c.access, Access::Stencil(_)) && written && partitioned) {
                continue;
            }
            let es = c.elem_size;
            for (d, &(lo, hi)) in c.stored.iter().enumerate() {
                let Some((dst, dst_size)) = part_sized(c, d) else {
                    continue;
                };
                for (e, runs) in c.owned.iter().enumerate().filter(|(e, _)| *e != d) {
                    let Some((src, src_size)) = part_sized(c, e) else {
                        continue;
                    };
                    let waits: Vec<cl_event> = (launched.events[e].iter())
                        .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                        .collect();
                    for &owned in runs {
                        let Some((a, b)) = clip(owned, (lo, hi)) else {
                            continue;
                        };
                        let src = (src, (a - c.stored[e].0) * es, src_size);
                        let dst = (dst, (a - lo) * es, dst_size);
                        // SAFETY: device e's part holds its own run [a, b) from stored[e].0 on;
                        // device d's part holds [lo, hi), which contains [a, b).
                        let moved = unsafe {
                            let run = HaloRun::new(Purpose::Exchange, i, (d, e), (a, b));
                            self.move_run(run, (e, src), (d, dst), (b - a) * es, &waits)
                        }?;
                        for (dev, raw) in [e, d].into_iter().zip(moved) {
                            let device = kernels[dev].program().queue().device().clone();
                            Event::push(&mut launched.events[dev], Event::new(raw, device, None));
                        }
                    }
                }
            }
            log::debug!("halos of argument {i} exchanged between devices (staged)");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{needs_markers, Held};
    use crate::scaling::Placement;

    #[test]
    fn own_queues_suffice_only_for_colored_buffers_touched_by_their_own_queues() {
        let own = Held::Colored { own_queues: true };
        let crossed = Held::Colored { own_queues: false };
        let part = Placement::Partitioned;
        assert!(!needs_markers(part, [own, Held::Scalar, own]));
        assert!(!needs_markers(part, []));
        assert!(needs_markers(part, [own, Held::Plain]));
        assert!(needs_markers(part, [own, crossed]));
        assert!(needs_markers(Placement::Shared, [own, Held::Scalar]));
    }
}
