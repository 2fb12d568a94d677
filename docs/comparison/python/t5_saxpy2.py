# Task 5 with PyOpenCL: y = a*x + y split over every device of the first platform with two or
# more (POCL_DEVICES="pthread pthread": two): one context, a queue and a chunk of x and y per
# device, all launches enqueued before the first read.
import numpy as np
import pyopencl as cl
import pyopencl.array as cl_array

N = 1 << 22
A = 3.0
SRC = """kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}"""

platforms = [p for p in cl.get_platforms() if len(p.get_devices()) >= 2]
assert platforms, "needs a platform with two devices"
devices = platforms[0].get_devices()
ctx = cl.Context(devices)
saxpy = cl.Program(ctx, SRC).build().saxpy
x = (np.arange(N) % 1000).astype(np.float32)
y = (np.arange(N) % 777).astype(np.float32)
parts = []
n = len(devices)
for device, xs, ys in zip(devices, np.array_split(x, n), np.array_split(y, n)):
    queue = cl.CommandQueue(ctx, device)
    x_g, y_g = cl_array.to_device(queue, xs), cl_array.to_device(queue, ys)
    saxpy(queue, xs.shape, None, y_g.data, x_g.data, np.float32(A))
    parts.append(y_g)
out = np.concatenate([y_g.get() for y_g in parts])
assert (out == A * x + y).all(), "wrong saxpy"
print(f"saxpy of {N} elements on {len(devices)} devices: ok")
