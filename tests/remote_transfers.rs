//! Transfers to a device behind PoCL-R cost a network round trip, not a TCP timer.
//!
//! pocld 7.2-RC1 left the server end of a client's second socket (the stream socket, where read
//! replies travel) unconfigured: without TCP_NODELAY, a read reply's data waited for the client's
//! delayed ACK of its header, and every blocking read that followed a write took ~43 ms instead
//! of ~0.2 ms over loopback (fixed by scripts/pocl-remote.d/0006). A run without remote devices
//! checks nothing.

mod common;

use clgroups::{Buffer, Queue};
use std::time::{Duration, Instant};

/// Reads timed per case: the median of 7 ignores up to 3 slow ones (a busy CI machine).
const RUNS: usize = 7;
/// Half the delayed-ACK timer (40 ms on Linux); a read over loopback takes well under 1 ms.
const BOUND: Duration = Duration::from_millis(20);

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Median time of a blocking read of a small buffer just written by `write` (a fresh
/// `from_slice` buffer or a rewrite of an existing one), and of a read with no write before it.
fn read_times(q: &Queue) -> [(&'static str, Duration); 3] {
    let (mut fresh, mut rewritten, mut again) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..RUNS as u32 {
        let mut b = Buffer::from_slice(q, &[i, i + 1]).expect("a buffer");
        let t = Instant::now();
        assert_eq!(b.read(q).expect("read"), [i, i + 1]);
        fresh.push(t.elapsed());
        b.write(q, &[i + 2, i + 3]).expect("write");
        let t = Instant::now();
        assert_eq!(b.read(q).expect("read"), [i + 2, i + 3]);
        rewritten.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(b.read(q).expect("read"), [i + 2, i + 3]);
        again.push(t.elapsed());
    }
    [
        ("first read of a fresh buffer", median(fresh)),
        ("read after a write", median(rewritten)),
        ("read with no write before it", median(again)),
    ]
}

#[test]
fn a_read_after_a_write_takes_no_delayed_ack() {
    let remote = common::remote_devices();
    if remote.is_empty() {
        return;
    }
    let mut slow = Vec::new();
    for d in &remote {
        let q = Queue::new(d).expect("a queue on the remote device");
        // The session's first transfers (buffer creation on the server) are not what is timed.
        Buffer::from_slice(&q, &[0u32])
            .and_then(|b| b.read(&q))
            .expect("a first transfer");
        for (case, time) in read_times(&q) {
            eprintln!("{d}: {case}: median {time:?} of {RUNS}");
            if time >= BOUND {
                slow.push(format!("{d}: {case}: median {time:?} (bound {BOUND:?})"));
            }
        }
    }
    assert!(
        slow.is_empty(),
        "blocking reads through PoCL-R wait for a TCP timer (pocld without \
         scripts/pocl-remote.d/0006?):\n{}",
        slow.join("\n")
    );
}
