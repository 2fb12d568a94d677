/* clgroups internal: typed shuffles and shuffle-based reductions/scans over a backend exchange primitive
 *   B clg_xchg(B v, uint src CLG_SP)   for B = uint and ulong: the v of lane src, src < clg_range()
 * plus clg_lane() and clg_range(). Out-of-range requests read the caller's own lane (never out of bounds). */
#ifndef CLGROUPS_DETAIL_SG_GENERIC_H
#define CLGROUPS_DETAIL_SG_GENERIC_H

/* Source lane for a requested lane `src`: src when it is in the sub-group, else the caller's lane. */
CLG_FN uint clg_src_or_self(uint src) { return src < clg_range() ? src : clg_lane(); }
CLG_FN uint clg_up_src(uint delta) { uint l = clg_lane(); return l >= delta ? l - delta : l; }
CLG_FN uint clg_down_src(uint delta) {
    uint l = clg_lane();
    return delta < clg_range() - l ? l + delta : l;
}

#define CLG_GEN_SHUFFLES(T)                                                                              \
    CLG_FN CLG_OVL T clg_shuffle(T x, uint id CLG_SP) {                                                  \
        return clg_unbits_##T(clg_xchg(clg_bits(x), clg_src_or_self(id) CLG_SA));                         \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_broadcast(T x, uint id CLG_SP) {                                                \
        return clg_unbits_##T(clg_xchg(clg_bits(x), clg_src_or_self(id) CLG_SA));                         \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_shuffle_xor(T x, uint mask CLG_SP) {                                            \
        return clg_unbits_##T(clg_xchg(clg_bits(x), clg_src_or_self(clg_lane() ^ mask) CLG_SA));          \
    }

/* shuffle_up / shuffle_down through the exchange. */
#define CLG_GEN_RELATIVE(T)                                                                              \
    CLG_FN CLG_OVL T clg_shuffle_up(T x, uint delta CLG_SP) {                                            \
        return clg_unbits_##T(clg_xchg(clg_bits(x), clg_up_src(delta) CLG_SA));                           \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_shuffle_down(T x, uint delta CLG_SP) {                                          \
        return clg_unbits_##T(clg_xchg(clg_bits(x), clg_down_src(delta) CLG_SA));                         \
    }

/* The width the reductions and scans below span: the fixed size, else (the khr backend's derived geometry) the
 * largest sub-group rounded up to a power of two. */
#if CLG_SUB_GROUP_SIZE > 0
#define CLG_GEN_WIDTH() ((uint)CLG_SUB_GROUP_SIZE)
#else
#define CLG_GEN_WIDTH() clg_gen_pow2_ceil(clg_max_range())
CLG_FN uint clg_gen_pow2_ceil(uint n) {
    uint p = 1u;
    while (p < n) p <<= 1;
    return p;
}
#endif

/* Reduction valid for partial sub-groups: a halving tree into lane 0 that skips absent lanes, then a
 * broadcast of lane 0 (so every lane gets bit-identical results). */
#define CLG_GEN_REDUCE(T, NAME, OP)                                                                      \
    CLG_FN CLG_OVL T clg_gen_reduce_##NAME(T x CLG_SP) {                                                 \
        uint l = clg_lane();                                                                             \
        uint n = clg_range();                                                                            \
        for (uint d = CLG_GEN_WIDTH() / 2; d > 0; d >>= 1) {                                            \
            T o = clg_shuffle_down(x, d CLG_SA);                                                         \
            if (d < n - l) x = OP(x, o);                                                                 \
        }                                                                                                \
        return clg_broadcast(x, 0 CLG_SA);                                                               \
    }

/* Hillis-Steele scans; lanes only read lower lanes, so partial sub-groups are fine. */
#define CLG_GEN_SCANS(T)                                                                                 \
    CLG_FN CLG_OVL T clg_gen_inclusive_scan_add(T x CLG_SP) {                                            \
        uint l = clg_lane();                                                                             \
        for (uint d = 1; d < CLG_GEN_WIDTH(); d <<= 1) {                                                \
            T o = clg_shuffle_up(x, d CLG_SA);                                                           \
            if (l >= d) x = o + x;                                                                       \
        }                                                                                                \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_gen_exclusive_scan_add(T x CLG_SP) {                                            \
        T o = clg_shuffle_up(clg_gen_inclusive_scan_add(x CLG_SA), 1u CLG_SA);                           \
        return clg_lane() == 0 ? (T)0 : o;                                                               \
    }

#define CLG_GEN_ALGORITHMS(T)                                                                            \
    CLG_GEN_REDUCE(T, add, CLG_OP_ADD)                                                                   \
    CLG_GEN_REDUCE(T, min, CLG_OP_MIN)                                                                   \
    CLG_GEN_REDUCE(T, max, CLG_OP_MAX)                                                                   \
    CLG_GEN_SCANS(T)

/* any/all as max/min reductions of 0/1 (after CLG_GEN_ALGORITHMS(int)). */
#define CLG_GEN_VOTES()                                                                                  \
    CLG_FN int clg_gen_any(int pred CLG_SP) { return clg_gen_reduce_max(pred != 0 ? 1 : 0 CLG_SA); }     \
    CLG_FN int clg_gen_all(int pred CLG_SP) { return clg_gen_reduce_min(pred != 0 ? 1 : 0 CLG_SA); }

#endif
