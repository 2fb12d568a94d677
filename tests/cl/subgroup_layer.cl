/* Test kernels for clgroups/subgroup.h. Every kernel writes per work-item results indexed by the GLOBAL
 * LINEAR id g = x + GX*(y + GY*z); the host reference (tests/subgroup_layer.rs) maps g to
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
 *
 * The host finds kernels by scanning this text (macros are not expanded), inserts the sub-group size
 * attribute and the emulated scratch itself, and spots sub-group use by `sg_` in a kernel's own body:
 * so every kernel is written out and names an sg_ function in its body.
 */
#include <clgroups/subgroup.h>

static uint test_gid(void) {
    return (uint)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)));
}

static uint test_lid(void) {
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}

__kernel void clg_test_ids(__global uint *out) {
    uint g = test_gid();
    uint l = test_lid();
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

/* Statements of clg_test_shuffles_T after `uint lane = sg_get_local_id();`. */
#define SHUFFLES(T)                                                                                      \
    uint g = test_gid();                                                                                 \
    T x = in[g];                                                                                         \
    uint wrap = 2 * sg_get_max_local_range();                                                            \
    for (uint k = 0; k < nargs; ++k) {                                                                   \
        uint a = k + 1 < nargs ? k : 0xffffffffu;                                                        \
        __global T *o = out + 6 * ((size_t)g * nargs + k);                                               \
        o[0] = sg_shuffle(x, a);                                                                         \
        o[1] = sg_shuffle_xor(x, a);                                                                     \
        o[2] = sg_shuffle_up(x, a);                                                                      \
        o[3] = sg_shuffle_down(x, a);                                                                    \
        o[4] = sg_broadcast(x, a);                                                                       \
        o[5] = sg_shuffle(x, (lane + a) % wrap);                                                         \
    }

/* Statements of clg_test_algorithms_T after `T x = in[test_gid()]; T sum = sg_reduce_add(x);`. */
#define ALGORITHMS(T)                                                                                    \
    __global T *o = out + 5 * test_gid();                                                                \
    o[0] = sum;                                                                                          \
    o[1] = sg_reduce_min(x);                                                                             \
    o[2] = sg_reduce_max(x);                                                                             \
    o[3] = sg_inclusive_scan_add(x);                                                                     \
    o[4] = sg_exclusive_scan_add(x);

__kernel void clg_test_shuffles_int(__global const int *in, __global int *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(int)
}
__kernel void clg_test_algorithms_int(__global const int *in, __global int *out) {
    int x = in[test_gid()];
    int sum = sg_reduce_add(x);
    ALGORITHMS(int)
}
__kernel void clg_test_shuffles_uint(__global const uint *in, __global uint *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(uint)
}
__kernel void clg_test_algorithms_uint(__global const uint *in, __global uint *out) {
    uint x = in[test_gid()];
    uint sum = sg_reduce_add(x);
    ALGORITHMS(uint)
}
__kernel void clg_test_shuffles_long(__global const long *in, __global long *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(long)
}
__kernel void clg_test_algorithms_long(__global const long *in, __global long *out) {
    long x = in[test_gid()];
    long sum = sg_reduce_add(x);
    ALGORITHMS(long)
}
__kernel void clg_test_shuffles_ulong(__global const ulong *in, __global ulong *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(ulong)
}
__kernel void clg_test_algorithms_ulong(__global const ulong *in, __global ulong *out) {
    ulong x = in[test_gid()];
    ulong sum = sg_reduce_add(x);
    ALGORITHMS(ulong)
}
__kernel void clg_test_shuffles_float(__global const float *in, __global float *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(float)
}
__kernel void clg_test_algorithms_float(__global const float *in, __global float *out) {
    float x = in[test_gid()];
    float sum = sg_reduce_add(x);
    ALGORITHMS(float)
}
#if CLG_HAS_FP64
__kernel void clg_test_shuffles_double(__global const double *in, __global double *out, uint nargs) {
    uint lane = sg_get_local_id();
    SHUFFLES(double)
}
__kernel void clg_test_algorithms_double(__global const double *in, __global double *out) {
    double x = in[test_gid()];
    double sum = sg_reduce_add(x);
    ALGORITHMS(double)
}
#endif

__kernel void clg_test_votes(__global const int *in, __global int *out) {
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

__kernel void clg_test_barrier(__global const int *in, __global int *out) {
    __local int buf[256];
    uint g = test_gid();
    uint l = test_lid();
    uint lane = sg_get_local_id();
    buf[l] = in[g];
    sg_barrier();
    out[g] = buf[l - lane + (lane + 1) % sg_get_local_range()];
}

static int helper_sum_plus_lane(int v CLG_SG_SCRATCH_PARAM) { return sg_reduce_add(v) + (int)sg_get_local_id(); }
static int helper_range(CLG_SG_SCRATCH_PARAM_ONLY) { return (int)sg_get_local_range(); }

__kernel void clg_test_helpers(__global const int *in, __global int *out) {
    uint g = test_gid();
    out[2 * g] = helper_sum_plus_lane(in[g] CLG_SG_SCRATCH);
    out[2 * g + 1] = helper_range(CLG_SG_SCRATCH_ONLY);
}
