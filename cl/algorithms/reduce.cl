/* clgroups device-wide reduce and scan, built on the sub-group layer.
 *
 * Build defines (set by src/algorithms.rs):
 *   CLG_T   element type (int, uint, long, ulong, float, double)
 *   CLG_OP  0 = add, 1 = min, 2 = max
 *   CLG_ID  the operation's identity for CLG_T (0, INT_MAX, -INFINITY, ...)
 *
 * Kernels (src/algorithms/ picks them per device, see its module docs):
 *   clg_reduce      GPUs: work-groups stride over the input; one launch (the last work-group to
 *                   finish reduces the partials) or two (a second launch of one work-group)
 *   clg_reduce_seq  CPUs: one work-item per work-group, each reading one contiguous run with
 *                   8-wide vectors; the last work-group to finish reduces the partials
 *   clg_post        NVIDIA: writes a result into host memory for a blocking call
 *   scan kernels: scan.cl (appended to this file)
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
#define T2 CLG_CAT(CLG_T, 2)
#define T8 CLG_CAT(CLG_T, 8)

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

/* Combines the lanes of a vector accumulator. */
static inline T horizontal(T4 a) { return COMB(COMB(a.x, a.y), COMB(a.z, a.w)); }
static inline T horizontal8(T8 a) { return horizontal(COMB(a.lo, a.hi)); }

/* Device-scope fences around the counter of the last-work-group finalisation: a release before a
 * work-group announces its partial, an acquire after the last one sees every announcement. On
 * NVIDIA, PTX membar.gl orders the partial's store before the atomic for every SM (mem_fence
 * keeps the compiler from moving memory accesses across it); on CPUs (the only other devices
 * given the one-launch form) mem_fence suffices, their caches being coherent. Partials are then
 * read through volatile pointers (no stale L1 line). */
#ifdef CLG_BACKEND_NVIDIA_PTX
#define CLG_DEVICE_FENCE()                                                                        \
    do {                                                                                          \
        mem_fence(CLK_GLOBAL_MEM_FENCE);                                                          \
        asm volatile("membar.gl;");                                                               \
    } while (0)
#else
#define CLG_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

/* Called by one work-item after it stored its work-group's partial: returns whether this
 * work-group is the last of `groups` to finish; the last one resets the counter to 0 for the
 * next launch (every other work-group has incremented it already). */
static inline int clg_last_to_finish(global uint *counter, uint groups) {
    CLG_DEVICE_FENCE();
    uint done = atomic_inc(counter);
    int last = done == groups - 1;
    if (last) {
        atomic_xchg(counter, 0u);
        CLG_DEVICE_FENCE();
    }
    return last;
}

/* Posts v to the host for a blocking call (src/algorithms/post.rs) when `mailbox` is not 0:
 * `mailbox` is the host address of pinned memory the device reaches (checked before use). The
 * value goes first, then, after a system-scope fence, the sequence number the host polls for.
 * NVIDIA only (elsewhere mailbox is always 0). */
#ifdef CLG_BACKEND_NVIDIA_PTX
static inline void clg_post_value(ulong mailbox, uint seq, T v) {
    if (mailbox != 0) {
        *(volatile global T *)mailbox = v;
        asm volatile("membar.sys;");
        *(volatile global uint *)(mailbox + 8) = seq;
    }
}

/* A blocking call's post of src[0] after launches that do not post themselves. One work-item. */
kernel void clg_post(global const T *src, ulong mailbox, uint seq) {
    clg_post_value(mailbox, seq, src[0]);
}
#else
#define clg_post_value(mailbox, seq, v)
#endif

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
 * accumulators, then the scalar tail (n % 4 elements); the grid strides over the input, so
 * neighbouring work-items read neighbouring vectors (coalesced).
 * One work-group: out[0] = the result. Several: partials[group] = the group's partial; then,
 * with `finish` != 0, the last work-group to finish reduces the partials into out[0] (one
 * launch); with `finish` = 0 the caller launches again over the partials (two launches).
 * Whoever writes out[0] also posts it to `mailbox` (when not 0, NVIDIA: clg_post_value). */
kernel void clg_reduce(global const T *in, global T *out, ulong n, global T *partials,
                       global uint *counter, int finish, local T *tmp, ulong mailbox,
                       uint seq) {
    size_t g = get_global_id(0);
    size_t items = get_global_size(0);
    uint groups = get_num_groups(0);
    uint lid = get_local_id(0);
    size_t nv = n / 4;
    global const T4 *in4 = (global const T4 *)in;
    T4 a0 = (T4)(CLG_ID), a1 = a0, a2 = a0, a3 = a0;
    size_t i = g;
    for (; i + 3 * items < nv; i += 4 * items) {
        a0 = COMB(a0, in4[i]);
        a1 = COMB(a1, in4[i + items]);
        a2 = COMB(a2, in4[i + 2 * items]);
        a3 = COMB(a3, in4[i + 3 * items]);
    }
    for (; i < nv; i += items)
        a0 = COMB(a0, in4[i]);
    T v = horizontal(COMB(COMB(a0, a1), COMB(a2, a3)));
    for (size_t t = nv * 4 + g; t < n; t += items)
        v = COMB(v, in[t]);
    v = group_reduce(v, tmp CLG_SG_SCRATCH);
    local int last;
    if (lid == 0) {
        last = 0;
        if (groups == 1) {
            out[0] = v;
            clg_post_value(mailbox, seq, v);
        } else {
            partials[get_group_id(0)] = v;
            last = finish && clg_last_to_finish(counter, groups);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last) { /* uniform: the whole work-group */
        CLG_DEVICE_FENCE();
        volatile global const T *p = partials;
        v = (T)(CLG_ID);
        for (uint k = lid; k < groups; k += get_local_size(0))
            v = COMB(v, p[k]);
        v = group_reduce(v, tmp CLG_SG_SCRATCH);
        if (lid == 0) {
            out[0] = v;
            clg_post_value(mailbox, seq, v);
        }
    }
}


/* Reduces elements [start, end) of `in` with 8-wide vectors and four accumulators; `start` is a
 * multiple of 8 (so the vectors are aligned). A plain loop for one work-item: vectorised
 * because it is written with vectors, not by the compiler. */
static T clg_run_reduce(global const T *in, size_t start, size_t end) {
    T8 a0 = (T8)(CLG_ID), a1 = a0, a2 = a0, a3 = a0;
    size_t i = start;
    for (; i + 32 <= end; i += 32) {
        a0 = COMB(a0, vload8(0, in + i));
        a1 = COMB(a1, vload8(0, in + i + 8));
        a2 = COMB(a2, vload8(0, in + i + 16));
        a3 = COMB(a3, vload8(0, in + i + 24));
    }
    for (; i + 8 <= end; i += 8)
        a0 = COMB(a0, vload8(0, in + i));
    T v = horizontal8(COMB(COMB(a0, a1), COMB(a2, a3)));
    for (; i < end; i++)
        v = COMB(v, in[i]);
    return v;
}

/* CPUs: work-groups of one work-item; group g reduces its run of `chunk` elements (a multiple
 * of 8) into partials[g]; the last to finish reduces the partials into out[0]. */
kernel void clg_reduce_seq(global const T *in, global T *out, ulong n, ulong chunk,
                           global T *partials, global uint *counter) {
    uint g = get_group_id(0);
    uint groups = get_num_groups(0);
    size_t start = min((size_t)n, (size_t)g * (size_t)chunk);
    T v = clg_run_reduce(in, start, min((size_t)n, start + (size_t)chunk));
    if (groups == 1) {
        out[0] = v;
        return;
    }
    partials[g] = v;
    if (!clg_last_to_finish(counter, groups))
        return;
    volatile global const T *p = partials;
    v = p[0];
    for (uint k = 1; k < groups; k++)
        v = COMB(v, p[k]);
    out[0] = v;
}
