/* Sub-group collectives in work-groups of one and two work-items (tests/tiny_groups.rs), with the
 * standard built-ins and with the layer. Per work-item (g = global linear id, v = g + 1), FIELDS
 * uints at FIELDS * g: 0 sub-group size, 1 its local id, 2 reduce_add(v), 3 inclusive scan add(v),
 * 4 exclusive scan add(v), 5 broadcast(v, 0), 6 reduce_max(v), 7 shuffle(v, size - 1 - lid),
 * 8 any(lid == 1), 9 all(lid < 2), 10 sub-group id, 11 linear work-group id. */
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#include <clgroups/subgroup.h>

#define FIELDS 12

/* The kernels ask for the global linear id g and the linear work-group id wg themselves and pass
 * them to the helpers, so that a root device splits their launches (a called function asking for
 * the global size or group ids would see one device's part there). */
void builtins_body(global uint *o, size_t g, uint wg) {
    uint v = (uint)g + 1, n = get_sub_group_size(), l = get_sub_group_local_id();
    global uint *p = o + FIELDS * g;
    p[0] = n;
    p[1] = l;
    p[2] = sub_group_reduce_add(v);
    p[3] = sub_group_scan_inclusive_add(v);
    p[4] = sub_group_scan_exclusive_add(v);
    p[5] = sub_group_broadcast(v, 0);
    p[6] = sub_group_reduce_max(v);
    p[7] = sub_group_shuffle(v, n - 1 - l);
    p[8] = sub_group_any(l == 1);
    p[9] = sub_group_all(l < 2);
    p[10] = get_sub_group_id();
    p[11] = wg;
}

void layer_body(global uint *o, size_t g, uint wg) {
    uint v = (uint)g + 1, n = sg_get_local_range(), l = sg_get_local_id();
    global uint *p = o + FIELDS * g;
    p[0] = n;
    p[1] = l;
    p[2] = sg_reduce_add(v);
    p[3] = sg_inclusive_scan_add(v);
    p[4] = sg_exclusive_scan_add(v);
    p[5] = sg_broadcast(v, 0);
    p[6] = sg_reduce_max(v);
    p[7] = sg_shuffle(v, n - 1 - l);
    p[8] = sg_any(l == 1);
    p[9] = sg_all(l < 2);
    p[10] = sg_get_group_id();
    p[11] = wg;
}

kernel void builtins(global uint *o) {
    builtins_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}

kernel void layer(global uint *o) {
    layer_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}

kernel __attribute__((reqd_work_group_size(1, 1, 1))) void builtins_r1(global uint *o) {
    builtins_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}

kernel __attribute__((reqd_work_group_size(2, 1, 1))) void builtins_r2(global uint *o) {
    builtins_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}

kernel __attribute__((reqd_work_group_size(1, 1, 1))) void layer_r1(global uint *o) {
    layer_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}

kernel __attribute__((reqd_work_group_size(2, 1, 1))) void layer_r2(global uint *o) {
    layer_body(o,
        get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)),
        (uint)(get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2))));
}
