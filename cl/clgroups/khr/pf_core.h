/* clgroups internal (khr/polyfill.h): typed implementations clg_pf_* of the standard broadcast, reductions,
 * scans and shuffles, for every polyfill type. 32/64-bit types use the driver's built-ins where
 * cl_khr_subgroups is the driver's own (CLG_PF_SUBGROUPS 0), else the layer; narrow types (char, uchar,
 * short, ushort, half) are computed in a 32-bit carrier type. */
#ifndef CLGROUPS_KHR_PF_CORE_H
#define CLGROUPS_KHR_PF_CORE_H

/* 32/64-bit types with the identities of their min and max scans. */
#if CLG_HAS_FP64
#define CLG_PF_WIDE(M)                                                                                   \
    M(int, INT_MAX, INT_MIN) M(uint, UINT_MAX, 0u) M(long, LONG_MAX, LONG_MIN) M(ulong, ULONG_MAX, 0ul) \
    M(float, INFINITY, -INFINITY) M(double, (double)INFINITY, -(double)INFINITY)
#else
#define CLG_PF_WIDE(M)                                                                                   \
    M(int, INT_MAX, INT_MIN) M(uint, UINT_MAX, 0u) M(long, LONG_MAX, LONG_MIN) M(ulong, ULONG_MAX, 0ul) \
    M(float, INFINITY, -INFINITY)
#endif

/* Narrow types: type, carrier, identities of min and max. */
#ifdef cl_khr_fp16
#define CLG_PF_NARROW_ID(M)                                                                              \
    M(char, int, CHAR_MAX, CHAR_MIN) M(uchar, uint, UCHAR_MAX, 0) M(short, int, SHRT_MAX, SHRT_MIN)        \
    M(ushort, uint, USHRT_MAX, 0) M(half, float, (half)INFINITY, -(half)INFINITY)
#else
#define CLG_PF_NARROW_ID(M)                                                                              \
    M(char, int, CHAR_MAX, CHAR_MIN) M(uchar, uint, UCHAR_MAX, 0) M(short, int, SHRT_MAX, SHRT_MIN)        \
    M(ushort, uint, USHRT_MAX, 0)
#endif

#ifdef CLG_BACKEND_EMULATED
/* Inclusive and exclusive min/max scans: each lane reads the lower lanes' scratch slots (2 barriers; no
 * barrier in a loop, which PoCL's compiler handles slowly; loops of the same trips in every work-item, as
 * in sg_emulated.h). */
#define CLG_PF_GEN_SCAN(T, NAME, OP, IDENT)                                                              \
    CLG_FN CLG_OVL T clg_pf_gen_inclusive_##NAME(T x CLG_SP) {                                           \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        uint l = clg_lane();                                                                             \
        for (uint i = 0; i < clg_max_range(); ++i)                                                       \
            if (i < l) x = OP(x, clg_unbits_##T(clg_s[base + i]));                                       \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_gen_exclusive_##NAME(T x CLG_SP) {                                           \
        uint base = clg_emu_publish(clg_bits(x) CLG_SA);                                                 \
        uint l = clg_lane();                                                                             \
        T acc = (T)(IDENT);                                                                              \
        for (uint i = 0; i < clg_max_range(); ++i)                                                       \
            if (i < l) acc = OP(acc, clg_unbits_##T(clg_s[base + i]));                                   \
        return acc;                                                                                      \
    }
#else
/* Inclusive and exclusive min/max scans on the layer: Hillis-Steele over shuffle_up. */
#define CLG_PF_GEN_SCAN(T, NAME, OP, IDENT)                                                              \
    CLG_FN CLG_OVL T clg_pf_gen_inclusive_##NAME(T x CLG_SP) {                                           \
        uint l = clg_lane();                                                                             \
        for (uint d = 1; d < clg_max_range(); d <<= 1) {                                                 \
            T o = clg_shuffle_up(x, d CLG_SA);                                                           \
            if (l >= d) x = OP(x, o);                                                                    \
        }                                                                                                \
        return x;                                                                                        \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_gen_exclusive_##NAME(T x CLG_SP) {                                           \
        T o = clg_shuffle_up(clg_pf_gen_inclusive_##NAME(x CLG_SA), 1u CLG_SA);                          \
        return clg_lane() == 0 ? (T)(IDENT) : o;                                                         \
    }
#endif

#if CLG_PF_SUBGROUPS
#define CLG_PF_BASE_BROADCAST(x, id) clg_broadcast((x), (id)CLG_SA)
#define CLG_PF_BASE_REDUCE(OP, x) clg_reduce_##OP((x)CLG_SA)
#define CLG_PF_BASE_SCAN_ADD(KIND, x) clg_##KIND##_scan_add((x)CLG_SA)
#define CLG_PF_BASE_SCAN(KIND, OP, x) clg_pf_gen_##KIND##_##OP((x)CLG_SA)
#define CLG_PF_WIDE_SCANS(T, MAXV, MINV)                                                                 \
    CLG_PF_GEN_SCAN(T, min, CLG_OP_MIN, MAXV)                                                            \
    CLG_PF_GEN_SCAN(T, max, CLG_OP_MAX, MINV)
CLG_PF_WIDE(CLG_PF_WIDE_SCANS)
#else
/* The driver's own built-ins (this text is compiled before pf_names.h defines the names as macros). */
#define CLG_PF_BASE_BROADCAST(x, id) sub_group_broadcast((x), (id))
#define CLG_PF_BASE_REDUCE(OP, x) sub_group_reduce_##OP(x)
#define CLG_PF_BASE_SCAN_ADD(KIND, x) sub_group_scan_##KIND##_add(x)
#define CLG_PF_BASE_SCAN(KIND, OP, x) sub_group_scan_##KIND##_##OP(x)
#endif

#define CLG_PF_WIDE_FNS(T, MAXV, MINV)                                                                   \
    CLG_FN CLG_OVL T clg_pf_broadcast(T x, uint id CLG_SP) { return CLG_PF_BASE_BROADCAST(x, id); }      \
    CLG_FN CLG_OVL T clg_pf_reduce_add(T x CLG_SP) { return CLG_PF_BASE_REDUCE(add, x); }                \
    CLG_FN CLG_OVL T clg_pf_reduce_min(T x CLG_SP) { return CLG_PF_BASE_REDUCE(min, x); }                \
    CLG_FN CLG_OVL T clg_pf_reduce_max(T x CLG_SP) { return CLG_PF_BASE_REDUCE(max, x); }                \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_add(T x CLG_SP) { return CLG_PF_BASE_SCAN_ADD(inclusive, x); } \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_add(T x CLG_SP) { return CLG_PF_BASE_SCAN_ADD(exclusive, x); } \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_min(T x CLG_SP) { return CLG_PF_BASE_SCAN(inclusive, min, x); } \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_max(T x CLG_SP) { return CLG_PF_BASE_SCAN(inclusive, max, x); } \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_min(T x CLG_SP) { return CLG_PF_BASE_SCAN(exclusive, min, x); } \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_max(T x CLG_SP) { return CLG_PF_BASE_SCAN(exclusive, max, x); } \
    CLG_FN CLG_OVL T clg_pf_shuffle(T x, uint id CLG_SP) { return clg_shuffle(x, id CLG_SA); }           \
    CLG_FN CLG_OVL T clg_pf_shuffle_xor(T x, uint m CLG_SP) { return clg_shuffle_xor(x, m CLG_SA); }     \
    CLG_FN CLG_OVL T clg_pf_shuffle_up(T x, uint d CLG_SP) { return clg_shuffle_up(x, d CLG_SA); }       \
    CLG_FN CLG_OVL T clg_pf_shuffle_down(T x, uint d CLG_SP) { return clg_shuffle_down(x, d CLG_SA); }
CLG_PF_WIDE(CLG_PF_WIDE_FNS)

/* Narrow types through their carrier C; exclusive min/max give the narrow identity on lane 0. */
#define CLG_PF_NARROW_FNS(T, C, MAXV, MINV)                                                              \
    CLG_FN CLG_OVL T clg_pf_broadcast(T x, uint id CLG_SP) { return (T)clg_pf_broadcast((C)x, id CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_reduce_add(T x CLG_SP) { return (T)clg_pf_reduce_add((C)x CLG_SA); }         \
    CLG_FN CLG_OVL T clg_pf_reduce_min(T x CLG_SP) { return (T)clg_pf_reduce_min((C)x CLG_SA); }         \
    CLG_FN CLG_OVL T clg_pf_reduce_max(T x CLG_SP) { return (T)clg_pf_reduce_max((C)x CLG_SA); }         \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_add(T x CLG_SP) { return (T)clg_pf_scan_inclusive_add((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_add(T x CLG_SP) { return (T)clg_pf_scan_exclusive_add((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_min(T x CLG_SP) { return (T)clg_pf_scan_inclusive_min((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_scan_inclusive_max(T x CLG_SP) { return (T)clg_pf_scan_inclusive_max((C)x CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_min(T x CLG_SP) {                                             \
        T r = (T)clg_pf_scan_exclusive_min((C)x CLG_SA);                                                 \
        return clg_lane() == 0 ? (T)(MAXV) : r;                                                          \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_scan_exclusive_max(T x CLG_SP) {                                             \
        T r = (T)clg_pf_scan_exclusive_max((C)x CLG_SA);                                                 \
        return clg_lane() == 0 ? (T)(MINV) : r;                                                          \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_shuffle(T x, uint id CLG_SP) { return (T)clg_shuffle((C)x, id CLG_SA); }     \
    CLG_FN CLG_OVL T clg_pf_shuffle_xor(T x, uint m CLG_SP) { return (T)clg_shuffle_xor((C)x, m CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_shuffle_up(T x, uint d CLG_SP) { return (T)clg_shuffle_up((C)x, d CLG_SA); } \
    CLG_FN CLG_OVL T clg_pf_shuffle_down(T x, uint d CLG_SP) { return (T)clg_shuffle_down((C)x, d CLG_SA); }
CLG_PF_NARROW_ID(CLG_PF_NARROW_FNS)

#endif
