/* clgroups internal: emulated backend. Sub-groups of width CLG_SUB_GROUP_SIZE live in the __local scratch
 * `clg_sg_scratch` (a hidden __local kernel argument the host sizes to one ulong per work-item). Every operation
 * starts with a work-group barrier (no write-after-read hazard with the previous call) and therefore must be
 * reached by the whole work-group. */
#ifndef CLGROUPS_DETAIL_SG_EMULATED_H
#define CLGROUPS_DETAIL_SG_EMULATED_H

CLG_FN uint clg_lane(void) { return clg_wg_linear_id() % CLG_SUB_GROUP_SIZE; }
CLG_FN uint clg_sg_id(void) { return clg_wg_linear_id() / CLG_SUB_GROUP_SIZE; }
CLG_FN void clg_barrier(void) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }

#include <clgroups/detail/sg_fixed.h>

/* Publishes v in the caller's scratch slot; returns the index of the caller's sub-group's lane 0. */
CLG_FN uint clg_emu_publish(ulong v CLG_SP) {
    uint lid = clg_wg_linear_id();
    barrier(CLK_LOCAL_MEM_FENCE);
    clg_s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return lid - clg_lane();
}

CLG_FN CLG_OVL uint clg_xchg(uint v, uint src CLG_SP) { return (uint)clg_s[clg_emu_publish(v CLG_SA) + src]; }
CLG_FN CLG_OVL ulong clg_xchg(ulong v, uint src CLG_SP) { return clg_s[clg_emu_publish(v CLG_SA) + src]; }

#include <clgroups/detail/sg_generic.h>

CLG_FOREACH_TYPE(CLG_GEN_SHUFFLES)
CLG_FOREACH_TYPE(CLG_GEN_RELATIVE)

/* Reductions and scans read the sub-group's slots directly (2 barriers each), in lane order. Every loop
 * after a barrier runs the same trips in every work-item (clg_max_range(), skipping the lanes it does not
 * need): PoCL (3.1, 6.0) miscompiles a loop whose trip count differs between work-items after a barrier
 * under a condition, as in `if (n == 3) r = sub_group_scan_exclusive_add(1);` (it ran the first
 * work-item's count in every work-item). */
#define CLG_EMU_REDUCE(T, NAME, OP)                                                                      \
    CLG_FN CLG_OVL T clg_reduce_##NAME(T x CLG_SP) {                                                     \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        uint n = clg_range();                                                                            \
        T acc = clg_unbits_##T(clg_s[base]);                                                             \
        for (uint i = 1; i < clg_max_range(); ++i)                                                       \
            if (i < n) acc = OP(acc, clg_unbits_##T(clg_s[base + i]));                                   \
        return acc;                                                                                      \
    }

#define CLG_EMU_ALGORITHMS(T)                                                                            \
    CLG_EMU_REDUCE(T, add, CLG_OP_ADD)                                                                   \
    CLG_EMU_REDUCE(T, min, CLG_OP_MIN)                                                                   \
    CLG_EMU_REDUCE(T, max, CLG_OP_MAX)                                                                   \
    CLG_FN CLG_OVL T clg_inclusive_scan_add(T x CLG_SP) {                                                \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        uint l = clg_lane();                                                                             \
        T acc = clg_unbits_##T(clg_s[base]);                                                             \
        for (uint i = 1; i < clg_max_range(); ++i)                                                       \
            if (i <= l) acc += clg_unbits_##T(clg_s[base + i]);                                          \
        return acc;                                                                                      \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_exclusive_scan_add(T x CLG_SP) {                                                \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        uint l = clg_lane();                                                                             \
        T acc = (T)0;                                                                                    \
        for (uint i = 0; i < clg_max_range(); ++i)                                                       \
            if (i < l) acc += clg_unbits_##T(clg_s[base + i]);                                           \
        return acc;                                                                                      \
    }

CLG_FOREACH_TYPE(CLG_EMU_ALGORITHMS)

CLG_FN int clg_any(int pred CLG_SP) { return clg_reduce_max(pred != 0 ? 1 : 0 CLG_SA); }
CLG_FN int clg_all(int pred CLG_SP) { return clg_reduce_min(pred != 0 ? 1 : 0 CLG_SA); }

#endif
