//! Non-blocking transfers and launches that wait on events: chains that wait only at the end
//! produce exactly the blocking results (outputs start poisoned), launches on another queue or
//! over a root device wait for the events they are given, host memory stays owned until the
//! commands using it finish, and misuse is a typed error before anything is enqueued.

mod common;

use common::Poison;

use clgroups::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SOURCE: &str = r#"
kernel void affine(global int *y, global const int *x) {
    size_t i = get_global_id(0);
    y[i] = 2 * x[i] + 1;
}

// Writes v to every element after a busy loop, so that a command that does not wait for it
// sees the old contents.
kernel void slow_set(global int *x, int v, int spin) {
    size_t i = get_global_id(0);
    float acc = (float)i;
    for (int k = 0; k < spin; ++k) acc = acc * 0.999f + 1.0f;
    x[i] = v + (acc < 0.0f ? 1 : 0);
}
"#;

/// Iterations of `slow_set`'s loop: long enough that a command not waiting for it would start
/// before it ends (tens of milliseconds on a CPU device).
const SPIN: i32 = 200_000;

fn poisoned(queue: &Queue, n: usize) -> Buffer<i32> {
    Buffer::from_slice(queue, &vec![i32::POISON; n]).unwrap()
}

#[test]
fn chain_write_launch_read_waits_only_at_the_end() {
    let queue = common::queue();
    let p = Program::from_source(&queue, SOURCE).unwrap();
    let affine = p.kernel("affine").unwrap();
    for n in [1, 1000, 1 << 20] {
        let mut x = poisoned(&queue, n);
        let y = poisoned(&queue, n);
        let data: Vec<i32> = (0..n as i32).map(|i| i % 1000 - 500).collect();
        let written = x.enqueue_write(&queue, data.clone()).unwrap();
        // SAFETY: work-item i < n touches x[i] and y[i]; both have n elements.
        let launched = unsafe {
            affine
                .launch()
                .arg(&y)
                .arg(&x)
                .wait_for([&written])
                .range(n)
        }
        .unwrap();
        let pending = y.enqueue_read(&queue).unwrap();
        let got = pending.wait().unwrap(); // the only wait
        for (i, (g, d)) in got.iter().zip(&data).enumerate() {
            assert_eq!(*g, 2 * d + 1, "n={n}, element {i}");
        }
        launched.wait().unwrap();
        written.wait().unwrap();
    }
}

/// Two queues of one context: on two devices where the platform has two, else on one.
fn two_queues() -> (Queue, Queue) {
    let dev = common::device();
    let same: Vec<Device> = devices()
        .unwrap()
        .iter()
        .filter(|d| d.platform_index() == dev.platform_index())
        .take(2)
        .cloned()
        .collect();
    let context = Context::new(&same).unwrap();
    let second = same.last().unwrap();
    eprintln!("queues on {dev} and {second}");
    (
        Queue::on(&context, &dev).unwrap(),
        Queue::on(&context, second).unwrap(),
    )
}

#[test]
fn a_launch_on_another_queue_waits_for_its_events() {
    let (qa, qb) = two_queues();
    let pa = Program::from_source(&qa, SOURCE).unwrap();
    let pb = Program::from_source(&qb, SOURCE).unwrap();
    let (slow, affine) = (pa.kernel("slow_set").unwrap(), pb.kernel("affine").unwrap());
    let n = 4096;
    for round in 0..3 {
        let x = poisoned(&qa, n);
        let y = poisoned(&qa, n);
        qa.finish().unwrap();
        // SAFETY: work-item i < n writes x[i], x has n elements.
        let set = unsafe { slow.launch().arg(&x).arg(20 + round).arg(SPIN).range(n) }.unwrap();
        // SAFETY: work-item i < n touches y[i] and x[i]; the write of x on the other queue is
        // waited for.
        let after = unsafe { affine.launch().arg(&y).arg(&x).wait_for([&set]).range(n) };
        let got = y.enqueue_read(&qb).unwrap();
        after.unwrap();
        let got = got.wait().unwrap();
        let want = 2 * (20 + round) + 1;
        let wrong = got.iter().filter(|&&v| v != want).count();
        assert_eq!(
            wrong, 0,
            "round {round}: {wrong} of {n} elements are not {want}"
        );
    }
}

#[cfg(feature = "scaling")]
#[test]
fn a_root_launch_waits_for_its_events() {
    let root = RootDevice::from_env().unwrap();
    eprintln!("{root:?}");
    // A queue of the root device's context that none of its launches use.
    let q0 = &Queue::on(root.context(), &root.devices()[0]).unwrap();
    let p0 = Program::from_source(q0, SOURCE).unwrap();
    let slow = p0.kernel("slow_set").unwrap();
    let rp = root
        .program("kernel void add(global int *x, global const int *y) { size_t i = get_global_id(0); x[i] += y[i]; }")
        .unwrap();
    let add = rp.kernel("add").unwrap();
    let n = 4096;
    let y = poisoned(q0, n); // in the root device's context, read by every device
                             // Colored in the launch's work-group slabs, so that each device holds the part it works on.
    let local = add.range_plan(Range::d1(n)).unwrap().1.len();
    let mut x = common::colored(&root, &vec![1i32; n], local);
    // SAFETY: work-item i < n writes y[i], y has n elements.
    let set = unsafe { slow.launch().arg(&y).arg(7i32).arg(SPIN).range(n) }.unwrap();
    // SAFETY: work-item i < n touches x[i] and y[i] (n elements each); every device waits
    // for the write of y.
    unsafe { add.launch().arg(&mut x).arg(&y).wait_for([&set]).range(n) }
        .unwrap()
        .wait()
        .unwrap();
    let got = x.read().unwrap();
    let wrong = got.iter().filter(|&&v| v != 8).count();
    assert_eq!(wrong, 0, "{wrong} of {n} elements are not 1 + 7");
}

#[test]
fn host_memory_is_released_once_the_commands_finish() {
    let queue = common::queue();
    let n = 1 << 16;
    let mut x = poisoned(&queue, n);
    let data: Arc<[i32]> = (0..n as i32).collect::<Vec<_>>().into();
    for _ in 0..20 {
        // The event is dropped at once: the command still owns its share of `data`.
        drop(x.enqueue_write(&queue, Arc::clone(&data)).unwrap());
        // A read dropped unwaited waits (bounded) before freeing its memory.
        drop(x.enqueue_read(&queue).unwrap());
    }
    queue.finish().unwrap();
    assert_eq!(x.read(&queue).unwrap(), *data);
    // The completion callbacks run on a driver thread, shortly after completion.
    let start = Instant::now();
    while Arc::strong_count(&data) > 1 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(Arc::strong_count(&data), 1, "every write released its data");
}

#[test]
fn misuse_is_an_error_before_enqueue() {
    let dev = common::device();
    let (qa, qb) = (Queue::new(&dev).unwrap(), Queue::new(&dev).unwrap()); // two contexts
    let pb = Program::from_source(&qb, SOURCE).unwrap();
    let affine = pb.kernel("affine").unwrap();
    let n = 64;
    let mut xa = poisoned(&qa, n);
    let (x, y) = (poisoned(&qb, n), poisoned(&qb, n));
    let foreign = xa.enqueue_write(&qa, vec![1; n]).unwrap();
    // SAFETY: refused before enqueue; had it run, work-item i < n would touch x[i], y[i].
    let r = unsafe {
        affine
            .launch()
            .arg(&y)
            .arg(&x)
            .wait_for([&foreign])
            .range(n)
    };
    match r {
        Err(Error::InvalidLaunch { reason, .. }) => {
            assert!(reason.to_string().contains("another context"), "{reason}");
            println!("{reason}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    assert!(xa.enqueue_write_at(&qa, n - 1, vec![1, 2]).is_err());
    xa.enqueue_write(&qa, Vec::new()).unwrap().wait().unwrap(); // nothing to write: no error
    assert!(
        xa.enqueue_write(&qb, vec![1; n]).is_err(),
        "queue of another context"
    );
    assert!(xa.enqueue_read(&qb).is_err(), "queue of another context");
    qb.finish().unwrap();
    assert_eq!(y.read(&qb).unwrap(), vec![i32::POISON; n], "nothing ran");
    assert_eq!(xa.enqueue_read(&qa).unwrap().wait().unwrap(), vec![1; n]);
}
