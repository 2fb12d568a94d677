# Task 2 with PyOpenCL: c = a + b over a prime n; the global size is padded to a multiple of
# the local size and the kernel guards the extra work-items.
import numpy as np
import pyopencl as cl

N = 1_000_003
LOCAL = 256
SRC = """kernel void vadd(global const float *a, global const float *b, global float *c,
                   uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}"""

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
prg = cl.Program(ctx, SRC).build()
a = np.arange(N, dtype=np.float32)
b = (N - np.arange(N)).astype(np.float32) * np.float32(0.5)
mf = cl.mem_flags
a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
global_size = ((N + LOCAL - 1) // LOCAL * LOCAL,)
prg.vadd(queue, global_size, (LOCAL,), a_buf, b_buf, c_buf, np.uint32(N))
c = np.empty_like(a)
cl.enqueue_copy(queue, c, c_buf)
assert (c == a + b).all(), "wrong sum"
print(f"vadd of {N} elements on {ctx.devices[0].name}: ok")
