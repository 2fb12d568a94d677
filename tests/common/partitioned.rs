//! Root devices in partitioned placement and the stencils of `tests/cl/stencils.cl` with their
//! host references, shared by the cost, footprint and margin tests.

use super::colored;
use clgroups::scaling::{MultiEvent, Placement, RootDevice, RootKernel, Spread};
use clgroups::Range;

/// The root devices under test in partitioned placement, strict and not (none, with a reason,
/// where there is no multi-device setup).
pub fn roots(test: &str) -> Vec<RootDevice> {
    let Some(root) = super::root_device(test) else {
        return Vec::new();
    };
    let root = root.with_placement(Placement::Partitioned);
    vec![root.clone(), root.strict()]
}

/// How a root launch ran, in a few words (the tests' summaries).
pub fn spread_words(spread: &Spread) -> &'static str {
    match spread {
        Spread::Split => "split",
        Spread::Merged { .. } => "merged",
        Spread::OneDevice(_) => "one device (refused)",
        Spread::Resident { .. } => "one device (kept)",
        Spread::Fetched { .. } => "split by footprints",
        _ => "other",
    }
}

/// One step of the 2-D heat stencil over `t` (`w` by `h`, borders kept), in integers.
pub fn host_heat(t: &[i32], w: usize, h: usize) -> Vec<i32> {
    (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                return t[i];
            }
            (t[i - 1] + t[i + 1] + t[i - w] + t[i + w]) / 4
        })
        .collect()
}

/// One step of the 1-D 3-point blur over `x` (ends kept), in integers.
pub fn host_blur(x: &[i32]) -> Vec<i32> {
    let n = x.len();
    (0..n)
        .map(|i| match i {
            0 => x[0],
            _ if i + 1 == n => x[i],
            _ => (x[i - 1] + x[i] + x[i + 1]) / 3,
        })
        .collect()
}

/// Runs `steps` steps of the 2-D heat kernel `k` (`t`, `u`, `w`, `h`; work-groups of 8 x 4) over
/// two buffers of `init` on `root` colored in slabs of 4 rows, swapping them after each step;
/// checks every step against the host and hands its event to `check` with the step's number.
pub fn heat_steps(
    root: &RootDevice,
    k: &RootKernel,
    (w, h): (usize, usize),
    init: &[i32],
    steps: usize,
    mut check: impl FnMut(usize, &MultiEvent),
) {
    let (mut a, mut b) = (colored(root, init, 4 * w), colored(root, init, 4 * w));
    let mut want = init.to_vec();
    for step in 0..steps {
        // SAFETY: work-item (x, y) writes u[y * w + x] and reads t within one row of it,
        // inside the grid (the border copies).
        let ev = unsafe {
            k.launch()
                .arg(&a)
                .arg(&b)
                .arg(w as i32)
                .arg(h as i32)
                .nd_range(Range::d2(w, h), Range::d2(8, 4))
        }
        .unwrap();
        ev.wait().unwrap();
        want = host_heat(&want, w, h);
        assert_eq!(b.read().unwrap(), want, "step {step}");
        check(step, &ev);
        std::mem::swap(&mut a, &mut b);
    }
}
