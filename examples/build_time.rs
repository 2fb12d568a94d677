//! Build time of a program with a sub-group kernel (issue 33: "not slower than today"): the
//! median of N builds with `Program::from_source`, each of a source no cache has seen.
//!
//! clgroups caches builds per context, keyed by the composed text (`src/program/compile.rs`),
//! and PoCL caches compiled kernels on disk, keyed by the source and options: every build here
//! starts with a comment naming the run and the build, so both caches miss and the driver
//! really compiles (run with `POCL_KERNEL_CACHE=0` too). The first build of the process also
//! probes the device's built-ins; it is reported apart and left out of the median.
//!
//! ```text
//! POCL_DEVICES=pthread POCL_KERNEL_CACHE=0 cargo run --release --example build_time -- 15
//! ```

use clgroups::prelude::*;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A sub-group kernel as people write them: the layer's header, a macro, a helper, a reduction
/// and a broadcast.
const SOURCE: &str = r#"
#include <clgroups/subgroup.h>
#define TILE 4
typedef float real;

real tile_sum(global const real *x, uint base, uint n) {
    real s = 0;
    for (uint t = 0; t < TILE; t++) {
        uint i = base + t;
        s += i < n ? x[i] : 0;
    }
    return s;
}

kernel void block_sums(global const real *x, global real *out, uint n) {
    uint gid = get_global_id(0);
    real s = sg_reduce_add(tile_sum(x, gid * TILE, n));
    real first = sg_broadcast(s, 0);
    if (sg_get_local_id() == 0) {
        out[gid / sg_get_local_range()] = s + 0 * first;
    }
}
"#;

fn main() -> clgroups::Result<()> {
    let builds: usize = std::env::args()
        .nth(1)
        .map_or(15, |n| n.parse().expect("the number of builds"));
    let queue = Queue::new(&default_device()?)?;
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut ms = Vec::new();
    for i in 0..=builds {
        let source = format!("// build {i} of run {run}\n{SOURCE}");
        let t = Instant::now();
        let program = Program::from_source(&queue, &source)?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(program.kernel_names(), ["block_sums"]);
    }
    let first = ms.remove(0);
    let mut sorted = ms.clone();
    sorted.sort_by(f64::total_cmp);
    let median = match sorted.len() % 2 {
        1 => sorted[sorted.len() / 2],
        _ => (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0,
    };
    println!(
        "{{\"device\": \"{}\", \"builds\": {builds}, \"first_ms\": {first:.1}, \"median_ms\": {median:.1}, \"ms\": {ms:.1?}}}",
        queue.device()
    );
    Ok(())
}
