//! The heat stencil written by hand for several devices, as a user would without clgroups'
//! scaling: raw opencl3 on the root device's context, one queue, program, kernel object and two
//! whole grids per device; device d updates its band of rows (a global offset), then receives
//! the rows next to its band from its neighbours' new grids through pinned host memory (a
//! `CL_MEM_ALLOC_HOST_PTR` buffer of one row mapped once: a non-blocking read on the
//! neighbour's queue after its kernel, then a non-blocking write on d's queue after the read);
//! the next step waits for every transfer that touched its grids. A `clEnqueueCopyBuffer`
//! between the two GPUs' grids took 227 ms a step on two H200s (NVIDIA moves the whole source
//! grid through the host, blocking the caller: docs/scaling.md). Raw OpenCL calls are `unsafe`
//! in opencl3; each use says why it is sound.

use crate::{agree, values, workloads, Bench, Last, Res, Row, Run, SOURCE};
use clgroups::Buffer;
use opencl3::event::Event;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_event, CL_BLOCKING, CL_NON_BLOCKING};

/// `iters` steps of heat on a `side` x `side` grid: one device (clgroups) against the root
/// device's devices by hand.
pub fn heat(b: &Bench, side: usize, iters: usize, runs: usize) -> Res<Row> {
    let devices = b.root.len();
    if devices < 2 || side < 2 * devices {
        return Err("heat-by-hand needs two devices and two rows per device".into());
    }
    let start = values(side * side, 4, 0.0, 100.0);
    let k1 = b.k1("heat")?;
    let (a1, c1) = (
        Buffer::from_slice(b.q, &start)?,
        Buffer::from_slice(b.q, &start)?,
    );
    let one = || workloads::heat_on_one(b, &k1, (&a1, &c1), side, iters);
    let hand = ByHand::new(b, side, &start)?;
    one()?;
    hand.steps(iters)?;
    agree("heat by hand", &hand.read(iters)?, &a1.read(b.q)?)?;
    // Halo rows copied per step: two per inner boundary.
    let moved = 2 * (devices as u64 - 1) * (side * size_of::<f32>()) as u64;
    let mut cases: Vec<Run> = vec![Box::new(one), Box::new(|| hand.steps(iters))];
    let times = b.rounds(runs, iters, &mut cases)?;
    *b.last.borrow_mut() = Last::ByHand { devices, moved };
    Ok((
        times,
        format!("by hand: halo rows copied every step ({moved} B)"),
    ))
}

/// Per device: its kernel object, its two grids, its band of rows `[r0, r1)` and, for the row
/// above and the row below its band, the pinned row it receives through (its buffer and
/// host pointer, mapped once and never unmapped).
struct ByHand<'a> {
    b: &'a Bench<'a>,
    side: usize,
    kernels: Vec<Kernel>,
    grids: Vec<[ClBuffer<f32>; 2]>,
    bands: Vec<(usize, usize)>,
    relays: Vec<[(ClBuffer<f32>, *mut f32); 2]>,
}

impl<'a> ByHand<'a> {
    fn new(b: &'a Bench<'a>, side: usize, start: &[f32]) -> Res<Self> {
        let ctx = b.root.context().as_opencl3();
        let devices = b.root.len();
        let mut grids = Vec::with_capacity(devices);
        let mut kernels = Vec::with_capacity(devices);
        for (d, q) in b.root.queues().iter().enumerate() {
            // A program per device, told apart by a define: PoCL before 6 shares one loaded
            // kernel between equal builds and aborts when two devices run it at once at
            // different offsets (docs/devices.md; clgroups does the same for its programs).
            let options = format!("-D BY_HAND_DEVICE={d}");
            let program = Program::create_and_build_from_source(ctx, SOURCE, &options)?;
            let mut pair = Vec::with_capacity(2);
            for _ in 0..2 {
                // SAFETY: no host pointer: OpenCL allocates side * side floats.
                let mut g = unsafe {
                    ClBuffer::<f32>::create(
                        ctx,
                        CL_MEM_READ_WRITE,
                        side * side,
                        std::ptr::null_mut(),
                    )
                }?;
                // SAFETY: a blocking write of `start` (side * side floats) into g of as many.
                unsafe {
                    q.as_opencl3()
                        .enqueue_write_buffer(&mut g, CL_BLOCKING, 0, start, &[])
                }?;
                pair.push(g);
            }
            let [g0, g1]: [ClBuffer<f32>; 2] = pair.try_into().map_err(|_| "two grids")?;
            grids.push([g0, g1]);
            kernels.push(Kernel::create(&program, "heat")?);
        }
        let bands = (0..devices)
            .map(|d| (d * side / devices, (d + 1) * side / devices))
            .collect();
        let queue = b.root.queues()[0].as_opencl3();
        let relays = (0..devices)
            .map(|_| Ok([pinned_row(ctx, queue, side)?, pinned_row(ctx, queue, side)?]))
            .collect::<Res<_>>()?;
        Ok(ByHand {
            b,
            side,
            kernels,
            grids,
            bands,
            relays,
        })
    }

    /// `iters` steps from the grids as they are, then waits for every queue.
    fn steps(&self, iters: usize) -> Res<()> {
        let queues = self.b.root.queues();
        let row = self.side * size_of::<f32>();
        let w = self.side as i32;
        let mut copies: Vec<Vec<Event>> = queues.iter().map(|_| Vec::new()).collect();
        for i in 0..iters {
            let (src, dst) = (i % 2, (i + 1) % 2);
            let mut kernels = Vec::with_capacity(queues.len());
            for (d, q) in queues.iter().enumerate() {
                let (r0, r1) = self.bands[d];
                let mut run = ExecuteKernel::new(&self.kernels[d]);
                // SAFETY: heat's arguments are two float buffers of side * side elements and
                // the two int sizes; work-items (x, y) of rows r0..r1 read t within the grid
                // and write u[y * side + x]. The step waits for every copy into or out of
                // device d's grids of the step before (the next step overwrites them).
                let ev = unsafe {
                    run.set_arg(&self.grids[d][src])
                        .set_arg(&self.grids[d][dst])
                        .set_arg(&w)
                        .set_arg(&w)
                        .set_global_work_offsets(&[0, r0])
                        .set_global_work_sizes(&[self.side, r1 - r0]);
                    for e in touching(&copies, d) {
                        run.set_wait_event(e);
                    }
                    run.enqueue_nd_range(q.as_opencl3())
                }?;
                kernels.push(ev);
            }
            let mut next: Vec<Vec<Event>> = queues.iter().map(|_| Vec::new()).collect();
            for (d, q) in queues.iter().enumerate() {
                let (r0, r1) = self.bands[d];
                let halos = [
                    ((d > 0).then(|| d - 1), r0.saturating_sub(1)),
                    ((d + 1 < queues.len()).then_some(d + 1), r1),
                ];
                for (k, (from, r)) in halos.into_iter().enumerate() {
                    let Some(from) = from else { continue };
                    let host = self.relays[d][k].1;
                    let wait: [cl_event; 1] = [kernels[from].get()];
                    // SAFETY: row r (< side) of a live grid of side * side floats read into
                    // one row of pinned memory this value owns, after the neighbour's kernel
                    // that wrote it; the write below reads it after this read, and the next
                    // step's read into it comes after the kernels that wait for that write.
                    let read = unsafe {
                        cl3::command_queue::enqueue_read_buffer(
                            queues[from].as_opencl3().get(),
                            self.grids[from][dst].get(),
                            CL_NON_BLOCKING,
                            r * row,
                            row,
                            host.cast(),
                            1,
                            wait.as_ptr(),
                        )
                    }
                    .map_err(|e| format!("clEnqueueReadBuffer: {e}"))?;
                    let read = Event::new(read);
                    let wait: [cl_event; 1] = [read.get()];
                    // SAFETY: the pinned row, written by the read this waits for, into row r
                    // of device d's grid (side * side floats); d's next kernel (same queue)
                    // comes after it.
                    let write = unsafe {
                        cl3::command_queue::enqueue_write_buffer(
                            q.as_opencl3().get(),
                            self.grids[d][dst].get(),
                            CL_NON_BLOCKING,
                            r * row,
                            row,
                            host.cast_const().cast(),
                            1,
                            wait.as_ptr(),
                        )
                    }
                    .map_err(|e| format!("clEnqueueWriteBuffer: {e}"))?;
                    next[from].push(read);
                    next[d].push(Event::new(write));
                    queues[from].as_opencl3().flush()?;
                }
                q.as_opencl3().flush()?;
            }
            copies = next;
        }
        for q in queues {
            q.finish()?;
        }
        Ok(())
    }

    /// The whole grid after `iters` steps from the start, each band from its device.
    fn read(&self, iters: usize) -> Res<Vec<f32>> {
        let mut out = vec![0.0f32; self.side * self.side];
        for (d, q) in self.b.root.queues().iter().enumerate() {
            let (r0, r1) = self.bands[d];
            let band = &mut out[r0 * self.side..r1 * self.side];
            // SAFETY: a blocking read of rows r0..r1 of a grid of side * side floats into a
            // slice of as many floats.
            unsafe {
                q.as_opencl3().enqueue_read_buffer(
                    &self.grids[d][iters % 2],
                    CL_BLOCKING,
                    r0 * self.side * size_of::<f32>(),
                    band,
                    &[],
                )
            }?;
        }
        Ok(out)
    }
}

/// The copies of the last step that read or wrote device `d`'s grids: its own (into them) and
/// its neighbours' (out of them).
fn touching(copies: &[Vec<Event>], d: usize) -> impl Iterator<Item = &Event> {
    let lo = d.saturating_sub(1);
    let hi = (d + 1).min(copies.len() - 1);
    copies[lo..=hi].iter().flatten()
}

/// One row (`side` floats) of pinned host memory: a `CL_MEM_ALLOC_HOST_PTR` buffer and its
/// host pointer, mapped once through `queue` (waited for) and never unmapped.
fn pinned_row(
    ctx: &opencl3::context::Context,
    queue: &opencl3::command_queue::CommandQueue,
    side: usize,
) -> Res<(ClBuffer<f32>, *mut f32)> {
    use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
    // SAFETY: no host pointer: OpenCL allocates `side` floats.
    let mem = unsafe {
        ClBuffer::<f32>::create(
            ctx,
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
            side,
            std::ptr::null_mut(),
        )
    }?;
    let mut ptr = std::ptr::null_mut();
    // SAFETY: a blocking map of the whole live buffer (`side` floats) with no wait list.
    let map = unsafe {
        queue.enqueue_map_buffer(
            &mem,
            CL_BLOCKING,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            side * size_of::<f32>(),
            &mut ptr,
            &[],
        )
    }?;
    map.wait()?;
    Ok((mem, ptr.cast()))
}
