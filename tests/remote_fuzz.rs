//! A server that answers wrongly gives errors, never memory corruption, wrong data or a hang.
//!
//! Each run puts scripts/pocl-remote-fuzz (a proxy that damages some of pocld's replies: data
//! longer or shorter than the header says, a string pool larger than the data, a header field
//! overwritten, the server's timestamps out of order, a reply twice, a reply cut off or never
//! sent) between a fresh client process and server 0, with its own seed. The client finds its
//! device, then writes, reads, launches, reduces and copies, and reads into memory with a guard
//! region after the destination: every call must return the right answer or an `Error`
//! (`CLGROUPS_TIMEOUT` bounds each wait), the guard must stay untouched, and the process must
//! end on its own (no crash, no hang). Before scripts/pocl-remote.d/0020 a reply to a read that
//! claimed more data than the read asked for was written past the destination; before 0024 a
//! header's type, device and timestamps were taken as they came. A run without remote devices
//! checks nothing.
//! `CLGROUPS_FUZZ_RUNS` (default 12) and `CLGROUPS_FUZZ_RATE` (damaged replies, default 0.05)
//! set the amount, `CLGROUPS_FUZZ_KINDS` (the proxy's `--kinds`) the damages drawn.

mod common;

use clgroups::algorithms::reduce_sum;
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Error, Program, Queue};
use common::env_or;
use opencl3::command_queue::enqueue_read_buffer;
use opencl3::event::{Event, CL_COMPLETE};
use opencl3::types::CL_NON_BLOCKING;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEST: &str = "damaged_replies_give_errors_never_corruption";
const CHILD: &str = "CLGROUPS_FUZZ_CHILD";
const SRC: &str = "kernel void bump(global uint *o) { o[get_global_id(0)] += 1; }";
const N: usize = 4096;
const GUARD: usize = 256;
const CANARY: u32 = 0xdead_beef;
/// Operations per run.
const OPS: usize = 40;
/// The longest a client run may take before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(90);

#[test]
fn damaged_replies_give_errors_never_corruption() {
    if std::env::var(CHILD).is_ok() {
        client();
        return;
    }
    let Some(server) = std::env::var("POCL_REMOTE0_PARAMETERS")
        .ok()
        .and_then(|p| p.split(['/', ':']).nth(1)?.parse::<u16>().ok())
    else {
        eprintln!("not run: no PoCL-R server (run under scripts/pocl-remote run)");
        return;
    };
    let runs: u64 = env_or("CLGROUPS_FUZZ_RUNS", 12);
    let rate: f64 = env_or("CLGROUPS_FUZZ_RATE", 0.05);
    let (mut damages, mut errors, mut right) = (0, 0, 0);
    for seed in 0..runs {
        let listen = 31000 + 4 * (seed % 500) as u16;
        let (log, out) = run(server, listen, seed, rate);
        damages += log.lines().filter(|l| l.starts_with("fuzz:")).count();
        // Anywhere in a line: libtest's `test NAME ... ` precedes it on the same line unless
        // PoCL printed something first.
        let tally = out
            .lines()
            .find_map(|l| l.split_once("FUZZ-OK ").map(|(_, t)| t));
        let tally = tally.unwrap_or_else(|| panic!("seed {seed}: no tally\n{out}\n{log}"));
        let mut t = tally.split(' ').filter_map(|w| w.parse::<usize>().ok());
        right += t.next().unwrap_or(0);
        errors += t.next().unwrap_or(0);
    }
    eprintln!(
        "{runs} runs at rate {rate}: {damages} damaged replies; {right} calls right, {errors} errors, 0 wrong"
    );
}

/// One client process behind a proxy with `seed`: the proxy's log and the client's stdout,
/// after checking that the client ended on its own and well.
fn run(server: u16, listen: u16, seed: u64, rate: f64) -> (String, String) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pocl-remote-fuzz");
    let mut proxy = Command::new("python3")
        .arg(script)
        .args([
            "--listen",
            &listen.to_string(),
            "--server",
            &server.to_string(),
        ])
        .args(["--seed", &seed.to_string(), "--rate", &rate.to_string()])
        .args(
            std::env::var("CLGROUPS_FUZZ_KINDS")
                .map(|k| ["--kinds".into(), k])
                .iter()
                .flatten(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs scripts/pocl-remote-fuzz");
    let mut ready = String::new();
    BufReader::new(proxy.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(
        ready.trim(),
        "ready",
        "seed {seed}: the proxy did not start"
    );
    let mut client = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, seed.to_string())
        .env("POCL_DEVICES", "remote")
        .env("POCL_REMOTE0_PARAMETERS", format!("127.0.0.1:{listen}/0"))
        .env_remove("POCL_REMOTE1_PARAMETERS")
        .env("CLGROUPS_TIMEOUT", "5")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained while the processes run: a full pipe would stall a chatty client.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                r.read_to_string(&mut s).ok();
            }
            s
        })
    };
    let out = drain(client.stdout.take().map(|s| Box::new(s) as _));
    let err = drain(client.stderr.take().map(|s| Box::new(s) as _));
    let log = drain(proxy.stderr.take().map(|s| Box::new(s) as _));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = client.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > RUN_LIMIT {
            client.kill().ok();
            client.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    proxy.kill().ok();
    proxy.wait().ok();
    let (out, err, log) = (
        out.join().unwrap(),
        err.join().unwrap(),
        log.join().unwrap(),
    );
    let tail = |s: &str| s.lines().rev().take(30).collect::<Vec<_>>().join("\n");
    match status {
        Some(s) if s.success() => (log, out),
        Some(s) => panic!(
            "seed {seed}: the client ended {s:?}\n--- damages\n{log}\n--- stdout\n{out}\n--- stderr (last lines, reversed)\n{}",
            tail(&err)
        ),
        None => panic!(
            "seed {seed}: the client hung ({RUN_LIMIT:?})\n--- damages\n{log}\n--- stdout\n{out}\n--- stderr (last lines, reversed)\n{}",
            tail(&err)
        ),
    }
}

/// The client: every call right or an error; a wrong answer or a touched guard ends the process
/// with a failure.
fn client() {
    let (mut right, mut errors) = (0usize, 0usize);
    let mut note = |r: Result<bool, Error>, what: &str| match r {
        Ok(true) => right += 1,
        Ok(false) => {
            println!("WRONG: {what}");
            std::process::exit(2);
        }
        Err(e) => {
            println!("error: {what}: {e}");
            errors += 1;
        }
    };
    let setup = || -> Result<_, String> {
        let s = |e: Error| e.to_string();
        let device = clgroups::devices()
            .map_err(s)?
            .iter()
            .find(|d| d.identity().remote)
            .cloned()
            .ok_or("no remote device")?;
        let q = Queue::new(&device).map_err(s)?;
        let k = Program::from_source(&q, SRC)
            .and_then(|p| p.kernel("bump"))
            .map_err(s)?;
        let a = Buffer::from_slice(&q, &(0..N as u32).collect::<Vec<_>>()).map_err(s)?;
        let b = Buffer::<u32>::new(&q, N).map_err(s)?;
        Ok((q, k, a, b))
    };
    let (q, k, mut a, mut b) = match setup() {
        Ok(s) => s,
        Err(e) => {
            println!("error: setup: {e}");
            println!("FUZZ-OK 0 1");
            return;
        }
    };
    // What `a` holds: i + its launches so far, while `known` (after a failed launch, whether
    // it ran is unknown until a write succeeds).
    let (mut bumps, mut known) = (0u32, true);
    let want = |bumps: u32| (0..N as u32).map(move |i| i.wrapping_add(bumps));
    for i in 0..OPS {
        if !known {
            let fresh: Vec<u32> = want(0).collect();
            let r = a.write(&q, &fresh);
            (known, bumps) = (r.is_ok(), 0);
            note(r.map(|()| true), "write");
            continue;
        }
        match i % 5 {
            0 => {
                let r = a.read(&q).map(|v| v.into_iter().eq(want(bumps)));
                note(r, "read");
            }
            1 => {
                // SAFETY: work-item i < N touches o[i] of N elements.
                let l = unsafe { k.launch().arg(&a).nd_range(N, LocalSize::Auto) };
                let r = l.and_then(|ev| ev.wait());
                match r {
                    Ok(()) => bumps += 1,
                    Err(_) => known = false,
                }
                note(r.map(|()| true), "launch");
            }
            2 => {
                let sum = want(bumps).fold(0u32, u32::wrapping_add);
                note(reduce_sum(&q, &a).map(|s| s == sum), "reduce_sum");
            }
            3 => {
                let r = a
                    .copy_to(&q, &mut b)
                    .and_then(|_| b.read(&q))
                    .map(|v| v.into_iter().eq(want(bumps)));
                note(r, "copy_to + read");
            }
            _ => match guarded_read(&q, &b) {
                Some(r) => note(r, "guarded read"),
                None => break,
            },
        }
    }
    println!("FUZZ-OK {right} {errors}");
}

/// A raw non-blocking read of `b` into memory followed by a guard region: whether the data
/// is `b`'s (when the read completed) and the guard untouched; `None` when the read did not
/// end within the limit (the memory is leaked: the read may still write it).
fn guarded_read(q: &Queue, b: &Buffer<u32>) -> Option<Result<bool, Error>> {
    let mut dst = vec![CANARY; N + GUARD];
    // SAFETY: the read writes N u32 at the start of `dst`, which lives until the read has
    // ended (or is leaked below).
    let ev = unsafe {
        enqueue_read_buffer(
            q.as_opencl3().get(),
            b.as_raw(),
            CL_NON_BLOCKING,
            0,
            N * 4,
            dst.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
        )
    };
    let ev = match ev {
        Ok(ev) => Event::new(ev),
        Err(e) => {
            return Some(Err(Error::Cl {
                call: "clEnqueueReadBuffer",
                code: e,
                context: "the guarded read".into(),
            }))
        }
    };
    q.as_opencl3().flush().ok();
    let start = Instant::now();
    let status = loop {
        match ev.command_execution_status() {
            Ok(s) if s.0 == CL_COMPLETE || s.0 < 0 => break s.0,
            Err(e) => break e.0,
            Ok(_) if start.elapsed() > Duration::from_secs(10) => {
                std::mem::forget(dst);
                return None;
            }
            Ok(_) => std::thread::sleep(Duration::from_micros(200)),
        }
    };
    if dst[N..].iter().any(|&v| v != CANARY) {
        println!("GUARD: a read wrote past its destination");
        std::process::exit(3);
    }
    if status < 0 {
        return Some(Err(Error::Cl {
            call: "clGetEventInfo",
            code: status,
            context: "the guarded read".into(),
        }));
    }
    // `b` holds what the last good copy put there: compare with `a`'s read, below.
    let copied = b.read(q);
    Some(copied.map(|v| v[..] == dst[..N]))
}
