//! A seeded random history of operations on colored buffers over one root device's devices,
//! checked against a host model (Jepsen-style: many small operations, every answer compared).
//! Each launch goes through one of five root devices over the same context — the cost model,
//! the analysis's split with halo depths 1 and 3, everything on one device, and a split
//! weighted 3 : 1 that does not follow the buffers' chunks — so buffers move whole to one
//! device and back, margins are kept, deepened and made stale, in orders no hand-written test
//! lists; launches are waited for or not; host writes, fills, reads, lent parts, reduces,
//! scans and the host's copies between plain buffers come between them. Every read, reduce and scan is compared with the model,
//! and every buffer at the end. The stale margins of 59ccaae (a chain split, run whole on one
//! device, then split again inside a window of deeper margins) are one history of this kind.
//!
//! `CLGROUPS_HISTORY_OPS` (default 400) operations per history, `CLGROUPS_HISTORY_SEEDS`
//! (default 6) seeds per placement; a failure names the seed and the operations before it.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use common::partitioned::{host_blur, host_heat, spread_words};
use common::rng::Rng;
use common::{colored_as, env_or, pair, placements, root_device};

use clgroups::scaling::SpreadPolicy;
use clgroups::scaling::{algorithms, Access, ColoredBuffer, MultiEvent, RootDevice, RootKernel};
use clgroups::{Buffer, Event, Range};
use std::collections::BTreeMap;

/// The stencils and the history's own kernels, each writing only the elements the host model
/// says (integers: bit-exact).
const SOURCE: &str = concat!(
    include_str!("cl/stencils.cl"),
    r#"
#define MASK 0xffff
typedef int value_t;

kernel void triple(global value_t *x) {
    size_t i = get_global_id(0);
    x[i] = (x[i] * 3 + 1) & MASK;
}

kernel void add(global const value_t *x, global value_t *y) {
    size_t i = get_global_id(0);
    y[i] = (y[i] + x[i]) & MASK;
}

kernel void reverse(global const value_t *x, global value_t *y, uint n) {
    size_t i = get_global_id(0);
    y[n - 1 - i] = x[i];
}

kernel void shift(global const value_t *x, global value_t *y, uint n, uint s) {
    size_t i = get_global_id(0);
    y[i] = x[(i + s) % n];
}
"#
);

/// The grid: `W` by `H`, colored in slabs of 4 rows (the heat's work-groups are 8 x 4).
const W: usize = 64;
const H: usize = 40;
const N: usize = W * H;

impl Rng {
    /// A source from `from` and a different destination from `to`.
    fn pick(&mut self, from: &[usize], to: &[usize]) -> (usize, usize) {
        let d = to[self.below(to.len())];
        let others: Vec<usize> = from.iter().copied().filter(|&s| s != d).collect();
        (others[self.below(others.len())], d)
    }
}

/// The history's buffers (see [`history`]) and those kernels write.
const ALL: &[usize] = &[0, 1, 2, 3, 4];
const WRITTEN: &[usize] = &[0, 1, 2, 3];

/// The roots launches go through: the cost model, the split at halo depths 1 and 3, one device,
/// and the split weighted 3 : 1 (device 0 three times each other's share).
fn variants(root: &RootDevice) -> Vec<(&'static str, RootDevice)> {
    let weights: Vec<f64> = (0..root.len())
        .map(|d| if d == 0 { 3.0 } else { 1.0 })
        .collect();
    vec![
        ("model", root.clone().with_spread(SpreadPolicy::Model)),
        ("split", root.clone().with_halo_depth(1)),
        ("split depth 3", root.clone().with_halo_depth(3)),
        (
            "one device",
            root.clone().with_spread(SpreadPolicy::OneDevice),
        ),
        // Parts that do not follow the buffers' chunks.
        ("weighted", root.clone().with_weights(&weights).unwrap()),
    ]
}

/// The kernels of one root variant.
struct Kernels {
    heat: RootKernel,
    blur: RootKernel,
    triple: RootKernel,
    add: RootKernel,
    reverse: RootKernel,
    shift: RootKernel,
}

impl Kernels {
    fn new(root: &RootDevice) -> Self {
        let p = root.program(SOURCE).expect("the history's kernels build");
        let k = |name: &str| p.kernel(name).expect("kernel");
        Kernels {
            heat: k("heat"),
            blur: k("blur"),
            triple: k("triple"),
            add: k("add"),
            reverse: k("reverse"),
            shift: k("shift"),
        }
    }
}

/// What a history did, for the failure message and the summary.
#[derive(Default)]
struct Log {
    ops: Vec<String>,
    spreads: BTreeMap<String, usize>,
}

impl Log {
    fn op(&mut self, what: String) {
        self.ops.push(what);
    }

    fn spread(&mut self, ev: &MultiEvent) {
        let kind = spread_words(ev.spread());
        *self.spreads.entry(kind.to_string()).or_default() += 1;
    }

    fn recent(&self) -> String {
        let from = self.ops.len().saturating_sub(12);
        self.ops[from..].join("\n  ")
    }
}

/// One history of `ops` operations from `seed` over buffers colored by `root`.
fn history(root: &RootDevice, seed: u64, ops: usize) -> Log {
    let roots = variants(root);
    let kernels: Vec<Kernels> = roots.iter().map(|(_, r)| Kernels::new(r)).collect();
    let mut rng = Rng(seed);
    // Chunks of slabs of 4 rows (the heat's work-groups), of single rows, of the blur's
    // work-groups, and of 40 elements (following no work-group).
    let page = [4 * W, W, 64, 40][seed as usize % 4];
    // Three buffers the analysis reads (Auto), one declared a stencil of one row and one
    // replicated (kernels only read it).
    let accesses = [
        Access::Auto,
        Access::Auto,
        Access::Auto,
        Access::Stencil(W),
        Access::Replicated,
    ];
    let mut model: Vec<Vec<i32>> = (0..accesses.len())
        .map(|b| common::values(N, seed * 8 + b as u64))
        .collect();
    let mut bufs: Vec<ColoredBuffer<i32>> = (accesses.iter().zip(&model))
        .map(|(&a, data)| colored_as(root, data, page, a))
        .collect();
    // Two plain buffers of the root's context, which launches read and write whole, and which
    // the host copies between on any of the root's queues (not waited for: later launches keep
    // the order of one in-order queue).
    let q0 = &root.queues()[0];
    let mut plain_model: Vec<Vec<i32>> = (0..2)
        .map(|p| common::values(N, seed * 8 + 5 + p))
        .collect();
    let mut plain: Vec<Buffer<i32>> = (plain_model.iter())
        .map(|data| Buffer::from_slice(q0, data).unwrap())
        .collect();
    let mut copies: Vec<Event> = Vec::new();
    let mut pending: Vec<MultiEvent> = Vec::new();
    let mut log = Log::default();
    for step in 0..ops {
        let v = rng.below(roots.len());
        let (name, k) = (roots[v].0, &kernels[v]);
        // Kernels write the first four buffers, gathers (reverse, shift) and scans the first
        // three (the stencil's halos would be stale), and read any but the stencil's beyond
        // its declared reach.
        let any = |rng: &mut Rng| rng.pick(ALL, WRITTEN);
        let auto = |rng: &mut Rng| rng.pick(&[0, 1, 2, 4], &[0, 1, 2]);
        let written = |rng: &mut Rng| WRITTEN[rng.below(WRITTEN.len())];
        let choice = rng.below(112);
        let mut launched: Option<MultiEvent> = None;
        match choice {
            0..=17 => {
                let (s, d) = any(&mut rng);
                log.op(format!("{step}: heat {s} -> {d} ({name})"));
                let launch = k.heat.launch().arg(&bufs[s]).arg(&bufs[d]);
                let launch = launch.arg(W as i32).arg(H as i32);
                // SAFETY: work-item (x, y) writes u[y * W + x] and reads t within one row of
                // it, inside the grid; s != d.
                let ev = unsafe { launch.nd_range(Range::d2(W, H), Range::d2(8, 4)) };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[d] = host_heat(&model[s], W, H);
            }
            18..=35 => {
                let (s, d) = any(&mut rng);
                log.op(format!("{step}: blur {s} -> {d} ({name})"));
                let launch = k.blur.launch().arg(&bufs[s]).arg(&bufs[d]).arg(N as u32);
                // SAFETY: work-item i < N writes y[i] and reads x[i - 1 ..= i + 1] in 0..N.
                let ev = unsafe { launch.nd_range(N, Range::d1(64)) };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[d] = host_blur(&model[s]);
            }
            36..=45 => {
                // Over the whole buffer or its first m elements, in work-groups of 64 or as a
                // plain range (the local size the library's, rounded up past m).
                let b = written(&mut rng);
                let m = N - [0, rng.below(N / 2)][rng.below(2)];
                let nd = m == N && rng.below(2) == 0;
                log.op(format!("{step}: triple {b} over {m}, nd {nd} ({name})"));
                let launch = k.triple.launch().arg(&bufs[b]);
                // SAFETY: work-item i < m <= N reads and writes x[i].
                let ev = unsafe {
                    match nd {
                        true => launch.nd_range(m, Range::d1(64)),
                        false => launch.range(m),
                    }
                };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[b][..m]
                    .iter_mut()
                    .for_each(|x| *x = (*x * 3 + 1) & 0xffff);
            }
            46..=53 => {
                let (s, d) = any(&mut rng);
                log.op(format!("{step}: add {s} into {d} ({name})"));
                // SAFETY: work-item i < N reads x[i] and y[i], writes y[i]; s != d.
                let ev = unsafe {
                    k.add
                        .launch()
                        .arg(&bufs[s])
                        .arg(&bufs[d])
                        .nd_range(N, Range::d1(64))
                };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                let (src, dst) = (model[s].clone(), &mut model[d]);
                dst.iter_mut()
                    .zip(src)
                    .for_each(|(y, x)| *y = (*y + x) & 0xffff);
            }
            54..=59 => {
                let (s, d) = auto(&mut rng);
                log.op(format!("{step}: reverse {s} -> {d} ({name})"));
                let launch = k.reverse.launch().arg(&bufs[s]).arg(&bufs[d]).arg(N as u32);
                // SAFETY: work-item i < N reads x[i] and writes y[N - 1 - i]; s != d.
                let ev = unsafe { launch.nd_range(N, Range::d1(64)) };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[d] = model[s].iter().rev().copied().collect();
            }
            60..=65 => {
                let (s, d) = auto(&mut rng);
                let by = rng.below(N) as u32;
                log.op(format!("{step}: shift {s} -> {d} by {by} ({name})"));
                let launch = k.shift.launch().arg(&bufs[s]).arg(&bufs[d]).arg(N as u32);
                // SAFETY: work-item i < N writes y[i] and reads x[(i + by) % N]; s != d.
                let ev = unsafe { launch.arg(by).nd_range(N, Range::d1(64)) };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[d] = (0..N).map(|i| model[s][(i + by as usize) % N]).collect();
            }
            66..=70 => {
                let b = rng.below(accesses.len());
                let data = common::values(N, rng.next());
                log.op(format!("{step}: write {b}"));
                bufs[b].write(&data).unwrap();
                model[b] = data;
            }
            71..=74 => {
                let b = rng.below(accesses.len());
                let value = rng.below(2000) as i32 - 1000;
                log.op(format!("{step}: fill {b} with {value}"));
                bufs[b].fill(value).unwrap();
                model[b] = vec![value; N];
            }
            75..=86 => {
                let b = rng.below(accesses.len());
                log.op(format!("{step}: read {b}"));
                let got = bufs[b].read().unwrap();
                check(&got, &model[b], seed, &log);
            }
            87..=91 => {
                let b = rng.below(accesses.len());
                log.op(format!("{step}: reduce_sum {b} ({name})"));
                let got = algorithms::reduce_sum(&roots[v].1, &bufs[b]).unwrap();
                // Integers wrap, as on one device.
                let want = model[b].iter().fold(0i32, |a, &x| a.wrapping_add(x));
                assert_eq!(got, want, "seed {seed}, after\n  {}", log.recent());
            }
            92..=95 => {
                // Into a buffer the analysis reads (a scan into the stencil's would leave its
                // halos stale: refused), from any.
                let (s, d) = rng.pick(ALL, &[0, 1, 2]);
                // Sums of sums would overflow the kernels' int arithmetic (undefined in C):
                // only buffers of 16-bit values are scanned.
                if model[s].iter().any(|x| x.unsigned_abs() > 0xffff) {
                    continue;
                }
                log.op(format!("{step}: inclusive scan {s} -> {d} ({name})"));
                let (src, dst) = pair(&mut bufs, s, d);
                algorithms::inclusive_scan_sum(&roots[v].1, src, dst).unwrap();
                let mut sum = 0i32;
                let scanned = (model[s].iter()).map(|&x| {
                    sum += x;
                    sum
                });
                model[d] = scanned.collect();
            }
            96..=97 => {
                // A part lent out: read after every pending launch (the user orders it).
                let b = rng.below(accesses.len());
                let d = rng.below(root.len());
                log.op(format!("{step}: read part {d} of {b}"));
                pending.drain(..).for_each(|ev| ev.wait().unwrap());
                if let Some(part) = bufs[b].part(d) {
                    let (lo, hi) = bufs[b].stored()[d];
                    let got = part.read(&root.queues()[d]).unwrap();
                    check(&got, &model[b][lo..hi], seed, &log);
                }
            }
            100..=103 => {
                let (s, p) = (rng.below(accesses.len()), rng.below(2));
                log.op(format!("{step}: add {s} into plain {p} ({name})"));
                // SAFETY: work-item i < N reads x[i] and y[i], writes y[i].
                let ev = unsafe {
                    k.add
                        .launch()
                        .arg(&bufs[s])
                        .arg(&plain[p])
                        .nd_range(N, Range::d1(64))
                };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                let src = model[s].clone();
                (plain_model[p].iter_mut().zip(src)).for_each(|(y, x)| *y = (*y + x) & 0xffff);
            }
            104..=106 => {
                let (p, d) = (rng.below(2), written(&mut rng));
                let by = rng.below(N) as u32;
                log.op(format!("{step}: shift plain {p} -> {d} by {by} ({name})"));
                let launch = k.shift.launch().arg(&plain[p]).arg(&bufs[d]).arg(N as u32);
                // SAFETY: work-item i < N writes y[i] and reads x[(i + by) % N].
                let ev = unsafe { launch.arg(by).nd_range(N, Range::d1(64)) };
                launched = Some(ev.unwrap_or_else(|e| panic!("{}: {e}", log.recent())));
                model[d] = (0..N)
                    .map(|i| plain_model[p][(i + by as usize) % N])
                    .collect();
            }
            107..=108 => {
                // The host's own command on one of the root's queues, after the launches that
                // wrote its source (the user orders that much), not waited for.
                let (p, q) = (rng.below(2), rng.below(root.len()));
                log.op(format!(
                    "{step}: copy plain {p} to plain {} on queue {q}",
                    1 - p
                ));
                pending.drain(..).for_each(|ev| ev.wait().unwrap());
                let (src, dst) = pair(&mut plain, p, 1 - p);
                copies.push(src.copy_to(&root.queues()[q], dst).unwrap());
                plain_model[1 - p] = plain_model[p].clone();
            }
            109..=111 => {
                let p = rng.below(2);
                log.op(format!("{step}: read plain {p}"));
                pending.drain(..).for_each(|ev| ev.wait().unwrap());
                copies.drain(..).for_each(|ev| ev.wait().unwrap());
                check(&plain[p].read(q0).unwrap(), &plain_model[p], seed, &log);
            }
            _ => {
                log.op(format!("{step}: wait for {} launches", pending.len()));
                pending.drain(..).for_each(|ev| ev.wait().unwrap());
            }
        }
        if let Some(ev) = launched {
            log.spread(&ev);
            // Half the launches are waited for at once, the others later (or never).
            match rng.below(2) {
                0 => ev
                    .wait()
                    .unwrap_or_else(|e| panic!("{}: {e}", log.recent())),
                _ => pending.push(ev),
            }
            if pending.len() > 8 {
                pending.remove(0).wait().unwrap();
            }
        }
    }
    for (b, buf) in bufs.iter().enumerate() {
        log.op(format!("end: read {b}"));
        check(&buf.read().unwrap(), &model[b], seed, &log);
    }
    pending.drain(..).for_each(|ev| ev.wait().unwrap());
    copies.drain(..).for_each(|ev| ev.wait().unwrap());
    for (p, buf) in plain.iter().enumerate() {
        log.op(format!("end: read plain {p}"));
        check(&buf.read(q0).unwrap(), &plain_model[p], seed, &log);
    }
    log
}

/// `got` equals `want`, or a panic naming the seed, the first differing element and the
/// operations before.
fn check(got: &[i32], want: &[i32], seed: u64, log: &Log) {
    if let Some(i) = (0..want.len()).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "seed {seed}: element {i} is {:?}, the model says {} ({} of {} differ), after\n  {}",
            got.get(i),
            want[i],
            (0..want.len())
                .filter(|&i| got.get(i) != want.get(i))
                .count(),
            want.len(),
            log.recent()
        );
    }
}

#[test]
fn random_histories_equal_the_host_model() {
    let Some(root) = root_device("random_histories_equal_the_host_model") else {
        return;
    };
    let ops = env_or("CLGROUPS_HISTORY_OPS", 400);
    let seeds = env_or("CLGROUPS_HISTORY_SEEDS", 6u64);
    for placement in placements(&root) {
        let root = root.clone().with_placement(placement);
        for seed in 0..seeds {
            let log = history(&root, seed + 1, ops);
            eprintln!(
                "{placement} placement, seed {}: {} operations right; launches: {:?}",
                seed + 1,
                log.ops.len(),
                log.spreads
            );
        }
    }
}
