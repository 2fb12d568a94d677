//! `scan_diag --stub-check`: the look-back kernels' logic checked on any device with
//! program-scope globals (OpenCL C 2.0, or 3.0 with the feature; PoCL's CPU devices, where the
//! layer's emulated sub-groups refuse these kernels): built without the layer, with
//! work-groups of one 32-wide sub-group whose collectives are stubs through a program-scope
//! scratch buffer and barriers. Sizes around tile multiples, 1–5 persistent groups, inclusive
//! and exclusive, int (and float for the tiles' kernel), outputs poisoned, the ticket checked
//! back at 0 after every launch.

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::CL_BLOCKING;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Sub-group built-ins for work-groups of one 32-wide sub-group, through global scratch.
const STUB: &str = r#"
#define OV __attribute__((overloadable))
global ulong clg_sgbuf[64 * 32];
#define SGB(T) ((global T *)(clg_sgbuf + (get_group_id(0) % 64) * 32))
uint sg_get_local_id(void) { return get_local_id(0) % 32; }
/* One sub-group per work-group: a constant, so PoCL's compiler sees `if (sg == 0)` taken by
 * the whole group (a barrier under a condition it cannot see through multiplies its work). */
uint sg_get_group_linear_id(void) { return 0; }
#define PUT(T, x) uint l = get_local_id(0); barrier(CLK_GLOBAL_MEM_FENCE); SGB(T)[l] = x; \
    barrier(CLK_GLOBAL_MEM_FENCE);
#define DECL(T) \
OV T sg_shuffle_up(T x, uint d) { PUT(T, x) T r = l >= d ? SGB(T)[l - d] : x; \
    barrier(CLK_GLOBAL_MEM_FENCE); return r; } \
OV T sg_broadcast(T x, uint i) { PUT(T, x) T r = SGB(T)[i]; \
    barrier(CLK_GLOBAL_MEM_FENCE); return r; } \
OV T sg_reduce_add(T x) { PUT(T, x) T r = 0; for (uint i = 0; i < 32; i++) r += SGB(T)[i]; \
    barrier(CLK_GLOBAL_MEM_FENCE); return r; } \
OV T sg_reduce_min(T x) { PUT(T, x) T r = x; for (uint i = 0; i < 32; i++) r = min(r, SGB(T)[i]); \
    barrier(CLK_GLOBAL_MEM_FENCE); return r; } \
OV T sg_exclusive_scan_add(T x) { PUT(T, x) T r = 0; for (uint i = 0; i < l; i++) r += SGB(T)[i]; \
    barrier(CLK_GLOBAL_MEM_FENCE); return r; }
DECL(int) DECL(uint) DECL(float)
#define CLG_CAT_(a, b) a##b
#define CLG_CAT(a, b) CLG_CAT_(a, b)
#define T CLG_T
#define T4 CLG_CAT(CLG_T, 4)
#define CLG_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define clg_post_value(mailbox, seq, v)
"#;

fn cl<T>(r: Result<T, opencl3::error_codes::ClError>) -> AnyResult<T> {
    r.map_err(|e| e.to_string().into())
}

fn buffer<T>(ctx: &Context, n: usize) -> AnyResult<Buffer<T>> {
    // SAFETY: no host pointer is given, so OpenCL reads no host memory.
    cl(unsafe { Buffer::<T>::create(ctx, CL_MEM_READ_WRITE, n, std::ptr::null_mut()) })
}

fn write<T>(q: &CommandQueue, b: &mut Buffer<T>, data: &[T]) -> AnyResult<()> {
    // SAFETY: a blocking write: `data` outlives the call (callers pass their buffer's length).
    cl(unsafe { q.enqueue_write_buffer(b, CL_BLOCKING, 0, data, &[]) }).map(drop)
}

fn read<T>(q: &CommandQueue, b: &Buffer<T>, data: &mut [T]) -> AnyResult<()> {
    // SAFETY: a blocking read into `data` (callers pass their buffer's length).
    cl(unsafe { q.enqueue_read_buffer(b, CL_BLOCKING, 0, data, &[]) }).map(drop)
}

/// Checks `clg_scan_lookback` and `clg_scan_persist` (also in 128-wide look-back steps) on the
/// first device; returns the number of wrong cases (each is printed).
pub fn run() -> AnyResult<usize> {
    let dev = *cl(get_all_devices(CL_DEVICE_TYPE_ALL))?
        .first()
        .ok_or("no OpenCL device")?;
    let device = Device::new(dev);
    let ctx = cl(Context::from_device(&device))?;
    // Program-scope globals: OpenCL C 3.0 where the device lists them as a feature (PoCL 6.0,
    // which refuses them under CL2.0), else 2.0 (PoCL 3.1: an OpenCL 3.0 device without them).
    let globals = "__opencl_c_program_scope_global_variables".bytes();
    let c3 = device
        .opencl_c_features()
        .unwrap_or_default()
        .iter()
        .any(|f| {
            let name = f.name.iter().take_while(|&&c| c != 0).copied();
            name.eq(globals.clone())
        });
    let std = if c3 { "CL3.0" } else { "CL2.0" };
    let q = cl(CommandQueue::create_default_with_properties(&ctx, 0, 0))?;
    let source = clgroups::algorithms::SOURCE;
    let scan = source
        .split_once("#if CLG_LOOKBACK")
        .ok_or("no look-back kernel in the source")?
        .1;
    // The T4 store the look-back kernels share with the chunk scan, before the look-back part.
    let store = source
        .find("static inline void clg_store4(")
        .and_then(|i| source[i..].find("\n}\n").map(|j| &source[i..i + j + 3]))
        .ok_or("no clg_store4 in the source")?;
    let src = format!("{STUB}{store}#if CLG_LOOKBACK{scan}");
    let (rounds, local) = (32usize, 32usize);
    let tile = 4 * rounds * local;
    let mut ticket = buffer::<u32>(&ctx, 1)?;
    let mut states = buffer::<u64>(&ctx, 4096)?;
    write(&q, &mut ticket, &[0])?;
    write(&q, &mut states, &[0; 4096])?;
    let mut epoch = 0u32;
    let mut wrong = 0;
    let forms = [
        ("clg_scan_lookback", ""),
        ("clg_scan_persist", ""),
        ("clg_scan_persist", "-DCLG_LB_WIDTH=4"),
    ];
    // Floats through the look-back tiles' kernel only: PoCL 3.1 and 6.0 run the persistent
    // kernel's float build without end (no result in 90 s; not understood: its int build here
    // and its float runs on NVIDIA are right, docs/scan.md).
    let float = [("float", forms[0])];
    for (ty, (name, extra)) in forms.map(|f| ("int", f)).into_iter().chain(float) {
        // Values as the element type's bits (small integers: float sums stay exact).
        let bits = |v: i32| match ty {
            "int" => v as u32,
            _ => (v as f32).to_bits(),
        };
        let opts = format!(
            "-cl-std={std} -DCLG_T={ty} -DCLG_OP=0 -DCLG_ID=0 -DCLG_LOOKBACK=1 \
             -DCLG_LB_LOCAL={local} -DCLG_LB_ROUNDS={rounds} {extra}"
        );
        let program = Program::create_and_build_from_source(&ctx, &src, &opts)?;
        let k = cl(Kernel::create(&program, name))?;
        let sizes = [
            1,
            100,
            tile - 1,
            tile,
            tile + 1,
            2 * tile - 2,
            3 * tile + 5,
            7 * tile,
            50000,
            (1 << 18) + 3,
        ];
        for n in sizes {
            let tiles = n.div_ceil(tile);
            let per = match name {
                "clg_scan_lookback" => vec![tiles],
                _ => [1, 2, 3, 4, 5].map(|g: usize| g.min(tiles)).to_vec(),
            };
            for groups in per {
                for exclusive in [0i32, 1] {
                    let x: Vec<i32> = (0..n)
                        .map(|i| ((i as u32).wrapping_mul(2654435761) >> 28) as i32 - 7)
                        .collect();
                    let mut input = buffer::<u32>(&ctx, n)?;
                    let mut out = buffer::<u32>(&ctx, n)?;
                    write(
                        &q,
                        &mut input,
                        &x.iter().map(|&v| bits(v)).collect::<Vec<_>>(),
                    )?;
                    write(&q, &mut out, &vec![u32::MAX; n])?;
                    epoch += 1;
                    // SAFETY: the kernels read `in` and write `out` below n (their length, in
                    // 32-bit elements), state[tile] for tile < tiles <= 4096 and ticket[0];
                    // the arguments match their parameters in order and type (the persistent
                    // kernel's mailbox is 0: it posts nowhere).
                    let e = cl(unsafe {
                        let mut launch = ExecuteKernel::new(&k);
                        launch
                            .set_arg(&input)
                            .set_arg(&out)
                            .set_arg(&(n as u64))
                            .set_arg(&states)
                            .set_arg(&ticket)
                            .set_arg(&(tiles as u32))
                            .set_arg(&epoch)
                            .set_arg(&exclusive)
                            .set_arg(&0u32);
                        if name == "clg_scan_persist" {
                            launch.set_arg(&0u64).set_arg(&0u32);
                        }
                        launch
                            .set_global_work_size(groups * local)
                            .set_local_work_size(local)
                            .enqueue_nd_range(&q)
                    })?;
                    cl(e.wait())?;
                    let mut got = vec![0u32; n];
                    let mut t = [1u32];
                    read(&q, &out, &mut got)?;
                    read(&q, &ticket, &mut t)?;
                    let mut acc = 0i32;
                    let first = (0..n).find(|&i| {
                        let want = if exclusive == 1 { acc } else { acc + x[i] };
                        acc += x[i];
                        got[i] != bits(want)
                    });
                    if first.is_some() || t[0] != 0 {
                        wrong += 1;
                        let case = format!(
                            "{name} {ty} {extra} n={n} groups={groups} exclusive={exclusive}"
                        );
                        println!("{case}: first wrong {first:?}, ticket {}", t[0]);
                    }
                }
            }
        }
        println!("{name} {ty} {extra}: checked");
    }
    Ok(wrong)
}
