# Task 4 with PyOpenCL: the sum of 2^20 floats, with pyopencl.array's reduction.
import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

N = 1 << 20

ctx = cl.create_some_context(interactive=False)
queue = cl.CommandQueue(ctx)
x = (np.arange(N) % 7).astype(np.float32)
total = cl_array.sum(cl_array.to_device(queue, x)).get()
expected = int((np.arange(N) % 7).sum())
assert total == expected, f"{total} != {expected}"
print(f"sum of {N} floats on {ctx.devices[0].name}: {total} ok")
