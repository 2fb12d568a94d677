// cl_khr_subgroup_non_uniform_* built-ins where they are meant to be called: in divergent flow.
// Every kernel records each work-item's sub-group id and lane so the host can check the results
// against the active work-items of each sub-group.
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_arithmetic : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_non_uniform_vote : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_clustered_reduce : enable

typedef short elem_t;

static void record(global uint *ids) {
    size_t g = get_global_id(0);
    ids[2 * g] = get_sub_group_id();
    ids[2 * g + 1] = get_sub_group_local_id();
}

// Stream compaction's bookkeeping: each kept value's slot among the sub-group's kept values, and
// how many there are.
kernel void compact(global const int *x, global int *out, global uint *ids, int t) {
    size_t g = get_global_id(0);
    record(ids);
    int v = x[g];
    int r = -1;
    if (v > t) {
        int slot = sub_group_non_uniform_scan_exclusive_add(1);
        int kept = sub_group_non_uniform_reduce_add(1);
        r = slot * 100 + kept;
    }
    out[g] = r;
}

// An if / else if / else chain on the lane and the value, the leader of the last branch elected.
kernel void branches(global const int *x, global int *out, global uint *ids, int t) {
    size_t g = get_global_id(0);
    record(ids);
    uint lane = get_sub_group_local_id();
    elem_t v = (elem_t)(x[g] - 50);
    int r = 0;
    if (lane % 4u == 1u) {
        r = sub_group_non_uniform_reduce_min(v);
    } else if (v < t) {
        r = sub_group_non_uniform_scan_exclusive_max(v) + 1000 * sub_group_non_uniform_all(v < 0);
    } else {
        if (sub_group_elect())
            r = -sub_group_non_uniform_scan_inclusive_add(v) - 7;
    }
    out[g] = r;
}

// Nested conditions, floats and a clustered reduction.
kernel void nested(global const int *x, global float *out, global uint *ids, int t) {
    size_t g = get_global_id(0);
    record(ids);
    uint lane = get_sub_group_local_id();
    int v = x[g];
    float a = (float)v * 0.125f;
    float r = 0.0f;
    if (v & 1) {
        if (lane > 2u) {
            r = sub_group_non_uniform_reduce_add(a) + sub_group_clustered_reduce_max(a, 4);
        }
        r += (float)sub_group_non_uniform_reduce_logical_or(v > t + 40);
    }
    out[g] = r;
}
