//! The look-back wait of [`plan::Tile::LARGE`] tiles, measured once per device (per process):
//! the device's first scan of at least [`plan::Tile::LARGE_FROM`] elements runs itself with each
//! of [`plan::WAIT_CANDIDATES_NS`] ([`plan::WAIT_ROUNDS`] times, interleaved; at 2^28 floats on
//! an H100 about 45 launches of 1 ms) before the scan it was asked for, and
//! [`plan::choose_wait`] picks from the fastest time of each. The scan writes only its output,
//! so the runs leave the caller's buffers as one scan does. Devices whose PTX has no
//! `nanosleep` (before Volta, or an unknown compute capability: the kernel leaves the wait out)
//! are not measured and wait 0.

use super::plan;
use super::{lock, Element, State, Track};
use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::Result;
use crate::kernel::Kernel;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The wait chosen per device (`cl_device_id`).
static WAITS: Lazy<Mutex<HashMap<usize, u32>>> = Lazy::new(Default::default);

fn key(device: &Device) -> usize {
    device.id() as usize
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
    lock(&WAITS).get(&key(device)).copied()
}

impl<T: Element> State<T> {
    /// The wait of `large`'s tiles on this device: measured on the first call (with the
    /// caller's `input` and `output`), then remembered.
    pub(super) fn large_wait(
        &mut self,
        large: &Kernel,
        input: &Buffer<T>,
        output: &Buffer<T>,
        exclusive: i32,
    ) -> Result<u32> {
        let device = self.queue.device().clone();
        if let Some(w) = look_back_wait_ns(&device) {
            return Ok(w);
        }
        let sleeps = matches!(device.sub_groups().driver.compute_capability_nv, Some((major, _)) if major >= 7);
        let wait = match sleeps {
            false => 0,
            true => {
                let tile = plan::Tile::LARGE;
                let mut fastest = [Duration::MAX; plan::WAIT_CANDIDATES_NS.len()];
                for _ in 0..plan::WAIT_ROUNDS {
                    for (best, &w) in fastest.iter_mut().zip(&plan::WAIT_CANDIDATES_NS) {
                        let start = Instant::now();
                        self.lookback(large, tile, w, input, output, exclusive, Track::Events)?
                            .wait()?;
                        *best = (*best).min(start.elapsed());
                    }
                }
                let samples: Vec<(u32, Duration)> =
                    plan::WAIT_CANDIDATES_NS.into_iter().zip(fastest).collect();
                log::debug!("algorithms: look-back scans of {} elements on {device} by wait (ns): {samples:?}", input.len());
                plan::choose_wait(&samples)
            }
        };
        log::debug!(
            "algorithms: look-back tiles of {:?} wait {wait} ns on {device} (measured on {} elements)",
            plan::Tile::LARGE,
            input.len()
        );
        lock(&WAITS).insert(key(&device), wait);
        Ok(wait)
    }
}
