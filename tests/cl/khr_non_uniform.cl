/* The non-uniform vote and arithmetic, clustered reduce and rotate built-ins, written as ordinary OpenCL C
 * (no clgroups include). tests/khr_non_uniform.rs checks every result on the host against the sub-group
 * each work-item reports. g = global linear id. c = cluster size, d = rotation (uniform arguments).
 *
 *   nu_T(x, y, c, d, out[30G], info[5G])  0-11 reduce, inclusive, exclusive of add(x), mul(y), min(x), max(x);
 *              12-20 the same of and, or, xor (x; integer types); 21-24 clustered add(x), mul(y), min(x),
 *              max(x); 25-27 clustered and, or, xor (integer types); 28 rotate(x, d);
 *              29 clustered_rotate(x, d, c); info: id, local id, all_equal(x), all_equal(id),
 *              all_equal(local id == 3)
 *   nu_vote(p, c, out int[20G])  0 elect 1 non_uniform_all(p) 2 any(p) 3 all_equal(p) 4-12 reduce,
 *              inclusive, exclusive of logical_and, _or, _xor (p); 13-15 clustered logical_and, _or, _xor;
 *              16 id 17 local id
 *   nu_divergent(x, f, mode, out int[12G], outf float[4G], outl long[2G])  the same calls under a
 *              sub-group-divergent branch (mode 0: even lanes, 1: the first lane, 2: x & 8)
 *   nu_bounded(x, n, out)  sub_group_non_uniform_reduce_add under `if (get_global_id(0) < n)`
 */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if !defined(cl_khr_subgroup_non_uniform_vote) || !defined(cl_khr_subgroup_non_uniform_arithmetic) || \
    !defined(cl_khr_subgroup_clustered_reduce) || !defined(cl_khr_subgroup_rotate)
#error "a sub-group extension macro is missing"
#endif

static uint gid(void) {
    return (uint)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)));
}

#define ARITH(T)                                                                                         \
    uint g = gid();                                                                                      \
    T v = x[g], w = y[g];                                                                                \
    global T *o = out + 30 * g;                                                                          \
    global int *f = info + 5 * g;                                                                        \
    uint id = get_sub_group_id();                                                                        \
    f[0] = (int)id;                                                                                      \
    f[1] = (int)lane;                                                                                    \
    f[2] = sub_group_non_uniform_all_equal(v);                                                           \
    f[3] = sub_group_non_uniform_all_equal((T)id);                                                       \
    f[4] = sub_group_non_uniform_all_equal((T)(lane == 3u));                                             \
    o[0] = sub_group_non_uniform_reduce_add(v);                                                          \
    o[1] = sub_group_non_uniform_scan_inclusive_add(v);                                                  \
    o[2] = sub_group_non_uniform_scan_exclusive_add(v);                                                  \
    o[3] = sub_group_non_uniform_reduce_mul(w);                                                          \
    o[4] = sub_group_non_uniform_scan_inclusive_mul(w);                                                  \
    o[5] = sub_group_non_uniform_scan_exclusive_mul(w);                                                  \
    o[6] = sub_group_non_uniform_reduce_min(v);                                                          \
    o[7] = sub_group_non_uniform_scan_inclusive_min(v);                                                  \
    o[8] = sub_group_non_uniform_scan_exclusive_min(v);                                                  \
    o[9] = sub_group_non_uniform_reduce_max(v);                                                          \
    o[10] = sub_group_non_uniform_scan_inclusive_max(v);                                                 \
    o[11] = sub_group_non_uniform_scan_exclusive_max(v);                                                 \
    o[21] = sub_group_clustered_reduce_add(v, c);                                                        \
    o[22] = sub_group_clustered_reduce_mul(w, c);                                                        \
    o[23] = sub_group_clustered_reduce_min(v, c);                                                        \
    o[24] = sub_group_clustered_reduce_max(v, c);                                                        \
    o[28] = sub_group_rotate(v, d);                                                                      \
    o[29] = sub_group_clustered_rotate(v, d, c);

#define BITS(T)                                                                                          \
    o[12] = sub_group_non_uniform_reduce_and(v);                                                         \
    o[13] = sub_group_non_uniform_scan_inclusive_and(v);                                                 \
    o[14] = sub_group_non_uniform_scan_exclusive_and(v);                                                 \
    o[15] = sub_group_non_uniform_reduce_or(v);                                                          \
    o[16] = sub_group_non_uniform_scan_inclusive_or(v);                                                  \
    o[17] = sub_group_non_uniform_scan_exclusive_or(v);                                                  \
    o[18] = sub_group_non_uniform_reduce_xor(v);                                                         \
    o[19] = sub_group_non_uniform_scan_inclusive_xor(v);                                                 \
    o[20] = sub_group_non_uniform_scan_exclusive_xor(v);                                                 \
    o[25] = sub_group_clustered_reduce_and(v, c);                                                        \
    o[26] = sub_group_clustered_reduce_or(v, c);                                                         \
    o[27] = sub_group_clustered_reduce_xor(v, c);

/* Parameters written out and a built-in named in each body: the build scans kernels without expanding macros. */
kernel void nu_char(global const char *x, global const char *y, uint c, int d, global char *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(char) BITS(char)
}
kernel void nu_uchar(global const uchar *x, global const uchar *y, uint c, int d, global uchar *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(uchar) BITS(uchar)
}
kernel void nu_short(global const short *x, global const short *y, uint c, int d, global short *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(short) BITS(short)
}
kernel void nu_ushort(global const ushort *x, global const ushort *y, uint c, int d, global ushort *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(ushort) BITS(ushort)
}
kernel void nu_int(global const int *x, global const int *y, uint c, int d, global int *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(int) BITS(int)
}
kernel void nu_uint(global const uint *x, global const uint *y, uint c, int d, global uint *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(uint) BITS(uint)
}
kernel void nu_long(global const long *x, global const long *y, uint c, int d, global long *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(long) BITS(long)
}
kernel void nu_ulong(global const ulong *x, global const ulong *y, uint c, int d, global ulong *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(ulong) BITS(ulong)
}
kernel void nu_float(global const float *x, global const float *y, uint c, int d, global float *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(float)
}
#ifdef cl_khr_fp64
kernel void nu_double(global const double *x, global const double *y, uint c, int d, global double *out, global int *info) {
    uint lane = get_sub_group_local_id();
    ARITH(double)
}
#endif

kernel void nu_vote(global const int *p, uint c, global int *out) {
    uint g = gid();
    int v = p[g];
    global int *o = out + 20 * g;
    o[0] = sub_group_elect();
    o[1] = sub_group_non_uniform_all(v);
    o[2] = sub_group_non_uniform_any(v);
    o[3] = sub_group_non_uniform_all_equal(v);
    o[4] = sub_group_non_uniform_reduce_logical_and(v);
    o[5] = sub_group_non_uniform_scan_inclusive_logical_and(v);
    o[6] = sub_group_non_uniform_scan_exclusive_logical_and(v);
    o[7] = sub_group_non_uniform_reduce_logical_or(v);
    o[8] = sub_group_non_uniform_scan_inclusive_logical_or(v);
    o[9] = sub_group_non_uniform_scan_exclusive_logical_or(v);
    o[10] = sub_group_non_uniform_reduce_logical_xor(v);
    o[11] = sub_group_non_uniform_scan_inclusive_logical_xor(v);
    o[12] = sub_group_non_uniform_scan_exclusive_logical_xor(v);
    o[13] = sub_group_clustered_reduce_logical_and(v, c);
    o[14] = sub_group_clustered_reduce_logical_or(v, c);
    o[15] = sub_group_clustered_reduce_logical_xor(v, c);
    o[16] = (int)get_sub_group_id();
    o[17] = (int)get_sub_group_local_id();
}

kernel void nu_divergent(global const int *x, global const float *fx, uint mode, global int *out,
                         global float *outf, global long *outl) {
    uint g = gid();
    uint lane = get_sub_group_local_id();
    int v = x[g];
    float f = fx[g];
    if (mode == 0u ? lane % 2u == 0u : mode == 1u ? lane == 0u : (v & 8) != 0) {
        global int *o = out + 12 * g;
        o[0] = sub_group_elect();
        o[1] = sub_group_non_uniform_all(v > 0);
        o[2] = sub_group_non_uniform_any(v > 0);
        o[3] = sub_group_non_uniform_all_equal(v & 1);
        o[4] = sub_group_non_uniform_reduce_add(v);
        o[5] = sub_group_non_uniform_scan_inclusive_add(v);
        o[6] = sub_group_non_uniform_scan_exclusive_max(v);
        o[7] = sub_group_non_uniform_reduce_mul(v | 1);
        o[8] = sub_group_clustered_reduce_add(v, 4);
        o[9] = sub_group_non_uniform_reduce_xor(v);
        o[10] = sub_group_non_uniform_reduce_logical_or(v & 16);
        o[11] = sub_group_non_uniform_scan_inclusive_min(v);
        outf[4 * g] = sub_group_non_uniform_reduce_add(f);
        outf[4 * g + 1] = sub_group_non_uniform_scan_inclusive_add(f);
        outf[4 * g + 2] = sub_group_non_uniform_reduce_min(f);
        outf[4 * g + 3] = sub_group_clustered_reduce_max(f, 8);
        outl[2 * g] = sub_group_non_uniform_reduce_add((long)v);
        outl[2 * g + 1] = sub_group_non_uniform_scan_exclusive_min((long)v);
    }
}

kernel void nu_bounded(global const int *x, uint n, global int *out) {
    if (get_global_id(0) < n) out[get_global_id(0)] = sub_group_non_uniform_reduce_add(x[get_global_id(0)]);
}
