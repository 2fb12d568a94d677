#!/usr/bin/env bash
# The five-task comparison: builds and runs the 20 programs (clgroups, opencl3 and ocl in
# rust/, PyOpenCL in python/) on the OpenCL implementation here, then prints the line counts.
#
#   bash docs/comparison/run.sh
#
# Defaults: POCL_DEVICES="pthread pthread" (two PoCL devices; task 5 needs two),
# CARGO_TARGET_DIR=/tmp/cmp-target (the checkout stays clean), PYTHON: a Python with pyopencl,
# mako and numpy, else a virtual environment made in /tmp/cmp-venv with pip.
# Exit status: 1 if any program fails its check (or the task-1 listings disagree).
set -uo pipefail
cd "$(dirname "$0")"
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/cmp-target}"

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import pyopencl, mako, numpy' 2>/dev/null; then
    if [ ! -x /tmp/cmp-venv/bin/python ]; then
        python3 -m venv /tmp/cmp-venv || exit 1
    fi
    PYTHON=/tmp/cmp-venv/bin/python
    "$PYTHON" -c 'import pyopencl, mako, numpy' 2>/dev/null ||
        "$PYTHON" -m pip install -q pyopencl mako numpy || exit 1
fi

(cd rust && cargo build --quiet --bins) || exit 1
"$PYTHON" -c 'import pyopencl as cl
for p in cl.get_platforms():
    print(f"OpenCL: {p.version}; devices: {[d.name for d in p.get_devices()]}")'

out=$(mktemp -d)
failed=()
for task in t1_devices t2_vadd t3_subgroup t4_reduce t5_saxpy2; do
    for lib in clgroups opencl3 ocl pyopencl; do
        if [ "$lib" = pyopencl ]; then
            cmd=("$PYTHON" "python/$task.py")
        else
            cmd=("$CARGO_TARGET_DIR/debug/${task}_$lib")
        fi
        if "${cmd[@]}" >"$out/${task}_$lib" 2>&1; then
            if [ "$task" = t1_devices ]; then
                result="$(grep -cE '^[0-9]+:[0-9]+ ' "$out/${task}_$lib") devices listed"
            else
                result=$(tail -n 1 "$out/${task}_$lib")
            fi
            echo "ok      $task $lib: $result"
        else
            echo "FAILED  $task $lib:"
            sed 's/^/    /' "$out/${task}_$lib"
            failed+=("${task}_$lib")
        fi
    done
done

# Task 1's check beyond each program's own: the four list the same devices with the same
# work-group and sub-group limits.
facts() { grep -E '^[0-9]+:[0-9]+ |max work-group size|max sub-groups' "$out/t1_devices_$1"; }
for lib in opencl3 ocl pyopencl; do
    if ! diff <(facts clgroups) <(facts "$lib") >/dev/null; then
        echo "FAILED  t1_devices: $lib lists other devices or limits than clgroups"
        failed+=("t1_devices_$lib (listing)")
    fi
done
echo
echo "Task 1 (clgroups):"
sed 's/^/    /' "$out/t1_devices_clgroups"
rm -r "$out"

echo
"$PYTHON" count.py
echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}"
    exit 1
fi
echo "all 20 programs ran and passed their checks"
