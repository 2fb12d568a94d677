# Task 3 with PyOpenCL: the sum of each group of 32 work-items. PoCL 3.1 has no sub-groups (no
# cl_khr_subgroups), nor does NVIDIA's OpenCL, so the portable kernel reduces each run of 32
# lanes in local memory with work-group barriers.
import numpy as np
import pyopencl as cl

N = 1 << 20
LOCAL = 256
SRC = """kernel void sums(global const float *x, global float *out, local float *tmp) {
    size_t l = get_local_id(0);
    tmp[l] = x[get_global_id(0)];
    for (uint s = 16; s > 0; s /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l % 32 < s) tmp[l] += tmp[l + s];
    }
    if (l % 32 == 0) out[get_global_id(0) / 32] = tmp[l];
}"""

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, SRC).build()
x = (np.arange(N) % 10).astype(np.float32)
mf = cl.mem_flags
x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
out_buf = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes // 32)
prg.sums(queue, (N,), (LOCAL,), x_buf, out_buf, cl.LocalMemory(LOCAL * 4))
out = np.empty(N // 32, dtype=np.float32)
cl.enqueue_copy(queue, out, out_buf)
assert (out == x.reshape(-1, 32).sum(axis=1)).all(), "wrong group sum"
print(f"{N // 32} group sums on {ctx.devices[0].name}: ok")
