//! Reduce and scan over a [`ColoredBuffer`]: every device runs the single-device algorithm
//! ([`crate::algorithms`]) on the chunk it holds, all devices in flight at once (enqueued from
//! one host thread, then awaited together); the per-device results are combined on the host,
//! where they arrive anyway, so integer results wrap exactly as on one device. A scan then
//! adds each chunk's carry on its device, all at once. On devices that compile alone (PoCL
//! before 4 on CPUs, which compiles at a kernel's first run and could crash doing so for two
//! devices at once) a device's first run of each kernel runs by itself; later runs overlap.
//!
//! In partitioned placement the cost model (`plan::cost`) prices a reduce over the parts
//! against the buffer moved whole to one device and reduced there (it stays there, see
//! [whole-buffer placement](super#whole-buffer-placement)); a buffer a launch left whole on
//! one device and wrote there is reduced there. A scan moves such a buffer back to its parts
//! first.
//!
//! A replicated buffer is reduced on device 0. Where a device's part holds more than the
//! elements it owns (halos of [`Access::Halo`] and [`Access::Stencil`], the runs of
//! [`ColoredBuffer::for_launch`], a replicated buffer scanned), it copies its own elements on
//! its device first; a scan's output must hold exactly its chunks on every device (shared
//! placement, or [`Access::Auto`] / [`Access::Partitioned`]).
//!
//! ```
//! use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
//! let root = RootDevice::from_env()?;
//! let x = ColoredBuffer::from_slice(&root, &vec![1i32; 1 << 20])?;
//! assert_eq!(algorithms::reduce_sum(&root, &x)?, 1 << 20);
//! let mut y = ColoredBuffer::new(&root, 1 << 20)?;
//! algorithms::inclusive_scan_sum(&root, &x, &mut y)?;
//! assert_eq!(y.read()?[1000], 1001);
//! # Ok::<(), clgroups::Error>(())
//! ```

use super::Placement;
use super::{Access, ColoredBuffer, RootDevice};
use crate::algorithms::{self as single, multi, Element, ReduceOp, ScanKind};
use crate::buffer::{Buffer, Pod, Scalar};
use crate::error::{Error, InputFault, Internal, Result};
use crate::ffi;
use crate::plan::cost::{price, Choice, Depth, Inputs, Priced, Right, SpreadPolicy};
use crate::queue::Queue;

/// The sum of `input`'s elements (see [`crate::algorithms`] for float accuracy).
///
/// ```
/// use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let x = ColoredBuffer::from_slice(&root, &vec![2u32; 100_000])?;
/// assert_eq!(algorithms::reduce_sum(&root, &x)?, 200_000);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn reduce_sum<T: Element>(root: &RootDevice, input: &ColoredBuffer<T>) -> Result<T> {
    reduce(root, input, ReduceOp::Sum)
}

/// The smallest element of `input`.
///
/// ```
/// use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let v: Vec<i32> = (0..10_000).map(|i| (i * 7919) % 10_007 - 5000).collect();
/// let x = ColoredBuffer::from_slice(&root, &v)?;
/// assert_eq!(algorithms::reduce_min(&root, &x)?, *v.iter().min().unwrap());
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn reduce_min<T: Element>(root: &RootDevice, input: &ColoredBuffer<T>) -> Result<T> {
    reduce(root, input, ReduceOp::Min)
}

/// The largest element of `input`.
///
/// ```
/// use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let v: Vec<f32> = (0..10_000).map(|i| (i as f32).sin()).collect();
/// let x = ColoredBuffer::from_slice(&root, &v)?;
/// assert_eq!(algorithms::reduce_max(&root, &x)?, v.iter().copied().fold(f32::MIN, f32::max));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn reduce_max<T: Element>(root: &RootDevice, input: &ColoredBuffer<T>) -> Result<T> {
    reduce(root, input, ReduceOp::Max)
}

/// `output[i] = input[0] + ... + input[i]`; `output` is colored like `input`. Blocks.
///
/// ```
/// use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let x = ColoredBuffer::from_slice(&root, &[1i64, 2, 3, 4])?;
/// let mut y = ColoredBuffer::new(&root, 4)?;
/// algorithms::inclusive_scan_sum(&root, &x, &mut y)?;
/// assert_eq!(y.read()?, [1, 3, 6, 10]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn inclusive_scan_sum<T: Element>(
    root: &RootDevice,
    input: &ColoredBuffer<T>,
    output: &mut ColoredBuffer<T>,
) -> Result<()> {
    scan(root, input, output, false)
}

/// `output[i] = input[0] + ... + input[i - 1]` (`output[0] = 0`); `output` is colored like
/// `input`. Blocks.
///
/// ```
/// use clgroups::scaling::{algorithms, ColoredBuffer, RootDevice};
/// let root = RootDevice::from_env()?;
/// let x = ColoredBuffer::from_slice(&root, &[1i64, 2, 3, 4])?;
/// let mut y = ColoredBuffer::new(&root, 4)?;
/// algorithms::exclusive_scan_sum(&root, &x, &mut y)?;
/// assert_eq!(y.read()?, [0, 1, 3, 6]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn exclusive_scan_sum<T: Element>(
    root: &RootDevice,
    input: &ColoredBuffer<T>,
    output: &mut ColoredBuffer<T>,
) -> Result<()> {
    scan(root, input, output, true)
}

fn reduce<T: Element>(root: &RootDevice, input: &ColoredBuffer<T>, op: ReduceOp) -> Result<T> {
    // PoCL-R's client (7.2-RC1) crashes enqueueing a kernel on a typed view (a sub-buffer) of a
    // buffer held whole (SIGSEGV in `pocl_create_migration_commands`, tests/scaling_cost.rs over
    // two servers): on remote devices a buffer held whole goes back to its parts first, and
    // the parts are reduced where they are (the reduce is not priced).
    if root.queues().iter().any(|q| q.device().identity().remote) {
        input.settle()?;
        return reduce_parts(root, input, op);
    }
    // Held whole on one device and written there (a launch ran there alone): reduced there,
    // where it stays (its parts are stale).
    if let Some((d, true)) = input.holder() {
        if let Some((_, whole)) = input.whole_typed()? {
            log::debug!("reduce of a buffer held whole on device {d}: there");
            return single::reduce(&root.queues()[d], &whole, op);
        }
    }
    let key = reduce_key(input, op);
    let priced = price_reduce(root, input, op)?;
    let timing = (priced.as_ref()).and_then(|p| root.reduce_figures(key, |f| f.timing(p)));
    if timing.is_some() {
        root.finish()?;
    }
    let start = std::time::Instant::now();
    let got = match priced.as_ref().map(|p| p.choice) {
        Some(Choice::OneDevice(d)) => {
            input.gather_to(d)?;
            match input.parent() {
                // Shared placement: the parent is the whole buffer, on every device.
                Some(parent) => single::reduce(&root.queues()[d], parent, op),
                None => {
                    let (d, whole) = input
                        .whole_typed()?
                        .ok_or_else(|| Error::input(InputFault::Internal(Internal::NotWhole)))?;
                    single::reduce(&root.queues()[d], &whole, op)
                }
            }
        }
        _ => reduce_parts(root, input, op),
    }?;
    if let Some(timing) = timing {
        let secs = start.elapsed().as_secs_f64();
        let (observed, figures) = root.reduce_figures(key, |f| (f.timed(timing, secs), *f));
        log::debug!(
            "reduce of {} x {}: {timing:?} {:.1} us{} (figures {figures:?})",
            input.len(),
            T::CL_NAME,
            secs * 1e6,
            observed.map_or(String::new(), |o| format!(": {o}"))
        );
    }
    Ok(got)
}

/// The figures of a reduce: the buffer's length and element size, and the operation.
fn reduce_key<T: Element>(input: &ColoredBuffer<T>, op: ReduceOp) -> (usize, usize, u8) {
    (input.len(), size_of::<T>(), op as u8)
}

/// The cost model's choice for a reduce of `input` held in its parts (each device holding
/// exactly its elements): every device reducing its part, or the buffer moved whole to one
/// device (in shared placement: used there whole) and reduced there (it stays there). `None`
/// where it does not price (forced split, one device, other layouts).
fn price_reduce<T: Element>(
    root: &RootDevice,
    input: &ColoredBuffer<T>,
    op: ReduceOp,
) -> Result<Option<Priced>> {
    let policy = root.spread();
    let exact = holds_its_chunks(input);
    if policy == SpreadPolicy::Split || root.len() < 2 || input.queues_len() != root.len() || !exact
    {
        return Ok(None);
    }
    let figures = root.reduce_figures(reduce_key(input, op), |f| {
        let now = *f;
        f.seen = f.seen.saturating_add(1);
        now
    });
    // Shared placement moves nothing between devices.
    let moves = policy == SpreadPolicy::Model && input.placement() != Placement::Shared;
    let Some(link) = root.priced_link(moves) else {
        return Ok(None);
    };
    let inputs = Inputs {
        devices: root.len(),
        seen: figures.seen,
        right: Right::Split,
        split: figures.split,
        one: figures.one,
        between: 0,
        gather: input.gather_bytes(),
        scatter: 0,
        link,
        depth: Depth::Fixed(1),
        last: figures.last,
        resample: figures.resample,
    };
    let priced = price(&inputs, policy);
    let level = match priced.decided(figures.last) {
        true => log::Level::Info,
        false => log::Level::Debug,
    };
    log::log!(
        level,
        "reduce of {} x {} over {} devices: {priced}",
        input.len(),
        T::CL_NAME,
        root.len()
    );
    Ok(Some(priced))
}

/// Every device reduces its part, at once; the partials are combined on the host.
fn reduce_parts<T: Element>(
    root: &RootDevice,
    input: &ColoredBuffer<T>,
    op: ReduceOp,
) -> Result<T> {
    let parts = parts(root, input, true)?;
    let jobs: Vec<(&Queue, &Buffer<T>)> = (parts.iter())
        .map(|(d, buf)| (&root.queues()[*d], &**buf))
        .collect();
    // Every device's reduce in flight at once; their results come back together (posts on
    // NVIDIA, reads elsewhere).
    let partials: Vec<T> = multi::reduce_each(&jobs, op)?;
    log::debug!(
        "reduce over {} device(s) at once: partials {partials:?}, combined on the host",
        parts.len()
    );
    // The partials are on the host already: combining them there saves a device round trip
    // (a remote device's costs a network one), and integers wrap as on one device.
    match partials.iter().copied().reduce(|a, b| a.combine(op, b)) {
        Some(combined) => Ok(combined),
        // No part at all (an empty buffer): the operation's identity, as one device gives it.
        None => {
            let q0 = &root.queues()[0];
            single::reduce(q0, &Buffer::from_slice(q0, &partials)?, op)
        }
    }
}

fn scan<T: Element>(
    root: &RootDevice,
    input: &ColoredBuffer<T>,
    output: &mut ColoredBuffer<T>,
    exclusive: bool,
) -> Result<()> {
    if input.chunks() != output.chunks() {
        return Err(Error::input(InputFault::ScanChunks {
            output: output.chunks().to_vec(),
            input: input.chunks().to_vec(),
        }));
    }
    // A replicated input: each device scans its own chunk of its copy.
    let ins = parts(root, input, false)?;
    let same = |a: Vec<usize>| a == ins.iter().map(|p| p.0).collect::<Vec<_>>();
    let outs = parts(root, output, false)?;
    if !holds_its_chunks(output) || !same(outs.iter().map(|p| p.0).collect()) {
        return Err(Error::input(InputFault::ScanParts));
    }
    drop(outs);
    let kind = match exclusive {
        true => ScanKind::Exclusive,
        false => ScanKind::Inclusive,
    };
    // Every device scans its chunk at once; then each chunk's total comes back.
    let mut outs: Vec<(usize, &mut Buffer<T>)> = output.parts_mut()?;
    let jobs: Vec<(&Queue, &Buffer<T>, &Buffer<T>)> = (ins.iter().zip(&outs))
        .map(|((d, x), (_, y))| (&root.queues()[*d], &**x, &**y))
        .collect();
    let totals: Vec<T> = multi::scan_each(&jobs, kind)?;
    if totals.len() < 2 {
        return Ok(());
    }
    // Carries: an exclusive scan of the totals, on the host (they are there already;
    // integers wrap as on one device). Then every device but the first adds its carry, all
    // at once.
    let mut carry = T::default();
    let mut adds: Vec<(&Queue, &mut Buffer<T>, T)> = (outs.iter_mut().zip(&totals))
        .map(|((d, y), &t)| {
            let next = carry.combine(ReduceOp::Sum, t);
            (
                &root.queues()[*d],
                &mut **y,
                std::mem::replace(&mut carry, next),
            )
        })
        .skip(1)
        .collect();
    multi::add_each(&mut adds)
}

/// Whether each device's part of `buf` holds exactly the elements it owns (no halo, no
/// replica).
fn holds_its_chunks<T: Scalar>(buf: &ColoredBuffer<T>) -> bool {
    let starts = buf.starts();
    (starts.iter().zip(buf.chunks()).zip(buf.stored())).all(|((&s, &c), &st)| st == (s, s + c))
}

/// A device's own elements of a colored buffer: its part, or a copy of them on its device.
enum Own<'a, T: Pod> {
    Part(&'a Buffer<T>),
    Copy(Buffer<T>),
}

impl<T: Pod> std::ops::Deref for Own<'_, T> {
    type Target = Buffer<T>;

    fn deref(&self) -> &Buffer<T> {
        match self {
            Own::Part(b) => b,
            Own::Copy(b) => b,
        }
    }
}

/// Device and own elements of every non-empty chunk (device 0 alone for a replicated buffer
/// in partitioned placement where `whole` allows it): the part where it holds exactly them,
/// else a copy of its owned runs made on its queue.
fn parts<'a, T: Scalar>(
    root: &RootDevice,
    buf: &'a ColoredBuffer<T>,
    whole: bool,
) -> Result<Vec<(usize, Own<'a, T>)>> {
    if buf.queues_len() != root.len() {
        return Err(Error::input(InputFault::ColoredDevices {
            buffer: buf.queues_len(),
            root: root.len(),
        }));
    }
    // A buffer a launch left whole on one device moves back to its parts first, and parts
    // another queue may have written are waited for.
    buf.settle()?;
    buf.order_parts()?;
    let held = |d| buf.held_part(d);
    if holds_its_chunks(buf) {
        return Ok((0..root.len())
            .filter_map(|d| held(d).map(|p| (d, Own::Part(p))))
            .collect());
    }
    if let (Access::Replicated, Some(p), true) = (buf.access(), held(0), whole) {
        return Ok(vec![(0, Own::Part(p))]);
    }
    let owning = (0..root.len()).filter(|&d| !buf.owned()[d].is_empty());
    let copies = owning.filter_map(|d| Some((d, held(d)?)));
    copies
        .map(|(d, part)| {
            let copy = own_copy(&root.queues()[d], part, buf.stored()[d], &buf.owned()[d])?;
            Ok((d, Own::Copy(copy)))
        })
        .collect()
}

/// The runs `runs` of a part holding elements `stored`, copied one after the other into a new
/// buffer on `q` (after the queue's earlier commands).
fn own_copy<T: Pod>(
    q: &Queue,
    part: &Buffer<T>,
    stored: (usize, usize),
    runs: &[(usize, usize)],
) -> Result<Buffer<T>> {
    let es = size_of::<T>();
    let copy = Buffer::<T>::new(q, runs.iter().map(|(a, b)| b - a).sum())?;
    let mut at = 0;
    for &(a, b) in runs {
        // SAFETY: the part holds elements `stored` (its owned runs among them), the copy the
        // runs' total; the copy follows the queue's earlier commands, which wrote the part
        // (`order_parts`).
        let ev = unsafe {
            let from = (part.as_raw(), (a - stored.0) * es);
            ffi::copy_bytes(q.raw(), from, (copy.as_raw(), at * es), (b - a) * es, &[])
        };
        drop(ev.map_err(|e| Error::cl("clEnqueueCopyBuffer", e.0, q.device().to_string()))?);
        at += b - a;
    }
    Ok(copy)
}
