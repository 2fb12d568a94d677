/* Test kernels for clgroups/subgroup.h. Every kernel writes per work-item results indexed by the GLOBAL
 * LINEAR id g = x + GX*(y + GY*z); the host reference (see the harness / tests/subgroup_layer.rs) maps g to
 * (work-group, linear local id l), lane i = l % S, sub-group j = l / S, range n = min(S, W - j*S).
 *
 *   clg_test_ids(out uint[10*G])           out[10g+k] = local_id, local_linear_id, local_range,
 *                                          max_local_range, group_id, group_linear_id, group_range,
 *                                          max_group_range, l, S-lane consistency (lane == l % max_range)
 *   clg_test_shuffles_T(in T[G], out T[6*nargs*G], nargs)   for k < nargs, a = k (k < nargs-1) or 0xffffffff:
 *                                          out[(g*nargs+k)*6 + op], op = shuffle(x,a), shuffle_xor(x,a),
 *                                          shuffle_up(x,a), shuffle_down(x,a), broadcast(x,a),
 *                                          shuffle(x, (i+a) % (2*max_range))  [x = in[g]]
 *   clg_test_algorithms_T(in T[G], out T[5*G])   out[5g+k] = reduce_add, reduce_min, reduce_max,
 *                                          inclusive_scan_add, exclusive_scan_add of in[g]
 *   clg_test_votes(in int[G], out int[10*G])  out[10g+2p], out[10g+2p+1] = any, all of predicate p:
 *                                          p0 in[g] != 0, p1 true, p2 lane == range-1, p3 false, p4 lane != 0
 *   clg_test_barrier(in int[G], out int[G])   out[g] = in of lane (i+1) % n of the same sub-group, passed
 *                                          through __local memory across sg_barrier() (W <= 256)
 *   clg_test_helpers(in int[G], out int[2*G]) helper functions taking the scratch:
 *                                          out[2g] = reduce_add(in) + i, out[2g+1] = n
 */
#include <clgroups/subgroup.h>

/* The emulated scratch the host will insert itself; define CLG_TEST_SCRATCH empty once it does. */
#ifndef CLG_TEST_SCRATCH
#ifdef CLG_BACKEND_EMULATED
#define CLG_TEST_SCRATCH __local ulong clg_sg_scratch[CLG_EMU_SCRATCH_ITEMS];
#else
#define CLG_TEST_SCRATCH
#endif
#endif

/* The kernel attribute the host will insert itself for pinned khr/intel sizes. */
#ifndef CLG_TEST_KERNEL_ATTR
#if (defined(CLG_BACKEND_KHR) || defined(CLG_BACKEND_INTEL)) && CLG_SUB_GROUP_SIZE > 0
#define CLG_TEST_KERNEL_ATTR __attribute__((intel_reqd_sub_group_size(CLG_SUB_GROUP_SIZE)))
#else
#define CLG_TEST_KERNEL_ATTR
#endif
#endif

static uint test_gid(void) {
    return (uint)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)));
}

__kernel CLG_TEST_KERNEL_ATTR void clg_test_ids(__global uint *out) {
    CLG_TEST_SCRATCH
    uint g = test_gid();
    uint l = (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
    __global uint *o = out + 10 * g;
    o[0] = sg_get_local_id();
    o[1] = sg_get_local_linear_id();
    o[2] = sg_get_local_range();
    o[3] = sg_get_max_local_range();
    o[4] = sg_get_group_id();
    o[5] = sg_get_group_linear_id();
    o[6] = sg_get_group_range();
    o[7] = sg_get_max_group_range();
    o[8] = l;
    o[9] = sg_get_local_id() == l % sg_get_max_local_range() ? 1u : 0u;
}

#define TEST_TYPE(T)                                                                                     \
    __kernel CLG_TEST_KERNEL_ATTR void clg_test_shuffles_##T(__global const T *in, __global T *out, uint nargs) { \
        CLG_TEST_SCRATCH                                                                                 \
        uint g = test_gid();                                                                             \
        T x = in[g];                                                                                     \
        uint lane = sg_get_local_id();                                                                   \
        uint wrap = 2 * sg_get_max_local_range();                                                        \
        for (uint k = 0; k < nargs; ++k) {                                                               \
            uint a = k + 1 < nargs ? k : 0xffffffffu;                                                    \
            __global T *o = out + 6 * ((size_t)g * nargs + k);                                           \
            o[0] = sg_shuffle(x, a);                                                                     \
            o[1] = sg_shuffle_xor(x, a);                                                                 \
            o[2] = sg_shuffle_up(x, a);                                                                  \
            o[3] = sg_shuffle_down(x, a);                                                                \
            o[4] = sg_broadcast(x, a);                                                                   \
            o[5] = sg_shuffle(x, (lane + a) % wrap);                                                     \
        }                                                                                                \
    }                                                                                                    \
    __kernel CLG_TEST_KERNEL_ATTR void clg_test_algorithms_##T(__global const T *in, __global T *out) {  \
        CLG_TEST_SCRATCH                                                                                 \
        uint g = test_gid();                                                                             \
        T x = in[g];                                                                                     \
        __global T *o = out + 5 * g;                                                                     \
        o[0] = sg_reduce_add(x);                                                                         \
        o[1] = sg_reduce_min(x);                                                                         \
        o[2] = sg_reduce_max(x);                                                                         \
        o[3] = sg_inclusive_scan_add(x);                                                                 \
        o[4] = sg_exclusive_scan_add(x);                                                                 \
    }

TEST_TYPE(int)
TEST_TYPE(uint)
TEST_TYPE(long)
TEST_TYPE(ulong)
TEST_TYPE(float)
#if CLG_HAS_FP64
TEST_TYPE(double)
#endif

__kernel CLG_TEST_KERNEL_ATTR void clg_test_votes(__global const int *in, __global int *out) {
    CLG_TEST_SCRATCH
    uint g = test_gid();
    uint lane = sg_get_local_id();
    uint last = sg_get_local_range() - 1;
    __global int *o = out + 10 * g;
    o[0] = sg_any(in[g]);
    o[1] = sg_all(in[g]);
    o[2] = sg_any(1);
    o[3] = sg_all(1);
    o[4] = sg_any(lane == last);
    o[5] = sg_all(lane == last);
    o[6] = sg_any(0);
    o[7] = sg_all(0);
    o[8] = sg_any(lane != 0);
    o[9] = sg_all(lane != 0);
}

__kernel CLG_TEST_KERNEL_ATTR void clg_test_barrier(__global const int *in, __global int *out) {
    CLG_TEST_SCRATCH
    __local int buf[256];
    uint g = test_gid();
    uint l = (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
    uint lane = sg_get_local_id();
    buf[l] = in[g];
    sg_barrier();
    out[g] = buf[l - lane + (lane + 1) % sg_get_local_range()];
}

static int helper_sum_plus_lane(int v CLG_SG_SCRATCH_PARAM) { return sg_reduce_add(v) + (int)sg_get_local_id(); }
static int helper_range(CLG_SG_SCRATCH_PARAM_ONLY) { return (int)sg_get_local_range(); }

__kernel CLG_TEST_KERNEL_ATTR void clg_test_helpers(__global const int *in, __global int *out) {
    CLG_TEST_SCRATCH
    uint g = test_gid();
    out[2 * g] = helper_sum_plus_lane(in[g] CLG_SG_SCRATCH);
    out[2 * g + 1] = helper_range(CLG_SG_SCRATCH_ONLY);
}
