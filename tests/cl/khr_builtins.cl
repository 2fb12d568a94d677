/* Standard sub-group built-ins, written as ordinary cl_khr_subgroups / cl_intel_subgroups code (no clgroups
 * include). tests/khr_polyfill.rs checks every result on the host against the sub-group each work-item
 * reports. g = global linear id, l = local linear id.
 *
 *   khr_ids(out uint[6G])      get_sub_group_size, get_max_sub_group_size, get_num_sub_groups,
 *                              get_enqueued_num_sub_groups, get_sub_group_id, get_sub_group_local_id
 *   khr_T(in, in2, r, out[20G], info[2G])   x = in[g], y = in2[g], a = r[g] (random, 0xffffffff or 0..2S-1),
 *                              b = (id*7+3) % size (uniform), d = a % (S+1):
 *                              0 broadcast(x,b) 1-3 reduce add/min/max 4-6 inclusive add/min/max
 *                              7-9 exclusive add/min/max 10 shuffle(x,a) 11 shuffle_xor(x,a) 12 shuffle_up(x,a)
 *                              13 shuffle_down(x,a) 14 non_uniform_broadcast(x,b) 15 broadcast_first(x)
 *                              16 intel_sub_group_shuffle(x,a) 17 intel xor(x,a) 18 intel_down(x,y,d)
 *                              19 intel_up(y,x,d) (16-19: 32/64-bit types only); info = id, local id
 *   khr_ballot(pred, r, out uint[33G])  0-3 ballot(p) 4 inverse_ballot 5 bit_extract(ballot, a%128)
 *                              6 bit_count 7 inclusive_scan 8 exclusive_scan 9 find_lsb 10 find_msb
 *                              11-30 eq, ge, gt, le, lt masks; 31 id 32 local id
 *   khr_votes(in, out int[6G], local int[W])  any, all, a neighbour's value across sub_group_barrier(flags)
 *                              and sub_group_barrier(flags, scope), id, local id
 *   khr_block(in uint*, out uint*)  each sub-group block-reads 1, 2, 4, 8 uints and writes them back
 */
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if !defined(cl_khr_subgroups) || !defined(cl_khr_subgroup_shuffle) || !defined(cl_khr_subgroup_shuffle_relative) || \
    !defined(cl_khr_subgroup_ballot) || !defined(cl_khr_subgroup_extended_types) || !defined(cl_intel_subgroups)
#error "a sub-group extension macro is missing"
#endif

static uint gid(void) {
    return (uint)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)));
}
static uint lid(void) {
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}

kernel void khr_ids(global uint *out) {
    global uint *o = out + 6 * gid();
    o[0] = get_sub_group_size();
    o[1] = get_max_sub_group_size();
    o[2] = get_num_sub_groups();
    o[3] = get_enqueued_num_sub_groups();
    o[4] = get_sub_group_id();
    o[5] = get_sub_group_local_id();
}

#define COMMON(T)                                                                                        \
    uint g = gid();                                                                                      \
    T x = in[g];                                                                                         \
    uint a = r[g];                                                                                       \
    uint b = (get_sub_group_id() * 7u + 3u) % get_sub_group_size();                                     \
    global T *o = out + 20 * g;                                                                          \
    info[2 * g] = get_sub_group_id();                                                                    \
    info[2 * g + 1] = lane;                                                                              \
    o[0] = sub_group_broadcast(x, b);                                                                    \
    o[1] = sub_group_reduce_add(x);                                                                      \
    o[2] = sub_group_reduce_min(x);                                                                      \
    o[3] = sub_group_reduce_max(x);                                                                      \
    o[4] = sub_group_scan_inclusive_add(x);                                                              \
    o[5] = sub_group_scan_inclusive_min(x);                                                              \
    o[6] = sub_group_scan_inclusive_max(x);                                                              \
    o[7] = sub_group_scan_exclusive_add(x);                                                              \
    o[8] = sub_group_scan_exclusive_min(x);                                                              \
    o[9] = sub_group_scan_exclusive_max(x);                                                              \
    o[10] = sub_group_shuffle(x, a);                                                                     \
    o[11] = sub_group_shuffle_xor(x, a);                                                                 \
    o[12] = sub_group_shuffle_up(x, a);                                                                  \
    o[13] = sub_group_shuffle_down(x, a);                                                                \
    o[14] = sub_group_non_uniform_broadcast(x, b);                                                       \
    o[15] = sub_group_broadcast_first(x);

#define INTEL(T)                                                                                         \
    T y = in2[g];                                                                                        \
    uint d = a % (get_max_sub_group_size() + 1u);                                                        \
    o[16] = intel_sub_group_shuffle(x, a);                                                               \
    o[17] = intel_sub_group_shuffle_xor(x, a);                                                           \
    o[18] = intel_sub_group_shuffle_down(x, y, d);                                                       \
    o[19] = intel_sub_group_shuffle_up(y, x, d);

/* Parameters written out and a built-in named in each body: the build scans kernels without expanding macros. */
kernel void khr_char(global const char *in, global const char *in2, global const uint *r, global char *out,
                     global uint *info) { uint lane = get_sub_group_local_id(); COMMON(char) }
kernel void khr_uchar(global const uchar *in, global const uchar *in2, global const uint *r, global uchar *out,
                      global uint *info) { uint lane = get_sub_group_local_id(); COMMON(uchar) }
kernel void khr_short(global const short *in, global const short *in2, global const uint *r, global short *out,
                      global uint *info) { uint lane = get_sub_group_local_id(); COMMON(short) }
kernel void khr_ushort(global const ushort *in, global const ushort *in2, global const uint *r, global ushort *out,
                       global uint *info) { uint lane = get_sub_group_local_id(); COMMON(ushort) }
kernel void khr_int(global const int *in, global const int *in2, global const uint *r, global int *out,
                    global uint *info) { uint lane = get_sub_group_local_id(); COMMON(int) INTEL(int) }
kernel void khr_uint(global const uint *in, global const uint *in2, global const uint *r, global uint *out,
                     global uint *info) { uint lane = get_sub_group_local_id(); COMMON(uint) INTEL(uint) }
kernel void khr_long(global const long *in, global const long *in2, global const uint *r, global long *out,
                     global uint *info) { uint lane = get_sub_group_local_id(); COMMON(long) INTEL(long) }
kernel void khr_ulong(global const ulong *in, global const ulong *in2, global const uint *r, global ulong *out,
                      global uint *info) { uint lane = get_sub_group_local_id(); COMMON(ulong) INTEL(ulong) }
kernel void khr_float(global const float *in, global const float *in2, global const uint *r, global float *out,
                      global uint *info) { uint lane = get_sub_group_local_id(); COMMON(float) INTEL(float) }
#ifdef cl_khr_fp64
kernel void khr_double(global const double *in, global const double *in2, global const uint *r, global double *out,
                       global uint *info) { uint lane = get_sub_group_local_id(); COMMON(double) INTEL(double) }
#endif

static void put4(global uint *o, uint4 v) { o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }

kernel void khr_ballot(global const int *pred, global const uint *r, global uint *out) {
    uint g = gid();
    global uint *o = out + 33 * g;
    uint4 v = sub_group_ballot(pred[g]);
    put4(o, v);
    o[4] = sub_group_inverse_ballot(v) ? 1u : 0u;
    o[5] = sub_group_ballot_bit_extract(v, r[g] % 128u) ? 1u : 0u;
    o[6] = sub_group_ballot_bit_count(v);
    o[7] = sub_group_ballot_inclusive_scan(v);
    o[8] = sub_group_ballot_exclusive_scan(v);
    o[9] = sub_group_ballot_find_lsb(v);
    o[10] = sub_group_ballot_find_msb(v);
    put4(o + 11, get_sub_group_eq_mask());
    put4(o + 15, get_sub_group_ge_mask());
    put4(o + 19, get_sub_group_gt_mask());
    put4(o + 23, get_sub_group_le_mask());
    put4(o + 27, get_sub_group_lt_mask());
    o[31] = get_sub_group_id();
    o[32] = get_sub_group_local_id();
}

kernel void khr_votes(global const int *in, global int *out, local int *tmp) {
    uint g = gid(), l = lid();
    int p = in[g];
    uint lane = get_sub_group_local_id();
    uint next = l - lane + (lane + 1u) % get_sub_group_size();
    global int *o = out + 6 * g;
    o[0] = sub_group_any(p) ? 1 : 0;
    o[1] = sub_group_all(p) ? 1 : 0;
    tmp[l] = 3 * p + 1;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    o[2] = tmp[next];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    tmp[l] = 5 * p - 2;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_sub_group);
    o[3] = tmp[next];
    o[4] = (int)get_sub_group_id();
    o[5] = (int)lane;
}

/* Sub-group j of work-group w owns 15 * S uints at in + 15 * S * (w * num_sub_groups + j). */
kernel void khr_block(global const uint *in, global uint *out) {
    uint s = get_max_sub_group_size();
    uint w = get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    uint base = 15u * s * (w * get_num_sub_groups() + get_sub_group_id());
    const global uint *p = in + base;
    global uint *q = out + base;
    intel_sub_group_block_write(q, intel_sub_group_block_read(p));
    intel_sub_group_block_write2(q + s, intel_sub_group_block_read2(p + s));
    intel_sub_group_block_write4(q + 3u * s, intel_sub_group_block_read4(p + 3u * s));
    intel_sub_group_block_write8(q + 7u * s, intel_sub_group_block_read8(p + 7u * s));
}
