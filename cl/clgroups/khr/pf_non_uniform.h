/* clgroups internal (khr/polyfill.h): cl_khr_subgroup_non_uniform_vote, _non_uniform_arithmetic,
 * _clustered_reduce and _rotate on the layer, as typed overloads clg_pf_nu_* (pf_names.h gives them the
 * standard names). Per backend:
 *   emulated:   every lane folds the published scratch slots of the lanes it needs, in lane order
 *               (uniform control flow: every call is a work-group barrier pair);
 *   khr/intel:  shuffle trees (reduce, clustered) and Hillis-Steele scans over the layer's shuffles,
 *               partial last sub-groups included (uniform control flow);
 *   nvidia-ptx: the sub-group's active lanes (`activemask` within its segment of the warp): with every
 *               lane active, xor butterflies and shuffle-up scans (redux.sync for 32-bit integer
 *               add/min/max/and/or/xor on sm_80+, any mask); with some lanes inactive (divergent control
 *               flow, or a partial sub-group), each active lane folds the active lanes it needs through
 *               shfl.sync on that mask, in lane order.
 * Float results: every lane of a sub-group (cluster) gets the same bits; the order of operations differs
 * between backends. Narrow types (char, uchar, short, ushort, half) are computed in their 32-bit carrier. */
#ifndef CLGROUPS_KHR_PF_NON_UNIFORM_H
#define CLGROUPS_KHR_PF_NON_UNIFORM_H

#if CLG_PF_VOTE || CLG_PF_ARITHMETIC || CLG_PF_CLUSTERED || CLG_PF_ROTATE

#define CLG_NU_MUL(a, b) ((a) * (b))
#define CLG_NU_AND(a, b) ((a) & (b))
#define CLG_NU_OR(a, b) ((a) | (b))
#define CLG_NU_XOR(a, b) ((a) ^ (b))

#define CLG_NU_WIDE_INTS(M) M(int) M(uint) M(long) M(ulong)
#define CLG_NU_NARROW_INTS(M) M(char, int) M(uchar, uint) M(short, int) M(ushort, uint)

#ifdef CLG_BACKEND_NVIDIA_PTX
/* The caller's sub-group's active lanes, as bits of its lanes (bit i: lane i); clg_ptx_mask() is the
 * same as warp lanes (the member mask). */
CLG_FN uint clg_ptx_active(void) { return clg_ptx_mask() >> clg_ptx_base(); }
/* The lowest lane of a non-zero mask. */
CLG_FN uint clg_ptx_first(uint m) { return popcount((m & (0u - m)) - 1u); }
#endif

/* ---- Votes ---------------------------------------------------------------------------------------- */
#if CLG_PF_VOTE
#ifdef CLG_BACKEND_NVIDIA_PTX
CLG_FN int clg_pf_elect(void) { return (clg_ptx_active() & ((1u << clg_lane()) - 1u)) == 0u; }
CLG_FN int clg_pf_nu_all(int p) { return clg_ptx_vote_m(p, clg_ptx_mask(), 1); }
CLG_FN int clg_pf_nu_any(int p) { return clg_ptx_vote_m(p, clg_ptx_mask(), 0); }
#define CLG_NU_EQUAL_WIDE(T)                                                                             \
    CLG_FN CLG_OVL int clg_pf_all_equal(T x) {                                                           \
        uint mw = clg_ptx_mask();                                                                        \
        T f = clg_unbits_##T(clg_ptx_idx_m(clg_bits(x), clg_ptx_first(mw >> clg_ptx_base()), mw));       \
        return clg_ptx_vote_m(x == f, mw, 1);                                                            \
    }
#define CLG_NU_EQUAL_NARROW(T, C) CLG_FN CLG_OVL int clg_pf_all_equal(T x) { return clg_pf_all_equal((C)x); }
#else
CLG_FN int clg_pf_elect(void) { return clg_lane() == 0u; }
CLG_FN int clg_pf_nu_all(int p CLG_SP) { return clg_all(p CLG_SA); }
CLG_FN int clg_pf_nu_any(int p CLG_SP) { return clg_any(p CLG_SA); }
#define CLG_NU_EQUAL_WIDE(T)                                                                             \
    CLG_FN CLG_OVL int clg_pf_all_equal(T x CLG_SP) { return clg_all(clg_pf_broadcast(x, 0u CLG_SA) == x CLG_SA); }
#define CLG_NU_EQUAL_NARROW(T, C) CLG_NU_EQUAL_WIDE(T)
#endif
CLG_FOREACH_TYPE(CLG_NU_EQUAL_WIDE)
CLG_NU_NARROW_INTS(CLG_NU_EQUAL_NARROW)
#ifdef cl_khr_fp16
CLG_NU_EQUAL_NARROW(half, float)
#endif
#endif /* CLG_PF_VOTE */

/* ---- Reductions, scans, clustered reductions ----------------------------------------------------- */
#if CLG_PF_ARITHMETIC || CLG_PF_CLUSTERED

#if defined(CLG_BACKEND_EMULATED)
/* OP over the published values of lanes [lo, hi), from IDENT (a loop of the same trips in every
 * work-item, as in sg_emulated.h). */
#define CLG_NU_CORE(T, NAME, OP, IDENT)                                                                  \
    CLG_FN CLG_OVL T clg_nu_fold_##NAME(T x, uint lo, uint hi CLG_SP) {                                  \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        T acc = (T)(IDENT);                                                                              \
        for (uint i = 0; i < clg_max_range(); ++i)                                                       \
            if (i >= lo && i < hi) acc = OP(acc, clg_unbits_##T(clg_s[base + i]));                       \
        return acc;                                                                                      \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_reduce_##NAME(T x CLG_SP) { return clg_nu_fold_##NAME(x, 0u, clg_range() CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_nu_inclusive_##NAME(T x CLG_SP) {                                            \
        return clg_nu_fold_##NAME(x, 0u, clg_lane() + 1u CLG_SA);                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_##NAME(T x CLG_SP) { return clg_nu_fold_##NAME(x, 0u, clg_lane() CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_nu_clustered_##NAME(T x, uint c CLG_SP) {                                    \
        uint lo = clg_lane() & ~(c - 1u);                                                                \
        return clg_nu_fold_##NAME(x, lo, min(lo + c, clg_range()) CLG_SA);                               \
    }
#define CLG_NU_REDUX(T, NAME, OP, IDENT, PTXOP) CLG_NU_CORE(T, NAME, OP, IDENT)

#elif defined(CLG_BACKEND_NVIDIA_PTX)
/* Scans and clustered reductions; the reduction comes from CLG_NU_CORE or CLG_NU_REDUX. `m`: the
 * sub-group's active lanes (its lane numbers), `mw`: the same as warp lanes (the member mask). */
#define CLG_NU_SCANS(T, NAME, OP, IDENT)                                                                 \
    CLG_FN CLG_OVL T clg_nu_mfold_##NAME(T x, uint m, uint mw, uint lo, uint hi) {                       \
        T acc = (T)(IDENT);                                                                              \
        for (uint r = m; r != 0u; r &= r - 1u) {                                                         \
            uint src = clg_ptx_first(r);                                                                 \
            T v = clg_unbits_##T(clg_ptx_idx_m(clg_bits(x), src, mw));                                   \
            if (src >= lo && src < hi) acc = OP(acc, v);                                                 \
        }                                                                                                \
        return acc;                                                                                      \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_inclusive_##NAME(T x) {                                                   \
        uint mw = clg_ptx_mask(), m = mw >> clg_ptx_base(), l = clg_lane();                              \
        if (m != CLG_PTX_FULL) return clg_nu_mfold_##NAME(x, m, mw, 0u, l + 1u);                         \
        for (uint d = 1u; d < CLG_SUB_GROUP_SIZE; d <<= 1) {                                             \
            T o = clg_unbits_##T(clg_ptx_up_m(clg_bits(x), d, mw));                                      \
            if (l >= d) x = OP(o, x);                                                                    \
        }                                                                                                \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_##NAME(T x) {                                                   \
        uint mw = clg_ptx_mask(), m = mw >> clg_ptx_base(), l = clg_lane();                              \
        if (m != CLG_PTX_FULL) return clg_nu_mfold_##NAME(x, m, mw, 0u, l);                             \
        T o = clg_unbits_##T(clg_ptx_up_m(clg_bits(clg_pf_nu_inclusive_##NAME(x)), 1u, mw));             \
        return l == 0u ? (T)(IDENT) : o;                                                                 \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_clustered_##NAME(T x, uint c) {                                           \
        uint mw = clg_ptx_mask(), m = mw >> clg_ptx_base();                                              \
        c = min(c, (uint)CLG_SUB_GROUP_SIZE); /* a cluster past the sub-group is the sub-group */        \
        if (m != CLG_PTX_FULL) {                                                                         \
            uint lo = clg_lane() & ~(c - 1u);                                                            \
            return clg_nu_mfold_##NAME(x, m, mw, lo, lo + c);                                            \
        }                                                                                                \
        for (uint s = c >> 1; s > 0u; s >>= 1) x = OP(x, clg_unbits_##T(clg_ptx_bfly_m(clg_bits(x), s, mw))); \
        return x;                                                                                        \
    }
#define CLG_NU_CORE(T, NAME, OP, IDENT)                                                                  \
    CLG_NU_SCANS(T, NAME, OP, IDENT)                                                                     \
    CLG_FN CLG_OVL T clg_pf_nu_reduce_##NAME(T x) {                                                      \
        uint mw = clg_ptx_mask(), m = mw >> clg_ptx_base();                                              \
        if (m != CLG_PTX_FULL) return clg_nu_mfold_##NAME(x, m, mw, 0u, CLG_SUB_GROUP_SIZE);             \
        for (uint s = CLG_SUB_GROUP_SIZE / 2; s > 0u; s >>= 1)                                           \
            x = OP(x, clg_unbits_##T(clg_ptx_bfly_m(clg_bits(x), s, mw)));                               \
        return x;                                                                                        \
    }
#if defined(CLG_PTX_SM) && CLG_PTX_SM >= 80
/* redux.sync on the sub-group's member mask (sm_80+): 32-bit integer add/min/max/and/or/xor, any mask. */
#define CLG_NU_REDUX(T, NAME, OP, IDENT, PTXOP)                                                          \
    CLG_NU_SCANS(T, NAME, OP, IDENT)                                                                     \
    CLG_FN CLG_OVL T clg_pf_nu_reduce_##NAME(T x) {                                                      \
        T r;                                                                                             \
        asm volatile("redux.sync." PTXOP " %0, %1, %2;" : "=r"(r) : "r"(x), "r"(clg_ptx_mask()));        \
        return r;                                                                                        \
    }
#else
#define CLG_NU_REDUX(T, NAME, OP, IDENT, PTXOP) CLG_NU_CORE(T, NAME, OP, IDENT)
#endif

#else /* khr, intel */
/* Every loop around a shuffle runs at least once: PoCL 6.0 runs the code after a loop of zero trips
 * whose body has a sub-group shuffle in the first work-item only (measured: clustered reductions of
 * clusters of 1 gave 0 on every other lane). */
#define CLG_NU_CORE(T, NAME, OP, IDENT)                                                                  \
    CLG_FN CLG_OVL T clg_pf_nu_clustered_##NAME(T x, uint c) {                                           \
        uint l = clg_lane(), n = clg_range(), d = c;                                                     \
        do {                                                                                             \
            d >>= 1;                                                                                     \
            T o = clg_shuffle_down(x, max(d, 1u));                                                       \
            if (d > 0u && d < n - l) x = OP(x, o);                                                       \
        } while (d > 1u);                                                                                \
        return clg_shuffle(x, l & ~(c - 1u));                                                            \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_reduce_##NAME(T x) {                                                      \
        uint c = 1u;                                                                                     \
        while (c < clg_max_range()) c <<= 1;                                                             \
        return clg_pf_nu_clustered_##NAME(x, c);                                                         \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_inclusive_##NAME(T x) {                                                   \
        uint l = clg_lane(), s = clg_max_range(), d = 1u;                                                \
        do {                                                                                             \
            T o = clg_shuffle_up(x, d);                                                                  \
            if (l >= d) x = OP(o, x);                                                                    \
            d <<= 1;                                                                                     \
        } while (d < s);                                                                                 \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_##NAME(T x) {                                                   \
        T o = clg_shuffle_up(clg_pf_nu_inclusive_##NAME(x), 1u);                                         \
        return clg_lane() == 0u ? (T)(IDENT) : o;                                                        \
    }
#define CLG_NU_REDUX(T, NAME, OP, IDENT, PTXOP) CLG_NU_CORE(T, NAME, OP, IDENT)
#endif

/* add, mul, min (mn), max (mx) for every 32/64-bit type; and, or, xor for the integer ones. (PoCL defines
 * `min` and `max` as object-like macros, which would rename functions whose names pass through a macro.) */
#define CLG_NU_ARITH(T, MAXV, MINV)                                                                      \
    CLG_NU_CORE(T, add, CLG_OP_ADD, 0)                                                                   \
    CLG_NU_CORE(T, mul, CLG_NU_MUL, 1)                                                                   \
    CLG_NU_CORE(T, mn, CLG_OP_MIN, MAXV)                                                                \
    CLG_NU_CORE(T, mx, CLG_OP_MAX, MINV)
#define CLG_NU_BITS(T)                                                                                   \
    CLG_NU_CORE(T, and, CLG_NU_AND, ~(T)0)                                                               \
    CLG_NU_CORE(T, or, CLG_NU_OR, 0)                                                                     \
    CLG_NU_CORE(T, xor, CLG_NU_XOR, 0)
#define CLG_NU_ARITH_REDUX(T, MAXV, MINV, S)                                                             \
    CLG_NU_REDUX(T, add, CLG_OP_ADD, 0, "add." #S "32")                                                  \
    CLG_NU_CORE(T, mul, CLG_NU_MUL, 1)                                                                   \
    CLG_NU_REDUX(T, mn, CLG_OP_MIN, MAXV, "min." #S "32")                                               \
    CLG_NU_REDUX(T, mx, CLG_OP_MAX, MINV, "max." #S "32")                                               \
    CLG_NU_REDUX(T, and, CLG_NU_AND, ~(T)0, "and.b32")                                                   \
    CLG_NU_REDUX(T, or, CLG_NU_OR, 0, "or.b32")                                                          \
    CLG_NU_REDUX(T, xor, CLG_NU_XOR, 0, "xor.b32")
CLG_NU_ARITH_REDUX(int, INT_MAX, INT_MIN, s)
CLG_NU_ARITH_REDUX(uint, UINT_MAX, 0u, u)
CLG_NU_ARITH(long, LONG_MAX, LONG_MIN)
CLG_NU_ARITH(ulong, ULONG_MAX, 0ul)
CLG_NU_BITS(long)
CLG_NU_BITS(ulong)
CLG_NU_ARITH(float, INFINITY, -INFINITY)
#if CLG_HAS_FP64
CLG_NU_ARITH(double, (double)INFINITY, -(double)INFINITY)
#endif

/* Narrow types through their carrier C. An exclusive min/max with no lane before gives the carrier's
 * identity, outside T's range: it becomes T's. */
#define CLG_NU_NARROW_OP(T, C, NAME)                                                                     \
    CLG_FN CLG_OVL T clg_pf_nu_reduce_##NAME(T x CLG_SP) { return (T)clg_pf_nu_reduce_##NAME((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_nu_inclusive_##NAME(T x CLG_SP) { return (T)clg_pf_nu_inclusive_##NAME((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_nu_clustered_##NAME(T x, uint c CLG_SP) {                                    \
        return (T)clg_pf_nu_clustered_##NAME((C)x, c CLG_SA);                                            \
    }
#define CLG_NU_NARROW_EXCL(T, C, NAME)                                                                   \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_##NAME(T x CLG_SP) { return (T)clg_pf_nu_exclusive_##NAME((C)x CLG_SA); }
#define CLG_NU_NARROW_ARITH(T, C, MAXV, MINV)                                                            \
    CLG_NU_NARROW_OP(T, C, add) CLG_NU_NARROW_EXCL(T, C, add)                                            \
    CLG_NU_NARROW_OP(T, C, mul) CLG_NU_NARROW_EXCL(T, C, mul)                                            \
    CLG_NU_NARROW_OP(T, C, mn) CLG_NU_NARROW_OP(T, C, mx)                                              \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_mn(T x CLG_SP) {                                               \
        C r = clg_pf_nu_exclusive_mn((C)x CLG_SA);                                                      \
        return r > (C)(MAXV) ? (T)(MAXV) : (T)r;                                                         \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_nu_exclusive_mx(T x CLG_SP) {                                               \
        C r = clg_pf_nu_exclusive_mx((C)x CLG_SA);                                                      \
        return r < (C)(MINV) ? (T)(MINV) : (T)r;                                                         \
    }
#define CLG_NU_NARROW_BITS(T, C)                                                                         \
    CLG_NU_NARROW_OP(T, C, and) CLG_NU_NARROW_EXCL(T, C, and)                                            \
    CLG_NU_NARROW_OP(T, C, or) CLG_NU_NARROW_EXCL(T, C, or)                                              \
    CLG_NU_NARROW_OP(T, C, xor) CLG_NU_NARROW_EXCL(T, C, xor)
CLG_PF_NARROW_ID(CLG_NU_NARROW_ARITH)
CLG_NU_NARROW_INTS(CLG_NU_NARROW_BITS)

/* logical_and/or/xor on int predicates: the bitwise operation on 0/1, the result 0 or 1. */
#define CLG_NU_LOGICAL(NAME)                                                                             \
    CLG_FN int clg_pf_nu_reduce_logical_##NAME(int p CLG_SP) { return clg_pf_nu_reduce_##NAME(p != 0 CLG_SA) != 0; } \
    CLG_FN int clg_pf_nu_inclusive_logical_##NAME(int p CLG_SP) {                                        \
        return clg_pf_nu_inclusive_##NAME(p != 0 CLG_SA) != 0;                                           \
    }                                                                                                    \
    CLG_FN int clg_pf_nu_exclusive_logical_##NAME(int p CLG_SP) {                                        \
        return clg_pf_nu_exclusive_##NAME(p != 0 CLG_SA) != 0;                                           \
    }                                                                                                    \
    CLG_FN int clg_pf_nu_clustered_logical_##NAME(int p, uint c CLG_SP) {                                \
        return clg_pf_nu_clustered_##NAME(p != 0, c CLG_SA) != 0;                                        \
    }
CLG_NU_LOGICAL(and)
CLG_NU_LOGICAL(or)
CLG_NU_LOGICAL(xor)
#endif /* CLG_PF_ARITHMETIC || CLG_PF_CLUSTERED */

/* ---- Rotations: lane l reads lane (l + delta) mod the sub-group's size (its cluster's c) --------- */
#if CLG_PF_ROTATE
#ifdef CLG_BACKEND_NVIDIA_PTX
#define CLG_NU_ROTATE_WIDE(T)                                                                            \
    CLG_FN CLG_OVL T clg_pf_clustered_rotate(T x, int delta, uint c) {                                   \
        uint l = clg_lane();                                                                             \
        uint src = (l & ~(c - 1u)) + ((l + (uint)delta) & (c - 1u));                                     \
        return clg_unbits_##T(clg_ptx_idx_m(clg_bits(x), src, clg_ptx_mask()));                          \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_rotate(T x, int delta) {                                                     \
        int n = (int)clg_range();                                                                        \
        if (n == CLG_SUB_GROUP_SIZE) return clg_pf_clustered_rotate(x, delta, CLG_SUB_GROUP_SIZE);       \
        uint src = (uint)((((int)clg_lane() + delta % n) % n + n) % n);                                  \
        return clg_unbits_##T(clg_ptx_idx_m(clg_bits(x), src, clg_ptx_mask()));                          \
    }
CLG_FOREACH_TYPE(CLG_NU_ROTATE_WIDE)
#define CLG_NU_ROTATE_NARROW(T, C, MAXV, MINV)                                                           \
    CLG_FN CLG_OVL T clg_pf_clustered_rotate(T x, int delta, uint c) { return (T)clg_pf_clustered_rotate((C)x, delta, c); } \
    CLG_FN CLG_OVL T clg_pf_rotate(T x, int delta) { return (T)clg_pf_rotate((C)x, delta); }
CLG_PF_NARROW_ID(CLG_NU_ROTATE_NARROW)
#else
/* Out-of-range sources (a cluster cut by a partial sub-group) read the lane's own value. */
#define CLG_NU_ROTATE(T)                                                                                 \
    CLG_FN CLG_OVL T clg_pf_clustered_rotate(T x, int delta, uint c CLG_SP) {                            \
        uint l = clg_lane();                                                                             \
        return clg_pf_shuffle(x, (l & ~(c - 1u)) + ((l + (uint)delta) & (c - 1u)) CLG_SA);               \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_rotate(T x, int delta CLG_SP) {                                              \
        int n = (int)clg_range();                                                                        \
        return clg_pf_shuffle(x, (uint)((((int)clg_lane() + delta % n) % n + n) % n) CLG_SA);            \
    }
#define CLG_NU_ROTATE_ALL(T, MAXV, MINV) CLG_NU_ROTATE(T)
#define CLG_NU_ROTATE_NARROW(T, C, MAXV, MINV) CLG_NU_ROTATE(T)
CLG_PF_WIDE(CLG_NU_ROTATE_ALL)
CLG_PF_NARROW_ID(CLG_NU_ROTATE_NARROW)
#endif
#endif /* CLG_PF_ROTATE */

#endif
#endif
