//! The cases of tests/scaling_implicit.rs: everyday kernels of tests/scaling_reach.rs without
//! declarations, ~20 written the way real code is, and one test per fallback reason.

use super::*;
use clgroups::plan::Refusal;
use clgroups::scaling::Access;

/// 61 work-groups of 64: an uneven split over two devices.
const N: usize = 64 * 61;
const L: usize = 64;

fn ints(n: usize, seed: u64) -> Vec<i32> {
    common::values(n, seed)
}
fn uints(n: usize, seed: u64, modulo: u32) -> Vec<u32> {
    ints(n, seed)
        .iter()
        .map(|v| v.unsigned_abs() % modulo)
        .collect()
}
pub(super) fn floats(n: usize, seed: u64) -> Vec<f32> {
    ints(n, seed).iter().map(|&v| v as f32 / 250.0).collect()
}
pub(super) fn positive(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let u = uints(n, seed, 1000);
    u.iter()
        .map(|&v| lo + (hi - lo) * v as f32 / 1000.0)
        .collect()
}
fn particles(n: usize) -> Vec<Particle> {
    let (a, b, c) = (floats(n, 11), floats(n, 12), floats(n, 13));
    (0..n)
        .map(|i| Particle {
            x: a[i],
            y: b[i],
            z: c[i],
            m: 1.0 + (i % 7) as f32,
        })
        .collect()
}

fn d1(n: usize) -> Range {
    Range::d1(n)
}

/// Every case that must run split or merged (never on one device).
pub(super) fn everyday_and_real() -> Vec<Case> {
    use Data as D;
    use A::*;
    let (w, h) = (64usize, 61usize);
    let nb = 512;
    // A graph for the bfs step: the frontier (v % 5 == 0, v < nb / 2) reaches vertices of
    // the upper half only, several frontier vertices the same ones (all set cost 1).
    let half = nb as i32 / 2;
    let start: Vec<i32> = (0..nb as i32).map(|v| 2 * v).collect();
    let edges: Vec<i32> = (0..nb as i32)
        .flat_map(|v| [half + v * 7 % half, half + (v + 3) % half])
        .collect();
    let mask: Vec<i32> = (0..nb)
        .map(|v| i32::from(v % 5 == 0 && v < nb / 2))
        .collect();
    let (nf, nc, np) = (4usize, 5usize, 1000usize);
    vec![
        // tests/scaling_reach.rs's kernels, no Access.
        Case::nd(
            "stencil",
            d1(N),
            d1(L),
            vec![Buf(D::I(vec![0; N])), Buf(D::I(ints(N, 1))), U(N as u32)],
        ),
        Case::nd(
            "stencil2d",
            Range::d2(w, h),
            Range::d2(16, 1),
            vec![
                Buf(D::I(vec![0; w * h])),
                Buf(D::I(ints(w * h, 2))),
                U(w as u32),
                U(h as u32),
            ],
        ),
        Case::nd(
            "gather",
            d1(N),
            d1(L),
            vec![
                Buf(D::I(vec![0; N])),
                Buf(D::I(ints(N, 3))),
                Buf(D::U((0..N as u32).rev().collect())),
            ],
        ),
        Case::nd(
            "scatter",
            d1(N),
            d1(L),
            vec![
                Buf(D::I(vec![0; N])),
                Buf(D::I(ints(N, 3))),
                Buf(D::U((0..N as u32).rev().collect())),
            ],
        ),
        Case::nd(
            "prefix",
            d1(N),
            d1(L),
            vec![Buf(D::I(vec![0; N])), Buf(D::I(ints(N, 5)))],
        ),
        Case::nd(
            "row_sums",
            Range::d2(1, 16 * 61),
            Range::d2(1, 16),
            vec![
                Buf(D::I(vec![0; 16 * 61])),
                Buf(D::I(ints(8 * 16 * 61, 6))),
                U(8),
            ],
        ),
        Case::nd(
            "grid_stride",
            d1(L * 8),
            d1(L),
            vec![
                Buf(D::I(ints(N, 8))),
                Buf(D::I(ints(N, 7))),
                I(3),
                U(N as u32),
            ],
        ),
        // Written the way real code is.
        Case::range(
            "saxpy_offset",
            d1(N - 10),
            vec![
                Buf(D::F(floats(N, 20))),
                Buf(D::F(floats(N, 21))),
                F(2.5),
                U(10),
            ],
        ),
        // The same through work-groups: its pointers at an offset split by their footprints.
        Case::nd(
            "saxpy_offset",
            d1(N),
            d1(L),
            vec![
                Buf(D::F(floats(N + 10, 49))),
                Buf(D::F(floats(N + 10, 50))),
                F(2.5),
                U(10),
            ],
        ),
        Case::nd(
            "transpose",
            Range::d2(w, h),
            Range::d2(16, 1),
            vec![
                Buf(D::F(vec![0.0; w * h])),
                Buf(D::F(floats(w * h, 22))),
                U(w as u32),
                U(h as u32),
            ],
        ),
        Case::nd(
            "box_blur",
            Range::d2(w, h),
            Range::d2(8, 1),
            vec![
                Buf(D::F(floats(w * h, 23))),
                Buf(D::F(vec![0.0; w * h])),
                I(w as i32),
                I(h as i32),
            ],
        ),
        Case::range(
            "median3",
            Range::d2(w, h),
            vec![
                Buf(D::U(uints(w * h, 24, 256))),
                Buf(D::U(vec![0; w * h])),
                I(w as i32),
                I(h as i32),
            ],
        ),
        Case::range(
            "gather_f",
            d1(N - 3),
            vec![
                Buf(D::F(vec![0.0; N])),
                Buf(D::F(floats(N, 25))),
                Buf(D::U(uints(N, 26, N as u32))),
                U(N as u32 - 3),
            ],
        ),
        Case::nd(
            "particles",
            d1(N),
            d1(L),
            vec![
                Buf(D::P(particles(N))),
                Buf(D::P(vec![
                    Particle {
                        x: 0.0,
                        y: 0.0,
                        z: 0.0,
                        m: 0.0
                    };
                    N
                ])),
                F(0.5),
            ],
        ),
        Case::nd(
            "nbody",
            d1(1024),
            d1(L),
            vec![
                Buf(D::P(particles(1024))),
                Buf(D::F(vec![0.0; 1024])),
                U(1024),
            ],
        ),
        Case::nd(
            "black_scholes",
            d1(L * 30),
            d1(L),
            vec![
                Buf(D::F(vec![0.0; N])),
                Buf(D::F(vec![0.0; N])),
                Buf(D::F(positive(N, 27, 5.0, 30.0))),
                Buf(D::F(positive(N, 28, 1.0, 100.0))),
                Buf(D::F(positive(N, 29, 0.25, 10.0))),
                F(0.02),
                F(0.3),
                U(N as u32),
            ],
        ),
        Case::range(
            "mandelbrot",
            Range::d2(96, 61),
            vec![Buf(D::U(vec![0; 96 * 61])), U(96), U(61), U(200)],
        ),
        Case::nd(
            "hotspot",
            Range::d2(w, h),
            Range::d2(16, 1),
            vec![
                Buf(D::F(positive(w * h, 30, 0.0, 1.0))),
                Buf(D::F(positive(w * h, 31, 300.0, 350.0))),
                Buf(D::F(vec![0.0; w * h])),
                I(w as i32),
                I(h as i32),
                F(0.5),
                F(0.1),
                F(0.1),
            ],
        ),
        Case::nd(
            "pathfinder",
            d1(N),
            d1(L),
            vec![
                Buf(D::I(
                    uints(N * 3, 32, 10).iter().map(|&v| v as i32).collect(),
                )),
                Buf(D::I(ints(N, 33))),
                Buf(D::I(vec![0; N])),
                I(N as i32),
                I(2),
            ],
        ),
        Case::nd(
            "bfs_step",
            d1(nb),
            d1(L),
            vec![
                Buf(D::I(start)),
                Buf(D::I(vec![2; nb])),
                Buf(D::I(edges)),
                Buf(D::I(mask)),
                Buf(D::I(vec![0; nb])),
                Buf(D::I(vec![0; nb])),
                Buf(D::I(vec![0])),
                I(nb as i32),
            ],
        ),
        Case::nd(
            "kmeans_assign",
            d1(np),
            d1(8),
            vec![
                Buf(D::F(floats(np * nf, 34))),
                Buf(D::F(floats(nc * nf, 35))),
                Buf(D::I(vec![-1; np])),
                I(np as i32),
                I(nc as i32),
                I(nf as i32),
            ],
        ),
        Case::nd(
            "gemm",
            Range::d2(32, 48),
            Range::d2(8, 4),
            vec![
                Buf(D::F(floats(48 * 40, 36))),
                Buf(D::F(floats(40 * 32, 37))),
                Buf(D::F(vec![0.0; 48 * 32])),
                I(40),
                I(32),
            ],
        ),
        Case::nd(
            "gemv",
            d1(1000),
            d1(8),
            vec![
                Buf(D::F(floats(1000 * 50, 38))),
                Buf(D::F(floats(50, 39))),
                Buf(D::F(vec![0.0; 1000])),
                I(50),
            ],
        ),
        Case::nd(
            "cmul",
            d1(N),
            d1(L),
            vec![Buf(D::F(floats(2 * N, 40))), Buf(D::F(floats(2 * N, 41)))],
        ),
        Case::nd(
            "group_sums",
            d1(N),
            d1(L),
            vec![
                Buf(D::I(ints(N, 42))),
                Buf(D::I(vec![0; N / L])),
                Local(L * 4),
            ],
        ),
        Case::range("relu_inplace", d1(N), vec![Buf(D::F(floats(N, 43)))]),
        Case::nd(
            "reverse",
            d1(N),
            d1(L),
            vec![Buf(D::I(vec![0; N])), Buf(D::I(ints(N, 44))), U(N as u32)],
        ),
        Case::nd(
            "heat",
            Range::d2(w, h),
            Range::d2(16, 1),
            vec![
                Buf(D::F(positive(w * h, 45, 0.0, 100.0))),
                Buf(D::F(vec![0.0; w * h])),
                I(w as i32),
                I(h as i32),
            ],
        ),
        // Plain buffers of the root device's context, written by every device.
        Case::nd(
            "reverse",
            d1(N),
            d1(L),
            vec![Plain(D::I(vec![0; N])), Buf(D::I(ints(N, 46))), U(N as u32)],
        ),
        Case::nd(
            "saxpy_offset",
            d1(N),
            d1(L),
            vec![
                Plain(D::F(floats(N, 47))),
                Plain(D::F(floats(N, 48))),
                F(-1.5),
                U(0),
            ],
        ),
    ]
}

#[test]
fn kernels_are_right_without_declarations() {
    let Some(root) = partitioned("kernels_are_right_without_declarations") else {
        return;
    };
    // Every launch a device could run alone, split (by its own ids or by its footprints)
    // or merged.
    let (mut split, mut fetched, mut merged) = (0, 0, Vec::new());
    for c in everyday_and_real() {
        match check(&root, &c) {
            // A plain range the planner makes one work-group has nothing to split.
            Spread::OneDevice(Refusal::OneGroup { .. }) => {}
            Spread::OneDevice(why) => panic!("{}: sent to one device: {why}", c.kernel),
            Spread::Merged { .. } => merged.push(c.kernel),
            Spread::Fetched { .. } => fetched += 1,
            _ => split += 1,
        }
    }
    // Two, three and four PoCL 3.1 devices: 14 of 25 before issue 36; 21 of 30 with pointee
    // sizes, aliases and macro arguments; 26 of 30 with footprints of several runs per device
    // (column bands, grid-stride loops: mandelbrot, transpose, median3, grid_stride,
    // black_scholes); 28 of 30 with plain written buffers split by their footprints
    // (`reverse`, `saxpy_offset` on plain buffers of the root device's context: each device
    // writes a copy of its own, its written ranges copied back). Merged: the scatters.
    let total = split + fetched + merged.len();
    eprintln!(
        "split: {} of {total} ({}%; {fetched} by their footprints), merged: {merged:?}",
        split + fetched,
        100 * (split + fetched) / total.max(1)
    );
    assert!(
        fetched >= 28 && 100 * (split + fetched) >= 90 * total,
        "only {} of {total} launches split ({fetched} by their footprints)",
        split + fetched
    );
}

fn one_device_reason(root: &RootDevice, c: &Case) -> Refusal {
    match check(root, c) {
        Spread::OneDevice(why) => why,
        other => panic!("{}: want one device, got {other:?}", c.kernel),
    }
}

#[test]
fn each_fallback_reason() {
    use Data as D;
    use A::*;
    let Some(root) = partitioned("each_fallback_reason") else {
        return;
    };
    // Atomics: updates of several devices cannot be merged.
    let hist = Case::nd(
        "histogram",
        d1(N),
        d1(L),
        vec![Buf(D::U(uints(N, 60, 1000))), Buf(D::U(vec![0; 16])), U(16)],
    );
    let why = one_device_reason(&root, &hist);
    assert!(matches!(why, Refusal::Atomics(_)), "{why}");
    assert!(why.to_string().contains("atomics"));
    let sum = Case::nd(
        "atomic_sum",
        d1(N),
        d1(L),
        vec![Plain(D::I(vec![0])), Buf(D::I(ints(N, 61)))],
    );
    let why = one_device_reason(&root, &sum);
    assert!(matches!(why, Refusal::Atomics(_)), "{why}");
    assert!(why.to_string().contains("atomics"));
    // A helper asking for the global size cannot see the whole launch.
    let helper = Case::nd("via_helper", d1(N), d1(L), vec![Buf(D::I(vec![0; N]))]);
    let why = one_device_reason(&root, &helper);
    assert!(matches!(why, Refusal::WholeValues(_)), "{why}");
    assert!(why.to_string().contains("calls `total`"));
    // Two devices changing one element differently (a race): run again on one device.
    let c = Case::nd(
        "last_writer",
        d1(N),
        d1(L),
        vec![Buf(D::I(vec![0; 4])), U(N as u32)],
    );
    let (got, spread) = on_root(&root, &c);
    let Spread::OneDevice(why) = spread else {
        panic!("last_writer: {spread:?}")
    };
    assert!(
        matches!(
            why,
            Refusal::MergeRace {
                element: 0,
                arg: 0,
                ..
            }
        ),
        "{why}"
    );
    assert!(
        why.to_string()
            .contains("changed element 0 of argument 0 differently"),
        "{why}"
    );
    let Data::I(y) = &got[0] else { unreachable!() };
    assert!(
        y[0] == 1 || y[0] == N as i32,
        "one of the writers: {}",
        y[0]
    );
    // A kernel whose name a macro makes has no partitioned variant.
    let src =
        "#define MAKE(N) kernel void N(global int *x) { x[get_global_id(0)] += 1; }\nMAKE(inc)";
    let inc = root.program(src).unwrap().kernel("inc").unwrap();
    let x = ColoredBuffer::from_slice(&root, &vec![1i32; N]).unwrap();
    // SAFETY: work-item i touches x[i], i < N = x.len().
    let ev = unsafe { inc.launch().arg(&x).range(N).unwrap() };
    assert!(matches!(
        ev.spread(),
        Spread::OneDevice(Refusal::NoPartitionedVariant(_))
    ));
    let Spread::OneDevice(w) = ev.spread() else {
        unreachable!()
    };
    assert!(w.to_string().contains("no partitioned variant"), "{w}");
    assert_eq!(x.read().unwrap(), vec![2; N]);
}

#[test]
fn strict_mode_refuses_what_it_cannot_split() {
    use Data as D;
    use A::*;
    let Some(root) = partitioned("strict_mode_refuses_what_it_cannot_split") else {
        return;
    };
    let strict = root.clone().strict();
    // Proven kernels (own-id, or by their footprints) split in both modes; the others are
    // refused when strict.
    // 2^16 floats in default (one-element) pages: colored as the partition splits the launch,
    // on any number of devices.
    let proven = Case::nd(
        "relu_inplace",
        d1(1 << 16),
        d1(L),
        vec![Buf(D::F(floats(1 << 16, 70)))],
    );
    assert_eq!(check(&strict, &proven), Spread::Split);
    // Exactly the launches the default mode does not split (merged, or on one device) are
    // refused when strict.
    let mut refused = 0;
    for c in everyday_and_real() {
        let (_, default) = try_on_root(&root, &c).unwrap();
        let splits = matches!(default, Spread::Split | Spread::Fetched { .. });
        match try_on_root(&strict, &c) {
            Ok((_, spread)) => {
                assert!(
                    splits,
                    "{}: strict ran {spread:?}, default {default:?}",
                    c.kernel
                );
                assert_eq!(spread, default, "{}", c.kernel);
            }
            Err(e @ clgroups::Error::InvalidLaunch { .. }) => {
                assert!(
                    !splits,
                    "{}: refused in strict mode, split by default: {e}",
                    c.kernel
                );
                eprintln!("{}: refused in strict mode: {e}", c.kernel);
                refused += 1;
            }
            Err(e) => panic!("{}: {e}", c.kernel),
        }
    }
    assert!(refused > 0, "nothing refused in strict mode");
    // Declared, the stencil splits in strict mode too.
    let x = ColoredBuffer::<i32>::with_layout(&strict, N, L * 4, Access::Halo(1)).unwrap();
    let y = ColoredBuffer::<i32>::with_page(&strict, N, L * 4).unwrap();
    let k = strict.program(SOURCE).unwrap().kernel("stencil").unwrap();
    // SAFETY: work-item i reads x[i - 1 ..= i + 1] within 0..N and writes y[i].
    let ev = unsafe {
        k.launch()
            .arg(&y)
            .arg(&x)
            .arg(N as u32)
            .nd_range(d1(N), d1(L))
            .unwrap()
    };
    assert_eq!(ev.spread(), &Spread::Split);
}
