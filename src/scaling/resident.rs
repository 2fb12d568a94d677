//! Whole-buffer placement: a [`ColoredBuffer`](super::ColoredBuffer) that a launch run on
//! one device moved there whole (in shared placement it is there already: its parent buffer
//! is the whole, and only where it is used is recorded). Its coherence state records where the
//! valid data is: in the parts (as colored), or whole on one device (then the parts are
//! stale where the whole was written since: `dirty`). The buffer stays whole until something
//! needs its parts: a split launch, a host `read` reads the whole directly, `write`/`fill`
//! overwrite it (the parts become valid again), `part()`, reduces and scans move it back
//! first ([`settle`]). Every move is enqueued device to device, ordered after everything
//! enqueued on every queue before it (markers).

use super::arg::ColoredArg;
use super::residence::Whole;
use super::Placement;
use crate::buffer::Buffer;
use crate::error::{Error, InputFault, Internal, Result};
use crate::event::Event;
use crate::ffi;
use crate::launch::Arg;
use crate::plan::cost::Link;
use crate::queue::Queue;
use opencl3::types::{cl_event, cl_mem};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Device `d`'s part of `c` now, as a memory object.
fn part_mem(c: &ColoredArg, d: usize) -> Option<cl_mem> {
    match c.part(d)? {
        Arg::Buffer { mem, .. } => Some(mem.raw()),
        _ => None,
    }
}

/// Markers on every queue but `except`'s: events that complete after everything enqueued
/// there so far.
fn markers(queues: &[&Queue], except: usize) -> Result<Vec<Event>> {
    (queues.iter().enumerate())
        .filter(|&(e, _)| e != except)
        .map(|(_, q)| marker(q))
        .collect()
}

/// A marker on `q`, submitted: commands of other queues wait for it (launches on one device
/// are not flushed, and on an idle queue it may complete before they are enqueued).
pub(super) fn marker(q: &Queue) -> Result<Event> {
    let m = q
        .marker()
        .map_err(|e| Error::cl("clEnqueueMarkerWithWaitList", e.0, q.device().to_string()))?;
    q.flush()?;
    Ok(Event::new(m, q.device().clone(), None))
}

fn raw(events: &[Event], extra: &[cl_event]) -> Vec<cl_event> {
    (events.iter())
        .flat_map(|ev| ev.raw.iter().map(|r| r.get()))
        .chain(extra.iter().copied())
        .collect()
}

/// Copies `bytes` on `q` after `waits`, the event dropped (the queue keeps the order).
fn copy(
    q: &Queue,
    src: (cl_mem, usize),
    dst: (cl_mem, usize),
    bytes: usize,
    waits: &[cl_event],
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: callers pass live buffers holding both byte ranges.
    let ev = unsafe { ffi::copy_bytes(q.raw(), src, dst, bytes, waits) }
        .map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0, q.device().to_string()))?;
    drop(ev);
    Ok(())
}

/// Bytes moving `c` whole to device `d` copies between devices: none where it is whole there,
/// all of it where it is whole elsewhere, else the elements other devices own.
pub(super) fn gather_bytes(c: &ColoredArg, d: usize) -> u64 {
    if c.placement == Placement::Shared {
        return 0;
    }
    let all = (c.len * c.elem_size) as u64;
    match c.residence.as_ref().and_then(|r| r.holder()) {
        Some((h, _)) if h == d => 0,
        Some(_) => all,
        None => {
            let own: usize = (c.owned.get(d).into_iter().flatten())
                .map(|(a, b)| b - a)
                .sum();
            all - (own * c.elem_size) as u64
        }
    }
}

/// Bytes moving `c` back to its parts copies: all of it where it is whole and written since.
pub(super) fn scatter_bytes(c: &ColoredArg) -> u64 {
    if c.placement == Placement::Shared {
        return 0;
    }
    match c.residence.as_ref().and_then(|r| r.holder()) {
        Some((_, true)) => (c.len * c.elem_size) as u64,
        _ => 0,
    }
}

/// Moves `c` whole to device `d` (if it is not there already): each device's own elements
/// copied from its part (or the whole from the device holding it) into one buffer on `d`,
/// after everything enqueued on every queue and `waits`. Returns the whole buffer and the
/// bytes copied. In shared placement nothing is copied (the parent is the whole): the other
/// queues finish, and `d` is recorded as where it is used.
pub(super) fn gather(
    c: &ColoredArg,
    d: usize,
    queues: &[&Queue],
    waits: &[cl_event],
) -> Result<(Option<Arc<Buffer<u8>>>, u64)> {
    let r = c
        .residence
        .as_ref()
        .ok_or_else(|| Error::input(InputFault::Internal(Internal::NoResidence)))?;
    if c.placement == Placement::Shared {
        let mut s = r.lock();
        if s.whole.as_ref().is_none_or(|w| w.device != d) {
            // Ordered after every other queue's commands, which may use it.
            for (_, q) in queues.iter().enumerate().filter(|&(e, _)| e != d) {
                q.finish()?;
            }
            r.made_whole(
                &mut s,
                Whole {
                    device: d,
                    buf: None,
                },
            );
        }
        return Ok((None, 0));
    }
    if let Some((h, buf)) = r.whole() {
        if h == d {
            return Ok((Some(buf), 0));
        }
    }
    let es = c.elem_size;
    let bytes = c.len * es;
    let q = queues[d];
    let before = markers(queues, d)?;
    let waits = raw(&before, waits);
    let mut s = r.lock();
    let spare = (s.spare.take())
        .filter(|w| w.device == d)
        .and_then(|w| w.buf)
        .filter(|b| b.len() == bytes);
    let buf = match spare {
        Some(b) => b,
        None => Arc::new(Buffer::<u8>::new(q, bytes)?),
    };
    let mut moved = 0u64;
    match s.whole.take() {
        // Whole on another device: copied whole (it is valid there, the parts maybe not).
        Some(Whole { buf: Some(w), .. }) => {
            copy(q, (w.as_raw(), 0), (buf.as_raw(), 0), bytes, &waits)?;
            moved += bytes as u64;
        }
        _ => {
            for (e, runs) in c.owned.iter().enumerate() {
                let Some(src) = part_mem(c, e) else { continue };
                for &(a, b) in runs {
                    let at = (a - c.stored[e].0) * es;
                    copy(q, (src, at), (buf.as_raw(), a * es), (b - a) * es, &waits)?;
                    if e != d {
                        moved += ((b - a) * es) as u64;
                    }
                }
            }
        }
    }
    r.made_whole(
        &mut s,
        Whole {
            device: d,
            buf: Some(buf.clone()),
        },
    );
    // Device d's queue reads the other devices' parts.
    r.cross();
    log::debug!(
        "colored buffer of {} x {}: moved whole to device {d} ({moved} bytes)",
        c.len,
        c.elem
    );
    Ok((Some(buf), moved))
}

/// Moves `c` back to its parts where it is whole: where written since, every element each
/// part holds copied from the whole (on the part's queue, after everything enqueued on every
/// queue), and the margins kept of it marked stale; unwritten, its parts are valid as they
/// are. Returns the bytes copied. In shared placement nothing is copied: the queue that used
/// it finishes, so that every device's part is ordered after its launches.
pub(super) fn settle(c: &ColoredArg, queues: &[&Queue]) -> Result<u64> {
    let Some(r) = c.residence.as_ref() else {
        return Ok(0);
    };
    let mut s = r.lock();
    let Some(w) = s.whole.take() else {
        return Ok(0);
    };
    let mut moved = 0u64;
    if let (None, Some(q)) = (&w.buf, queues.get(w.device)) {
        q.finish()?;
        log::debug!(
            "colored buffer of {} x {}: used by device {} alone until now (shared placement)",
            c.len,
            c.elem,
            w.device
        );
        return Ok(0);
    }
    if let (true, Some(whole)) = (r.written_since(), &w.buf) {
        let es = c.elem_size;
        let before = markers(queues, usize::MAX)?;
        let waits = raw(&before, &[]);
        for (e, &(lo, hi)) in c.stored.iter().enumerate() {
            let Some(dst) = part_mem(c, e) else { continue };
            copy(
                queues[e],
                (whole.as_raw(), lo * es),
                (dst, 0),
                (hi - lo) * es,
                &waits,
            )?;
            moved += ((hi - lo) * es) as u64;
        }
        // The margins other devices keep of it are stale (not `c.written()`: that locks
        // this residence).
        if let Some(m) = &c.margins {
            m.written();
        }
    }
    log::debug!(
        "colored buffer of {} x {}: moved back to its parts from device {} ({moved} bytes)",
        c.len,
        c.elem,
        w.device
    );
    s.spare = Some(w);
    Ok(moved)
}

/// The link the cost model prices a choice with: where it must be measured (`moves`: the
/// model chooses, and bytes may move between devices), the root device's link in `cell`
/// (measured over `queues` at its first use, then kept), `None` if it cannot be measured (the choice is not
/// priced: warned); else a zero link (a forced policy, one device only, shared placement).
pub(super) fn priced_link<'q>(
    cell: &OnceLock<Link>,
    queues: impl FnOnce() -> Vec<&'q Queue>,
    moves: bool,
) -> Option<Link> {
    if !moves {
        return Some(Link {
            bandwidth: 0.0,
            latency: 0.0,
        });
    }
    if let Some(l) = cell.get() {
        return Some(*l);
    }
    match measure_link(&queues()) {
        Ok(link) => {
            log::info!("root device link measured: {link}");
            Some(*cell.get_or_init(|| link))
        }
        Err(e) => {
            log::warn!("the link between the devices could not be measured: {e}");
            None
        }
    }
}

/// The slowest pair's link: for every pair of devices, the least time of a 4-byte copy from
/// one's buffer on the other's queue waiting for a marker of the first (the latency of one
/// cross-device dependency) over 5 tries, and the bandwidth of a copy (least of 3, the latency
/// taken off) of 4 MiB, or 16 times more until it takes at least twice the latency (at most
/// 256 MiB: on two H200s 4 MiB took about the latency, and the bandwidth read 4 PB/s).
fn measure_link(queues: &[&Queue]) -> Result<Link> {
    const BIG: usize = 4 << 20;
    const BIGGEST: usize = 256 << 20;
    let (mut latency, mut bandwidth) = (0.0f64, f64::INFINITY);
    for d in 0..queues.len() {
        for e in d + 1..queues.len() {
            let (qd, qe) = (queues[d], queues[e]);
            let measured = |big: usize| -> Result<(f64, f64, usize)> {
                // Filled on their devices, so each is there before the copies.
                let mut a = Buffer::<u8>::new(qd, big)?;
                let mut b = Buffer::<u8>::new(qe, big)?;
                a.fill(qd, 0)?;
                b.fill(qe, 0)?;
                let (lat, t) = link_times(qd, qe, (&a, &b), big)?;
                Ok((lat, t, big))
            };
            let (mut lat, mut t, mut big) = measured(BIG)?;
            while t < 2.0 * lat && big < BIGGEST {
                // Too large for a device: the last size's figures.
                let Ok(next) = measured(big * 16) else { break };
                (lat, t, big) = next;
            }
            bandwidth = bandwidth.min(big as f64 / (t - lat).max(1e-9));
            latency = latency.max(lat);
        }
    }
    Ok(Link { bandwidth, latency })
}

/// The least time of a 4-byte copy (of 5) and of a `bytes` copy (of 3) from `a` (on `qd`'s
/// device) into `b` on `qe`, each waiting for a marker of `qd`.
fn link_times(
    qd: &Queue,
    qe: &Queue,
    (a, b): (&Buffer<u8>, &Buffer<u8>),
    bytes: usize,
) -> Result<(f64, f64)> {
    qd.finish()?;
    qe.finish()?;
    let once = |bytes: usize| -> Result<f64> {
        let start = Instant::now();
        let m = ffi::marker(qd.raw())
            .map_err(|x| Error::cl("clEnqueueMarkerWithWaitList", x.0, qd.device().to_string()))?;
        // SAFETY: both buffers hold at least `bytes` bytes.
        let ev = unsafe {
            ffi::copy_bytes(
                qe.raw(),
                (a.as_raw(), 0),
                (b.as_raw(), 0),
                bytes,
                &[m.get()],
            )
        }
        .map_err(|x| Error::cl("clEnqueueCopyBuffer", x.0, qe.device().to_string()))?;
        let ev = Event::new(ev, qe.device().clone(), None);
        ev.wait()?;
        Ok(start.elapsed().as_secs_f64())
    };
    let lat = (0..5)
        .map(|_| once(4))
        .try_fold(f64::INFINITY, |m, t| t.map(|t| m.min(t)))?;
    let big = (0..3)
        .map(|_| once(bytes))
        .try_fold(f64::INFINITY, |m, t| t.map(|t| m.min(t)))?;
    Ok((lat, big))
}
