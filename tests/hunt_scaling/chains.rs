//! Chains across spreads with host access, lent parts, plain buffers, unwaited chains.

use super::*;

const CHAIN_SRC: &str = r#"
kernel void blur_r(global const int *x, global int *y, int r, int n) {
    int i = get_global_id(0);
    int s = 0;
    for (int k = -r; k <= r; k++) {
        int j = i + k;
        s = s * 3 + ((j >= 0 && j < n) ? x[j] : 1);
    }
    y[i] = s;
}
kernel void cond_step(global const int *x, global int *y, int n) {
    int i = get_global_id(0);
    if (x[i] & 1) y[i] = (i > 0 ? x[i - 1] : x[n - 1]) + 3;
}
kernel void scale_inplace(global int *a) {
    int i = get_global_id(0);
    a[i] = a[i] * 3 + 1;
}
kernel void shift_by(global const int *x, global int *y, int s, int n) {
    int i = get_global_id(0);
    y[i] = (i + s < n) ? x[i + s] : -i;
}
kernel void heat(global const int *t, global int *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]) / 4 + 1;
}
kernel void mirror(global const int *x, global int *y, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] ^ 5;
}
"#;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self, m: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % m
    }
}

/// A seeded chain over two colored buffers (1-D `n`, or `w` x `n/w` for heat) through roots
/// of every spread, with host writes, fills, reduces and reads in between.
fn chain(d: &mut Diff, n: usize, seed: u64, steps: usize) {
    chain_with(d, n, seed, steps, true)
}

/// [`chain`] with `b` plain (`colored_b: false`) or colored.
fn chain_with(d: &mut Diff, n: usize, seed: u64, steps: usize, colored_b: bool) {
    let mut rng = Lcg(seed);
    let (w, h) = (
        if n % 5 == 0 { 5 } else { 1 },
        n / if n % 5 == 0 { 5 } else { 1 },
    );
    let ni = n as i32;
    let a = d.col(&ints(n, seed));
    let b = d.buf(&ints(n, seed + 1), colored_b);
    let mut log = Vec::new();
    for step in 0..steps {
        let (src, dst) = if rng.next(2) == 0 { (a, b) } else { (b, a) };
        d.via = rng.next(d.alts.len() as u64 + 1) as usize;
        let op = rng.next(11);
        log.push(format!("{step}: op {op} via {} {src}->{dst}", d.via));
        match op {
            0 | 1 => {
                let r = rng.next(4) as i32;
                d.launch("blur_r", d1(n), None, &[B(src), B(dst), I(r), I(ni)]);
            }
            2 => {
                d.launch("cond_step", d1(n), None, &[B(src), B(dst), I(ni)]);
            }
            3 => {
                d.launch("scale_inplace", d1(n), None, &[B(dst)]);
            }
            4 => {
                let s = rng.next(3) as i32;
                d.launch("shift_by", d1(n), None, &[B(src), B(dst), I(s), I(ni)]);
            }
            5 | 6 => {
                d.launch(
                    "heat",
                    Range::d2(w, h),
                    None,
                    &[B(src), B(dst), I(w as i32), I(h as i32)],
                );
            }
            7 => {
                d.launch("mirror", d1(n), None, &[B(src), B(dst), I(ni)]);
            }
            8 => d.write(dst, &ints(n, seed + step as u64)),
            9 => d.bufs[dst].fill_first(&d.q, &d.root),
            _ if colored_b || dst == a => {
                let (want, got) = d.sums(dst);
                assert_eq!(got, want, "{}: reduce_sum after {log:?}", d.name);
            }
            _ => {}
        }
        if rng.next(3) == 0 || step + 1 == steps {
            d.check(&format!("{log:?}"));
        }
    }
}

#[test]
fn chains_across_spreads_with_host_access() {
    let sizes = [1usize, 2, 3, 10, 35, 64, 97, 130];
    for root in roots("chains_across_spreads_with_host_access") {
        let mut d = Diff::new("chains", &root, CHAIN_SRC, "");
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for n in sizes_for("chains_across_spreads_with_host_access", &root, &sizes) {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                d.reset();
                d.name = format!("chains n={n} seed={seed}");
                chain(&mut d, n, seed, common::env_or("HUNT_STEPS", 30usize));
            }
        }
        eprintln!("chains [{}]: right", desc(&root));
    }
}

// ---------------------------------------------------------------------------------------

#[test]
fn lent_parts_written_between_root_launches() {
    for root in roots("lent_parts_written_between_root_launches") {
        let p = root.program(PART_SRC).unwrap();
        let (add, blur) = (p.kernel("add").unwrap(), p.kernel("blur").unwrap());
        let one = Program::from_source(&root.queues()[1], PART_SRC).unwrap();
        let one_add = one.kernel("add").unwrap();
        for n in [2usize, 3, 64, 97] {
            let mut want: Vec<i32> = iota(n);
            let x = ColoredBuffer::from_slice(&root, &want).unwrap();
            let y = ColoredBuffer::<i32>::new(&root, n).unwrap();
            let blur_now = |x: &ColoredBuffer<i32>| {
                // SAFETY: work-item i < n writes y[i], reads x[i - 1 ..= i + 1] inside n.
                unsafe { blur.launch().arg(x).arg(&y).arg(n as i32).range(n) }
                    .unwrap()
                    .wait()
                    .unwrap();
            };
            blur_now(&x);
            assert_eq!(y.read().unwrap(), host_blur3(&want), "{n}: first blur");
            let stored = x.stored()[1];
            let Some(part) = x.part(1) else {
                continue; // shared placement's pages: device 1 holds none of a small buffer
            };
            // SAFETY: one work-item per element of the part.
            unsafe {
                one_add
                    .launch()
                    .arg(part)
                    .arg(1000i32)
                    .range(stored.1 - stored.0)
            }
            .unwrap()
            .wait()
            .unwrap();
            for v in &mut want[stored.0..stored.1] {
                *v += 1000;
            }
            blur_now(&x);
            assert_eq!(
                y.read().unwrap(),
                host_blur3(&want),
                "{n} [{}]: blur after a write through part 1",
                desc(&root)
            );
            // SAFETY: as above.
            unsafe { add.launch().arg(&x).arg(1i32).range(n) }
                .unwrap()
                .wait()
                .unwrap();
            for v in &mut want {
                *v += 1;
            }
            assert_eq!(x.read().unwrap(), want, "{n}: after a split add");
        }
        eprintln!("lent parts [{}]: right", desc(&root));
    }
}

#[test]
fn chains_with_a_plain_buffer() {
    let sizes = [1usize, 2, 3, 10, 35, 64, 97, 130];
    for root in roots("chains_with_a_plain_buffer") {
        let mut d = Diff::new("plain chains", &root, CHAIN_SRC, "");
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for n in sizes_for("chains_with_a_plain_buffer", &root, &sizes) {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                d.reset();
                d.name = format!("plain chains n={n} seed={seed}");
                chain_with(
                    &mut d,
                    n,
                    seed,
                    common::env_or("HUNT_STEPS", 30usize),
                    false,
                );
            }
        }
        eprintln!("plain chains [{}]: right", desc(&root));
    }
}

/// The chains of [`chain`] with no root launch waited for: host writes, fills, reduces and
/// reads must order themselves after the launches before them.
#[test]
fn chains_never_waited_for() {
    let sizes = [1usize, 3, 35, 64, 130];
    for root in roots("chains_never_waited_for") {
        let mut d = Diff::new("unwaited chains", &root, CHAIN_SRC, "");
        d.nowait = true;
        d.alt(root.clone().with_spread(SpreadPolicy::OneDevice), CHAIN_SRC);
        d.alt(root.clone().with_spread(SpreadPolicy::Model), CHAIN_SRC);
        d.alt(root.clone().with_halo_depth(2), CHAIN_SRC);
        for n in sizes_for("chains_never_waited_for", &root, &sizes) {
            for seed in 0..common::env_or("HUNT_SEEDS", 3u64) {
                for colored_b in [true, false] {
                    d.reset();
                    d.name = format!("unwaited chains n={n} seed={seed} colored b {colored_b}");
                    chain_with(
                        &mut d,
                        n,
                        seed + 100,
                        common::env_or("HUNT_STEPS", 30usize),
                        colored_b,
                    );
                }
            }
        }
        eprintln!("unwaited chains [{}]: right", desc(&root));
    }
}

impl Diff {
    /// Adds a root over the same devices launching the same program (another spread or depth).
    fn alt(&mut self, root: RootDevice, src: &str) {
        let p = root.program(src).unwrap();
        self.alts.push((root, p));
    }

    /// The sum of colored `i32` buffer `b` by `scaling::reduce_sum`, and on the host from one
    /// device's copy.
    fn sums(&self, b: usize) -> (i32, i32) {
        let pair = self.bufs[b].as_any().downcast_ref::<Pair<i32>>().unwrap();
        let RootBuf::Colored(c) = &pair.root else {
            panic!("not colored")
        };
        let got = clgroups::scaling::reduce_sum(&self.root, c).unwrap();
        let want = pair.one.read(&self.q).unwrap();
        (want.iter().fold(0i32, |a, &v| a.wrapping_add(v)), got)
    }
}
