//! Launches over a root device keep the order of one in-order queue: each device's part
//! waits for everything enqueued before it on every other device's queue (an earlier
//! launch's writes to shared memory, a host write through another queue); after a split
//! launch, the halos of [`Access::Stencil`] buffers move between devices.

use super::super::arg::Value;
use super::super::{Access, MultiEvent, Placement};
use super::fallback::part_mem;
use super::RootLaunch;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;
use opencl3::types::cl_event;

/// One marker per queue of a root device, each complete when everything enqueued on its
/// queue before it is (none for a single device: its queue is in order).
pub(super) struct Order(Vec<Event>);

impl Order {
    /// What device `d`'s part waits for: `waits`, then every other queue's marker.
    pub(super) fn waits<'e>(&'e self, waits: &[&'e Event], d: usize) -> Vec<&'e Event> {
        let others = self.0.iter().enumerate().filter(|(i, _)| *i != d);
        waits
            .iter()
            .copied()
            .chain(others.map(|(_, m)| m))
            .collect()
    }
}

impl RootLaunch<'_> {
    /// Markers on every queue, enqueued now.
    pub(super) fn order(&self) -> Result<Order> {
        let kernels = &self.kernel.kernels;
        if kernels.len() < 2 {
            return Ok(Order(Vec::new()));
        }
        let markers = kernels.iter().map(|k| {
            let q = k.program().queue();
            let m = ffi::marker(q.raw()).map_err(|e| {
                Error::cl("clEnqueueMarkerWithWaitList", e.0, q.device().to_string())
            })?;
            Ok(Event::new(m, q.device().clone(), None))
        });
        Ok(Order(markers.collect::<Result<Vec<_>>>()?))
    }
}

impl RootLaunch<'_> {
    /// After a split launch: each device's halo of every [`Access::Stencil`] argument the
    /// kernel may write, copied from the devices that own those elements, on its queue after
    /// their part of the launch (the copies join the devices' events).
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
                let Some(dst) = part_mem(c, d) else { continue };
                let q = kernels[d].program().queue();
                for (e, runs) in c.owned.iter().enumerate().filter(|(e, _)| *e != d) {
                    let Some(src) = part_mem(c, e) else { continue };
                    let waits: Vec<cl_event> = (launched.events[e].iter())
                        .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
                        .collect();
                    for &(a, b) in runs {
                        let (a, b) = (a.max(lo), b.min(hi));
                        if a >= b {
                            continue;
                        }
                        let from = (src, (a - c.stored[e].0) * es);
                        // SAFETY: device e's part holds its own run [a, b) from stored[e].0 on;
                        // device d's part holds [lo, hi), which contains [a, b).
                        let copy = unsafe {
                            ffi::copy_bytes(
                                q.raw(),
                                from,
                                (dst, (a - lo) * es),
                                (b - a) * es,
                                &waits,
                            )
                        }
                        .map_err(|e| {
                            Error::cl("clEnqueueCopyBuffer", e.0, q.device().to_string())
                        })?;
                        let ev = Event::new(copy, q.device().clone(), None);
                        launched.events[d] = Some(match launched.events[d].take() {
                            Some(first) => first.then(ev),
                            None => ev,
                        });
                    }
                }
            }
            log::debug!("halos of argument {i} exchanged between devices");
        }
        Ok(())
    }
}
