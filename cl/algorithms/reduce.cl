/* clgroups device-wide reduce and scan, built on the sub-group layer.
 *
 * Build defines (set by src/algorithms.rs):
 *   CLG_T   element type (int, uint, long, ulong, float, double)
 *   CLG_OP  0 = add, 1 = min, 2 = max
 *   CLG_ID  the operation's identity for CLG_T (0, INT_MAX, -INFINITY, ...)
 *   CLG_ITEM_CONTIGUOUS  1: each work-item of clg_reduce reads one contiguous run (CPUs);
 *                        0: the grid strides over the input (GPUs)
 *
 * Every kernel launches 1-D work-groups whose size is a multiple of the sub-group size, and
 * keeps the layer's uniform-control-flow rule: every work-item reaches every sg_* call and
 * barrier (loops around them have trip counts that depend only on the work-group).
 * Buffers start at an aligned address, so element offsets that are multiples of 4 may be read
 * as CLG_T4 vectors.
 */
#include <clgroups/subgroup.h>

#define CLG_CAT_(a, b) a##b
#define CLG_CAT(a, b) CLG_CAT_(a, b)
#define T CLG_T
#define T4 CLG_CAT(CLG_T, 4)

#if CLG_OP == 0
#define COMB(a, b) ((a) + (b))
#define SG_REDUCE(x) sg_reduce_add(x)
#elif CLG_OP == 1
#define COMB(a, b) min((a), (b))
#define SG_REDUCE(x) sg_reduce_min(x)
#else
#define COMB(a, b) max((a), (b))
#define SG_REDUCE(x) sg_reduce_max(x)
#endif

/* Combines the four lanes of a vector accumulator. */
static inline T horizontal(T4 a) { return COMB(COMB(a.x, a.y), COMB(a.z, a.w)); }

/* Reduces v over the work-group: sub-group reduce, then the sub-group results through local
 * memory (tmp: one slot per sub-group), again by sub-groups, until one sub-group holds them
 * all. Work-item 0 gets the result. Every work-item must call it. */
static T group_reduce(T v, local T *tmp CLG_SG_SCRATCH_PARAM) {
    uint lid = get_local_id(0);
    uint s = sg_get_max_local_range();
    uint count = get_local_size(0);
    v = SG_REDUCE(v);
    while (count > s) {
        uint groups = (count + s - 1) / s;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (sg_get_local_id() == 0 && lid < count)
            tmp[sg_get_group_linear_id()] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = lid < groups ? tmp[lid] : (T)(CLG_ID);
        v = SG_REDUCE(v);
        count = groups;
    }
    return v;
}

/* One partial per work-group, reading the input once in T4 vectors with four independent
 * accumulators, then the scalar tail (n % 4 elements). out[group] = partial.
 * GPUs (default): the grid strides over the input, so neighbouring work-items read
 * neighbouring vectors (coalesced). CPUs (CLG_ITEM_CONTIGUOUS=1): each work-item reads one
 * contiguous run, which suits caches and prefetchers when work-items run one after another. */
kernel void clg_reduce(global const T *in, global T *out, ulong n, local T *tmp) {
    size_t g = get_global_id(0);
    size_t items = get_global_size(0);
    size_t nv = n / 4;
    global const T4 *in4 = (global const T4 *)in;
    T4 a0 = (T4)(CLG_ID), a1 = a0, a2 = a0, a3 = a0;
#if CLG_ITEM_CONTIGUOUS
    size_t per = (nv + items - 1) / items;
    size_t i = min(nv, g * per);
    size_t end = min(nv, i + per);
    for (; i + 3 < end; i += 4) {
        a0 = COMB(a0, in4[i]);
        a1 = COMB(a1, in4[i + 1]);
        a2 = COMB(a2, in4[i + 2]);
        a3 = COMB(a3, in4[i + 3]);
    }
    for (; i < end; i++)
        a0 = COMB(a0, in4[i]);
#else
    size_t i = g;
    for (; i + 3 * items < nv; i += 4 * items) {
        a0 = COMB(a0, in4[i]);
        a1 = COMB(a1, in4[i + items]);
        a2 = COMB(a2, in4[i + 2 * items]);
        a3 = COMB(a3, in4[i + 3 * items]);
    }
    for (; i < nv; i += items)
        a0 = COMB(a0, in4[i]);
#endif
    T v = horizontal(COMB(COMB(a0, a1), COMB(a2, a3)));
    for (size_t t = nv * 4 + g; t < n; t += items)
        v = COMB(v, in[t]);
    v = group_reduce(v, tmp CLG_SG_SCRATCH);
    if (get_local_id(0) == 0)
        out[get_group_id(0)] = v;
}

/* Scan pass 1: out[g] = reduction of chunk g, elements [g*chunk, min(n, (g+1)*chunk));
 * chunk is a multiple of 4. */
kernel void clg_chunk_reduce(global const T *in, global T *out, ulong n, ulong chunk,
                             local T *tmp) {
    size_t start = get_group_id(0) * chunk;
    size_t end = min((size_t)n, start + (size_t)chunk);
    size_t lid = get_local_id(0);
    size_t stride = get_local_size(0);
    size_t nv = end / 4;
    global const T4 *in4 = (global const T4 *)in;
    T4 a0 = (T4)(CLG_ID), a1 = a0, a2 = a0, a3 = a0;
    size_t i = start / 4 + lid;
    for (; i + 3 * stride < nv; i += 4 * stride) {
        a0 = COMB(a0, in4[i]);
        a1 = COMB(a1, in4[i + stride]);
        a2 = COMB(a2, in4[i + 2 * stride]);
        a3 = COMB(a3, in4[i + 3 * stride]);
    }
    for (; i < nv; i += stride)
        a0 = COMB(a0, in4[i]);
    T v = horizontal(COMB(COMB(a0, a1), COMB(a2, a3)));
    for (size_t t = nv * 4 + lid; t < end; t += stride)
        v = COMB(v, in[t]);
    v = group_reduce(v, tmp CLG_SG_SCRATCH);
    if (lid == 0)
        out[get_group_id(0)] = v;
}

/* Scan pass 2 and 3: work-group g scans chunk g (as above) in tiles of 4 elements per
 * work-item, starting from offsets[g] when has_offsets (else 0); exclusive != 0 gives the
 * exclusive scan. Per tile: a sequential scan of each work-item's 4 elements, an exclusive
 * sub-group scan of the work-item totals, a scan of the sub-group totals in local memory
 * (tmp: one slot per sub-group), and a running carry between tiles. */
kernel void clg_chunk_scan(global const T *in, global T *out, ulong n, ulong chunk,
                           global const T *offsets, int has_offsets, int exclusive,
                           local T *tmp) {
    size_t start = get_group_id(0) * chunk;
    size_t end = min((size_t)n, start + (size_t)chunk);
    uint lid = get_local_id(0);
    uint size = get_local_size(0);
    uint s = sg_get_max_local_range();
    uint nsg = (size + s - 1) / s;
    uint sg = sg_get_group_linear_id();
    T carry = has_offsets ? offsets[get_group_id(0)] : (T)0;
    for (size_t base = start; base < end; base += 4 * (size_t)size) {
        size_t e = base + 4 * (size_t)lid;
        T4 x;
        if (e + 4 <= end) {
            x = *(global const T4 *)(in + e);
        } else {
            x.x = e < end ? in[e] : (T)0;
            x.y = e + 1 < end ? in[e + 1] : (T)0;
            x.z = e + 2 < end ? in[e + 2] : (T)0;
            x.w = 0;
        }
        T q1 = x.x, q2 = q1 + x.y, q3 = q2 + x.z, total = q3 + x.w;
        T before = sg_exclusive_scan_add(total);
        if (sg_get_local_id() == sg_get_local_range() - 1)
            tmp[sg] = before + total;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < nsg; off <<= 1) {
            T add = (lid < nsg && lid >= off) ? tmp[lid - off] : (T)0;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < nsg)
                tmp[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        T pre = carry + (sg > 0 ? tmp[sg - 1] : (T)0) + before;
        T4 y = exclusive ? (T4)(pre, pre + q1, pre + q2, pre + q3)
                         : (T4)(pre + q1, pre + q2, pre + q3, pre + total);
        if (e + 4 <= end) {
            *(global T4 *)(out + e) = y;
        } else {
            if (e < end)
                out[e] = y.x;
            if (e + 1 < end)
                out[e + 1] = y.y;
            if (e + 2 < end)
                out[e + 2] = y.z;
        }
        carry += tmp[nsg - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
