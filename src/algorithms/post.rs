//! Blocking calls on NVIDIA learn their result from a post, not from events: their launches
//! are enqueued without events, and the work-item that writes the result (the reduce's last
//! work-group; the persistent scan's last work-group; after other scans, one work-item of
//! `clg_post`) also writes it and a sequence number
//! straight into pinned host memory ([`Mailbox`]), which the caller polls.
//! Measured on the H100 (one tiny kernel): a launch with an event on a profiling queue costs
//! 12 µs of host time, without one 5 µs; kernel + read + wait on its event 23 µs, kernel +
//! post 8.6 µs.
//!
//! The device writes host memory at its host address (unified addressing): clgroups first
//! checks that once per device on a private context — a device that cannot reach the address
//! faults, and a fault ends the context it happens in — and uses posts only where the check
//! passed (and `CLGROUPS_POST` is not `0`; never on a device reached through PoCL-R). A post
//! that does not arrive within the spin window
//! is awaited through a marker (a bounded wait); a post still missing then turns posts off for
//! the state, and the caller reads the result the usual way: never a wrong or stale value.

use super::{launch, Element, LaunchPlan, State, Track};
use crate::device::Device;
use crate::error::{Error, InputFault, Internal, Result};
use crate::ffi::{self, Mailbox};
use crate::launch::KernelArg;
use crate::wait;
use once_cell::sync::Lazy;
use opencl3::error_codes::ClError;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Instant;

/// The check's kernel: one write at the address plus 8 (where posts write their number).
const PROBE: &str =
    "kernel void clg_probe(ulong at, uint v) { *(volatile global uint *)(at + 8) = v; }";
const PROBE_VALUE: u32 = 0x5eed_c1a5;

/// Whether kernels on `device` can post into pinned host memory (checked once per device).
fn reachable(device: &Device) -> Result<bool> {
    static SEEN: Lazy<Mutex<HashMap<usize, bool>>> = Lazy::new(Default::default);
    if !crate::config::settings().post()? {
        log::debug!("algorithms: posts off (CLGROUPS_POST)");
        return Ok(false);
    }
    if device.identity().remote {
        // Its kernels run in another process (a PoCL-R server): not even a probe, whose fault
        // would end the server's context for every client.
        log::debug!("algorithms: no posts on {device}: reached through PoCL-R");
        return Ok(false);
    }
    let mut seen = super::lock(&SEEN);
    Ok(*seen.entry(device.id() as usize).or_insert_with(|| {
        let start = Instant::now();
        let found = probe(device);
        log::debug!(
            "algorithms: posts into host memory on {device}: {} (checked on a private context in {:.1} ms)",
            found.as_ref().map_or_else(|e| format!("no: {e}"), |()| "yes".into()),
            start.elapsed().as_secs_f64() * 1e3
        );
        found.is_ok()
    }))
}

/// Why kernels on a device cannot post into pinned host memory (the check's answer);
/// `Display` words it for the log.
#[derive(Debug)]
enum Unreached {
    /// A call of the check failed: its step and status.
    Call(Step, ClError),
    /// The check's kernel did not build: the driver's log.
    Build(String),
    /// Waiting for one of its commands failed.
    Wait(Error),
    /// The kernel completed but its write never reached host memory.
    NotSeen,
}

/// A step of the check ([`Unreached::Call`]).
#[derive(Clone, Copy, Debug)]
enum Step {
    Context,
    Queue,
    Kernel,
    Mailbox,
    Argument(usize),
    Launch,
}

impl fmt::Display for Unreached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreached::Call(step, e) => write!(f, "{step}: {e}"),
            Unreached::Build(log) => write!(f, "build: {log}"),
            Unreached::Wait(e) => write!(f, "{e}"),
            Unreached::NotSeen => {
                f.write_str("the kernel completed but its write never reached host memory")
            }
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Context => f.write_str("context"),
            Step::Queue => f.write_str("queue"),
            Step::Kernel => f.write_str("kernel"),
            Step::Mailbox => f.write_str("mailbox"),
            Step::Argument(i) => write!(f, "argument {i}"),
            Step::Launch => f.write_str("launch"),
        }
    }
}

/// One write from a kernel into a mailbox, on a context of its own.
fn probe(device: &Device) -> std::result::Result<(), Unreached> {
    use opencl3::{context::Context, kernel::Kernel, program::Program};
    let what = || format!("post check on {device}");
    let call = |step| move |e| Unreached::Call(step, e);
    let ctx = Context::from_device(device.raw()).map_err(call(Step::Context))?;
    let ctx = ffi::Owned::new(ctx);
    let queue = ffi::create_queue(&ctx, device.raw(), 0).map_err(call(Step::Queue))?;
    let program = Program::create_and_build_from_source(&ctx, PROBE, "")
        .map(ffi::Owned::new)
        .map_err(Unreached::Build)?;
    let kernel = Kernel::create(&program, "clg_probe")
        .map(ffi::Owned::new)
        .map_err(call(Step::Kernel))?;
    let mut mailbox = Mailbox::new(&ctx, &queue).map_err(call(Step::Mailbox))?;
    if let Some(map) = mailbox.map_event() {
        wait::event(map, what).map_err(Unreached::Wait)?;
    }
    // Mapped (and zeroed) before the kernel writes.
    if !mailbox.mapped().map_err(call(Step::Mailbox))? {
        return Err(Unreached::NotSeen);
    }
    let (at, v) = (mailbox.address().to_ne_bytes(), PROBE_VALUE.to_ne_bytes());
    for (i, arg) in [&at[..], &v[..]].into_iter().enumerate() {
        ffi::set_arg(&kernel, i as u32, &ffi::RawArg::Bytes(arg))
            .map_err(call(Step::Argument(i)))?;
    }
    mailbox.expect_post();
    // SAFETY: the kernel writes 4 bytes at `at + 8`, inside the mailbox's 16 mapped bytes,
    // which stay allocated (leaked) unless the write is seen.
    let ev = unsafe { ffi::enqueue_kernel(&queue, &kernel, None, &[1], None, &[]) }
        .map_err(call(Step::Launch))?;
    wait::event(&ev, what).map_err(Unreached::Wait)?;
    match mailbox.poll(PROBE_VALUE) {
        Some(_) => Ok(()),
        None => Err(Unreached::NotSeen),
    }
}

impl<T: Element> State<T> {
    /// Whether blocking calls use posts: the device has `clg_post` and passed the check; the
    /// mailbox is set up on the first call.
    pub(super) fn posts(&mut self) -> Result<bool> {
        if self.k.post.is_none() {
            return Ok(false);
        }
        if self.mailbox.is_none() {
            let device = self.queue.device();
            self.mailbox = Some(match reachable(device)? {
                true => {
                    let what = || format!("map of a mailbox on {device}");
                    let mut mailbox = Mailbox::new(self.queue.context().raw(), self.queue.raw())
                        .map_err(|e| Error::cl("clEnqueueMapBuffer", e.0, what()))?;
                    if let Some(map) = mailbox.map_event() {
                        wait::event(map, what)?;
                    }
                    match mailbox.mapped() {
                        Ok(true) => Ok(mailbox),
                        Ok(false) => {
                            return Err(Error::input(InputFault::NotComplete { command: what() }))
                        }
                        Err(e) => return Err(Error::cl("clGetEventInfo", e.0, what())),
                    }
                }
                false => Err(()),
            });
        }
        Ok(matches!(self.mailbox, Some(Ok(_))))
    }

    /// The next post's mailbox address and number (`None` without a mailbox): pass it to a
    /// kernel that posts (`clg_reduce`), then [`State::await_post`].
    pub(super) fn next_post(&mut self) -> Option<Post> {
        let Some(Ok(mailbox)) = &mut self.mailbox else {
            return None;
        };
        self.seq = self.seq.wrapping_add(1).max(1);
        mailbox.expect_post();
        Some(Post {
            address: mailbox.address(),
            seq: self.seq,
        })
    }

    /// Posts `result[0]` after the launches before it (enqueued with [`Track::Posted`]) and
    /// waits for the post, as [`State::await_post`].
    pub(super) fn post_result(&mut self) -> Result<Option<T>> {
        let (Some(kernel), Some(post)) = (self.k.post.clone(), self.next_post()) else {
            return Err(Error::input(InputFault::Internal(Internal::NoMailbox)));
        };
        let args = vec![
            (&self.result).to_arg(),
            post.address.to_arg(),
            post.seq.to_arg(),
        ];
        let one = LaunchPlan {
            local: 1,
            groups: 1,
        };
        // SAFETY: `clg_post` reads `src[0]` (`result` holds one element) and writes the 12
        // bytes of the mailbox at the address passed, which the device reaches (checked by
        // `reachable`) and which stays allocated until the post is seen (else leaked).
        unsafe { launch(&kernel, args, one, &[(self.result.len(), 1)], Track::Posted)? };
        self.await_post(post)
    }

    /// Waits for `post`: its value, or `None` when it never came although the queue completed
    /// (then every launch before it has completed too; posts are off from now on).
    pub(super) fn await_post(&mut self, post: Post) -> Result<Option<T>> {
        let device = self.queue.device();
        let what = || format!("post of an algorithm's result on {device}");
        let Some(Ok(mailbox)) = &mut self.mailbox else {
            return Err(Error::input(InputFault::Internal(Internal::NoMailbox)));
        };
        self.queue.flush()?;
        let start = Instant::now();
        while start.elapsed() < wait::SPIN {
            if let Some(words) = mailbox.poll(post.seq) {
                return Ok(Some(value(words)));
            }
            std::hint::spin_loop();
        }
        let marker =
            ffi::marker(self.queue.raw()).map_err(|e| Error::cl("clEnqueueMarker", e.0, what()))?;
        wait::event(&marker, what)?;
        if let Some(words) = mailbox.poll(post.seq) {
            return Ok(Some(value(words)));
        }
        log::warn!("algorithms: a post on {device} never arrived although its queue completed; posts are off for this queue");
        self.mailbox = Some(Err(()));
        Ok(None)
    }
}

/// Where and with which number a kernel posts ([`State::next_post`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Post {
    /// The mailbox's address (0: no post).
    pub address: u64,
    /// The number the host waits for.
    pub seq: u32,
}

/// The element in a post's two words (the low bytes first).
fn value<T: Element>(words: [u32; 2]) -> T {
    bytemuck::pod_read_unaligned(&bytemuck::cast_slice::<u32, u8>(&words)[..size_of::<T>()])
}

#[cfg(test)]
mod tests {
    use super::value;
    use crate::algorithms::{cache, reduce_sum, ReduceOp};
    use crate::{Buffer, Queue};

    /// On NVIDIA the blocking reduce learns its result from the post (a post that never came
    /// would turn posts off, and the result would still be right: only this test sees it).
    #[test]
    fn posts_arrive_where_the_device_takes_them() {
        let Some(device) = crate::device::test_device() else {
            return;
        };
        let _serial = super::super::lock(&cache::TESTS);
        let q = Queue::new(&device).expect("queue");
        let state = cache::state::<f32>(&q, ReduceOp::Sum).expect("state");
        let takes = super::super::lock(&state).posts().expect("posts");
        if !takes {
            eprintln!("not run: {device} takes no posts (NVIDIA's OpenCL only)");
            return;
        }
        for n in [1usize, 1000, 1 << 20] {
            let x = Buffer::from_slice(&q, &vec![0.5f32; n]).expect("input");
            assert_eq!(reduce_sum(&q, &x).expect("sum"), n as f32 / 2.0);
            let s = super::super::lock(&state);
            assert!(
                matches!(s.mailbox, Some(Ok(_))),
                "the post of a reduce of {n} never came"
            );
        }
        let mut r = crate::algorithms::Reduction::<f32>::new(&q, ReduceOp::Sum).expect("reduction");
        let x = Buffer::from_slice(&q, &[1.0f32; 4096]).expect("input");
        assert_eq!(r.run(&x).expect("run"), 4096.0);
        assert_eq!(r.result().expect("result"), 4096.0);
        assert!(
            matches!(super::super::lock(&state).mailbox, Some(Ok(_))),
            "Reduction::run's post never came"
        );
        let mut y = Buffer::new(&q, 4096).expect("output");
        crate::algorithms::inclusive_scan_sum(&q, &x, &mut y).expect("scan");
        assert_eq!(y.read(&q).expect("read")[4095], 4096.0);
        let s = super::super::lock(&state);
        assert!(
            matches!(s.mailbox, Some(Ok(_))),
            "the post after a scan never came"
        );
    }

    #[test]
    fn values_come_from_the_low_bytes_first() {
        assert_eq!(value::<f32>([1.5f32.to_bits(), 0xdead_beef]), 1.5);
        assert_eq!(value::<i32>([(-7i32) as u32, 0]), -7);
        let d = (-2.25f64).to_bits();
        assert_eq!(value::<f64>([d as u32, (d >> 32) as u32]), -2.25);
        let u = 0x0123_4567_89ab_cdefu64;
        assert_eq!(value::<u64>([u as u32, (u >> 32) as u32]), u);
    }
}
