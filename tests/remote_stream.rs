//! A long stream of launches with no wait completes through PoCL-R.
//!
//! With scripts/pocl-remote.d/0013, PoCL-R's client sends a command before the ones it waits
//! for have completed, so a stream of launches keeps many commands in flight on one connection.
//! Before 0011, the client's writer, blocked on a full command socket, kept its reader from
//! reading replies: the kernel then dropped the server's segments and the acknowledgements they
//! carried, and the session hung (about one stream of 100,000 launches in three over loopback).
//! Before 0012, 4 KiB command socket buffers stalled such a stream on TCP zero-window probes.
//! A run without remote devices checks nothing.

mod common;

use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue};
use std::time::Instant;

const SRC: &str = "kernel void bump(global int *o) { o[get_global_id(0)] += 1; }";
/// Launches per device, none waited for until the last.
const LAUNCHES: i32 = 100_000;
const WIDTH: usize = 64;

#[test]
fn a_long_stream_of_launches_completes() {
    let remote = common::remote_devices();
    if remote.is_empty() {
        return;
    }
    // In a child with its own bound on waits: a hung session fails in a minute, not at CI's
    // CLGROUPS_TIMEOUT.
    common::in_child_with(
        "a_long_stream_of_launches_completes",
        &[("CLGROUPS_TIMEOUT", "60")],
        || {
            for d in &remote {
                let q = Queue::new(d).expect("a queue on the remote device");
                let k = Program::from_source(&q, SRC)
                    .and_then(|p| p.kernel("bump"))
                    .expect("the kernel");
                let out = Buffer::from_slice(&q, &[0i32; WIDTH]).expect("a buffer");
                let start = Instant::now();
                let mut last = None;
                for _ in 0..LAUNCHES {
                    // SAFETY: work-item i < WIDTH touches out[i] of WIDTH ints.
                    let l = unsafe { k.launch().arg(&out).nd_range(WIDTH, LocalSize::Auto) };
                    last = Some(l.expect("a launch"));
                }
                last.expect("launches")
                    .wait()
                    .expect("the stream completes");
                println!("{d}: {LAUNCHES} launches in {:?}", start.elapsed());
                let got = out.read(&q).expect("read");
                assert!(
                    got.iter().all(|&v| v == LAUNCHES),
                    "{d}: {:?} after {LAUNCHES} launches",
                    &got[..4]
                );
            }
        },
    );
}
