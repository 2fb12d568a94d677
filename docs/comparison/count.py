"""Counts the comparison programs: non-blank, non-comment lines per task and library.

A line counts unless it is blank or a comment line (Rust: starts with `//`, which covers
`//!` and `///`; Python: starts with `#`). Everything else counts, imports, closing braces and
the OpenCL C kernel text included; "kernel" is how many of those lines are the kernel source
(the `SRC` string). `unsafe` counts `unsafe {` blocks, and "chars" the non-whitespace
characters of the counted lines (a measure that does not depend on how rustfmt breaks lines).
"""

import os
import re
import sys

TASKS = [
    ("t1_devices", "1. list devices, sub-group capabilities"),
    ("t2_vadd", "2. vector add, n = 1,000,003"),
    ("t3_subgroup", "3. sum of each sub-group of 32"),
    ("t4_reduce", "4. sum of 2^20 floats"),
    ("t5_saxpy2", "5. SAXPY over two devices"),
]
LIBS = ["clgroups", "opencl3", "ocl", "PyOpenCL"]


def path(task, lib):
    if lib == "PyOpenCL":
        return os.path.join("python", task + ".py")
    return os.path.join("rust", "src", "bin", f"{task}_{lib}.rs")


def count(file):
    comment = "#" if file.endswith(".py") else "//"
    lines = kernel = chars = 0
    in_kernel = False
    with open(file, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(comment):
                continue
            lines += 1
            chars += len(re.sub(r"\s", "", line))
            if re.match(r"(const )?SRC(: &str)? =", line):
                in_kernel = True
            if in_kernel:
                kernel += 1
                if line.endswith('}";') or line.endswith('}"""'):
                    in_kernel = False
    text = open(file, encoding="utf-8").read()
    return lines, kernel, chars, len(re.findall(r"\bunsafe \{", text))


def main():
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    table = {(t, lib): count(path(t, lib)) for t, _ in TASKS for lib in LIBS}
    print("Lines (non-blank, non-comment; of which OpenCL C kernel in brackets)\n")
    print("| task | " + " | ".join(LIBS) + " |")
    print("|---|" + "---:|" * len(LIBS))
    for t, name in TASKS:
        cells = [f"{table[t, lib][0]} ({table[t, lib][1]})" for lib in LIBS]
        print(f"| {name} | " + " | ".join(cells) + " |")
    totals = [sum(table[t, lib][0] for t, _ in TASKS) for lib in LIBS]
    print("| **total** | " + " | ".join(f"**{n}**" for n in totals) + " |")
    print("\nNon-whitespace characters; `unsafe` blocks (Rust)\n")
    print("| task | " + " | ".join(LIBS) + " |")
    print("|---|" + "---:|" * len(LIBS))
    for t, name in TASKS:
        cells = []
        for lib in LIBS:
            _, _, chars, unsafe = table[t, lib]
            cells.append(f"{chars}" if lib == "PyOpenCL" else f"{chars}; {unsafe}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    totals = [sum(table[t, lib][2] for t, _ in TASKS) for lib in LIBS]
    unsafe = [sum(table[t, lib][3] for t, _ in TASKS) for lib in LIBS]
    cells = [
        f"**{c}**" if lib == "PyOpenCL" else f"**{c}; {u}**"
        for lib, c, u in zip(LIBS, totals, unsafe)
    ]
    print("| **total** | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
