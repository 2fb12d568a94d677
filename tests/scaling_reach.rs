//! Kernels that reach across device chunks, over a root device in both placements: stencils
//! (1-D and 2-D), a gather, a scatter, an atomic reduction, a prefix sum, a kernel indexed by
//! `get_global_id(1)` in a 2-D split, a grid-stride loop and a helper asking for the global
//! size. Each launch must give exactly the host's answer or be refused before anything runs
//! (the output untouched); in checked mode, a declaration that does not hold is reported after
//! the launch as `Error::OutOfChunk`. Never a silent wrong answer.
//! Every root device here is strict ([`RootDevice::strict`]): the refusals are exactly what
//! neither the contract nor the kernels' footprints (the indices of their accesses, read from
//! the source) prove: undeclared stencils, gathers, prefix sums, row sums and grid-stride
//! loops split, with the
//! elements beyond each device's chunk fetched from their owners.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use common::{colored_as, Poison};

use clgroups::scaling::{checked_mode, Access, ColoredBuffer, MultiEvent, Placement, RootDevice};
use clgroups::{Buffer, Error, Range};

const SOURCE: &str = include_str!("cl/scaling_reach.cl");

/// The roots of `common::roots` in strict mode: what the contract cannot split is refused
/// (tests/scaling_implicit.rs runs the same kernels without it).
fn strict_roots(test: &str) -> Vec<RootDevice> {
    common::roots(test)
        .into_iter()
        .map(RootDevice::strict)
        .collect()
}

/// Work-group size of the 1-D cases.
const LOCAL: usize = 64;
/// 61 work-groups: an uneven split (31 + 30 on two devices).
const N: usize = LOCAL * 61;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Exactly the host's answer.
    Correct,
    /// Refused before enqueueing (`Error::InvalidLaunch`), the output untouched.
    Refused,
    /// In checked mode, `Error::OutOfChunk` after the launch.
    Caught,
}

fn data(n: usize, seed: u64) -> Vec<i32> {
    common::values(n, seed)
        .into_iter()
        .map(|v| v % 1000)
        .collect()
}

/// Checks one launch's outcome against `want`; `before` is the output before the launch.
fn expect(
    case: &str,
    root: &RootDevice,
    want: Want,
    launched: clgroups::Result<MultiEvent>,
    out: Vec<i32>,
    before: &[i32],
    reference: &[i32],
) {
    let case = format!("{case} ({} placement)", root.placement());
    match (want, launched) {
        (Want::Correct, Ok(_)) => {
            assert_eq!(out.len(), reference.len(), "{case}");
            let wrong = (0..out.len()).find(|&i| out[i] != reference[i]);
            assert!(
                wrong.is_none(),
                "{case}: WRONG at {wrong:?}: got {:?}, want {:?}",
                wrong.map(|i| out[i]),
                wrong.map(|i| reference[i])
            );
            eprintln!("{case}: correct");
        }
        (Want::Refused, Err(e @ Error::InvalidLaunch { .. })) => {
            assert_eq!(out, before, "{case}: refused, but the output changed");
            eprintln!("{case}: refused: {e}");
        }
        (Want::Caught, Err(e @ Error::OutOfChunk { .. })) => eprintln!("{case}: caught: {e}"),
        (want, Ok(_)) => panic!("{case}: want {want:?}, but the launch ran"),
        (want, Err(e)) => panic!("{case}: want {want:?}, got {e}"),
    }
}

fn host_stencil(x: &[i32]) -> Vec<i32> {
    (0..x.len())
        .map(|i| x[i] + if i > 0 { x[i - 1] } else { 0 } + x.get(i + 1).copied().unwrap_or(0))
        .collect()
}

#[test]
fn stencil_1d() {
    for root in strict_roots("stencil_1d") {
        let k = root.program(SOURCE).unwrap().kernel("stencil").unwrap();
        let xs = data(N, 1);
        let reference = host_stencil(&xs);
        let partitioned = root.placement() == Placement::Partitioned;
        let cases = [
            // The footprint reads x[i - 1 ..= i + 1]: halos fetched.
            (Access::Auto, Want::Correct),
            (Access::Halo(1), Want::Correct),
            (Access::Replicated, Want::Correct),
            (
                Access::Halo(0),
                match (partitioned, checked_mode().unwrap()) {
                    (false, _) => Want::Correct,
                    (true, true) => Want::Caught,
                    (true, false) => continue, // a false declaration, unchecked: not run
                },
            ),
        ];
        for (access, want) in cases {
            let x = colored_as(&root, &xs, LOCAL, access);
            let y = colored_as(&root, &vec![i32::POISON; N], LOCAL, Access::Auto);
            let before = y.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&y)
                    .arg(&x)
                    .arg(N as u32)
                    .nd_range(Range::d1(N), Range::d1(LOCAL))
            };
            let case = format!("1-D stencil, x {access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                y.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

#[test]
fn stencil_2d_split_by_rows() {
    let (w, h) = (64usize, 61usize);
    for root in strict_roots("stencil_2d_split_by_rows") {
        let k = root.program(SOURCE).unwrap().kernel("stencil2d").unwrap();
        let xs = data(w * h, 2);
        let at = |r: usize, c: usize| xs[r * w + c];
        let reference: Vec<i32> = (0..w * h)
            .map(|i| {
                let (r, c) = (i / w, i % w);
                let mut s = 4 * at(r, c);
                if r > 0 {
                    s -= at(r - 1, c);
                }
                if r + 1 < h {
                    s -= at(r + 1, c);
                }
                if c > 0 {
                    s -= at(r, c - 1);
                }
                if c + 1 < w {
                    s -= at(r, c + 1);
                }
                s
            })
            .collect();
        let partitioned = root.placement() == Placement::Partitioned;
        let cases = [
            (Access::Auto, Access::Auto, Want::Correct),
            (Access::Partitioned, Access::Halo(w), Want::Correct),
            (Access::Partitioned, Access::Replicated, Want::Correct),
        ];
        for (y_access, x_access, want) in cases {
            let want = if partitioned { want } else { Want::Correct };
            let x = colored_as(&root, &xs, w, x_access);
            let y = colored_as(&root, &vec![i32::POISON; w * h], w, y_access);
            let before = y.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&y)
                    .arg(&x)
                    .arg(w as u32)
                    .arg(h as u32)
                    .nd_range(Range::d2(w, h), Range::d2(16, 1))
            };
            if let Ok(ev) = &launched {
                assert_eq!(ev.partition().dim, 1, "rows are split");
            }
            let case = format!("2-D stencil, y {y_access:?}, x {x_access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                y.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

/// `idx` reverses the array, so every device reads or writes the other's chunk.
fn reversed(n: usize) -> Vec<u32> {
    (0..n as u32).rev().collect()
}

#[test]
fn gather_and_scatter() {
    let xs = data(N, 3);
    let reference: Vec<i32> = xs.iter().rev().copied().collect();
    for root in strict_roots("gather_and_scatter") {
        let prog = root.program(SOURCE).unwrap();
        let partitioned = root.placement() == Placement::Partitioned;
        let ix = {
            let mut b = match root.placement() {
                Placement::Partitioned => {
                    ColoredBuffer::<u32>::with_layout(&root, N, LOCAL * 4, Access::Auto)
                }
                Placement::Shared => ColoredBuffer::<u32>::new(&root, N),
            }
            .unwrap();
            b.write(&reversed(N)).unwrap();
            b
        };
        assert_eq!(ix.read().unwrap(), reversed(N));
        for (kernel, access, want) in [
            // x is read at unknown indices: fetched whole; y is written at the own id.
            ("gather", Access::Auto, Want::Correct),
            ("gather", Access::Replicated, Want::Correct),
            ("scatter", Access::Auto, Want::Refused),
            ("scatter", Access::Partitioned, Want::Caught),
        ] {
            let want = match (partitioned, want) {
                (false, _) => Want::Correct,
                (true, Want::Caught) if !checked_mode().unwrap() => continue,
                (true, w) => w,
            };
            let k = prog.kernel(kernel).unwrap();
            // The gather declares its input, the scatter its output.
            let (x_access, y_access) = match kernel {
                "gather" => (access, Access::Auto),
                _ => (Access::Auto, access),
            };
            let x = colored_as(&root, &xs, LOCAL, x_access);
            let y = colored_as(&root, &vec![i32::POISON; N], LOCAL, y_access);
            let before = y.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&y)
                    .arg(&x)
                    .arg(&ix)
                    .nd_range(Range::d1(N), Range::d1(LOCAL))
            };
            let case = format!("{kernel}, declared {access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                y.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

#[test]
fn atomic_reduction() {
    let xs = data(N, 4);
    let total: i32 = xs.iter().sum();
    for root in strict_roots("atomic_reduction") {
        let k = root.program(SOURCE).unwrap().kernel("atomic_sum").unwrap();
        let partitioned = root.placement() == Placement::Partitioned;
        let want = if partitioned {
            Want::Refused
        } else {
            Want::Correct
        };
        let x = colored_as(&root, &xs, LOCAL, Access::Auto);
        // Into a one-element colored buffer.
        let sum = colored_as(&root, &[0], 1, Access::Auto);
        // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
        let launched = unsafe {
            k.launch()
                .arg(&sum)
                .arg(&x)
                .nd_range(Range::d1(N), Range::d1(LOCAL))
        };
        expect(
            "atomic sum, colored",
            &root,
            want,
            launched,
            sum.read().unwrap(),
            &[0],
            &[total],
        );
        // Into a plain buffer of the root device's context.
        let q = &root.queues()[0];
        let plain = Buffer::from_slice(q, &[0i32]).unwrap();
        // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
        let launched = unsafe {
            k.launch()
                .arg(&plain)
                .arg(&x)
                .nd_range(Range::d1(N), Range::d1(LOCAL))
        };
        root.finish().unwrap();
        let got = plain.read(q).unwrap();
        expect(
            "atomic sum, plain buffer",
            &root,
            want,
            launched,
            got,
            &[0],
            &[total],
        );
    }
}

#[test]
fn prefix_sum() {
    let xs = data(N, 5);
    let reference: Vec<i32> = xs
        .iter()
        .scan(0, |s, &v| {
            *s += v;
            Some(*s)
        })
        .collect();
    for root in strict_roots("prefix_sum") {
        let k = root.program(SOURCE).unwrap().kernel("prefix").unwrap();
        let partitioned = root.placement() == Placement::Partitioned;
        for (access, want) in [
            // x[0..=i]: device 1 fetches device 0's chunk.
            (Access::Auto, Want::Correct),
            (Access::Replicated, Want::Correct),
        ] {
            let want = if partitioned { want } else { Want::Correct };
            let x = colored_as(&root, &xs, LOCAL, access);
            let y = colored_as(&root, &vec![i32::POISON; N], LOCAL, Access::Auto);
            let before = y.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&y)
                    .arg(&x)
                    .nd_range(Range::d1(N), Range::d1(LOCAL))
            };
            let case = format!("prefix sum, x {access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                y.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

#[test]
fn rows_indexed_by_global_id_1() {
    let (w, rows, local) = (8usize, 16 * 61, 16usize);
    let xs = data(w * rows, 6);
    let reference: Vec<i32> = xs.chunks(w).map(|r| r.iter().sum()).collect();
    for root in strict_roots("rows_indexed_by_global_id_1") {
        let k = root.program(SOURCE).unwrap().kernel("row_sums").unwrap();
        let partitioned = root.placement() == Placement::Partitioned;
        for (access, want) in [
            // Rows r of x and out[r]: each device's own, by the footprint.
            (Access::Auto, Want::Correct),
            (Access::Partitioned, Want::Correct),
        ] {
            let want = if partitioned { want } else { Want::Correct };
            let x = colored_as(&root, &xs, local * w, access);
            let out = colored_as(&root, &vec![i32::POISON; rows], local, access);
            let before = out.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&out)
                    .arg(&x)
                    .arg(w as u32)
                    .nd_range(Range::d2(1, rows), Range::d2(1, local))
            };
            if let Ok(ev) = &launched {
                assert_eq!(ev.partition().dim, 1);
                assert!(ev.events().iter().all(Option::is_some), "both devices work");
            }
            let case = format!("row sums by get_global_id(1), {access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                out.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

/// A grid-stride loop sees the whole launch's `get_global_size(0)`: each element is updated
/// once, not once per device.
#[test]
fn grid_stride_loop_adds_once() {
    let (xs, ys) = (data(N, 7), data(N, 8));
    let reference: Vec<i32> = xs.iter().zip(&ys).map(|(x, y)| y + 3 * x).collect();
    let global = LOCAL * 8;
    for root in strict_roots("grid_stride_loop_adds_once") {
        let k = root.program(SOURCE).unwrap().kernel("grid_stride").unwrap();
        let partitioned = root.placement() == Placement::Partitioned;
        for (access, want) in [
            // Undeclared: split by its footprint, one run per stride of each device's part.
            (Access::Auto, Want::Correct),
            (Access::Replicated, Want::Refused),
            // Declared, but the strided indices leave the chunks: caught by the chunk check.
            (Access::Partitioned, Want::Refused),
        ] {
            let want = if partitioned { want } else { Want::Correct };
            let x = colored_as(&root, &xs, LOCAL, Access::Replicated);
            let y = colored_as(&root, &ys, LOCAL, access);
            let before = y.read().unwrap();
            // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
            let launched = unsafe {
                k.launch()
                    .arg(&y)
                    .arg(&x)
                    .arg(3i32)
                    .arg(N as u32)
                    .nd_range(Range::d1(global), Range::d1(LOCAL))
            };
            if let Ok(ev) = &launched {
                assert!(ev.events().iter().all(Option::is_some), "both devices work");
            }
            let case = format!("grid-stride SAXPY, y {access:?}");
            expect(
                &case,
                &root,
                want,
                launched,
                y.read().unwrap(),
                &before,
                &reference,
            );
        }
    }
}

/// A helper function cannot see the whole launch's values: refused over several devices.
#[test]
fn helpers_asking_for_the_global_size_are_refused() {
    for root in strict_roots("helpers_asking_for_the_global_size_are_refused") {
        let k = root.program(SOURCE).unwrap().kernel("via_helper").unwrap();
        let y = colored_as(&root, &vec![i32::POISON; N], LOCAL, Access::Partitioned);
        let before = y.read().unwrap();
        // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
        let launched = unsafe { k.launch().arg(&y).nd_range(Range::d1(N), Range::d1(LOCAL)) };
        if let Err(e) = &launched {
            assert!(
                e.to_string()
                    .contains("calls `total`, which uses `get_global_size`"),
                "{e}"
            );
        }
        let out = y.read().unwrap();
        expect("helper", &root, Want::Refused, launched, out, &before, &[]);
        // One work-group runs on one device, which sees the whole launch: allowed.
        let y = colored_as(&root, &[i32::POISON; LOCAL], LOCAL, Access::Auto);
        // SAFETY: each kernel stays inside its buffers over the whole launch (correct on one device); what a device's chunk cannot serve is refused before enqueue or redirected in checked mode.
        let one = unsafe {
            k.launch()
                .arg(&y)
                .nd_range(Range::d1(LOCAL), Range::d1(LOCAL))
        };
        assert!(one.is_ok(), "{:?}", one.map(|_| ()));
        assert_eq!(y.read().unwrap(), vec![LOCAL as i32; LOCAL]);
    }
}
