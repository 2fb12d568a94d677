//! Launch planning for reduce and scan (pure): which kernels a device gets, and their shapes.

use crate::plan::local_size::DeviceKind;

/// What the launch plans need to know about the device and its kernels (gathered by the
/// caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanInputs {
    /// The kind of device.
    pub kind: DeviceKind,
    /// The kernels' largest work-group (`min(CL_KERNEL_WORK_GROUP_SIZE, device max)`).
    pub max_work_group_size: usize,
    /// The kernels' sub-group size (the device's primary size).
    pub sub_group_size: usize,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: usize,
    /// NVIDIA with the inline-PTX sub-group backend: warps of 32, device-scope fences in PTX,
    /// and forward progress between running work-groups.
    pub nvidia: bool,
}

/// The shape of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// Work-items per work-group.
    pub local: usize,
    /// Number of work-groups.
    pub groups: usize,
}

/// How a device reduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReducePath {
    /// GPUs: work-groups stride over the input. `one_launch`: the last work-group to finish
    /// reduces the partials (NVIDIA, where the fences are known); else a second launch does.
    Groups {
        /// Whether the partials are reduced in the same launch.
        one_launch: bool,
    },
    /// CPUs: one work-item per work-group, each over one contiguous run; one launch.
    Sequential,
}

/// How a device scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanPath {
    /// One pass with decoupled look-back (NVIDIA, 32-bit elements).
    LookBack,
    /// CPUs: run sums, then each run scanned from the sum of the runs before it (two launches
    /// of one-work-item groups).
    Sequential,
    /// Any other device: chunk sums, their scan, each chunk from its offset (three launches).
    ReduceThenScan,
}

/// Elements each GPU work-item should read at least once per launch (4 vectors of 4).
const ITEM_GRAIN: usize = 16;
/// Elements of the shortest run a CPU work-group gets (below it, fewer groups).
const MIN_RUN: usize = 1 << 14;
/// The look-back scan's tile: work-groups of `local` work-items, each scanning `rounds` rounds
/// of 4 elements (coalesced 4-vectors). `rounds × local / 32` must be a multiple of 32 (one
/// warp scans the per-round, per-warp sums).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Rounds of 4 elements per work-item.
    pub rounds: usize,
    /// Work-items per work-group (a multiple of 32).
    pub local: usize,
}

impl Tile {
    /// 8 rounds of 256 work-items: 8192 elements.
    pub const DEFAULT: Tile = Tile {
        rounds: 8,
        local: 256,
    };

    /// 32 rounds of 256 work-items (32768 elements), for inputs of at least
    /// [`Tile::LARGE_FROM`] elements: on the H100 0.84 of copy bandwidth at 2^28 elements,
    /// where [`Tile::DEFAULT`] reaches 0.80 (fewer, longer work-groups: less look-back); 0.93
    /// with its wait ([`choose_wait`]).
    pub const LARGE: Tile = Tile {
        rounds: 32,
        local: 256,
    };

    /// Inputs from this many elements scan in [`Tile::LARGE`] tiles (at least 2048 of them).
    ///
    /// ```
    /// use clgroups::algorithms::plan::{self, Tile};
    /// assert_eq!(plan::lookback(Tile::LARGE_FROM, Tile::LARGE).groups, 2048);
    /// ```
    pub const LARGE_FROM: usize = 1 << 26;

    /// 24 rounds of 128 work-items (12288 elements): the persistent scan's tile
    /// ([`ScanForm::Persistent`]). Each work-group holds two tiles in registers (192 per
    /// work-item), so [`PERSISTENT_PER_CU`] work-groups share a compute unit's registers.
    pub const PERSISTENT: Tile = Tile {
        rounds: 24,
        local: 128,
    };

    /// Elements per tile.
    pub fn elements(&self) -> usize {
        4 * self.rounds * self.local
    }

    /// `ROUNDS:LOCAL` (the `CLGROUPS_SCAN_TILE` tuning knob); `None` unless valid.
    ///
    /// ```
    /// use clgroups::algorithms::plan::Tile;
    /// assert_eq!(Tile::parse("16:128"), Some(Tile { rounds: 16, local: 128 }));
    /// assert_eq!(Tile::parse("2:256"), None); // 2 × 256 / 32 = 16 warp sums: not a multiple of 32
    /// ```
    pub fn parse(s: &str) -> Option<Tile> {
        let (r, l) = s.split_once(':')?;
        let t = Tile {
            rounds: r.trim().parse().ok()?,
            local: l.trim().parse().ok()?,
        };
        let ok = t.rounds > 0
            && t.local > 0
            && t.local % 32 == 0
            && (t.rounds * t.local / 32) % 32 == 0
            && t.rounds <= 64;
        ok.then_some(t)
    }
}

/// The waits, in ns, a device's first scan of [`Tile::LARGE`] tiles tries (the look-back wait:
/// how long a tile waits after publishing its own sum before it first reads the states of the
/// tiles before it; PTX `nanosleep`). Polls of states not yet published cost more than the
/// pause, and the best pause follows the time a tile takes, which follows the device's memory
/// bandwidth: on the H100 (`examples/bench_scan.rs`, 2^26–2^28 floats and ints) 0.80–0.84 of a
/// copy without a wait, 0.89–0.93 with 3 µs, 0.72 with 5 µs; an H200 (more bandwidth, the same
/// SMs) ran at 0.72–0.74 without one. So the wait is measured on each device, not named.
pub const WAIT_CANDIDATES_NS: [u32; 9] = [0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000];

/// Timed launches of each candidate wait in a device's measurement (interleaved; the fastest
/// of each counts).
pub const WAIT_ROUNDS: usize = 5;

/// The look-back wait chosen from a measurement: `(wait in ns, fastest time of a scan with
/// it)` per candidate. The smallest wait within 1 % of the fastest time (a longer wait than
/// needed risks more than it gains: tiles then idle); 0 for no samples.
///
/// ```
/// use clgroups::algorithms::plan::choose_wait;
/// use std::time::Duration;
/// let us = Duration::from_micros;
/// // H100-like: 3 µs is best by far.
/// assert_eq!(choose_wait(&[(0, us(1100)), (2000, us(1000)), (3000, us(950)), (4000, us(990))]), 3000);
/// // Within 1 % of the best: the shorter wait.
/// assert_eq!(choose_wait(&[(0, us(1000)), (1000, us(996)), (2000, us(995))]), 0);
/// ```
pub fn choose_wait(samples: &[(u32, std::time::Duration)]) -> u32 {
    let Some(best) = samples.iter().map(|s| s.1).min() else {
        return 0;
    };
    let within = best + best / 100;
    samples
        .iter()
        .filter(|s| s.1 <= within)
        .map(|s| s.0)
        .min()
        .unwrap_or(0)
}

/// The reduce path of a device.
///
/// ```
/// use clgroups::algorithms::plan::{self, PlanInputs, ReducePath};
/// use clgroups::plan::local_size::DeviceKind;
/// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///                         sub_group_size: 32, compute_units: 132, nvidia: true };
/// assert_eq!(plan::reduce_path(&h100), ReducePath::Groups { one_launch: true });
/// ```
pub fn reduce_path(d: &PlanInputs) -> ReducePath {
    match d.kind {
        DeviceKind::Cpu => ReducePath::Sequential,
        _ => ReducePath::Groups {
            one_launch: d.nvidia,
        },
    }
}

/// The scan path of a device for elements of `elem_bytes` bytes.
///
/// ```
/// use clgroups::algorithms::plan::{self, PlanInputs, ScanPath};
/// use clgroups::plan::local_size::DeviceKind;
/// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///                         sub_group_size: 32, compute_units: 132, nvidia: true };
/// assert_eq!(plan::scan_path(&h100, 4), ScanPath::LookBack);
/// assert_eq!(plan::scan_path(&h100, 8), ScanPath::ReduceThenScan);
/// ```
pub fn scan_path(d: &PlanInputs, elem_bytes: usize) -> ScanPath {
    let path = if d.kind == DeviceKind::Cpu {
        ScanPath::Sequential
    } else if d.nvidia && d.sub_group_size == 32 && elem_bytes == 4 {
        ScanPath::LookBack
    } else {
        ScanPath::ReduceThenScan
    };
    log::debug!("algorithms: scan path {path:?} for {elem_bytes}-byte elements on {d:?}");
    path
}

/// The work-group size of the GPU kernels: 256 (enough warps to hide latency, few enough for
/// many groups per compute unit), rounded down to a multiple of the sub-group size within the
/// kernels' limit; 64 on devices that are not GPUs.
///
/// ```
/// use clgroups::algorithms::plan::{self, PlanInputs};
/// use clgroups::plan::local_size::DeviceKind;
/// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///                         sub_group_size: 32, compute_units: 132, nvidia: true };
/// assert_eq!(plan::local_size(&h100), 256);
/// ```
pub fn local_size(d: &PlanInputs) -> usize {
    let want = if d.kind == DeviceKind::Gpu { 256 } else { 64 };
    let s = d.sub_group_size.max(1);
    let cap = d.max_work_group_size.max(1);
    let local = if s > cap {
        cap
    } else {
        (want.min(cap) / s).max(1) * s
    };
    log::debug!("algorithms: work-group size {local} (wanted {want}, {d:?})");
    local
}

/// The most work-groups worth launching: 8 per compute unit on GPUs, 4 on others.
pub fn max_groups(d: &PlanInputs) -> usize {
    let per_cu = if d.kind == DeviceKind::Gpu { 8 } else { 4 };
    d.compute_units.max(1) * per_cu
}

/// The GPU reduce over `n` elements: as many groups as fill the device, fewer when each
/// work-item would read less than 16 elements.
///
/// ```
/// use clgroups::algorithms::plan::{self, LaunchPlan, PlanInputs};
/// use clgroups::plan::local_size::DeviceKind;
/// let h100 = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 1024,
///                         sub_group_size: 32, compute_units: 132, nvidia: true };
/// assert_eq!(plan::reduce(1 << 28, &h100), LaunchPlan { local: 256, groups: 1056 });
/// assert_eq!(plan::reduce(1, &h100), LaunchPlan { local: 256, groups: 1 });
/// ```
pub fn reduce(n: usize, d: &PlanInputs) -> LaunchPlan {
    let local = local_size(d);
    let groups = n.div_ceil(local * ITEM_GRAIN).clamp(1, max_groups(d));
    log::debug!("algorithms: reduce of {n}: {groups} groups of {local}");
    LaunchPlan { local, groups }
}

/// The CPU kernels over `n` elements: the run length (a multiple of 8) and one-work-item
/// groups, 4 per compute unit, fewer when runs would be shorter than 2^14 elements.
///
/// ```
/// use clgroups::algorithms::plan::{self, LaunchPlan, PlanInputs};
/// use clgroups::plan::local_size::DeviceKind;
/// let cpu = PlanInputs { kind: DeviceKind::Cpu, max_work_group_size: 4096,
///                        sub_group_size: 8, compute_units: 2, nvidia: false };
/// assert_eq!(plan::sequential(1 << 24, &cpu), (1 << 21, LaunchPlan { local: 1, groups: 8 }));
/// assert_eq!(plan::sequential(1000, &cpu), (1000, LaunchPlan { local: 1, groups: 1 }));
/// ```
pub fn sequential(n: usize, d: &PlanInputs) -> (usize, LaunchPlan) {
    let want = n.div_ceil(MIN_RUN).clamp(1, max_groups(d));
    let chunk = n.div_ceil(want).div_ceil(8) * 8;
    let groups = n.div_ceil(chunk).max(1);
    log::debug!("algorithms: {n} elements in {groups} runs of {chunk}");
    (chunk, LaunchPlan { local: 1, groups })
}

/// The chunk length (a multiple of 4 × the work-group size) and plan of the reduce-then-scan
/// passes over `n` elements: work-group `g` owns elements `[g·chunk, (g+1)·chunk)`.
///
/// ```
/// use clgroups::algorithms::plan::{self, LaunchPlan, PlanInputs};
/// use clgroups::plan::local_size::DeviceKind;
/// let gpu = PlanInputs { kind: DeviceKind::Gpu, max_work_group_size: 256,
///                        sub_group_size: 64, compute_units: 2, nvidia: false };
/// assert_eq!(plan::scan(5000, &gpu), (1024, LaunchPlan { local: 256, groups: 5 }));
/// ```
pub fn scan(n: usize, d: &PlanInputs) -> (usize, LaunchPlan) {
    let local = local_size(d);
    let tile = 4 * local;
    let chunk = n.div_ceil(max_groups(d)).div_ceil(tile).max(1) * tile;
    let groups = n.div_ceil(chunk).max(1);
    log::debug!("algorithms: scan of {n}: {groups} chunks of {chunk} in groups of {local}");
    (chunk, LaunchPlan { local, groups })
}

/// How a device scans inputs of at least 2^24 elements (NVIDIA's look-back scans): chosen per
/// device and size class (below and from 2^26 elements) by its first scan of that class, which
/// times both forms and keeps the faster ([`crate::algorithms::scan_form`] tells which).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanForm {
    /// One work-group per tile (from 2^26 elements tiles of 32,768 elements, each waiting the
    /// measured wait before its first look back).
    Tiles,
    /// Two work-groups per compute unit, each taking tiles of 12,288 elements until none is
    /// left, its next tile's loads in flight while the current one looks back
    /// (`cl/algorithms/scan_persist.cl`).
    Persistent,
}

/// Work-groups per compute unit of the persistent scan: 2 measured fastest on an H200
/// (docs/scan.md: 0.89–0.92 of a copy at 2^26–2^28 against 0.80–0.84 with 1, 3 or 4
/// groups of other tiles).
pub const PERSISTENT_PER_CU: usize = 2;

/// Scans from this many elements choose their form by measurement ([`ScanForm`]): on an H200
/// the persistent scan ran at 0.87–0.91 of a copy at 2^24–2^25 against 0.70–0.78 in tiles.
pub const PERSISTENT_FROM: usize = 1 << 24;

/// The form chosen from a measurement: the fastest time of the tiles at each candidate wait,
/// and of the persistent scan (`None`: not available). The persistent scan where it ran faster
/// than the tiles at every wait, else the tiles (with [`choose_wait`]'s wait).
///
/// ```
/// use clgroups::algorithms::plan::{choose_form, ScanForm};
/// use std::time::Duration;
/// let us = Duration::from_micros;
/// let tiles = [(0, us(700)), (2000, us(640))];
/// assert_eq!(choose_form(&tiles, Some(us(580))), ScanForm::Persistent);
/// assert_eq!(choose_form(&tiles, Some(us(650))), ScanForm::Tiles);
/// assert_eq!(choose_form(&tiles, None), ScanForm::Tiles);
/// ```
pub fn choose_form(
    tiles: &[(u32, std::time::Duration)],
    persistent: Option<std::time::Duration>,
) -> ScanForm {
    match (persistent, tiles.iter().map(|s| s.1).min()) {
        (Some(p), t) if t.is_none_or(|t| p < t) => ScanForm::Persistent,
        _ => ScanForm::Tiles,
    }
}

/// The persistent scan over `n` elements: [`PERSISTENT_PER_CU`] work-groups per compute unit
/// (never more than tiles), and its tiles.
///
/// ```
/// use clgroups::algorithms::plan::{self, LaunchPlan, Tile};
/// let (p, tiles) = plan::persistent(1 << 28, 132);
/// assert_eq!((p, tiles), (LaunchPlan { local: 128, groups: 264 }, (1 << 28) / 12288 + 1));
/// assert_eq!(plan::persistent(5, 132), (LaunchPlan { local: 128, groups: 1 }, 1));
/// ```
pub fn persistent(n: usize, compute_units: usize) -> (LaunchPlan, usize) {
    let tile = Tile::PERSISTENT;
    let tiles = n.div_ceil(tile.elements()).max(1);
    let groups = (PERSISTENT_PER_CU * compute_units.max(1)).min(tiles);
    (
        LaunchPlan {
            local: tile.local,
            groups,
        },
        tiles,
    )
}

/// The look-back scan over `n` elements: one work-group per tile.
///
/// ```
/// use clgroups::algorithms::plan::{self, LaunchPlan, Tile};
/// assert_eq!(plan::lookback(1 << 28, Tile::DEFAULT), LaunchPlan { local: 256, groups: 1 << 15 });
/// assert_eq!(plan::lookback(1, Tile::DEFAULT), LaunchPlan { local: 256, groups: 1 });
/// ```
pub fn lookback(n: usize, tile: Tile) -> LaunchPlan {
    LaunchPlan {
        local: tile.local,
        groups: n.div_ceil(tile.elements()).max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu() -> PlanInputs {
        PlanInputs {
            kind: DeviceKind::Cpu,
            max_work_group_size: 4096,
            sub_group_size: 8,
            compute_units: 2,
            nvidia: false,
        }
    }

    fn gpu() -> PlanInputs {
        PlanInputs {
            kind: DeviceKind::Gpu,
            max_work_group_size: 1024,
            sub_group_size: 32,
            compute_units: 4,
            nvidia: false,
        }
    }

    #[test]
    fn local_size_is_a_multiple_of_the_sub_group_within_the_limit() {
        let mut d = gpu();
        assert_eq!(local_size(&d), 256);
        d.sub_group_size = 48;
        assert_eq!(local_size(&d), 240);
        d.max_work_group_size = 40;
        assert_eq!(local_size(&d), 40);
        d.sub_group_size = 16;
        assert_eq!(local_size(&d), 32);
    }

    #[test]
    fn paths_follow_the_device() {
        let mut d = gpu();
        assert_eq!(reduce_path(&d), ReducePath::Groups { one_launch: false });
        assert_eq!(scan_path(&d, 4), ScanPath::ReduceThenScan);
        d.nvidia = true;
        assert_eq!(reduce_path(&d), ReducePath::Groups { one_launch: true });
        assert_eq!(scan_path(&d, 4), ScanPath::LookBack);
        assert_eq!(reduce_path(&cpu()), ReducePath::Sequential);
        assert_eq!(scan_path(&cpu(), 8), ScanPath::Sequential);
    }

    #[test]
    fn reduce_groups_grow_with_n_up_to_the_device() {
        let d = gpu();
        assert_eq!(reduce(1, &d).groups, 1);
        assert_eq!(reduce(256 * 16, &d).groups, 1);
        assert_eq!(reduce(256 * 16 + 1, &d).groups, 2);
        assert_eq!(reduce(1 << 24, &d).groups, 32);
    }

    #[test]
    fn runs_and_chunks_cover_n() {
        for n in [1, 2, 255, 256, 257, 4099, 65537, (1 << 20) + 3, 1 << 28] {
            let (chunk, p) = sequential(n, &cpu());
            assert_eq!(chunk % 8, 0, "n = {n}");
            assert!(
                p.groups * chunk >= n && (p.groups - 1) * chunk < n,
                "n = {n}"
            );
            assert!(p.groups <= max_groups(&cpu()));
            let (chunk, p) = scan(n, &gpu());
            assert_eq!(chunk % (4 * p.local), 0, "n = {n}");
            assert!(
                p.groups * chunk >= n && (p.groups - 1) * chunk < n,
                "n = {n}"
            );
            assert!(p.groups <= max_groups(&gpu()));
            let t = Tile::DEFAULT;
            let p = lookback(n, t);
            assert!(p.groups * t.elements() >= n && (p.groups - 1) * t.elements() < n);
        }
    }

    #[test]
    fn the_wait_is_the_shortest_near_the_fastest_measured() {
        let us = std::time::Duration::from_micros;
        // No measurement: no wait.
        assert_eq!(choose_wait(&[]), 0);
        // H100-like (tiles of ~12 µs): 3 µs wins clearly; a longer wait loses again.
        let h100: Vec<_> = WAIT_CANDIDATES_NS
            .iter()
            .map(|&w| {
                (
                    w,
                    us(1000 - u64::from(w.min(3000)) / 30 + u64::from(w.saturating_sub(3000)) / 5),
                )
            })
            .collect();
        assert_eq!(choose_wait(&h100), 3000);
        // Every wait as fast (a device without nanosleep): none.
        let flat: Vec<_> = WAIT_CANDIDATES_NS.iter().map(|&w| (w, us(500))).collect();
        assert_eq!(choose_wait(&flat), 0);
        // Noise below 1 %: the shorter wait; the order of the samples does not matter.
        let noisy = [(2000, us(1000)), (1500, us(1009)), (500, us(1011))];
        assert_eq!(choose_wait(&noisy), 1500);
        // Candidates are distinct, ascending, from 0.
        assert_eq!(WAIT_CANDIDATES_NS[0], 0);
        assert!(WAIT_CANDIDATES_NS.windows(2).all(|w| w[0] < w[1]));
    }
}
