#!/usr/bin/env python3
"""Compare clgroups' float sum and inclusive scan (examples/bench_reduce.rs) with the usual
references, host wall time of the blocking call and device time side by side, and plot both.

  cargo run --release --example bench_reduce -- --out /tmp/rust.csv
  python3 scripts/bench_reduce.py --rust /tmp/rust.csv --png docs/bench_pocl31  # NumPy, PyOpenCL
  python3 scripts/bench_reduce.py --torch --rust /tmp/rust.csv --png docs/bench_h100  # CUDA

Default mode: NumPy `sum` / `cumsum` (wall) and PyOpenCL's `ReductionKernel` (wall of
`krnl(x).get()`, device time from its events) and `GenericScanKernel` (an inclusive sum; wall
of the call + `queue.finish()`) on PyOpenCL's first device (override with PYOPENCL_CTX); needs
numpy, pyopencl, mako. --torch: `torch.sum(x).item()` and `torch.cumsum(x, 0, out=y)` +
`torch.cuda.synchronize()` (wall), and both with CUDA events (device). Same input as the Rust
side (0s and 1s: every sum exact), outputs poisoned before each call and every result checked,
medians of at least 21 calls after 3 warm-up calls. GB/s: sums 4 bytes per element, scans and
copies 8. Writes PREFIX_reduce.png and PREFIX_scan.png when matplotlib is available.
"""
import argparse
import csv
import math
import statistics
import sys
import time


def runs_for(n):
    """Timed calls for n elements (as in examples/bench_reduce.rs)."""
    return max(21, min(201, (1 << 30) // n))


def median_of(n, call):
    for _ in range(3):
        call()
    return statistics.median(call() for _ in range(runs_for(n)))


def data(n):
    """The Rust side's input: 1.0 where the 32-bit hash i * 2654435761 has its top 4 bits 0."""
    import numpy as np
    h = np.arange(n, dtype=np.uint32) * np.uint32(2654435761)
    return ((h >> np.uint32(28)) == 0).astype(np.float32)


def read_rust(path):
    """{(impl, metric): {n: seconds}} from the Rust CSV."""
    table = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if int(row["n"]) > 0:
                table.setdefault((row["impl"], row["metric"]), {})[int(row["n"])] = float(row["median_s"])
    return table


def check(ok, what, n):
    if not ok:
        sys.exit(f"{what} of {n} elements: wrong result")


def time_numpy(sizes):
    import numpy as np
    out = {}
    for n in sizes:
        x = data(n)
        total, prefix = float(x.sum(dtype=np.float64)), np.cumsum(x, dtype=np.float64).astype(np.float32)
        y = np.empty_like(x)

        def sum_call():
            t = time.perf_counter()
            s = x.sum()
            t = time.perf_counter() - t
            check(float(s) == total, "numpy sum", n)
            return t

        def scan_call():
            y.fill(np.nan)
            t = time.perf_counter()
            np.cumsum(x, out=y)
            t = time.perf_counter() - t
            check(np.array_equal(y, prefix), "numpy cumsum", n)
            return t

        out[("numpy.sum", "wall", n)] = median_of(n, sum_call)
        out[("numpy.cumsum", "wall", n)] = median_of(n, scan_call)
    return out


def time_pyopencl(sizes):
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel
    from pyopencl.scan import GenericScanKernel

    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    print(f"pyopencl device: {ctx.devices[0].name} ({ctx.devices[0].platform.name})")
    red = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]",
                          arguments="__global const float *x")
    scan = GenericScanKernel(ctx, np.float32, arguments="__global const float *x, __global float *y",
                             input_expr="x[i]", scan_expr="a+b", neutral="0",
                             output_statement="y[i] = item;")
    out = {}
    for n in sizes:
        host = data(n)
        total, prefix = float(host.sum(dtype=np.float64)), np.cumsum(host, dtype=np.float64).astype(np.float32)
        x = cla.to_device(queue, host)
        y = cla.empty_like(x)

        def sum_wall():
            t = time.perf_counter()
            s = red(x, queue=queue).get()
            t = time.perf_counter() - t
            check(float(s) == total, "pyopencl sum", n)
            return t

        def sum_device():
            # ReductionKernel enqueues one or two stages; return_event gives the last one.
            start = cl.enqueue_marker(queue)
            s, ev = red(x, queue=queue, return_event=True)
            ev.wait()
            check(float(s.get()) == total, "pyopencl sum", n)
            return (ev.profile.end - start.profile.end) * 1e-9

        def scan_wall():
            y.fill(np.nan)
            queue.finish()
            t = time.perf_counter()
            scan(x, y, queue=queue)
            queue.finish()
            t = time.perf_counter() - t
            check(np.array_equal(y.get(), prefix), "pyopencl scan", n)
            return t

        out[("pyopencl.reduction", "wall", n)] = median_of(n, sum_wall)
        out[("pyopencl.reduction", "device", n)] = median_of(n, sum_device)
        out[("pyopencl.scan", "wall", n)] = median_of(n, scan_wall)
    return out


def time_torch(sizes):
    import numpy as np
    import torch
    print(f"torch device: {torch.cuda.get_device_name()}")
    out = {}
    for n in sizes:
        host = data(n)
        total = float(host.sum(dtype=np.float64))
        x = torch.from_numpy(host).cuda()
        prefix = torch.from_numpy(np.cumsum(host, dtype=np.float64).astype(np.float32)).cuda()
        y = torch.empty_like(x)

        def sum_wall():
            torch.cuda.synchronize()
            t = time.perf_counter()
            s = torch.sum(x).item()
            t = time.perf_counter() - t
            check(s == total, "torch.sum", n)
            return t

        def sum_device():
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            s = torch.sum(x)
            b.record()
            b.synchronize()
            check(s.item() == total, "torch.sum", n)
            return a.elapsed_time(b) * 1e-3

        def scan_wall():
            y.fill_(math.nan)
            torch.cuda.synchronize()
            t = time.perf_counter()
            torch.cumsum(x, 0, out=y)
            torch.cuda.synchronize()
            t = time.perf_counter() - t
            check(torch.equal(y, prefix), "torch.cumsum", n)
            return t

        def scan_device():
            y.fill_(math.nan)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            torch.cumsum(x, 0, out=y)
            b.record()
            b.synchronize()
            check(torch.equal(y, prefix), "torch.cumsum", n)
            return a.elapsed_time(b) * 1e-3

        out[("torch.sum", "wall", n)] = median_of(n, sum_wall)
        out[("torch.sum", "device", n)] = median_of(n, sum_device)
        out[("torch.cumsum", "wall", n)] = median_of(n, scan_wall)
        out[("torch.cumsum", "device", n)] = median_of(n, scan_device)
        del x, y, prefix
        torch.cuda.empty_cache()
    return out


def gbs(seconds, n, per):
    return per * n / seconds / 1e9


def plot(series, path, title, ylabel):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, points in series:
        ns = sorted(points)
        style = "-" if name.endswith("wall") else "--"
        ax.plot(ns, [points[n] for n in ns], style, marker="o", markersize=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elements (float32)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rust", required=True, help="CSV written by examples/bench_reduce.rs")
    ap.add_argument("--torch", action="store_true", help="compare with torch on CUDA")
    ap.add_argument("--png", default="bench", help="plot prefix: PREFIX_reduce.png, PREFIX_scan.png")
    ap.add_argument("--csv", help="also write every median (ours and theirs) to this CSV")
    args = ap.parse_args()
    rust = read_rust(args.rust)
    sizes = sorted(rust[("reduce", "wall")])
    if args.torch:
        other = time_torch(sizes)
        red, scan = ["torch.sum"], ["torch.cumsum"]
    else:
        other = time_numpy(sizes)
        other.update(time_pyopencl(sizes))
        red, scan = ["numpy.sum", "pyopencl.reduction"], ["numpy.cumsum", "pyopencl.scan"]
    ours = {(i, m, n): s for (i, m), row in rust.items() for n, s in row.items()}
    everything = {**ours, **other}

    for what, mine, theirs, per in (("reduce", "reduce", red, 4), ("scan", "scan", scan, 8)):
        print(f"\n{what}: GB/s ({per} B/element); ratio = ours / theirs (> 1: ours faster)")
        head = f"{'n':>10} {'ours wall':>10} {'ours dev':>9}"
        for t in theirs:
            head += f" {t + ' wall':>22} {'ratio':>6} {t + ' dev':>21} {'ratio':>6}"
        head += f" {'ours dev/copy dev':>18}"
        print(head)
        for n in sizes:
            w, d = ours[(mine, "wall", n)], ours[(mine, "device", n)]
            line = f"{n:>10} {gbs(w, n, per):>10.1f} {gbs(d, n, per):>9.1f}"
            for t in theirs:
                for metric, mine_s in (("wall", w), ("device", d)):
                    s = other.get((t, metric, n))
                    line += f" {gbs(s, n, per):>21.1f} {s / mine_s:>6.2f}" if s else f" {'-':>21} {'-':>6}"
            copy = ours.get(("copy", "device", n))
            line += f" {(per * n / d) / (8 * n / copy):>18.3f}" if copy else ""
            print(line)
        series = [(f"{i} {m}", {n: gbs(s, n, 8 if i == "copy" else per) for (i2, m2, n), s in everything.items()
                                if i2 == i and m2 == m})
                  for i in [mine, *theirs, "copy"] for m in ("wall", "device")
                  if (i, m, sizes[0]) in everything]
        plot(series, f"{args.png}_{what}.png", f"float {what}: blocking call (solid) and device time (dashed)",
             f"GB/s ({per} bytes per element{'; copy: 8' if per == 4 else ''})")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("impl,metric,n,median_s\n")
            for (i, m, n), s in sorted(everything.items()):
                f.write(f"{i},{m},{n},{s:e}\n")
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
