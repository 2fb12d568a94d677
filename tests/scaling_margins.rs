//! Parts that keep their halos: kernels written for one device (nothing declared) over a root
//! device in partitioned placement, split by their footprints, where each device reads a
//! margin beyond its own elements and writes only its own. After a buffer's first launch its
//! parts hold their margins, so a launch copies nothing within a device and fetches only the
//! margin elements written since (the launch's own counters, `Spread::Fetched`); a 2-D heat
//! stencil and a 1-D blur, iterated, equal the host's result bit for bit after every step; a
//! buffer read again unchanged fetches nothing; host writes, fills and other kernels writing
//! the buffer make the margins stale, and the next launch fetches them again; a part lent out
//! through `ColoredBuffer::part` ends the margins.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use common::colored;
use common::partitioned::{heat_steps, host_blur, roots};

use clgroups::scaling::{ColoredBuffer, MultiEvent, Placement, Spread, SpreadPolicy};
use clgroups::Range;

/// The stencils (`tests/cl/stencils.cl`) and this test's own kernels.
const SOURCE: &str = concat!(
    include_str!("cl/stencils.cl"),
    r#"
#define SCALE 2

kernel void twice(global int *x) {
    size_t i = get_global_id(0);
    x[i] = SCALE * x[i] + 1;
}
"#
);

/// Bytes between and within devices of a launch split by footprints.
fn bytes(ev: &MultiEvent, what: &str) -> (u64, u64) {
    match ev.spread() {
        Spread::Fetched {
            arguments,
            between,
            within,
        } => {
            assert_eq!(arguments, &[0], "{what}");
            (*between, *within)
        }
        other => panic!("{what}: {other:?}"),
    }
}

/// Devices that own elements of `b`.
fn busy(b: &ColoredBuffer<i32>) -> u64 {
    b.chunks().iter().filter(|&&c| c > 0).count() as u64
}

#[test]
fn heat_keeps_its_halo_rows() {
    let (w, h, steps) = (64usize, 96usize, 8);
    let init = common::values(w * h, 5);
    for root in roots("heat_keeps_its_halo_rows") {
        let k = root.program(SOURCE).unwrap().kernel("heat").unwrap();
        let halo = 2 * (busy(&colored(&root, &init, 4 * w)) - 1) * w as u64 * 4;
        heat_steps(&root, &k, (w, h), &init, steps, |step, ev| {
            let (between, within) = bytes(ev, &format!("step {step}"));
            // Each buffer's first launch as input moves its parts into allocations with
            // margins (its own elements, once); after that nothing moves within a device, and
            // the halo rows the other buffer's launch wrote come from their owners.
            let first = if step < 2 { (w * h * 4) as u64 } else { 0 };
            assert_eq!((between, within), (halo, first), "step {step}");
        });
    }
}

#[test]
fn blur_fetches_only_stale_margins() {
    let (n, local) = (64 * 40usize, 64usize);
    let init = common::values(n, 6);
    for root in roots("blur_fetches_only_stale_margins") {
        let p = root.program(SOURCE).unwrap();
        let (blur, twice) = (p.kernel("blur").unwrap(), p.kernel("twice").unwrap());
        let mut x = colored(&root, &init, local);
        let y = colored(&root, &vec![0; n], local);
        let halo = 2 * (busy(&x) - 1) * 4;
        let mut host = init.clone();
        let run = |x: &ColoredBuffer<i32>, host: &[i32], what: &str| {
            let launch = blur.launch().arg(x).arg(&y).arg(n as u32);
            // SAFETY: work-item i < n writes y[i] and reads x[i - 1 ..= i + 1] inside 0..n.
            let ev = unsafe { launch.nd_range(n, Range::d1(local)) }.unwrap();
            ev.wait().unwrap();
            assert_eq!(y.read().unwrap(), host_blur(host), "{what}");
            bytes(&ev, what)
        };
        assert_eq!(run(&x, &host, "first"), (halo, n as u64 * 4));
        // Nothing wrote x since: its margins are current, nothing moves.
        assert_eq!(run(&x, &host, "again"), (0, 0));
        assert_eq!(run(&x, &host, "and again"), (0, 0));
        // A host write makes them stale.
        host = common::values(n, 7);
        x.write(&host).unwrap();
        assert_eq!(run(&x, &host, "after a write"), (halo, 0));
        assert_eq!(run(&x, &host, "unchanged"), (0, 0));
        // Another kernel writing x (split by its own ids, each device its own elements).
        // SAFETY: work-item i < n touches x[i].
        unsafe { twice.launch().arg(&x).nd_range(n, Range::d1(local)) }
            .unwrap()
            .wait()
            .unwrap();
        host.iter_mut().for_each(|v| *v = 2 * *v + 1);
        assert_eq!(x.read().unwrap(), host);
        assert_eq!(run(&x, &host, "after a kernel"), (halo, 0));
        // A fill.
        x.fill(9).unwrap();
        host = vec![9; n];
        assert_eq!(run(&x, &host, "after a fill"), (halo, 0));
        // Ping-pong with y: each step's input was the previous step's output.
        let mut z = colored(&root, &vec![0; n], local);
        let mut want = host;
        let (mut src, mut dst) = (&mut x, &mut z);
        for step in 0..4 {
            let launch = blur.launch().arg(&*src).arg(&*dst).arg(n as u32);
            // SAFETY: as above.
            let ev = unsafe { launch.nd_range(n, Range::d1(local)) }.unwrap();
            ev.wait().unwrap();
            want = host_blur(&want);
            assert_eq!(dst.read().unwrap(), want, "step {step}");
            let (between, within) = bytes(&ev, &format!("step {step}"));
            // x's margins are current at step 0 (nothing wrote it since the last run); z's
            // parts move into allocations with margins at step 1.
            let expected = match step {
                0 => (0, 0),
                1 => (halo, n as u64 * 4),
                _ => (halo, 0),
            };
            assert_eq!((between, within), expected, "step {step}");
            std::mem::swap(&mut src, &mut dst);
        }
        // Four steps: x holds the last. A part lent out (writes through it would not be
        // seen): no margins from then on, each device copies its own elements again.
        assert!(x.part(0).is_some());
        assert_eq!(run(&x, &want, "lent"), (halo, n as u64 * 4));
    }
}

/// Bytes between and within devices of a launch split by footprints, whatever its arguments.
fn moved(ev: &MultiEvent, what: &str) -> (u64, u64) {
    match ev.spread() {
        Spread::Fetched {
            between, within, ..
        } => (*between, *within),
        other => panic!("{what}: {other:?}"),
    }
}

/// Whether launch `step` of a chain started at `start` with depth `k` exchanges halos.
fn exchanges(step: usize, start: usize, k: usize) -> bool {
    (step - start) % k == 0
}

#[test]
fn deeper_heat_margins_exchange_once_every_k_steps() {
    let (w, h, steps) = (64usize, 96usize, 21);
    let init = common::values(w * h, 8);
    for depth in 1..=4 {
        for root in roots("deeper_heat_margins_exchange_once_every_k_steps") {
            let root = root.with_halo_depth(depth);
            let k = root.program(SOURCE).unwrap().kernel("heat").unwrap();
            let mut count = 0;
            // `heat_steps` reads the output after every step, between exchanges too.
            heat_steps(&root, &k, (w, h), &init, steps, |step, ev| {
                let what = format!("k = {depth}, step {step}");
                let (between, within) = moved(ev, &what);
                assert_eq!(between > 0, exchanges(step, 0, depth), "{what}");
                count += usize::from(between > 0);
                if depth > 1 && step > 0 {
                    assert_eq!(within, 0, "{what}");
                }
            });
            assert_eq!(count, steps.div_ceil(depth), "k = {depth}");
        }
    }
}

#[test]
fn deeper_blur_margins_see_writes_fills_and_kernels() {
    let (n, local, steps) = (64 * 40usize, 64usize, 24);
    let init = common::values(n, 9);
    for depth in 1..=4 {
        for root in roots("deeper_blur_margins_see_writes_fills_and_kernels") {
            let root = root.with_halo_depth(depth);
            let p = root.program(SOURCE).unwrap();
            let (blur, twice) = (p.kernel("blur").unwrap(), p.kernel("twice").unwrap());
            let mut x = colored(&root, &init, local);
            let mut z = colored(&root, &vec![0; n], local);
            let (mut want, mut start) = (init.clone(), 0);
            for step in 0..steps {
                let what = format!("k = {depth}, step {step}");
                let (src, dst) = match step % 2 {
                    0 => (&mut x, &mut z),
                    _ => (&mut z, &mut x),
                };
                // In the middle of a chain: a host write, a fill, another kernel writing the
                // input; the next launch fetches its halos again.
                match step {
                    7 => {
                        want = common::values(n, 10);
                        src.write(&want).unwrap();
                    }
                    12 => {
                        src.fill(3).unwrap();
                        want = vec![3; n];
                    }
                    17 => {
                        // SAFETY: work-item i < n touches x[i].
                        unsafe { twice.launch().arg(&*src).nd_range(n, Range::d1(local)) }
                            .unwrap()
                            .wait()
                            .unwrap();
                        want.iter_mut().for_each(|v| *v = 2 * *v + 1);
                    }
                    _ => {}
                }
                if [7, 12, 17].contains(&step) {
                    start = step;
                }
                let launch = blur.launch().arg(&*src).arg(&*dst).arg(n as u32);
                // SAFETY: work-item i < n writes y[i] and reads x[i - 1 ..= i + 1] inside 0..n.
                let ev = unsafe { launch.nd_range(n, Range::d1(local)) }.unwrap();
                ev.wait().unwrap();
                want = host_blur(&want);
                assert_eq!(dst.read().unwrap(), want, "{what}");
                let (between, _) = moved(&ev, &what);
                assert_eq!(between > 0, exchanges(step, start, depth), "{what}");
            }
        }
    }
}

#[test]
fn margins_deeper_than_a_part_fall_back_to_one_step() {
    // Parts of one or two work-groups of 64: three more groups either side do not fit.
    let (n, local) = (64 * 4usize, 64usize);
    let init = common::values(n, 11);
    for root in roots("margins_deeper_than_a_part_fall_back_to_one_step") {
        let root = root.with_halo_depth(4);
        let blur = root.program(SOURCE).unwrap().kernel("blur").unwrap();
        let (mut x, mut y) = (
            colored(&root, &init, local),
            colored(&root, &vec![0; n], local),
        );
        let mut want = init.clone();
        for step in 0..6 {
            let launch = blur.launch().arg(&x).arg(&y).arg(n as u32);
            // SAFETY: as above.
            let ev = unsafe { launch.nd_range(n, Range::d1(local)) }.unwrap();
            ev.wait().unwrap();
            want = host_blur(&want);
            assert_eq!(y.read().unwrap(), want, "step {step}");
            let halo = 2 * (busy(&x) - 1) * 4;
            assert_eq!(
                moved(&ev, "tiny").0,
                halo,
                "step {step}: halos at every step"
            );
            std::mem::swap(&mut x, &mut y);
        }
    }
}

#[test]
fn margins_are_stale_once_a_chain_ran_whole_on_one_device() {
    // A buffer moved whole to one device and written there leaves its parts' margins stale:
    // a launch that splits again fetches them (two H200s: the blur of 2^28 and heat 8192²
    // read stale halos once the cost model had moved the chain to one device and back).
    let (n, local) = (64 * 40usize, 64usize);
    let init = common::values(n, 12);
    let Some(root) = common::root_device("margins_are_stale_once_a_chain_ran_whole_on_one_device")
    else {
        return;
    };
    let root = root.with_placement(Placement::Partitioned);
    for depth in [1, 3] {
        let split = root.clone().with_halo_depth(depth);
        let one = root.clone().with_spread(SpreadPolicy::OneDevice);
        let on_split = split.program(SOURCE).unwrap().kernel("blur").unwrap();
        let on_one = one.program(SOURCE).unwrap().kernel("blur").unwrap();
        let mut x = colored(&root, &init, local);
        let mut y = colored(&root, &vec![0; n], local);
        let mut want = init.clone();
        for step in 0..20 {
            let what = format!("depth {depth}, step {step}");
            let (src, dst) = match step % 2 {
                0 => (&mut x, &mut y),
                _ => (&mut y, &mut x),
            };
            // Split, then whole on one device (steps 4 to 7), then split again where a window
            // of deeper margins would still trust them (at depth 3 one opened at step 3).
            let k = if (4..8).contains(&step) {
                &on_one
            } else {
                &on_split
            };
            let launch = k.launch().arg(&*src).arg(&*dst).arg(n as u32);
            // SAFETY: work-item i < n writes y[i] and reads x[i - 1 ..= i + 1] inside 0..n.
            unsafe { launch.nd_range(n, Range::d1(local)) }
                .unwrap()
                .wait()
                .unwrap();
            want = host_blur(&want);
            // Read at the end of each phase and at the first split after the one-device one.
            if [3, 7, 8, 19].contains(&step) {
                assert_eq!(dst.read().unwrap(), want, "{what}");
            }
        }
    }
}
