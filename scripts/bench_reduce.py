#!/usr/bin/env python3
"""Compare clgroups' sub-group reduce with PyOpenCL's ReductionKernel, NumPy's sum (or, with
--torch, torch.sum on CUDA) on the sizes of the Rust benchmark.

  cargo run --release --example bench_reduce -- --out /tmp/rust.csv
  python3 scripts/bench_reduce.py --rust /tmp/rust.csv [--png docs/reduce_throughput.png]
  python3 scripts/bench_reduce.py --torch --rust /tmp/rust.csv   # on a CUDA machine

Default mode needs pyopencl, mako, numpy, matplotlib (pip install pyopencl mako numpy
matplotlib) and times
ReductionKernel on the first device of PyOpenCL's first platform (override with
PYOPENCL_CTX) with profiling events; --torch needs only torch (CUDA events). Every timing is
the median of many runs after warm-up; GB/s = 4 bytes per float / time. Prints one row per
size with the ratios ours/other, and writes the PNG (throughput vs size, one line per
implementation) when matplotlib is available.
"""
import argparse
import csv
import statistics
import sys
import time


def runs_for(n):
    """Timed runs for n elements (as in examples/bench_reduce.rs)."""
    return max(10, min(200, (1 << 30) // n))


def read_rust(path):
    """{impl: {n: GB/s}} and the launch-overhead rows of the Rust CSV."""
    table, launch = {}, {}
    with open(path) as f:
        for row in csv.DictReader(f):
            n = int(row["n"])
            if n == 0:
                launch[row["impl"]] = float(row["median_s"])
            else:
                table.setdefault(row["impl"], {})[n] = float(row["gbs"])
    return table, launch


def time_pyopencl(sizes):
    """{n: GB/s} of ReductionKernel (sum of float32) with profiling events."""
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(f"pyopencl device: {ctx.devices[0].name} ({ctx.devices[0].platform.name})")
    krnl = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b",
                           map_expr="x[i]", arguments="__global const float *x")
    out = {}
    for n in sizes:
        host = ((np.arange(n) % 97) * 0.5 + 1.0).astype(np.float32)
        x = cla.to_device(queue, host)
        exact = float(host.astype(np.float64).sum())
        for _ in range(3):
            got = krnl(x, queue=queue).get()
        if abs(float(got) - exact) > 1e-5 * exact:
            sys.exit(f"pyopencl sum {got} != {exact} at n={n}")
        times = []
        for _ in range(runs_for(n)):
            # ReductionKernel enqueues one or two stages; return_event gives the last one.
            # Time from the first stage's start: a marker before, the last event after.
            start = cl.enqueue_marker(queue)
            _, ev = krnl(x, queue=queue, return_event=True)
            ev.wait()
            times.append((ev.profile.end - start.profile.end) * 1e-9)
        out[n] = 4 * n / statistics.median(times) / 1e9
    return out


def time_numpy(sizes):
    """{n: GB/s} of numpy.sum on float32 (wall time)."""
    import numpy as np
    out = {}
    for n in sizes:
        host = ((np.arange(n) % 97) * 0.5 + 1.0).astype(np.float32)
        for _ in range(3):
            host.sum()
        times = []
        for _ in range(runs_for(n)):
            t = time.perf_counter()
            host.sum()
            times.append(time.perf_counter() - t)
        out[n] = 4 * n / statistics.median(times) / 1e9
    return out


def time_torch(sizes):
    """{n: GB/s} of torch.sum on CUDA float32, timed with CUDA events."""
    import torch
    out = {}
    print(f"torch device: {torch.cuda.get_device_name()}")
    for n in sizes:
        x = ((torch.arange(n, device="cuda") % 97) * 0.5 + 1.0).float()
        for _ in range(3):
            x.sum()
        times = []
        for _ in range(runs_for(n)):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            x.sum()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e-3)
        out[n] = 4 * n / statistics.median(times) / 1e9
        del x
    return out


def plot(table, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, row in sorted(table.items()):
        ns = sorted(row)
        ax.plot(ns, [row[n] for n in ns], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements (float32)")
    ax.set_ylabel("GB/s (copy: read + write)")
    ax.set_title("float sum throughput")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rust", required=True, help="CSV written by examples/bench_reduce.rs")
    ap.add_argument("--torch", action="store_true", help="time torch.sum on CUDA instead")
    ap.add_argument("--png", default="reduce_throughput.png")
    args = ap.parse_args()
    table, launch = read_rust(args.rust)
    sizes = sorted(table["subgroup"])
    if args.torch:
        table["torch.sum"] = time_torch(sizes)
        others = ["torch.sum", "copy"]
    else:
        table["pyopencl"] = time_pyopencl(sizes)
        table["numpy"] = time_numpy(sizes)
        others = ["pyopencl", "numpy", "tree", "copy"]
    ours = table["subgroup"]
    head = f"{'n':>10} {'ours GB/s':>10}" + "".join(f" {'/' + o:>10}" for o in others)
    print(head)
    for n in sizes:
        cells = "".join(f" {ours[n] / table[o][n]:>10.2f}" if n in table.get(o, {}) else f" {'-':>10}"
                        for o in others)
        print(f"{n:>10} {ours[n]:>10.2f}{cells}")
    if "launch_clgroups" in launch:
        a, b = launch["launch_clgroups"], launch["launch_raw_opencl3"]
        print(f"launch overhead: clgroups {a * 1e6:.1f} us, raw opencl3 {b * 1e6:.1f} us, "
              f"ratio {a / b:.3f}")
    plot(table, args.png)


if __name__ == "__main__":
    main()
