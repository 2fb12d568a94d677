//! Bytes moved between two devices (halo exchanges, fetches of other devices' elements, what a
//! part wrote given back to its owner), each run through a staging area of its own size kept
//! across launches ([`Stage`]).

use super::super::kernel::HaloRun;
use super::terms::{bounded_copy, check_sides, Side};
use super::RootLaunch;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ffi::{self, Owned};
use crate::queue::Queue;
use opencl3::event::Event;
use opencl3::types::cl_event;

/// A run's staging area: pinned host memory (a read on the sender's queue, then a write on the
/// receiver's), or on PoCL-R a device buffer (a copy into it on the sender's queue, then one
/// out of it on the receiver's, which the servers move between themselves).
///
/// Through host memory the host goes on at once everywhere. A copy through a device buffer
/// blocks NVIDIA's driver until it is done: on two H200s a heat step of 4096² that exchanged
/// one row each way took 315 us that way against 74 us through pinned memory (35 us without
/// an exchange, 66 us on one GPU; `docs/scaling.md`). On two PoCL CPU devices the two ways
/// take the same time.
pub(in crate::scaling) enum Stage {
    Host(ffi::Relay),
    /// The buffer, and the last copy out of it (the next copy into it waits for that one:
    /// launches over colored buffers order only their own queues).
    Device(Buffer<u8>, Option<Owned<Event>>),
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Host(relay) => write!(f, "{relay:?}"),
            Stage::Device(b, _) => write!(f, "a device buffer of {} bytes (PoCL-R)", b.len()),
        }
    }
}

/// Where moves between two devices are staged ([`Stage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Pinned host memory: a read on the sender's queue, a write on the receiver's.
    Host,
    /// A device buffer of the sender's: PoCL-R's servers move it between themselves.
    Device,
}

/// The route of moves from a device to another, from whether each is reached through PoCL-R
/// (pure).
fn route(sender_remote: bool, receiver_remote: bool) -> Route {
    match sender_remote || receiver_remote {
        true => Route::Device,
        false => Route::Host,
    }
}

impl Stage {
    /// A staging area of `bytes` for moves from the device of `sender` to that of `receiver`,
    /// on their [`route`].
    fn new(sender: &Queue, receiver: &Queue, bytes: usize) -> Result<Stage> {
        let [from, to] = [sender, receiver].map(|q| q.device().identity().remote);
        if route(from, to) == Route::Device {
            return Ok(Stage::Device(Buffer::new(sender, bytes)?, None));
        }
        let relay = ffi::Relay::new(sender.context().raw(), sender.raw(), bytes)
            .map_err(|e| Error::cl("clEnqueueMapBuffer", e.0, sender.device().to_string()))?;
        Ok(Stage::Host(relay))
    }

    fn len(&self) -> usize {
        match self {
            Stage::Host(r) => r.len(),
            Stage::Device(b, _) => b.len(),
        }
    }
}

impl RootLaunch<'_> {
    /// Moves `bytes` from `src` (device `e`'s, on its queue, after `waits`) to `dst` (device
    /// `d`'s, on its queue, after the sender's command) through the staging area of `run`
    /// (made on its first move); returns the sender's and the receiver's events. Both ranges
    /// are checked to lie in their memory objects first.
    ///
    /// # Safety
    ///
    /// `src` and `dst` are live memory objects of the root device's context, of the sizes
    /// given; `waits` are events of that context.
    pub(super) unsafe fn move_run(
        &self,
        run: HaloRun,
        (e, src): (usize, Side),
        (d, dst): (usize, Side),
        bytes: usize,
        waits: &[cl_event],
    ) -> Result<[Owned<Event>; 2]> {
        check_sides(src, dst, bytes)?;
        let kernels = &self.kernel.kernels;
        let (qe, qd) = (kernels[e].program().queue(), kernels[d].program().queue());
        let mut stages = (self.kernel.halo_staging.lock()).unwrap_or_else(|p| p.into_inner());
        let stage = match stages.remove(&run).filter(|s| s.len() == bytes) {
            Some(stage) => stage,
            None => {
                let stage = Stage::new(qe, qd, bytes)?;
                log::debug!("moves of run {run:?} from device {e} to {d}: through {stage:?}");
                stage
            }
        };
        match stages.entry(run).or_insert(stage) {
            Stage::Host(relay) => {
                // SAFETY: the caller vouches for both memory objects and `waits`; both ranges
                // were checked; the relay holds `bytes`.
                unsafe { relay.relay((qe.raw(), src.0, src.1), (qd.raw(), dst.0, dst.1), waits) }
                    .map_err(|x| Error::cl("clEnqueueReadBuffer", x.0, qe.device().to_string()))
            }
            Stage::Device(buf, last) => {
                let stage = (buf.as_raw(), 0, bytes);
                let waits: Vec<cl_event> = (waits.iter().copied())
                    .chain(last.as_ref().map(|e| e.get()))
                    .collect();
                // SAFETY: as above; the staging buffer holds `bytes`, and the last copy out of
                // it is waited for.
                let out = unsafe { bounded_copy(qe, src, stage, bytes, &waits) }?;
                // SAFETY: the staging buffer holds `bytes`, written by the copy this one waits
                // for; the caller vouches for `dst`.
                let into = unsafe { bounded_copy(qd, stage, dst, bytes, &[out.get()]) }?;
                *last = Some(
                    ffi::retained(&into)
                        .map_err(|x| Error::cl("clRetainEvent", x.0, qd.device().to_string()))?,
                );
                Ok([out, into])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{route, Route};

    #[test]
    fn moves_go_through_host_memory_unless_a_device_is_remote() {
        assert_eq!(route(false, false), Route::Host);
        assert_eq!(route(true, false), Route::Device);
        assert_eq!(route(false, true), Route::Device);
        assert_eq!(route(true, true), Route::Device);
    }
}
