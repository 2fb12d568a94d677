//! Launches over a root device keep the order of one in-order queue: each device's part
//! waits for everything enqueued before it on every other device's queue (an earlier
//! launch's writes to shared memory, a host write through another queue).

use super::RootLaunch;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ffi;

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
