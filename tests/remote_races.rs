//! bench_reduce's pattern, made denser: every read right after its commands is checked, while
//! other threads create and free buffers and queues on the same device (issue 37, item 1).
//!
//! On the GPU machine one run of `bench_reduce` in three through one loopback `pocld` read
//! `[0] = 0` after a scan into a NaN-filled 2^27-element output: memory no command had written.
//! pocld runs a client's commands in its request thread, creates and frees its buffers and
//! queues in its main thread, and sends replies from two reply threads, which then walk the
//! session's queues to retry held commands. Built with `-fsanitize=thread`, pocld reported 14
//! and 7 data races in two 20 s runs of this test (`SharedCLContext::freeBuffer` erased from
//! the buffer map without its lock while the request thread looked buffers up; `notifyEvent`
//! walked the queue map while `CreateCmdQueue`/`FreeCmdQueue` changed it): a lookup that
//! misses fails the command on the server with `CL_INVALID_MEM_OBJECT`, and a queue freed
//! under the walk is a use after free. And whatever failed on the server (or a server lost
//! mid-command), PoCL-R's client completed the command as if it had succeeded: a failed read
//! returned as a successful one, its destination untouched (`Buffer::read` hands out zeroed
//! memory) — a wrong read (`tests/remote_faults.rs` shows it every time). `scripts/pocl-remote.d`
//! 0016 fails such commands with the server's error, 0017 takes pocld's locks (no TSan report
//! since), and `Buffer::read`/`write` check their event's status (a blocking call through PoCL
//! returns `CL_SUCCESS` whatever happened to the command). Uninstrumented, the races are rare:
//! this test read nothing wrong over the unpatched servers here (6,342 checked reads in three
//! runs); TSan is what shows them.
//!
//! Every device runs it (a local one checks the same contract cheaply); remote devices are the
//! point. `CLGROUPS_RACES_SECS` (default 8) bounds each device's run.

mod common;

use common::Poison;

use clgroups::algorithms::{self, ScanKind};
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Device, Program, Queue};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn secs() -> Duration {
    let s = std::env::var("CLGROUPS_RACES_SECS").ok();
    Duration::from_secs_f64(s.map_or(8.0, |v| v.parse().expect("CLGROUPS_RACES_SECS: seconds")))
}

/// 1, 2 or 3 by a hash of the index: prefix sums are never 0 nor `u32::POISON`.
fn input(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| 1 + (i.wrapping_mul(2_654_435_761) >> 30) % 3)
        .collect()
}

fn prefix(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |acc, &v| {
            *acc += v;
            Some(*acc)
        })
        .collect()
}

/// The first element where `got` differs from `want`, for messages.
fn first_diff(got: &[u32], want: &[u32]) -> Option<String> {
    let i = (0..want.len()).find(|&i| got[i] != want[i])?;
    let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
    Some(format!(
        "[{i}] = {:#x} not {:#x} ({wrong} of {} wrong)",
        got[i],
        want[i],
        want.len()
    ))
}

/// bench_reduce's loop: a profiling queue made for the round beside the user's queue, a fill
/// of the output before each call, the scan on the profiling queue, the read on the user's.
fn scans(d: &Device, until: Instant, checked: &AtomicUsize) {
    let q = Queue::new(d).expect("a queue");
    let sizes = [1usize << 10, 1 << 16, 1 << 20, 3 << 18, 1 << 14];
    let mut round = 0;
    while Instant::now() < until {
        let n = sizes[round % sizes.len()];
        round += 1;
        let timed = Queue::profiled_on(q.context(), d).expect("a profiling queue");
        let data = input(n);
        let want = prefix(&data);
        let x = Buffer::from_slice(&q, &data).expect("input");
        let mut y = Buffer::<u32>::new(&q, n).expect("output");
        for call in 0..3 {
            y.fill(&q, u32::POISON).expect("fill");
            let ev = algorithms::enqueue_scan_sum(&timed, &x, &mut y, ScanKind::Inclusive)
                .expect("scan");
            ev.duration().expect("the scan's device time");
            let got = y.read(&q).expect("read");
            if let Some(e) = first_diff(&got, &want) {
                panic!("{d}: scan of {n} (round {round}, call {call}): {e}");
            }
            checked.fetch_add(1, Ordering::Relaxed);
        }
        x.copy_to(&timed, &mut y)
            .expect("copy")
            .wait()
            .expect("copy");
        let got = y.read(&q).expect("read");
        if let Some(e) = first_diff(&got, &data) {
            panic!("{d}: copy of {n} (round {round}): {e}");
        }
        checked.fetch_add(1, Ordering::Relaxed);
    }
}

/// Buffers created, written, bumped by a kernel, read and freed as fast as the server goes.
fn churn(d: &Device, until: Instant, checked: &AtomicUsize) {
    let q = Queue::new(d).expect("a queue");
    let bump = Program::from_source(&q, BUMP)
        .and_then(|p| p.kernel("bump"))
        .expect("the kernel");
    let mut i = 0u32;
    while Instant::now() < until {
        i = i.wrapping_add(1);
        let n = 1 + (i as usize * 37) % 4096;
        let data: Vec<u32> = (0..n as u32).map(|k| k ^ i).collect();
        let b = Buffer::from_slice(&q, &data).expect("a buffer");
        let local = if i % 2 == 0 {
            LocalSize::Auto
        } else {
            LocalSize::Tuned
        };
        // SAFETY: work-item k < n adds 1 to b[k]; `b` holds n.
        let ev = unsafe { bump.launch().arg(&b).nd_range(n, local) }.expect("launch");
        if i % 3 == 0 {
            ev.wait().expect("bump");
        }
        let got = b.read(&q).expect("read");
        let want: Vec<u32> = data.iter().map(|v| v + 1).collect();
        if let Some(e) = first_diff(&got, &want) {
            panic!("{d}: buffer {i} of {n}: {e}");
        }
        checked.fetch_add(1, Ordering::Relaxed);
        // Queues come and go too (each one created and freed on the server's main thread).
        if i % 16 == 0 {
            let other = Queue::profiled_on(q.context(), d).expect("a queue");
            let got = b.read(&other).expect("read on another queue");
            assert!(
                first_diff(&got, &want).is_none(),
                "{d}: read on a new queue"
            );
        }
    }
}

const BUMP: &str = "kernel void bump(global uint *b) { b[get_global_id(0)] += 1; }";

/// The three loops at once on `d` (in a child with a bounded wait, so that a hang fails).
fn run_on(d: &Device) {
    let until = Instant::now() + secs();
    let checked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let a = s.spawn(|| scans(d, until, &checked));
        let b = s.spawn(|| churn(d, until, &checked));
        let c = s.spawn(|| churn(d, until, &checked));
        for h in [a, b, c] {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
    });
    println!(
        "{d}: {} checked reads, 0 wrong, in {:?}",
        checked.load(Ordering::Relaxed),
        secs()
    );
}

#[test]
fn reads_are_right_while_buffers_and_queues_come_and_go() {
    common::in_child_with(
        "reads_are_right_while_buffers_and_queues_come_and_go",
        &[("CLGROUPS_TIMEOUT", "60")],
        || {
            let remote = common::remote_devices();
            let devices = if remote.is_empty() {
                vec![common::device()]
            } else {
                remote
            };
            for d in &devices {
                run_on(d);
            }
        },
    );
}
