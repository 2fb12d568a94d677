/* clgroups internal: NVIDIA inline-PTX backend (warp = sub-group of 32 over the linear local id).
 * Any work-group size: the last warp of a work-group that is not a multiple of 32 is a partial
 * sub-group (as OpenCL defines it). Shuffles and votes name the warp's active lanes
 * (`activemask`: under the layer's uniform control flow, the lanes that exist), reductions over
 * a partial sub-group fold only its lanes, and full warps keep the xor butterfly. */
#ifndef CLGROUPS_DETAIL_SG_PTX_H
#define CLGROUPS_DETAIL_SG_PTX_H

#if CLG_SUB_GROUP_SIZE != 32
#error "clgroups: the nvidia-ptx backend needs CLG_SUB_GROUP_SIZE 32"
#endif

CLG_FN uint clg_lane(void) {
    uint r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}
CLG_FN uint clg_sg_id(void) { return clg_wg_linear_id() / 32u; }
/* A work-group barrier: correct under the uniform control-flow rule, and needs no extra PTX. */
CLG_FN void clg_barrier(void) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }

#include <clgroups/detail/sg_fixed.h>

/* The warp's active lanes: every lane of a full warp, the existing ones of a partial one. */
CLG_FN uint clg_ptx_mask(void) {
    uint m;
    asm volatile("activemask.b32 %0;" : "=r"(m));
    return m;
}

CLG_FN CLG_OVL uint clg_ptx_idx(uint v, uint i) {
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(i), "r"(clg_ptx_mask()));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_bfly(uint v, uint m) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(m), "r"(clg_ptx_mask()));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_down(uint v, uint d) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, %3;" : "=r"(r) : "r"(v), "r"(d), "r"(clg_ptx_mask()));
    return r;
}
/* up needs c = 0 (with 0x1f every lane would get its own value back). */
CLG_FN CLG_OVL uint clg_ptx_up(uint v, uint d) {
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, %3;" : "=r"(r) : "r"(v), "r"(d), "r"(clg_ptx_mask()));
    return r;
}

/* 64-bit values move as two 32-bit halves. */
#define CLG_PTX_WIDE(OPNAME)                                                                             \
    CLG_FN CLG_OVL ulong clg_ptx_##OPNAME(ulong v, uint a) {                                             \
        uint2 p = as_uint2(v);                                                                           \
        p.x = clg_ptx_##OPNAME(p.x, a);                                                                  \
        p.y = clg_ptx_##OPNAME(p.y, a);                                                                  \
        return as_ulong(p);                                                                              \
    }
CLG_PTX_WIDE(idx)
CLG_PTX_WIDE(bfly)
CLG_PTX_WIDE(down)
CLG_PTX_WIDE(up)

/* Full warp: xor butterfly, every lane combines the same pairs, so all lanes get bit-identical
 * results. Partial sub-group of n lanes: lane i folds lanes i + d (d = 16, 8, ..., 1) that exist,
 * so lane 0 ends with all n, which every lane then reads. */
#define CLG_PTX_REDUCE(T, NAME, OP)                                                                      \
    CLG_FN CLG_OVL T clg_reduce_##NAME(T x) {                                                            \
        uint n = clg_range();                                                                            \
        if (n == 32u) {                                                                                  \
            for (uint m = 16; m > 0; m >>= 1) x = OP(x, clg_unbits_##T(clg_ptx_bfly(clg_bits(x), m)));   \
            return x;                                                                                    \
        }                                                                                                \
        uint l = clg_lane();                                                                             \
        for (uint d = 16; d > 0; d >>= 1) {                                                              \
            T o = clg_unbits_##T(clg_ptx_down(clg_bits(x), d));                                          \
            if (l + d < n) x = OP(x, o);                                                                 \
        }                                                                                                \
        return clg_unbits_##T(clg_ptx_idx(clg_bits(x), 0u));                                             \
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
        uint l = clg_lane();                                                                             \
        for (uint d = 1; d < 32; d <<= 1) {                                                              \
            T o = clg_unbits_##T(clg_ptx_up(clg_bits(x), d));                                            \
            if (l >= d) x = o + x;                                                                       \
        }                                                                                                \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_exclusive_scan_add(T x) {                                                       \
        T o = clg_unbits_##T(clg_ptx_up(clg_bits(clg_inclusive_scan_add(x)), 1u));                       \
        return clg_lane() == 0 ? (T)0 : o;                                                               \
    }

CLG_FOREACH_TYPE(CLG_PTX_TYPE)

CLG_FN int clg_any(int pred) {
    int r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.any.pred q, p, %2;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(pred), "r"(clg_ptx_mask()));
    return r;
}
CLG_FN int clg_all(int pred) {
    int r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.all.pred q, p, %2;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(pred), "r"(clg_ptx_mask()));
    return r;
}

#endif
