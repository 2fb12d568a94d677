//! Bounded waits: with `CLGROUPS_TIMEOUT` shorter than a kernel, waiting for the kernel and
//! reading its output return `Error::Timeout` naming the command within about the limit, and
//! the kernel's result is still right once it finishes.
//!
//! The limit is read once per process: only one test of this binary uses a device.

mod common;

use clgroups::{Buffer, Error, Program};
use std::time::{Duration, Instant};

/// Iterates an LCG `n` times per work-item: a dependent chain the compiler cannot shorten.
const SPIN: &str = r#"
kernel void spin(global uint *out, uint n) {
    uint x = (uint)get_global_id(0);
    for (uint i = 0; i < n; ++i)
        x = x * 1664525u + 1013904223u;
    out[get_global_id(0)] = x;
}
"#;

/// 2^28 dependent steps: well over 50 ms on any device (about 4 cycles a step).
const STEPS: u32 = 1 << 28;
const LIMIT: Duration = Duration::from_millis(50);

/// `x` after `n` steps of the LCG, by composing the affine map with itself (jump-ahead).
fn lcg(mut x: u32, mut n: u32) -> u32 {
    let (mut a, mut c) = (1664525u32, 1013904223u32);
    while n > 0 {
        if n & 1 == 1 {
            x = x.wrapping_mul(a).wrapping_add(c);
        }
        c = c.wrapping_mul(a).wrapping_add(c);
        a = a.wrapping_mul(a);
        n >>= 1;
    }
    x
}

#[test]
fn waits_end_with_a_timeout_error_naming_the_command() {
    // Set before the first wait of this process (the only test of this binary).
    // SAFETY: the only test of this binary, before any OpenCL call: no other thread exists
    // that could read or write the environment.
    unsafe { std::env::set_var("CLGROUPS_TIMEOUT", LIMIT.as_secs_f64().to_string()) };
    assert_eq!(clgroups::config::timeout().unwrap(), LIMIT);
    let q = common::queue();
    let k = Program::from_source(&q, SPIN)
        .unwrap()
        .kernel("spin")
        .unwrap();
    let out = Buffer::<u32>::new(q.context(), 4).unwrap();
    // Built and warm (kernels, pinned result memory) before the queue is blocked.
    #[cfg(feature = "algorithms")]
    let ones = Buffer::from_slice(&q, &[1u32; 5]).unwrap();
    #[cfg(feature = "algorithms")]
    assert_eq!(clgroups::algorithms::reduce_sum(&q, &ones).unwrap(), 5);
    // SAFETY: the kernel writes out[get_global_id(0)] for 4 work-items; `out` holds 4.
    let ev = unsafe {
        k.launch()
            .arg(&out)
            .arg(STEPS)
            .nd_range(clgroups::Range::d1(4), clgroups::launch::LocalSize::Auto)
    }
    .unwrap();

    let start = Instant::now();
    let err = ev.wait().unwrap_err();
    let waited = start.elapsed();
    assert!(
        matches!(&err, Error::Timeout { command, waited } if command.contains("`spin`") && *waited == LIMIT),
        "{err:?}"
    );
    assert!(waited < LIMIT + Duration::from_secs(2), "waited {waited:?}");
    eprintln!("after {waited:?}: {err}");

    // A read waits (bounded) for the kernel before it transfers anything.
    let err = out.read(&q).unwrap_err();
    assert!(matches!(&err, Error::Timeout { .. }), "{err:?}");

    // So does a blocking reduce, behind the kernel; it gives up its pinned result memory
    // (leaked, as the read may still land there) and takes new memory on its next call.
    #[cfg(feature = "algorithms")]
    {
        let err = clgroups::algorithms::reduce_sum(&q, &ones).unwrap_err();
        assert!(matches!(&err, Error::Timeout { .. }), "{err:?}");
    }

    // The kernel still finishes, with the right result.
    let give_up = Instant::now() + Duration::from_secs(300);
    loop {
        match ev.wait() {
            Ok(()) => break,
            Err(Error::Timeout { .. }) if Instant::now() < give_up => continue,
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("kernel finished after {:?}", start.elapsed());
    let want: Vec<u32> = (0..4).map(|i| lcg(i, STEPS)).collect();
    assert_eq!(out.read(&q).unwrap(), want);
    #[cfg(feature = "algorithms")]
    assert_eq!(clgroups::algorithms::reduce_sum(&q, &ones).unwrap(), 5);
}

#[test]
fn jump_ahead_matches_stepping() {
    let mut x = 7u32;
    for n in 0..100 {
        assert_eq!(lcg(7, n), x);
        x = x.wrapping_mul(1664525).wrapping_add(1013904223);
    }
}
