//! Faults (issue 37, item 3): a `pocld` killed in the middle of a transfer or of a kernel gives
//! a typed [`Error`] within `CLGROUPS_TIMEOUT`, never a hang and never data that was not
//! written; one stopped (`SIGSTOP`) gives `Error::Timeout` and works again once continued.
//!
//! Before `scripts/pocl-remote.d/0016`, PoCL-R's client completed the commands in flight on a
//! lost server as if they had succeeded: a read in flight returned `Ok` with its destination
//! untouched (zeros), the wrong read of issue 37 in its plainest form. This test kills the
//! servers that `scripts/pocl-remote run` started (it names them in
//! `CLGROUPS_POCL_REMOTE_PIDS`), so it runs only there: server 0 while 64 MiB reads stream back,
//! server 1 (where there is one) while a long kernel runs. Elsewhere it checks nothing. The
//! outcomes are tabled in docs/scaling.md ("Faults").

mod common;

use clgroups::{Buffer, Device, Error, Program, Queue};
use std::time::{Duration, Instant};

const TIMEOUT_S: u64 = 5;

/// Each work-item spins `n` rounds of a hash, then writes its result (with the `n` below,
/// hours on PoCL's CPU device and seconds on a GPU: the kill comes first).
const SPIN: &str = "kernel void spin(global uint *o, uint n) {
    uint x = get_global_id(0);
    for (uint k = 0; k < n; ++k) x = x * 1664525u + 1013904223u;
    o[get_global_id(0)] = x;
}";

fn kill_after(pid: u32, after: Duration) -> std::thread::JoinHandle<Instant> {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        signal(pid, "-KILL");
        Instant::now()
    })
}

/// The error is typed and came within the timeout after the kill (plus slack).
fn typed_and_prompt(what: &str, e: &Error, killed: Instant) {
    let after = killed.elapsed();
    println!("{what}: {e} ({after:?} after the kill)");
    assert!(
        matches!(e, Error::Cl { .. } | Error::Timeout { .. }),
        "{what}: {e:?}"
    );
    assert!(
        after < Duration::from_secs(TIMEOUT_S + 5),
        "{what}: {after:?}"
    );
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

/// A server that stops answering (`SIGSTOP`): a small read, a 4 MiB read and a 4 MiB write each
/// give `Error::Timeout` after `CLGROUPS_TIMEOUT` (the large ones through PoCL-R are bounded
/// too: they went through blocking calls that waited forever), and the server works again once
/// continued, the write it had pending applied in order.
fn stopped(d: &Device, pid: u32) {
    let q = Queue::new(d).expect("a queue");
    let x = Buffer::from_slice(&q, &[3u32; 1024]).expect("a buffer");
    let mut big = Buffer::from_slice(&q, &vec![5u32; 1 << 20]).expect("a buffer");
    signal(pid, "-STOP");
    // Each a typed error: `Timeout`, or the connection declared lost by PoCL-R's client
    // (`CL_DEVICE_NOT_AVAILABLE`, seen with a GPU behind the server once a first wait had
    // timed out). After a lost connection nothing works again (no reconnect yet: docs/scaling.md).
    let mut lost = false;
    let mut failed = |what: &str, r: Result<(), Error>| {
        let e = r.expect_err(what);
        println!("{d}: stopped server, {what}: {e}");
        lost |= matches!(e, Error::Cl { .. });
        assert!(
            matches!(e, Error::Timeout { .. } | Error::Cl { .. }),
            "{d}: {what}: {e:?}"
        );
    };
    let start = Instant::now();
    failed("a small read", x.read(&q).map(drop));
    failed("a 4 MiB read", big.read(&q).map(drop));
    failed("a 4 MiB write", big.write(&q, &vec![6u32; 1 << 20]));
    assert!(start.elapsed() < Duration::from_secs(3 * TIMEOUT_S + 5));
    signal(pid, "-CONT");
    if lost {
        println!("{d}: the connection was declared lost: not checked again once continued");
        return;
    }
    assert_eq!(x.read(&q).expect("a read once continued"), [3u32; 1024]);
    let got = big.read(&q).expect("a read once continued");
    assert!(
        got.iter().all(|&v| v == 6),
        "{d}: the write made while stopped"
    );
}

/// 64 MiB reads stream back from `d` while its server is killed: every read that succeeds is
/// right, and the first one that does not is a typed error.
fn killed_mid_transfer(d: &Device, pid: u32) {
    let q = Queue::new(d).expect("a queue");
    let data: Vec<u32> = (0..1u32 << 24).map(|i| i ^ 0x5a5a_5a5a).collect();
    let x = Buffer::from_slice(&q, &data).expect("a buffer");
    assert!(
        x.read(&q).expect("a read") == data,
        "{d}: a read before the kill"
    );
    let killer = kill_after(pid, Duration::from_millis(300));
    let mut right = 0;
    let err = loop {
        match x.read(&q) {
            Ok(got) if got == data => right += 1,
            Ok(got) => {
                let wrong = got.iter().zip(&data).filter(|(g, w)| g != w).count();
                panic!("{d}: a read returned data that was not written: {wrong} wrong");
            }
            Err(e) => break e,
        }
        assert!(right < 10_000, "{d}: the server was not lost");
    };
    let killed = killer.join().expect("the kill");
    typed_and_prompt(&format!("{d}: read after {right} right ones"), &err, killed);
    // Later calls fail too, at once, and never hang.
    let start = Instant::now();
    let again = x.read(&q).expect_err("a read from a lost server");
    typed_and_prompt(&format!("{d}: a later read"), &again, start);
}

/// A long kernel runs on `d` when its server is killed: the wait and the read fail typed.
fn killed_mid_kernel(d: &Device, pid: u32) {
    let q = Queue::new(d).expect("a queue");
    let spin = Program::from_source(&q, SPIN)
        .and_then(|p| p.kernel("spin"))
        .expect("the kernel");
    let out = Buffer::from_slice(&q, &vec![7u32; 4096]).expect("a buffer");
    let killer = kill_after(pid, Duration::from_millis(200));
    let launch = spin.launch().arg(&out).arg(1_000_000_000u32);
    // SAFETY: work-item i < 4096 writes o[i]; `out` holds 4096.
    let waited = unsafe { launch.range(4096) }.and_then(|e| e.wait());
    let killed = killer.join().expect("the kill");
    // Before clgroups re-read the event's status after its completion callback, PoCL's
    // callback status (CL_COMPLETE also for a failed command) made this wait `Ok`.
    let err = waited.expect_err("the wait for a kernel on a lost server");
    typed_and_prompt(&format!("{d}: kernel"), &err, killed);
    let e = out
        .read(&q)
        .expect_err("the kernel's output from a lost server");
    typed_and_prompt(&format!("{d}: its output"), &e, killed);
}

#[test]
fn a_server_killed_mid_command_gives_a_typed_error() {
    let Ok(pids) = std::env::var("CLGROUPS_POCL_REMOTE_PIDS") else {
        eprintln!("not run: no servers of scripts/pocl-remote run to kill");
        return;
    };
    // Once in a few runs over PoCL 3.1's servers, PoCL-R's client retries the killed server's
    // connection in a loop that leaks a socket per try (20,000 descriptors, 100 % CPU, for
    // minutes: its `connection_connect`), which would stall CI: run where asked (the GPU kit's
    // step 6, `scripts/gpu-remote`, sets it).
    if std::env::var("CLGROUPS_REMOTE_FAULTS").as_deref() != Ok("1") {
        eprintln!(
            "not run: CLGROUPS_REMOTE_FAULTS=1 runs it (PoCL-R's client may spin leaking sockets)"
        );
        return;
    }
    let pids: Vec<u32> = pids
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect();
    common::in_child_with(
        "a_server_killed_mid_command_gives_a_typed_error",
        &[("CLGROUPS_TIMEOUT", &TIMEOUT_S.to_string())],
        || {
            let remote = common::remote_devices();
            assert_eq!(remote.len(), pids.len(), "one remote device per server");
            stopped(&remote[0], pids[0]);
            killed_mid_transfer(&remote[0], pids[0]);
            if remote.len() > 1 {
                killed_mid_kernel(&remote[1], pids[1]);
            }
        },
    );
}
