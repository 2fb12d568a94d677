//! A soak test (issue 37, item 2): a seeded random history of mixed operations on one device at
//! a time, through three queues of one context (one of them profiling), every output checked
//! against a host model: blocking and non-blocking writes, reads (whole, ranges, pending ones
//! waited for later), fills, copies, kernel launches (`LocalSize::Auto`, `Tuned`, exact, part
//! ranges), `reduce_sum` and `enqueue_reduce`, inclusive and exclusive scans, buffers freed and
//! made again, sizes from 1 element up, reads on one queue while another's kernels run.
//!
//! Every remote device runs it (through PoCL-R: `scripts/pocl-remote run 2 cargo test --test
//! remote_soak`), else the default device. Environment (docs/testing.md): `CLGROUPS_SOAK_OPS`
//! operations per device (default 10,000 on remote devices, 3,000 locally), `CLGROUPS_SOAK_SEED`
//! (default 37), `CLGROUPS_SOAK_MAX_LOG2` the largest buffer, as a power of two (default 20; the
//! GPU kit's long run: 28). A failure names the seed and the operation, to replay it.
//!
//! Cross-queue order is the application's in OpenCL: an operation on a buffer that commands of
//! another queue still use first waits for them (as a user must), so the model is exact.

mod common;

use clgroups::algorithms::{self, ReduceOp, ScanKind};
use clgroups::launch::LocalSize;
use clgroups::{Buffer, Device, Kernel, PendingRead, Program, Queue, Range};
use std::time::Instant;

use common::rng::Rng;
use common::{env_or, pair};

impl Rng {
    fn values(&mut self, n: usize) -> Vec<u32> {
        let s = self.next();
        (0..n as u64)
            .map(|i| (s ^ i.wrapping_mul(0x9e37_79b9)).wrapping_mul(2_654_435_761) as u32 >> 4)
            .collect()
    }
}

const AFFINE: &str = "kernel void affine(global uint *b, uint a, uint c) {
    size_t i = get_global_id(0);
    b[i] = b[i] * a + c;
}";

/// A device buffer, its model, and what may still use it.
struct Slot {
    buf: Buffer<u32>,
    model: Vec<u32>,
    /// The queue whose commands may still use the buffer.
    busy: Option<usize>,
    /// Reads enqueued and not yet waited for: their queue, range and expected contents.
    reads: Vec<(PendingRead<u32>, usize, Vec<u32>)>,
}

struct Soak<'a> {
    device: &'a Device,
    queues: Vec<Queue>,
    /// The kernel on each queue (a launch goes to its program's queue).
    affine: Vec<Kernel>,
    slots: Vec<Slot>,
    rng: Rng,
    max_log2: u32,
    /// Where a failure happened, for the message.
    seed: u64,
    op: usize,
    checked: usize,
}

impl Soak<'_> {
    fn fail(&self, what: &str) -> ! {
        panic!(
            "{}: operation {} of seed {} ({what}); replay with CLGROUPS_SOAK_SEED={} \
             CLGROUPS_SOAK_OPS={}",
            self.device,
            self.op,
            self.seed,
            self.seed,
            self.op + 1
        )
    }

    fn ok<T>(&self, r: clgroups::Result<T>, what: &str) -> T {
        r.unwrap_or_else(|e| self.fail(&format!("{what}: {e}")))
    }

    fn check(&mut self, got: &[u32], want: &[u32], what: &str) {
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
            self.fail(&format!(
                "{what}: [{i}] = {:#x} not {:#x}, {wrong} of {} wrong",
                got[i],
                want[i],
                want.len()
            ));
        }
        self.checked += 1;
    }

    /// 1..64 elements half the time, else up to 2^16 (log-uniform), and one time in 64 a large
    /// one, 2^16..2^max_log2 (each size from half its power of two to it).
    fn size(&mut self) -> usize {
        let log2 = match self.rng.below(128) {
            0..=63 => return 1 + self.rng.below(64),
            64 | 65 if self.max_log2 > 16 => 17 + self.rng.below(self.max_log2 as usize - 16),
            _ => 6 + self.rng.below(self.max_log2.min(16) as usize - 5),
        };
        let top = 1usize << log2;
        top / 2 + self.rng.below(top / 2 + 1)
    }

    /// Makes slot `i` usable by queue `q`: waits for another queue's commands that may still
    /// use it (as an application must: OpenCL orders only each queue's own commands).
    fn claim(&mut self, i: usize, q: usize) {
        if let Some(p) = self.slots[i].busy.filter(|&p| p != q) {
            self.ok(self.queues[p].finish(), "waiting for another queue");
            self.finished(p);
        }
        if self.slots[i].reads.iter().any(|r| r.1 != q) {
            self.settle(i);
        }
    }

    /// Waits for every command still using slot `i` and checks its pending reads.
    fn settle(&mut self, i: usize) {
        if let Some(p) = self.slots[i].busy {
            self.ok(self.queues[p].finish(), "waiting for a queue");
            self.finished(p);
        }
        for (read, _, want) in std::mem::take(&mut self.slots[i].reads) {
            let got = self.ok(read.wait(), "a pending read");
            self.check(&got, &want, "a pending read");
        }
    }

    /// Commands of `q` may use slot `i` until `q` is next waited for.
    fn pending(&mut self, i: usize, q: usize) {
        self.slots[i].busy = Some(q);
    }

    /// Every command enqueued on `q` so far has completed (a blocking call on `q` returned).
    fn finished(&mut self, q: usize) {
        for s in &mut self.slots {
            if s.busy == Some(q) {
                s.busy = None;
            }
        }
    }

    fn read_whole(&mut self, i: usize, q: usize, what: &str) {
        self.claim(i, q);
        let got = self.ok(self.slots[i].buf.read(&self.queues[q]), what);
        self.finished(q);
        let want = self.slots[i].model.clone();
        self.check(&got, &want, what);
    }

    /// A new buffer in slot `i` of `n` elements, written from the model (the old one is read
    /// and checked first, then freed).
    fn remake(&mut self, i: usize, n: usize) {
        let q = self.rng.below(self.queues.len());
        if i < self.slots.len() {
            self.read_whole(i, q, "a buffer before it is freed");
            self.settle(i);
        }
        let model = self.rng.values(n);
        let buf = self.ok(Buffer::from_slice(&self.queues[q], &model), "a new buffer");
        self.finished(q);
        let slot = Slot {
            buf,
            model,
            busy: None,
            reads: Vec::new(),
        };
        if i < self.slots.len() {
            self.slots[i] = slot;
        } else {
            self.slots.push(slot);
        }
    }

    /// A slot other than `i` with `i`'s length (made by remaking another slot if none).
    fn partner(&mut self, i: usize) -> usize {
        let n = self.slots[i].model.len();
        let same: Vec<usize> = (0..self.slots.len())
            .filter(|&j| j != i && self.slots[j].model.len() == n)
            .collect();
        if let Some(&j) = same.get(self.rng.below(same.len().max(1))) {
            return j;
        }
        let j = (i + 1 + self.rng.below(self.slots.len() - 1)) % self.slots.len();
        self.remake(j, n);
        j
    }

    fn step(&mut self) {
        let i = self.rng.below(self.slots.len());
        let q = self.rng.below(self.queues.len());
        let n = self.slots[i].model.len();
        match self.rng.below(16) {
            0 => {
                let n = self.size();
                self.remake(i, n);
            }
            1 => {
                // Blocking write of a range.
                let off = self.rng.below(n);
                let len = 1 + self.rng.below(n - off);
                let data = self.rng.values(len);
                self.claim(i, q);
                let r = self.slots[i].buf.write_at(&self.queues[q], off, &data);
                self.ok(r, "a write");
                self.finished(q);
                self.slots[i].model[off..off + data.len()].copy_from_slice(&data);
            }
            2 => {
                // Non-blocking write of the whole buffer.
                let data = self.rng.values(n);
                self.claim(i, q);
                let r = self.slots[i]
                    .buf
                    .enqueue_write(&self.queues[q], data.clone());
                self.ok(r, "an enqueued write");
                self.pending(i, q);
                self.slots[i].model = data;
            }
            3 | 4 => self.read_whole(i, q, "a read"),
            5 => {
                // A blocking read of a range.
                let off = self.rng.below(n);
                let mut got = vec![0u32; 1 + self.rng.below(n - off)];
                self.claim(i, q);
                let r = self.slots[i].buf.read_into(&self.queues[q], off, &mut got);
                self.ok(r, "a read of a range");
                self.finished(q);
                let want = self.slots[i].model[off..off + got.len()].to_vec();
                self.check(&got, &want, "a read of a range");
            }
            6 => {
                // A read waited for later (by a later claim or at the end).
                self.claim(i, q);
                let r = self.ok(self.slots[i].buf.enqueue_read(&self.queues[q]), "a read");
                let want = self.slots[i].model.clone();
                self.slots[i].reads.push((r, q, want));
            }
            7 => {
                let v = self.rng.next() as u32;
                self.claim(i, q);
                if self.rng.below(2) == 0 {
                    let r = self.slots[i].buf.fill(&self.queues[q], v);
                    self.ok(r, "a fill");
                    self.finished(q);
                } else {
                    let r = self.slots[i].buf.enqueue_fill(&self.queues[q], v);
                    self.ok(r, "an enqueued fill");
                    self.pending(i, q);
                }
                self.slots[i].model.fill(v);
            }
            8 => {
                let j = self.partner(i);
                self.claim(i, q);
                self.claim(j, q);
                let (src, dst) = pair(&mut self.slots, i, j);
                let r = src.buf.copy_to(&self.queues[q], &mut dst.buf);
                dst.model.copy_from_slice(&src.model);
                let e = self.ok(r, "a copy");
                self.pending(i, q);
                self.pending(j, q);
                if self.rng.below(3) == 0 {
                    self.ok(e.wait(), "a copy");
                }
            }
            9..=11 => self.launch(i, q),
            12 => {
                self.claim(i, q);
                let r = algorithms::reduce_sum(&self.queues[q], &self.slots[i].buf);
                let got = self.ok(r, "reduce_sum");
                self.finished(q);
                let want = self.slots[i]
                    .model
                    .iter()
                    .fold(0u32, |a, &v| a.wrapping_add(v));
                self.check(&[got], &[want], "reduce_sum");
            }
            13 => {
                // enqueue_reduce into a fresh one-element buffer, read on the same queue.
                self.claim(i, q);
                let out = self.ok(Buffer::<u32>::new(self.queues[q].context(), 1), "a buffer");
                let r = algorithms::enqueue_reduce(
                    &self.queues[q],
                    &self.slots[i].buf,
                    ReduceOp::Max,
                    &out,
                );
                self.ok(r, "enqueue_reduce");
                let got = self.ok(out.read(&self.queues[q]), "the reduce's result");
                self.finished(q);
                let want = self.slots[i].model.iter().copied().max().unwrap_or(0);
                self.check(&got, &[want], "enqueue_reduce (max)");
            }
            _ => self.scan(i, q),
        }
    }

    fn launch(&mut self, i: usize, q: usize) {
        let n = self.slots[i].model.len();
        let (a, c) = (self.rng.next() as u32 | 1, self.rng.next() as u32);
        // The whole buffer or a part of it, from an offset.
        let (off, m) = if self.rng.below(4) == 0 {
            let off = self.rng.below(n);
            (off, 1 + self.rng.below(n - off))
        } else {
            (0, n)
        };
        let local = match self.rng.below(3) {
            0 => LocalSize::Auto,
            1 => LocalSize::Tuned,
            _ => {
                let l = [1usize, 2, 4, 8, 16, 32, 64][self.rng.below(7)];
                if m % l == 0 {
                    LocalSize::Exact(Range::d1(l))
                } else {
                    LocalSize::Auto
                }
            }
        };
        self.claim(i, q);
        let mut launch = self.affine[q]
            .launch()
            .arg(&self.slots[i].buf)
            .arg(a)
            .arg(c);
        if off > 0 {
            launch = launch.offset(Range::d1(off));
        }
        // SAFETY: work-item k in off..off + m <= n updates b[k] of the n-element buffer.
        let r = unsafe { launch.nd_range(m, local) };
        let e = self.ok(r, "a launch");
        for v in &mut self.slots[i].model[off..off + m] {
            *v = v.wrapping_mul(a).wrapping_add(c);
        }
        self.pending(i, q);
        if self.rng.below(4) == 0 {
            self.ok(e.wait(), "a launch");
        }
    }

    fn scan(&mut self, i: usize, q: usize) {
        let j = self.partner(i);
        let kind = match self.rng.below(2) {
            0 => ScanKind::Inclusive,
            _ => ScanKind::Exclusive,
        };
        self.claim(i, q);
        self.claim(j, q);
        let (src, dst) = pair(&mut self.slots, i, j);
        let blocking = self.rng.below(2) == 0;
        let r = match (blocking, kind) {
            (true, ScanKind::Inclusive) => {
                algorithms::inclusive_scan_sum(&self.queues[q], &src.buf, &mut dst.buf)
                    .map(|_| None)
            }
            (true, _) => algorithms::exclusive_scan_sum(&self.queues[q], &src.buf, &mut dst.buf)
                .map(|_| None),
            (false, _) => {
                algorithms::enqueue_scan_sum(&self.queues[q], &src.buf, &mut dst.buf, kind)
                    .map(Some)
            }
        };
        let mut acc = 0u32;
        for (d, &s) in dst.model.iter_mut().zip(&src.model) {
            let next = acc.wrapping_add(s);
            *d = if matches!(kind, ScanKind::Inclusive) {
                next
            } else {
                acc
            };
            acc = next;
        }
        match self.ok(r, "a scan") {
            Some(_) => {
                self.pending(i, q);
                self.pending(j, q);
            }
            None => self.finished(q),
        }
    }
}

/// The history on `d`: returns the checked outputs.
fn soak(d: &Device, ops: usize, seed: u64, max_log2: u32) -> usize {
    let q0 = Queue::new(d).expect("a queue");
    let queues = vec![
        Queue::profiled_on(q0.context(), d).expect("a profiling queue"),
        Queue::on(q0.context(), d).expect("a queue"),
        q0,
    ];
    let affine = queues
        .iter()
        .map(|q| {
            Program::from_source(q, AFFINE)
                .and_then(|p| p.kernel("affine"))
                .expect("the kernel")
        })
        .collect();
    let mut s = Soak {
        device: d,
        queues,
        affine,
        slots: Vec::new(),
        rng: Rng(seed),
        max_log2,
        seed,
        op: 0,
        checked: 0,
    };
    for i in 0..6 {
        let n = s.size();
        s.remake(i, n);
    }
    let start = Instant::now();
    for op in 0..ops {
        s.op = op;
        s.step();
        if op % 5000 == 4999 {
            println!(
                "{d}: {} operations, {} checked, {:?}",
                op + 1,
                s.checked,
                start.elapsed()
            );
        }
    }
    for i in 0..s.slots.len() {
        s.settle(i);
        let q = i % s.queues.len();
        s.read_whole(i, q, "the final read");
    }
    s.checked
}

#[test]
fn a_random_history_matches_the_model() {
    let seed = env_or("CLGROUPS_SOAK_SEED", 37);
    let max_log2 = env_or("CLGROUPS_SOAK_MAX_LOG2", 20).clamp(6, 30) as u32;
    let remote = common::remote_devices();
    // Remote devices are the point: locally a shorter history checks the same contract.
    let ops = env_or(
        "CLGROUPS_SOAK_OPS",
        if remote.is_empty() { 3_000 } else { 10_000 },
    ) as usize;
    let devices = if remote.is_empty() {
        vec![common::device()]
    } else {
        remote
    };
    for (k, d) in devices.iter().enumerate() {
        let start = Instant::now();
        let checked = soak(d, ops, seed + k as u64, max_log2);
        println!(
            "{d}: {ops} operations (seed {}, sizes up to 2^{max_log2}), {checked} outputs \
             checked, 0 wrong, in {:?}",
            seed + k as u64,
            start.elapsed()
        );
    }
}
