//! How a device scans large inputs, measured once per device and size class (per process): the
//! device's first scan of at least [`plan::PERSISTENT_FROM`] elements (and the first of at least
//! [`plan::Tile::LARGE_FROM`]) runs itself in its tiles and as the persistent scan
//! ([`plan::WAIT_ROUNDS`] times each, interleaved; from 2^26 the [`plan::Tile::LARGE`] tiles with
//! each of [`plan::WAIT_CANDIDATES_NS`]: at 2^28 floats on an H100 about 50 launches of 1 ms)
//! before the scan it was asked for. [`plan::choose_wait`] picks the tiles' wait from the fastest
//! time of each, [`plan::choose_form`] the faster form. The scan writes only its output, so the
//! runs leave the caller's buffers as one scan does. Devices whose PTX has no `nanosleep` (before
//! Volta, or an unknown compute capability: the kernel leaves the wait out) time the tiles
//! without a wait.

use super::plan::{self, ScanForm};
use super::scan::Walk;
use super::{lock, Element, State, Track};
use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::Result;
use crate::kernel::Kernel;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A device (`cl_device_id`) and a size class (from 2^26).
type Class = (usize, bool);

/// The wait and the form chosen per device and size class.
static CHOSEN: Lazy<Mutex<HashMap<Class, (u32, ScanForm)>>> = Lazy::new(Default::default);

fn key(device: &Device, n: usize) -> Class {
    (device.id() as usize, n >= plan::Tile::LARGE_FROM)
}

/// The look-back wait, in ns, that the large look-back tiles use on `device`:
/// `None` until its first scan of at least 2^26
/// elements measured it (`CLGROUPS_SCAN_WAIT_NS`, where set, overrides it).
///
/// ```
/// let device = clgroups::default_device()?;
/// // Measured only on NVIDIA (the look-back scan), by its first large scan.
/// assert!(clgroups::algorithms::look_back_wait_ns(&device).is_none_or(|w| w <= 4000));
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn look_back_wait_ns(device: &Device) -> Option<u32> {
    lock(&CHOSEN)
        .get(&key(device, plan::Tile::LARGE_FROM))
        .map(|c| c.0)
}

/// How `device` scans inputs of `n` elements: `None` below 2^24 elements, and
/// until its first scan of that size class (below or from 2^26) measured it (look-back scans
/// only: NVIDIA).
///
/// ```
/// use clgroups::algorithms::{self, ScanForm};
/// let device = clgroups::default_device()?;
/// let form = algorithms::scan_form(&device, 1 << 28);
/// assert!(form.is_none() || matches!(form, Some(ScanForm::Tiles | ScanForm::Persistent)));
/// assert_eq!(algorithms::scan_form(&device, 1000), None);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn scan_form(device: &Device, n: usize) -> Option<ScanForm> {
    match n >= plan::PERSISTENT_FROM {
        true => lock(&CHOSEN).get(&key(device, n)).map(|c| c.1),
        false => None,
    }
}

impl<T: Element> State<T> {
    /// The wait of `kernel`'s tiles (`tile`) on this device and the form of scans of this
    /// size class: measured on the class's first call (with the caller's `input` and
    /// `output`), then remembered.
    pub(super) fn scan_form(
        &mut self,
        (kernel, tile): (&Kernel, plan::Tile),
        input: &Buffer<T>,
        output: &Buffer<T>,
        exclusive: i32,
    ) -> Result<(u32, ScanForm)> {
        let device = self.queue.device().clone();
        let n = input.len();
        if let Some(&chosen) = lock(&CHOSEN).get(&key(&device, n)) {
            return Ok(chosen);
        }
        let sleeps = matches!(device.sub_groups().driver.compute_capability_nv, Some((major, _)) if major >= 7);
        let waits: &[u32] = match sleeps && tile == plan::Tile::LARGE {
            true => &plan::WAIT_CANDIDATES_NS,
            false => &[0],
        };
        let persistent = self.persistent_kernel();
        let (tiled, (per, tiles)) = (
            plan::lookback(n, tile),
            plan::persistent(n, self.inputs.compute_units),
        );
        let mut fastest = vec![Duration::MAX; waits.len()];
        let mut fastest_persistent = Duration::MAX;
        for _ in 0..plan::WAIT_ROUNDS {
            for (best, &wait) in fastest.iter_mut().zip(waits) {
                let start = Instant::now();
                let walk = Walk::Tiles {
                    kernel: kernel.clone(),
                    plan: tiled,
                    wait,
                };
                self.lookback(&walk, input, output, exclusive, Track::Events)?
                    .wait()?;
                *best = (*best).min(start.elapsed());
            }
            if let Some(kernel) = &persistent {
                let start = Instant::now();
                let walk = Walk::Persistent {
                    kernel: kernel.clone(),
                    plan: per,
                    tiles,
                    post: None,
                };
                self.lookback(&walk, input, output, exclusive, Track::Events)?
                    .wait()?;
                fastest_persistent = fastest_persistent.min(start.elapsed());
            }
        }
        let samples: Vec<(u32, Duration)> = waits.iter().copied().zip(fastest).collect();
        let persistent = persistent.map(|_| fastest_persistent);
        let chosen = (
            plan::choose_wait(&samples),
            plan::choose_form(&samples, persistent),
        );
        log::debug!(
            "algorithms: scans of {n} elements on {device}: {tile:?} tiles by wait (ns) \
             {samples:?}, persistent {persistent:?}: {:?}, tiles wait {} ns",
            chosen.1,
            chosen.0
        );
        lock(&CHOSEN).insert(key(&device, n), chosen);
        Ok(chosen)
    }

    /// The persistent scan's kernel (built on first use; `None` where it cannot run here).
    pub(super) fn persistent_kernel(&mut self) -> Option<Kernel> {
        if self.persistent.is_none() {
            let tile = plan::Tile::PERSISTENT;
            let built = super::build::<T>(&self.queue, super::ReduceOp::Sum, true, tile)
                .and_then(|p| p.kernel("clg_scan_persist"));
            self.persistent = Some(match built {
                Ok(k) if k.limits().max_work_group_size >= tile.local => Ok(k),
                Ok(_) => Err(()),
                Err(e) => {
                    log::warn!("algorithms: the persistent scan does not build: {e}");
                    Err(())
                }
            });
        }
        self.persistent.clone()?.ok()
    }
}
