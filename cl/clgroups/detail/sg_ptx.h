/* clgroups internal: NVIDIA inline-PTX backend (warp = sub-group of 32 over the linear local id).
 * Requires work-group size % 32 == 0: every shuffle and vote uses the full-warp mask 0xffffffff. */
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

CLG_FN CLG_OVL uint clg_ptx_idx(uint v, uint i) {
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(i));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_bfly(uint v, uint m) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}
CLG_FN CLG_OVL uint clg_ptx_down(uint v, uint d) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}
/* up needs c = 0 (with 0x1f every lane would get its own value back). */
CLG_FN CLG_OVL uint clg_ptx_up(uint v, uint d) {
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
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

/* Full-warp xor butterfly: every lane combines the same pairs, so all lanes get bit-identical results. */
#define CLG_PTX_REDUCE(T, NAME, OP)                                                                      \
    CLG_FN CLG_OVL T clg_reduce_##NAME(T x) {                                                            \
        for (uint m = 16; m > 0; m >>= 1) x = OP(x, clg_unbits_##T(clg_ptx_bfly(clg_bits(x), m)));       \
        return x;                                                                                        \
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
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.any.pred q, p, 0xffffffff;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(pred));
    return r;
}
CLG_FN int clg_all(int pred) {
    int r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tvote.sync.all.pred q, p, 0xffffffff;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(pred));
    return r;
}

#endif
