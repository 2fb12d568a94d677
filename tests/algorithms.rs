//! Device-wide reduce and scan against host references, for every type and size, on the device
//! under test and (when it has native sub-groups) on the same device through the `emulated`
//! shuffle backend.

mod common;

use clgroups::algorithms::{self, Element, ReduceOp, Reduction, ScanKind};
use clgroups::device::ShuffleBackend;
use clgroups::error::Unsupported;
use clgroups::{Buffer, Error, Queue};

/// Sizes: 1, tiny, below a sub-group, non-multiples of every work-group size, a prime, > 2^20.
const SIZES: [usize; 7] = [1, 2, 31, 1000, 4099, 65537, (1 << 20) + 3];

/// Host side of an element type: non-zero test values whose sums and prefix sums are exact
/// in the type for every size in `SIZES` (so any lost or doubled element shows), and addition.
trait Host: Element + PartialOrd + PartialEq {
    fn values(n: usize, seed: u64) -> Vec<Self>;
    fn add(a: Self, b: Self) -> Self;
}

macro_rules! host {
    ($t:ty, |$v:ident| $map:expr) => {
        impl Host for $t {
            fn values(n: usize, seed: u64) -> Vec<Self> {
                common::values(n, seed).into_iter().map(|$v| $map).collect()
            }
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
        }
    };
}

host!(i32, |v| v);
host!(u32, |v| v.unsigned_abs() + 1000);
host!(i64, |v| v as i64 * 1_000_003);
host!(u64, |v| (v as i64 + 1001) as u64 * 3_000_017);
// |x| <= 15: every partial sum of 2^20 + 3 elements is an integer below 2^24, exact in float.
host!(f32, |v| (v % 15 + if v % 15 == 0 { 7 } else { 0 }) as f32);
host!(f64, |v| v as f64 * 1024.0);

/// The queues to test: the device under test, plus its `emulated` view when it is native.
fn queues() -> Vec<(String, Queue)> {
    let d = common::device();
    let mut out = vec![(
        d.sub_groups().effective.shuffle_backend.to_string(),
        Queue::new(&d).expect("queue"),
    )];
    if d.sub_groups().driver.native() {
        let emu = d.with_backend(ShuffleBackend::Emulated).expect("emulated");
        out.push(("emulated".into(), Queue::new(&emu).expect("queue")));
    }
    out
}

fn skip_type<T: Element>(q: &Queue) -> bool {
    let skip = T::NEEDS_FP64 && !q.device().limits().fp64;
    if skip {
        eprintln!("{}: not run: {} has no fp64", T::CL_NAME, q.device());
    }
    skip
}

fn check_reduce<T: Host>() {
    for (backend, q) in queues() {
        if skip_type::<T>(&q) {
            continue;
        }
        for (i, &n) in SIZES.iter().enumerate() {
            let x = T::values(n, 11 + i as u64);
            let buf = Buffer::from_slice(&q, &x).unwrap();
            let ctx = format!("{} n={n} on {backend}", T::CL_NAME);
            let sum = x[1..].iter().fold(x[0], |a, &b| T::add(a, b));
            let min = x
                .iter()
                .copied()
                .fold(x[0], |a, b| if b < a { b } else { a });
            let max = x
                .iter()
                .copied()
                .fold(x[0], |a, b| if b > a { b } else { a });
            assert_eq!(algorithms::reduce_sum(&q, &buf).unwrap(), sum, "sum {ctx}");
            assert_eq!(algorithms::reduce_min(&q, &buf).unwrap(), min, "min {ctx}");
            assert_eq!(algorithms::reduce_max(&q, &buf).unwrap(), max, "max {ctx}");
        }
    }
}

fn check_scan<T: Host>() {
    for (backend, q) in queues() {
        if skip_type::<T>(&q) {
            continue;
        }
        for (i, &n) in SIZES.iter().enumerate() {
            let x = T::values(n, 23 + i as u64);
            let input = Buffer::from_slice(&q, &x).unwrap();
            let mut out = Buffer::new(q.context(), n).unwrap();
            let mut inclusive = Vec::with_capacity(n);
            let mut acc = x[0];
            inclusive.push(acc);
            for &v in &x[1..] {
                acc = T::add(acc, v);
                inclusive.push(acc);
            }
            let ctx = format!("{} n={n} on {backend}", T::CL_NAME);
            algorithms::inclusive_scan_sum(&q, &input, &mut out).unwrap();
            assert_first_difference(&out.read(&q).unwrap(), &inclusive, &ctx);
            algorithms::exclusive_scan_sum(&q, &input, &mut out).unwrap();
            let got = out.read(&q).unwrap();
            assert_eq!(got[0], T::default(), "exclusive[0] {ctx}");
            assert_first_difference(&got[1..], &inclusive[..n - 1], &ctx);
        }
    }
}

fn assert_first_difference<T: Host>(got: &[T], want: &[T], ctx: &str) {
    assert_eq!(got.len(), want.len(), "{ctx}");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{ctx}: first difference at {i}: got {:?}, want {:?}",
            got[i], want[i]
        );
    }
}

macro_rules! per_type {
    ($($m:ident: $t:ty),*) => {$(
        mod $m {
            #[test]
            fn reduce_sum_min_max() {
                super::check_reduce::<$t>();
            }
            #[test]
            fn inclusive_and_exclusive_scan() {
                super::check_scan::<$t>();
            }
        }
    )*};
}

per_type!(int: i32, uint: u32, long: i64, ulong: u64, float: f32, double: f64);

/// Fractional floats (inexact sums) against an f64 host sum: within the tested bound
/// `|s - S| <= 2^-14 Σ|x|` for float and `2^-40 Σ|x|` for double (the module documents the
/// worst case, `(n-1) ε Σ|x|`).
#[test]
fn float_sums_are_within_the_bound() {
    for (backend, q) in queues() {
        for &n in &SIZES {
            let x: Vec<f64> = common::values(n, 5)
                .iter()
                .enumerate()
                .map(|(i, &v)| v as f64 / 7.0 + (i % 13) as f64 * 0.001)
                .collect();
            let exact: f64 = x.iter().sum();
            let abs: f64 = x.iter().map(|v| v.abs()).sum();
            let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let exact_f: f64 = xf.iter().map(|&v| v as f64).sum();
            let got = algorithms::reduce_sum(&q, &Buffer::from_slice(&q, &xf).unwrap()).unwrap();
            let err = (got as f64 - exact_f).abs();
            assert!(
                err <= abs * 2f64.powi(-14),
                "float n={n} on {backend}: {got} vs {exact_f}"
            );
            if q.device().limits().fp64 {
                let got = algorithms::reduce_sum(&q, &Buffer::from_slice(&q, &x).unwrap()).unwrap();
                let err = (got - exact).abs();
                assert!(
                    err <= abs * 2f64.powi(-40),
                    "double n={n} on {backend}: {got} vs {exact}"
                );
            }
        }
    }
}

#[test]
fn reduction_reuse_reports_its_launches() {
    let q = common::queue();
    let mut r = Reduction::<i32>::new(&q, ReduceOp::Max).unwrap();
    let small = Buffer::from_slice(&q, &[4, -9, 17, 3]).unwrap();
    r.enqueue(&small).unwrap();
    assert_eq!(r.result().unwrap(), 17);
    let big = common::values(1 << 16, 3);
    let want = *big.iter().max().unwrap();
    let big_buf = Buffer::from_slice(&q, &big).unwrap();
    let event = r.enqueue(&big_buf).unwrap();
    match event.duration() {
        Err(
            e @ Error::Unsupported {
                what: Unsupported::DeviceTime { .. },
                ..
            },
        ) if !q.profiling() => assert!(e.to_string().contains("Queue::with_profiling"), "{e}"),
        other => assert!(other.is_ok(), "{other:?}"),
    }
    assert_eq!(r.result().unwrap(), want);
}

/// The enqueue forms leave their results on the device; calls queued back to back (sharing
/// the queue's partials, counters and tile states) each see their own input.
#[test]
fn enqueued_results_stay_on_the_device() {
    let q = common::queue();
    let sizes = [(1 << 20) + 5, 3, 70_000, 1 << 16];
    let inputs: Vec<Vec<i32>> = sizes.iter().map(|&n| common::values(n, n as u64)).collect();
    let bufs: Vec<_> = inputs
        .iter()
        .map(|x| Buffer::from_slice(&q, x).unwrap())
        .collect();
    let sums: Vec<_> = sizes
        .iter()
        .map(|_| Buffer::new(q.context(), 1).unwrap())
        .collect();
    let mut scans: Vec<_> = sizes
        .iter()
        .map(|&n| Buffer::new(q.context(), n).unwrap())
        .collect();
    let mut events = Vec::new();
    for round in 0..3 {
        for (i, x) in bufs.iter().enumerate() {
            events.push(algorithms::enqueue_reduce(&q, x, ReduceOp::Sum, &sums[i]).unwrap());
            let kind = if round == 2 {
                ScanKind::Exclusive
            } else {
                ScanKind::Inclusive
            };
            events.push(algorithms::enqueue_scan_sum(&q, x, &mut scans[i], kind).unwrap());
        }
    }
    events.last().unwrap().wait().unwrap();
    for (i, x) in inputs.iter().enumerate() {
        let want: i32 = x.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        assert_eq!(sums[i].read(&q).unwrap(), vec![want], "sum of {}", x.len());
        let mut acc = 0i32;
        let exclusive: Vec<i32> = x
            .iter()
            .map(|&v| {
                let e = acc;
                acc = acc.wrapping_add(v);
                e
            })
            .collect();
        assert_first_difference(
            &scans[i].read(&q).unwrap(),
            &exclusive,
            &format!("scan of {}", x.len()),
        );
    }
}

#[test]
fn bad_inputs_are_errors() {
    let q = common::queue();
    let input = Buffer::from_slice(&q, &[1i32, 2, 3]).unwrap();
    let mut short = Buffer::<i32>::new(q.context(), 2).unwrap();
    let err = algorithms::inclusive_scan_sum(&q, &input, &mut short).unwrap_err();
    assert!(err.to_string().contains("scan of 3 elements"), "{err}");
    let other = Queue::new(q.device()).unwrap();
    let err = algorithms::reduce_sum(&other, &input).unwrap_err();
    assert!(err.to_string().contains("another context"), "{err}");
    if !q.device().limits().fp64 {
        let d = Buffer::from_slice(&q, &[1.0f64]).unwrap();
        assert!(matches!(
            algorithms::reduce_sum(&q, &d),
            Err(clgroups::Error::Unsupported { .. })
        ));
    }
}

/// Scans from 2^26 elements, in the form the device's first such scan chose (NVIDIA: the
/// look-back tiles or the persistent scan), around tile multiples of both forms, then from
/// 2^24; inclusive and exclusive, one after another on the same state (epochs, the ticket).
#[test]
fn large_scans_are_right() {
    use algorithms::plan::{self, Tile};
    let q = Queue::new(&common::device()).unwrap();
    if q.device().sub_groups().effective.shuffle_backend != ShuffleBackend::NvidiaPtx {
        eprintln!("not run: only NVIDIA's look-back scans have a large form (elsewhere the sizes above cover every path)");
        return;
    }
    let (from, p) = (Tile::LARGE_FROM, Tile::PERSISTENT.elements());
    let sizes = [
        from,
        from + 1,
        from.div_ceil(p) * p,
        from.div_ceil(p) * p + p - 1,
        from + Tile::LARGE.elements() + 3,
        3 * from + 5,
        // From 2^24: measured on its own.
        plan::PERSISTENT_FROM + 3,
        plan::PERSISTENT_FROM * 2 + p - 1,
    ];
    for (i, &n) in sizes.iter().enumerate() {
        let x = common::values(n, 41 + i as u64);
        let input = Buffer::from_slice(&q, &x).unwrap();
        let mut out = Buffer::new(q.context(), n).unwrap();
        let mut acc = 0i32;
        let inclusive: Vec<i32> = x
            .iter()
            .map(|&v| {
                acc = acc.wrapping_add(v);
                acc
            })
            .collect();
        let ctx = format!("int n={n}");
        algorithms::inclusive_scan_sum(&q, &input, &mut out).unwrap();
        assert_first_difference(&out.read(&q).unwrap(), &inclusive, &ctx);
        algorithms::exclusive_scan_sum(&q, &input, &mut out).unwrap();
        let got = out.read(&q).unwrap();
        assert_eq!(got[0], 0, "exclusive[0] {ctx}");
        assert_first_difference(&got[1..], &inclusive[..n - 1], &ctx);
    }
    let forms = sizes.map(|n| algorithms::scan_form(q.device(), n));
    eprintln!("scan forms on {}: {forms:?}", q.device());
}
