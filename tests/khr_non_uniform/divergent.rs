//! The non-uniform built-ins under divergent branches (even lanes, the first lane, random
//! lanes), checked against the active lanes of each sub-group (a warp, or a segment of one).

use super::{hash, Elem, Shape, Suite};
use std::collections::BTreeMap;

impl Suite<'_> {
    /// The calls under divergent branches: each active lane's results over the active lanes of
    /// its sub-group (of `s` consecutive work-items); inactive lanes write nothing.
    pub(super) fn divergent(&mut self, shape: &Shape, s: usize) {
        let n = shape.n();
        let x: Vec<i32> = (0..n).map(|g| hash(g, 3) as i32 % 100_000).collect();
        let f: Vec<f32> = (0..n).map(f32::x).collect();
        let k = self.program.kernel("nu_divergent").unwrap();
        for mode in 0u32..3 {
            let (o, of, ol) = (
                self.buf(&vec![-7i32; 12 * n]),
                self.buf(&vec![-7.0f32; 4 * n]),
                self.buf(&vec![-7i64; 2 * n]),
            );
            let (xb, fb) = (self.buf(&x), self.buf(&f));
            let l = k.launch().arg(&xb).arg(&fb).arg(mode);
            let l = l.arg(&o).arg(&of).arg(&ol);
            // SAFETY: work-item g writes o[12g..12g + 12], of[4g..4g + 4] and ol[2g..2g + 2].
            unsafe { self.launch(l, &shape.global, &shape.local) };
            let (o, of, ol) = (
                o.read(self.queue).unwrap(),
                of.read(self.queue).unwrap(),
                ol.read(self.queue).unwrap(),
            );
            // Sub-groups of s consecutive work-items (of linear local ids).
            let wg: usize = shape.local.iter().product();
            let lin = |g: usize| -> (usize, usize) {
                let (mut rest, mut l, mut stride) = (g, 0, 1);
                let (gs, ls) = (&shape.global, &shape.local);
                for d in 0..gs.len() {
                    l += (rest % gs[d]) % ls[d] * stride;
                    stride *= ls[d];
                    rest /= gs[d];
                }
                (shape.group(g) * wg + l - l % s, l % s)
            };
            let mut warps: BTreeMap<usize, Vec<Option<usize>>> = BTreeMap::new();
            for g in 0..n {
                let (w, lane) = lin(g);
                warps.entry(w).or_insert_with(|| vec![None; s])[lane] = Some(g);
            }
            for lanes in warps.values() {
                let on = |lane: usize, g: usize| match mode {
                    0 => lane % 2 == 0,
                    1 => lane == 0,
                    _ => x[g] & 8 != 0,
                };
                let act: Vec<(usize, usize)> = (0..s)
                    .filter_map(|l| lanes[l].map(|g| (l, g)))
                    .filter(|&(l, g)| on(l, g))
                    .collect();
                let vals: Vec<i32> = act.iter().map(|&(_, g)| x[g]).collect();
                for (k, &(lane, g)) in act.iter().enumerate() {
                    let what = |s: &str| {
                        format!("{:?} divergent mode {mode} lane {lane} {s}", shape.local)
                    };
                    let below = |l: usize| act.iter().take_while(move |a| a.0 < l).map(|a| x[a.1]);
                    let cl = act.iter().filter(|a| a.0 / 4 == lane / 4).map(|a| x[a.1]);
                    let want = [
                        i32::from(k == 0),
                        i32::from(vals.iter().all(|&v| v > 0)),
                        i32::from(vals.iter().any(|&v| v > 0)),
                        i32::from(vals.iter().all(|&v| v & 1 == vals[0] & 1)),
                        vals.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
                        below(lane + 1).fold(0i32, |a, b| a.wrapping_add(b)),
                        below(lane).fold(i32::MIN, i32::max),
                        vals.iter().fold(1i32, |a, &b| a.wrapping_mul(b | 1)),
                        cl.fold(0i32, |a, b| a.wrapping_add(b)),
                        vals.iter().fold(0, |a, &b| a ^ b),
                        i32::from(vals.iter().any(|&v| v & 16 != 0)),
                        below(lane + 1).fold(i32::MAX, i32::min),
                    ];
                    for (s, &w) in want.iter().enumerate() {
                        let got = o[12 * g + s];
                        let got = if [0, 1, 2, 3, 10].contains(&s) {
                            i32::from(got != 0)
                        } else {
                            got
                        };
                        self.check(|| what(&format!("int slot {s}")), got, w);
                    }
                    let fv: Vec<f32> = act.iter().map(|a| f[a.1]).collect();
                    let fbelow: f32 = act.iter().filter(|a| a.0 <= lane).map(|a| f[a.1]).sum();
                    let fc = act.iter().filter(|a| a.0 / 8 == lane / 8).map(|a| f[a.1]);
                    let wantf = [
                        fv.iter().sum::<f32>(),
                        fbelow,
                        fv.iter().copied().fold(f32::INFINITY, f32::min),
                        fc.fold(f32::NEG_INFINITY, f32::max),
                    ];
                    self.check(|| what("float"), &of[4 * g..4 * g + 4], &wantf[..]);
                    let lsum = vals.iter().map(|&v| v as i64).sum::<i64>();
                    let lmin = below(lane).map(i64::from).fold(i64::MAX, i64::min);
                    self.check(|| what("long"), &ol[2 * g..2 * g + 2], &[lsum, lmin][..]);
                }
                for (l, g) in (0..s).filter_map(|l| lanes[l].map(|g| (l, g))) {
                    if !on(l, g) {
                        let what =
                            || format!("{:?} mode {mode}: inactive lane {l} wrote", shape.local);
                        self.check(what, o[12 * g], -7);
                    }
                }
            }
        }
    }
}
