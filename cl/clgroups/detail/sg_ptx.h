/* clgroups internal: NVIDIA inline-PTX backend: sub-groups of S = CLG_SUB_GROUP_SIZE (1, 2, 4, 8, 16
 * or 32) work-items over the linear local id, each a segment of S lanes of a warp (lane = %laneid % S;
 * sub-group id = linear local id / S). Any work-group size: the last sub-group of a work-group that is
 * not a multiple of S is a partial one (as OpenCL defines it), in the last, partial warp.
 * Shuffles are segmented (the `c` operand of shfl.sync: segment mask (32 - S) << 8, clamp 0x1f, 0 for
 * `up`), and shuffles, votes and reductions name the sub-group's own active lanes as members (the
 * warp's `activemask` under the layer's uniform control flow: the lanes that exist, within the
 * segment). Reductions over a partial sub-group fold only its lanes; full ones keep the xor butterfly. */
#ifndef CLGROUPS_DETAIL_SG_PTX_H
#define CLGROUPS_DETAIL_SG_PTX_H

#if CLG_SUB_GROUP_SIZE != 1 && CLG_SUB_GROUP_SIZE != 2 && CLG_SUB_GROUP_SIZE != 4 && CLG_SUB_GROUP_SIZE != 8 && \
    CLG_SUB_GROUP_SIZE != 16 && CLG_SUB_GROUP_SIZE != 32
#error "clgroups: the nvidia-ptx backend needs CLG_SUB_GROUP_SIZE 1, 2, 4, 8, 16 or 32"
#endif

/* shfl.sync's c operand: lanes are confined to their segment of S (idx, bfly, down clamp at its
 * last lane, up at its first). */
#define CLG_PTX_C (((32u - CLG_SUB_GROUP_SIZE) << 8) | 0x1fu)
#define CLG_PTX_C_UP ((32u - CLG_SUB_GROUP_SIZE) << 8)
/* Every lane of a sub-group, as bits of its lanes (bit i: lane i). */
#if CLG_SUB_GROUP_SIZE == 32
#define CLG_PTX_FULL 0xffffffffu
#else
#define CLG_PTX_FULL ((1u << CLG_SUB_GROUP_SIZE) - 1u)
#endif

CLG_FN uint clg_ptx_laneid(void) {
    uint r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}
CLG_FN uint clg_lane(void) { return clg_ptx_laneid() & (CLG_SUB_GROUP_SIZE - 1u); }
CLG_FN uint clg_sg_id(void) { return clg_wg_linear_id() / CLG_SUB_GROUP_SIZE; }
/* A work-group barrier: correct under the uniform control-flow rule, and needs no extra PTX. */
CLG_FN void clg_barrier(void) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }

#include <clgroups/detail/sg_fixed.h>

/* The warp lane of the sub-group's lane 0. */
CLG_FN uint clg_ptx_base(void) { return clg_ptx_laneid() & ~(CLG_SUB_GROUP_SIZE - 1u); }
/* The member mask (warp lanes) of the caller's sub-group: its active lanes. */
CLG_FN uint clg_ptx_mask(void) {
    uint m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
#if CLG_SUB_GROUP_SIZE == 32
    return m;
#else
    return m & (CLG_PTX_FULL << clg_ptx_base());
#endif
}

/* Shuffles on member mask `mw` (warp lanes); lane numbers are the sub-group's. */
CLG_FN CLG_OVL uint clg_ptx_idx_m(uint v, uint i, uint mw) {
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(i), "r"(CLG_PTX_C), "r"(mw));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_bfly_m(uint v, uint m, uint mw) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(m), "r"(CLG_PTX_C), "r"(mw));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_down_m(uint v, uint d, uint mw) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(d), "r"(CLG_PTX_C), "r"(mw));
    return r;
}
/* up clamps at the segment's first lane (with 0x1f every lane would get its own value back). */
CLG_FN CLG_OVL uint clg_ptx_up_m(uint v, uint d, uint mw) {
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(d), "r"(CLG_PTX_C_UP), "r"(mw));
    return r;
}

/* 64-bit values move as two 32-bit halves. */
#define CLG_PTX_WIDE(OPNAME)                                                                             \
    CLG_FN CLG_OVL ulong clg_ptx_##OPNAME##_m(ulong v, uint a, uint mw) {                                \
        uint2 p = as_uint2(v);                                                                           \
        p.x = clg_ptx_##OPNAME##_m(p.x, a, mw);                                                          \
        p.y = clg_ptx_##OPNAME##_m(p.y, a, mw);                                                          \
        return as_ulong(p);                                                                              \
    }
CLG_PTX_WIDE(idx)
CLG_PTX_WIDE(bfly)
CLG_PTX_WIDE(down)
CLG_PTX_WIDE(up)

/* The same on the caller's sub-group. */
#define clg_ptx_idx(v, i) clg_ptx_idx_m((v), (i), clg_ptx_mask())
#define clg_ptx_bfly(v, m) clg_ptx_bfly_m((v), (m), clg_ptx_mask())
#define clg_ptx_down(v, d) clg_ptx_down_m((v), (d), clg_ptx_mask())
#define clg_ptx_up(v, d) clg_ptx_up_m((v), (d), clg_ptx_mask())

/* vote.sync all (all != 0) or any over member mask `mw`. */
CLG_FN int clg_ptx_vote_m(int pred, uint mw, int all) {
    int r;
    if (all)
        asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.all.pred q, p, %2;\n\t"
                     "selp.s32 %0, 1, 0, q;\n\t}"
                     : "=r"(r)
                     : "r"(pred), "r"(mw));
    else
        asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.any.pred q, p, %2;\n\t"
                     "selp.s32 %0, 1, 0, q;\n\t}"
                     : "=r"(r)
                     : "r"(pred), "r"(mw));
    return r;
}

/* Full sub-group: xor butterfly, every lane combines the same pairs, so all lanes get bit-identical
 * results. Partial sub-group of n lanes: lane i folds lanes i + d (d = S/2, ..., 1) that exist,
 * so lane 0 ends with all n, which every lane then reads. */
#define CLG_PTX_REDUCE(T, NAME, OP)                                                                      \
    CLG_FN CLG_OVL T clg_reduce_##NAME(T x) {                                                            \
        uint n = clg_range(), mw = clg_ptx_mask();                                                       \
        if (n == CLG_SUB_GROUP_SIZE) {                                                                   \
            for (uint m = CLG_SUB_GROUP_SIZE / 2; m > 0; m >>= 1)                                        \
                x = OP(x, clg_unbits_##T(clg_ptx_bfly_m(clg_bits(x), m, mw)));                           \
            return x;                                                                                    \
        }                                                                                                \
        uint l = clg_lane();                                                                             \
        for (uint d = CLG_SUB_GROUP_SIZE / 2; d > 0; d >>= 1) {                                          \
            T o = clg_unbits_##T(clg_ptx_down_m(clg_bits(x), d, mw));                                    \
            if (l + d < n) x = OP(x, o);                                                                 \
        }                                                                                                \
        return clg_unbits_##T(clg_ptx_idx_m(clg_bits(x), 0u, mw));                                       \
    }

#define CLG_PTX_TYPE(T)                                                                                  \
    CLG_FN CLG_OVL T clg_shuffle(T x, uint id) { return clg_unbits_##T(clg_ptx_idx(clg_bits(x), id)); }  \
    CLG_FN CLG_OVL T clg_broadcast(T x, uint id) { return clg_unbits_##T(clg_ptx_idx(clg_bits(x), id)); } \
    CLG_FN CLG_OVL T clg_shuffle_xor(T x, uint m) { return clg_unbits_##T(clg_ptx_bfly(clg_bits(x), m)); } \
    CLG_FN CLG_OVL T clg_shuffle_up(T x, uint d) { return clg_unbits_##T(clg_ptx_up(clg_bits(x), d)); }  \
    CLG_FN CLG_OVL T clg_shuffle_down(T x, uint d) { return clg_unbits_##T(clg_ptx_down(clg_bits(x), d)); } \
    CLG_PTX_REDUCE(T, add, CLG_OP_ADD)                                                                   \
    CLG_PTX_REDUCE(T, min, CLG_OP_MIN)                                                                   \
    CLG_PTX_REDUCE(T, max, CLG_OP_MAX)                                                                   \
    CLG_FN CLG_OVL T clg_inclusive_scan_add(T x) {                                                       \
        uint l = clg_lane(), mw = clg_ptx_mask();                                                        \
        for (uint d = 1; d < CLG_SUB_GROUP_SIZE; d <<= 1) {                                              \
            T o = clg_unbits_##T(clg_ptx_up_m(clg_bits(x), d, mw));                                      \
            if (l >= d) x = o + x;                                                                       \
        }                                                                                                \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_exclusive_scan_add(T x) {                                                       \
        T o = clg_unbits_##T(clg_ptx_up(clg_bits(clg_inclusive_scan_add(x)), 1u));                       \
        return clg_lane() == 0 ? (T)0 : o;                                                               \
    }

CLG_FOREACH_TYPE(CLG_PTX_TYPE)

CLG_FN int clg_any(int pred) { return clg_ptx_vote_m(pred, clg_ptx_mask(), 0); }
CLG_FN int clg_all(int pred) { return clg_ptx_vote_m(pred, clg_ptx_mask(), 1); }

#endif
