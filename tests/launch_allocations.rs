//! What a repeated launch allocates on the host, pinned (issue 38's target, a user's launch +
//! wait within 1.05x raw opencl3, is timed by `examples/bench_launch` on a GPU;
//! `examples/bench_launch_host` times the host side without one). A launch like a recent one
//! of its kernel reuses that one's plan, so it allocates only its list of arguments, each
//! scalar argument's bytes and its event's list: 4 for a SAXPY (two buffers, two scalars),
//! as an ND-range and as a plain range, where the planner on every launch made 6 and 40.
//! Counted per thread, so tests and driver threads running meanwhile add nothing; the waits
//! are not counted (a wait that outlasts its spin sleeps on a callback, which allocates).

use clgroups::launch::LocalSize;
use clgroups::{Buffer, Program, Queue, Range};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting this thread's allocations (and reallocations).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // A thread being torn down counts nothing.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded to `System` unchanged; the count is only a side effect (a
// const thread-local without destructor: counting allocates nothing).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc`, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `realloc`, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const SAXPY: &str = "kernel void saxpy(global const float *x, global float *y, float a, uint n) \
    { size_t i = get_global_id(0); if (i < n) y[i] += a * x[i]; }";

/// The most a repeated SAXPY launch allocates: its arguments' list and its event's list (its
/// two scalars' bytes are held inline: `launch::ScalarBytes`).
const MOST: usize = 2;

#[test]
fn a_repeated_launch_allocates_only_its_arguments_and_event() -> clgroups::Result<()> {
    let queue = Queue::new(&clgroups::default_device()?)?;
    let saxpy = Program::from_source(&queue, SAXPY)?.kernel("saxpy")?;
    // 1000 is rounded up on plain ranges (no good work-group divides it on most devices).
    let (n, runs) = (1000usize, 20);
    let x = Buffer::from_slice(&queue, &vec![1.0f32; n])?;
    let y = Buffer::from_slice(&queue, &vec![0.0f32; n])?;
    // A launch and its allocations (its wait's not counted).
    let launch = |plain: bool| -> clgroups::Result<usize> {
        let before = ALLOCATIONS.with(Cell::get);
        let l = saxpy.launch().arg(&x).arg(&y).arg(1.0f32).arg(n as u32);
        let nd = (Range::d1(1024), LocalSize::Exact(Range::d1(256)));
        // SAFETY: work-item i < n touches x[i] and y[i] (both n floats); the others return.
        let event = unsafe {
            match plain {
                true => l.range(Range::d1(n)),
                false => l.nd_range(nd.0, nd.1),
            }
        }?;
        let allocations = ALLOCATIONS.with(Cell::get) - before;
        event.wait()?;
        Ok(allocations)
    };
    for plain in [false, true] {
        // The first launches plan (and check the arguments' types) once.
        for _ in 0..3 {
            launch(plain)?;
        }
        let mut total = 0;
        for _ in 0..runs {
            total += launch(plain)?;
        }
        let per_launch = total as f64 / runs as f64;
        println!("plain range {plain}: {per_launch} allocations per launch");
        // Checked mode allocates its hidden arguments and reports on every launch.
        if clgroups::launch::checked::enabled() {
            println!(
                "plain range {plain}: the bound of {MOST} allocations per launch not checked: \
                 CLGROUPS_CHECKED switched checked mode on, whose hidden arguments and reports \
                 allocate on every launch"
            );
            continue;
        }
        assert!(
            per_launch <= MOST as f64,
            "a repeated launch (plain range: {plain}) allocates {per_launch} times, more than \
             {MOST}: is its plan made again?"
        );
    }
    assert!(y.read(&queue)?.iter().all(|&v| v == 46.0));
    Ok(())
}
