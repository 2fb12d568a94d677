#!/usr/bin/env python3
"""torch's side of bench_launch (GPU machine): host wall of `y.add_(x, alpha=1)` +
`torch.cuda.synchronize()` and of `y.copy_(x)` + sync, 2^10 .. 2^K floats, median of RUNS after
warm-up, outputs checked; with --rust CSV (from `bench_launch --out`), prints clgroups ÷ torch.

    python3 scripts/bench_launch_torch.py [--max-log2 24] [--runs 201] [--rust bench_launch.csv]
"""
import argparse
import csv
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--min-log2", type=int, default=10)
p.add_argument("--max-log2", type=int, default=24)
p.add_argument("--runs", type=int, default=201)
p.add_argument("--rust")
a = p.parse_args()

rust = {}
if a.rust:
    for r in csv.DictReader(open(a.rust)):
        rust[(r["what"], int(r["n"]))] = float(r["clgroups_us"])

print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
print(f"{'what':<8} {'n':>10} {'torch µs':>10} {'clgroups µs':>12} {'clgroups÷torch':>15}")
for log2 in range(a.min_log2, a.max_log2 + 1):
    n = 1 << log2
    x = torch.ones(n, device="cuda")
    for what in ("saxpy", "copy"):
        y = torch.zeros(n, device="cuda")
        op = (lambda: y.add_(x, alpha=1.0)) if what == "saxpy" else (lambda: y.copy_(x))
        for _ in range(20):
            op()
        torch.cuda.synchronize()
        times = []
        for _ in range(a.runs):
            t = time.perf_counter()
            op()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e6)
        want = 20 + a.runs if what == "saxpy" else 1
        assert bool((y == want).all()), f"{what} {n}: wrong output"
        med = statistics.median(times)
        ours = rust.get((what, n))
        ratio = f"{ours / med:15.3f}" if ours else f"{'-':>15}"
        print(f"{what:<8} {n:>10} {med:>10.1f} {ours or float('nan'):>12.1f} {ratio}")
