/* clgroups internal: khr backend (cl_khr_subgroups + cl_khr_subgroup_shuffle) and intel backend
 * (cl_intel_subgroups: intel_sub_group_shuffle as the exchange; everything else is shared with khr).
 * The two-source intel_sub_group_shuffle_up/down are deliberately not used (missing or buggy in PoCL). */
#ifndef CLGROUPS_DETAIL_SG_KHR_H
#define CLGROUPS_DETAIL_SG_KHR_H

#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
/* cl_khr_subgroup_shuffle(_relative) need no pragma (clang warns "does not require pragma"). */
#ifdef CLG_BACKEND_INTEL
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#endif

CLG_FN uint clg_lane(void) { return get_sub_group_local_id(); }
CLG_FN uint clg_sg_id(void) { return get_sub_group_id(); }
CLG_FN void clg_barrier(void) { sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }

#ifndef CLG_KHR_DERIVED
#define CLG_KHR_DERIVED 0
#endif

#if CLG_SUB_GROUP_SIZE > 0
#include <clgroups/detail/sg_fixed.h>
#elif CLG_KHR_DERIVED
/* The driver's size (automatic build) on a driver that reports a partial last sub-group of a kernel with a
 * required size S as a whole one (PoCL): sizes and counts from the driver's full size, get_max_sub_group_size()
 * (S under intel_reqd_sub_group_size(S), else PoCL's own: the local x size), and the linear local id. */
CLG_FN uint clg_full_size(void) { return get_max_sub_group_size(); }
CLG_FN uint clg_max_range(void) { return min(clg_full_size(), clg_wg_size()); }
CLG_FN uint clg_range(void) { return min(clg_full_size(), clg_wg_size() - clg_sg_id() * clg_full_size()); }
CLG_FN uint clg_sg_count(void) { return (clg_wg_size() + clg_full_size() - 1) / clg_full_size(); }
#else
CLG_FN uint clg_range(void) { return get_sub_group_size(); }
CLG_FN uint clg_max_range(void) { return get_max_sub_group_size(); }
CLG_FN uint clg_sg_count(void) { return get_num_sub_groups(); }
#endif

#ifdef CLG_BACKEND_INTEL
CLG_FN CLG_OVL uint clg_xchg(uint v, uint src) { return intel_sub_group_shuffle(v, src); }
CLG_FN CLG_OVL ulong clg_xchg(ulong v, uint src) { return intel_sub_group_shuffle(v, src); }
#elif CLG_KHR_DERIVED
/* PoCL 6.0's sub_group_shuffle in its sub-groups of one work-item (local x size 1) returns garbage past the
 * first sub-group: there the only lane is the caller's own (the shuffle still runs everywhere). */
CLG_FN CLG_OVL uint clg_xchg(uint v, uint src) { uint r = sub_group_shuffle(v, src); return clg_max_range() == 1u ? v : r; }
CLG_FN CLG_OVL ulong clg_xchg(ulong v, uint src) { ulong r = sub_group_shuffle(v, src); return clg_max_range() == 1u ? v : r; }
#else
CLG_FN CLG_OVL uint clg_xchg(uint v, uint src) { return sub_group_shuffle(v, src); }
CLG_FN CLG_OVL ulong clg_xchg(ulong v, uint src) { return sub_group_shuffle(v, src); }
#endif

#include <clgroups/detail/sg_generic.h>

CLG_FOREACH_TYPE(CLG_GEN_SHUFFLES)

#if CLG_HAS_SHUFFLE_RELATIVE
#define CLG_KHR_RELATIVE(T)                                                                              \
    CLG_FN CLG_OVL T clg_shuffle_up(T x, uint delta) { return sub_group_shuffle_up(x, delta); }          \
    CLG_FN CLG_OVL T clg_shuffle_down(T x, uint delta) { return sub_group_shuffle_down(x, delta); }
CLG_FOREACH_TYPE(CLG_KHR_RELATIVE)
#else
CLG_FOREACH_TYPE(CLG_GEN_RELATIVE)
#endif

#if CLG_SUB_GROUP_SIZE > 0 || CLG_KHR_DERIVED
/* Pinned size (or derived geometry): the runtime may mis-handle a partial last sub-group (PoCL 6.0 reports S as
 * its size and reduces absent lanes), so reductions, scans and votes are built on the exchange with lane masking. (A work-group-uniform branch
 * between builtins and this path made PoCL 6.0's compiler hang: barriers in conditionals.) */
CLG_FOREACH_TYPE(CLG_GEN_ALGORITHMS)
CLG_GEN_VOTES()
#define CLG_KHR_PICK(builtin, generic) return generic
#else
#define CLG_KHR_PICK(builtin, generic) return builtin
#endif

#define CLG_KHR_ALGORITHMS(T)                                                                            \
    CLG_FN CLG_OVL T clg_reduce_add(T x) { CLG_KHR_PICK(sub_group_reduce_add(x), clg_gen_reduce_add(x)); } \
    CLG_FN CLG_OVL T clg_reduce_min(T x) { CLG_KHR_PICK(sub_group_reduce_min(x), clg_gen_reduce_min(x)); } \
    CLG_FN CLG_OVL T clg_reduce_max(T x) { CLG_KHR_PICK(sub_group_reduce_max(x), clg_gen_reduce_max(x)); } \
    CLG_FN CLG_OVL T clg_inclusive_scan_add(T x) {                                                       \
        CLG_KHR_PICK(sub_group_scan_inclusive_add(x), clg_gen_inclusive_scan_add(x));                    \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_exclusive_scan_add(T x) {                                                       \
        CLG_KHR_PICK(sub_group_scan_exclusive_add(x), clg_gen_exclusive_scan_add(x));                    \
    }

CLG_FOREACH_TYPE(CLG_KHR_ALGORITHMS)

CLG_FN int clg_any(int pred) { CLG_KHR_PICK(sub_group_any(pred) != 0, clg_gen_any(pred)); }
CLG_FN int clg_all(int pred) { CLG_KHR_PICK(sub_group_all(pred) != 0, clg_gen_all(pred)); }

#endif
