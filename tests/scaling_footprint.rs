//! Kernels written for one device, over a root device in partitioned placement with nothing
//! declared, split by their footprints (the indices of their accesses, read from the source
//! and evaluated with the launch's values): a mandelbrot image written at `out[py * w + px]`
//! (by rows, and in column bands that move only the runs each device writes), a 2-D heat stencil with ping-pong buffers and a 1-D 3-point blur, each iterated and
//! compared with the host after every step, in strict mode too (a split by footprints is a
//! split, not a fallback), with the bytes each launch moved between devices; writes beyond a
//! device's chunk (chunks that do not follow the partition) copied back to their owners; and
//! kernels whose writes the footprint cannot prove keep being refused in strict mode.
//! `CLGROUPS_REQUIRE_MULTI_DEVICE=1` turns "no multi-device setup" into a failure.

mod common;

use common::colored;
use common::partitioned::{heat_steps, host_blur, roots};

use clgroups::scaling::{ColoredBuffer, Spread};
use clgroups::{Error, Range};

/// The stencils (`tests/cl/stencils.cl`) and this test's own kernels.
const SOURCE: &str = concat!(
    include_str!("cl/stencils.cl"),
    r#"
#define MAX_ITER 64
kernel void mandelbrot(global int *out, uint w, uint h) {
    int px = get_global_id(0);
    int py = get_global_id(1);
    if (px >= w || py >= h) return;
    float x0 = -2.0f + 3.0f * px / w, y0 = -1.5f + 3.0f * py / h, x = 0.0f, y = 0.0f;
    int i = 0;
    while (x * x + y * y < 4.0f && i < MAX_ITER) {
        float t = x * x - y * y + x0;
        y = 2.0f * x * y + y0;
        x = t;
        i++;
    }
    out[py * w + px] = i;
}

kernel void shift_write(global int *y, uint n) {
    size_t i = get_global_id(0);
    if (i + 1 < n) y[i + 1] = (int)i;
}

typedef struct { float a; float b; } pair_t;

kernel void scale4(global float4 *out, global const float4 *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 2.0f;
}

kernel void pair_swap(global pair_t *out, global const pair_t *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) { out[i].a = in[i].b; out[i].b = in[i].a; }
}

kernel void scatter(global int *y, global const uint *idx) {
    size_t i = get_global_id(0);
    y[idx[i]] = (int)i;
}
"#
);

#[test]
fn mandelbrot_splits_by_rows() {
    let (w, h) = (64usize, 48usize);
    for root in roots("mandelbrot_splits_by_rows") {
        let k = root.program(SOURCE).unwrap().kernel("mandelbrot").unwrap();
        let out = colored(&root, &vec![-1; w * h], w);
        // SAFETY: work-item (px, py) writes out[py * w + px] < w * h = out.len().
        let ev = unsafe {
            k.launch()
                .arg(&out)
                .arg(w as u32)
                .arg(h as u32)
                .nd_range(Range::d2(w, h), Range::d2(16, 4))
        }
        .unwrap();
        ev.wait().unwrap();
        assert_eq!(ev.spread(), &Spread::Split, "nothing to fetch");
        let got = out.read().unwrap();
        assert_eq!(got, mandelbrot_on_one(&root, (w, h), Range::d2(16, 4)));
    }
}

/// `mandelbrot` over a w x h image in work-groups of `local`, on the root's first device.
fn mandelbrot_on_one(
    root: &clgroups::scaling::RootDevice,
    (w, h): (usize, usize),
    local: Range,
) -> Vec<i32> {
    let q = clgroups::Queue::new(&root.devices()[0]).unwrap();
    let one = clgroups::Program::builder(SOURCE).build(&q).unwrap();
    let k1 = one.kernel("mandelbrot").unwrap();
    let want = clgroups::Buffer::<i32>::new(&q, w * h).unwrap();
    // SAFETY: work-item (px, py) writes want[py * w + px] < w * h = want.len().
    unsafe {
        k1.launch()
            .arg(&want)
            .arg(w as u32)
            .arg(h as u32)
            .nd_range(Range::d2(w, h), local.into())
    }
    .unwrap()
    .wait()
    .unwrap();
    want.read(&q).unwrap()
}

/// Mandelbrot in one row of work-groups, split by column bands over rows colored by rows:
/// each device writes one run per row, in every device's chunk. Only those runs move (in once,
/// back once), not the whole range between a device's first and last write.
#[test]
fn mandelbrot_in_column_bands_moves_only_its_runs() {
    let (w, h) = (64usize, 8usize);
    for root in roots("mandelbrot_in_column_bands_moves_only_its_runs") {
        let k = root.program(SOURCE).unwrap().kernel("mandelbrot").unwrap();
        let out = colored(&root, &vec![-1; w * h], w);
        // SAFETY: work-item (px, py) writes out[py * w + px] < w * h = out.len().
        let ev = unsafe {
            k.launch()
                .arg(&out)
                .arg(w as u32)
                .arg(h as u32)
                .nd_range(Range::d2(w, h), Range::d2(16, h))
        }
        .unwrap();
        ev.wait().unwrap();
        let Spread::Fetched {
            arguments,
            between,
            within,
        } = ev.spread()
        else {
            panic!("{:?}", ev.spread())
        };
        println!(
            "{} devices: {between} bytes between devices, {within} within each",
            root.len()
        );
        assert_eq!(arguments, &[0]);
        assert_eq!(
            between + within,
            2 * (w * h * 4) as u64,
            "each pixel in and back once"
        );
        assert_eq!(
            out.read().unwrap(),
            mandelbrot_on_one(&root, (w, h), Range::d2(16, h))
        );
    }
}

#[test]
fn heat_fetches_only_halo_rows() {
    // 12 work-group rows: the partition splits rows on 2, 3 and 4 devices (Intel's rule).
    let (w, h, steps) = (32usize, 48usize, 6);
    let init = common::values(w * h, 3);
    for root in roots("heat_fetches_only_halo_rows") {
        let k = root.program(SOURCE).unwrap().kernel("heat").unwrap();
        // Pages of one work-group slab (4 rows): colored as the launch is split, on any number
        // of devices. One row each way between two devices (more rows only if a chunk is a row).
        heat_steps(&root, &k, (w, h), &init, steps, |step, ev| {
            match ev.spread() {
                Spread::Fetched {
                    arguments, between, ..
                } => {
                    assert_eq!(arguments, &[0]);
                    let rows = 2 * (root.len() as u64 - 1);
                    assert_eq!(*between, rows * w as u64 * 4, "step {step}");
                }
                other => panic!("step {step}: {other:?}"),
            }
        });
    }
}

#[test]
fn blur_iterates_right() {
    let (n, steps, local) = (64 * 37usize, 5, 64usize);
    let init = common::values(n, 4);
    for root in roots("blur_iterates_right") {
        let k = root.program(SOURCE).unwrap().kernel("blur").unwrap();
        let (mut x, mut y) = (colored(&root, &init, local), colored(&root, &init, local));
        let mut want = init.clone();
        for step in 0..steps {
            // SAFETY: work-item i < n writes y[i] and reads x[i - 1 ..= i + 1] inside 0..n.
            let ev = unsafe {
                k.launch()
                    .arg(&x)
                    .arg(&y)
                    .arg(n as u32)
                    .nd_range(n, Range::d1(local))
            }
            .unwrap();
            ev.wait().unwrap();
            want = host_blur(&want);
            assert_eq!(y.read().unwrap(), want, "step {step}");
            assert!(
                matches!(ev.spread(), Spread::Fetched { .. }),
                "{:?}",
                ev.spread()
            );
            std::mem::swap(&mut x, &mut y);
        }
    }
}

#[test]
fn writes_beyond_the_own_chunk_go_back_to_their_owners() {
    let n = 64 * 8;
    for root in roots("writes_beyond_the_own_chunk_go_back_to_their_owners") {
        let k = root.program(SOURCE).unwrap().kernel("shift_write").unwrap();
        // Pages of 100 elements: chunks that do not follow the work-groups either.
        for page in [64, 100] {
            let y = colored(&root, &vec![-1; n], page);
            // SAFETY: work-item i < n - 1 writes y[i + 1] < n.
            let ev =
                unsafe { k.launch().arg(&y).arg(n as u32).nd_range(n, Range::d1(64)) }.unwrap();
            ev.wait().unwrap();
            let want: Vec<i32> = (0..n as i32).map(|i| i - 1).collect();
            let got = y.read().unwrap();
            assert_eq!(got[1..], want[1..], "page {page}");
            assert_eq!(got[0], -1, "page {page}: untouched");
            assert!(
                matches!(ev.spread(), Spread::Fetched { .. }),
                "{:?}",
                ev.spread()
            );
        }
    }
}

#[test]
fn unknown_writes_are_not_split() {
    let n = 64 * 8;
    for root in roots("unknown_writes_are_not_split") {
        let k = root.program(SOURCE).unwrap().kernel("scatter").unwrap();
        let y = colored(&root, &vec![-1; n], 64);
        let idx: Vec<u32> = (0..n as u32).rev().collect();
        let idx = ColoredBuffer::from_slice(&root, &idx).unwrap();
        // SAFETY: idx is a permutation of 0..n: work-item i writes one element of y.
        let launched = unsafe { k.launch().arg(&y).arg(&idx).nd_range(n, Range::d1(64)) };
        let want: Vec<i32> = (0..n as i32).rev().collect();
        match (root.is_strict(), launched) {
            (true, Err(Error::InvalidLaunch { reason, .. })) => {
                assert!(
                    reason.to_string().contains("writes to it are not proven"),
                    "{reason}"
                );
                assert_eq!(y.read().unwrap(), vec![-1; n], "refused, untouched");
            }
            (false, Ok(ev)) => {
                ev.wait().unwrap();
                assert!(
                    matches!(ev.spread(), Spread::Merged { .. }),
                    "{:?}",
                    ev.spread()
                );
                assert_eq!(y.read().unwrap(), want);
            }
            (strict, other) => panic!("strict {strict}: {other:?}"),
        }
    }
}

/// Pointees wider than the buffer's elements (`float4 *`, a struct of two floats, over
/// `ColoredBuffer<f32>`), in pages that follow them and pages that cut them: every launch
/// runs, right. Checked builds bound each device's accesses in its pointees: bounds in the
/// buffer's elements refused these launches and redirected every access of a later device
/// far past its part, corrupting the heap (PoCL 6.0 aborted: "double free or corruption").
#[test]
fn pointees_wider_than_elements_stay_in_their_parts() {
    let _ = env_logger::builder().is_test(true).try_init();
    let items = 64 * 8;
    for root in roots("pointees_wider_than_elements_stay_in_their_parts") {
        let p = root.program(SOURCE).unwrap();
        for (name, per, page) in [
            ("scale4", 4, 256),
            ("scale4", 4, 102),
            ("pair_swap", 2, 100),
        ] {
            let k = p.kernel(name).unwrap();
            let x: Vec<f32> = (0..items * per).map(|i| i as f32).collect();
            let inp = colored(&root, &x, page);
            let out = colored(&root, &vec![f32::NAN; items * per], page);
            // SAFETY: work-item i < items reads and writes pointee i of `per` floats; both
            // buffers hold items * per floats.
            let launched = unsafe {
                (k.launch().arg(&out).arg(&inp).arg(items as u32)).nd_range(items, Range::d1(64))
            };
            let ev = launched.unwrap_or_else(|e| panic!("{name}, page {page}: {e}"));
            ev.wait().unwrap();
            let want: Vec<f32> = match name {
                "scale4" => x.iter().map(|v| v * 2.0).collect(),
                _ => (0..x.len()).map(|j| x[j ^ 1]).collect(),
            };
            assert_eq!(out.read().unwrap(), want, "{name}, page {page}");
        }
    }
}
