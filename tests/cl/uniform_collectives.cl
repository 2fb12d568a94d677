// Standard cl_khr_subgroups kernels whose collectives sit behind conditions that are uniform in
// each sub-group (the specification's only requirement): the right operand of && / || whose
// left operand is a collective's result, branches on any/all, nested branches, conditional
// expressions, loops whose exit a collective decides. Every kernel records each work-item's
// sub-group id so the host can check the results against its own sub-group maths.
#pragma OPENCL EXTENSION cl_khr_subgroups : enable

typedef int elem_t;

kernel void and_reduce(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t r = 0;
    if (sub_group_any(v > 0) && sub_group_reduce_add(v) > t) r = 1 + sub_group_reduce_max(v);
    out[g] = r;
}

kernel void or_scan(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    out[g] = (sub_group_all(v < 0) || sub_group_scan_inclusive_add(v) > t) ? 1 : 2;
}

kernel void all_then(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t r = -1;
    if (sub_group_all(v > -15 + t)) {
        elem_t s = sub_group_reduce_add(v);
        r = s + sub_group_scan_exclusive_add(v);
    }
    out[g] = r;
}

kernel void nested(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t r = 0;
    if (sub_group_any(v > 2 + t)) {
        if (sub_group_all(v < 18))
            r = sub_group_reduce_min(v);
        else
            r = sub_group_broadcast(v, 1);
    }
    out[g] = r;
}

kernel void ternary(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t r = sub_group_any(v == t) ? sub_group_reduce_add(v) : -sub_group_scan_inclusive_max(v);
    out[g] = r;
}

// The exit is decided by a collective of a uniform count: every sub-group leaves together.
kernel void loop_uniform_exit(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t s = 0;
    for (int it = 1;; ++it) {
        s += sub_group_reduce_add(v * it);
        if (sub_group_all(it >= t)) break;
    }
    out[g] = s;
}

// The exit is decided by a collective of work-item values: uniform in each sub-group, not in the
// work-group.
kernel void loop_sub_group_exit(global const elem_t *x, global elem_t *out, global uint *sg, int t) {
    size_t g = get_global_id(0);
    sg[g] = get_sub_group_id();
    elem_t v = x[g] - (elem_t)(get_sub_group_local_id() % 3);
    elem_t s = 0;
    for (int it = 0; it < 8; ++it) {
        s += sub_group_reduce_add(v);
        if (sub_group_any(s > t)) break;
    }
    out[g] = s;
}
