/* clgroups internal (khr/polyfill.h): the standard names of every provided group, as macros over the
 * overloaded clg_pf_* functions (the macros add the emulated backend's scratch argument), and the
 * extension macros of what is provided. Names of the driver's own groups are left alone. */
#ifndef CLGROUPS_KHR_PF_NAMES_H
#define CLGROUPS_KHR_PF_NAMES_H

/* `#pragma OPENCL EXTENSION <provided extension> : enable` is ignored with a warning; keep it quiet. */
#if defined(__clang__) && (CLG_PF_SUBGROUPS || CLG_PF_EXTENDED_TYPES || CLG_PF_SHUFFLE || CLG_PF_SHUFFLE_RELATIVE || \
                           CLG_PF_BALLOT || CLG_PF_INTEL || CLG_PF_VOTE || CLG_PF_ARITHMETIC || CLG_PF_CLUSTERED || \
                           CLG_PF_ROTATE)
#pragma clang diagnostic ignored "-Wignored-pragmas"
#endif

#if CLG_PF_SUBGROUPS
#ifndef cl_khr_subgroups
#define cl_khr_subgroups 1
#endif
#ifndef __opencl_c_subgroups
#define __opencl_c_subgroups 1
#endif
#define get_sub_group_size() clg_range()
#define get_max_sub_group_size() clg_max_range()
#define get_num_sub_groups() clg_sg_count()
#define get_sub_group_id() clg_sg_id()
#define get_sub_group_local_id() clg_lane()
#define sub_group_barrier(...) clg_barrier()
#define sub_group_all(p) clg_all((int)(p)CLG_SG_SCRATCH)
#define sub_group_any(p) clg_any((int)(p)CLG_SG_SCRATCH)
#endif

/* clgroups launches uniform work-groups, so the enqueued count is the count (PoCL 6.0's own answers 1 for
 * 2-D and 3-D work-groups). */
#define get_enqueued_num_sub_groups() get_num_sub_groups()

#if CLG_PF_EXTENDED_TYPES && !defined(cl_khr_subgroup_extended_types)
#define cl_khr_subgroup_extended_types 1
#endif

#if CLG_PF_SUBGROUPS || CLG_PF_EXTENDED_TYPES
#define sub_group_broadcast(x, id) clg_pf_broadcast((x), (uint)(id)CLG_SG_SCRATCH)
#define sub_group_reduce_add(x) clg_pf_reduce_add((x)CLG_SG_SCRATCH)
#define sub_group_reduce_min(x) clg_pf_reduce_min((x)CLG_SG_SCRATCH)
#define sub_group_reduce_max(x) clg_pf_reduce_max((x)CLG_SG_SCRATCH)
#define sub_group_scan_inclusive_add(x) clg_pf_scan_inclusive_add((x)CLG_SG_SCRATCH)
#define sub_group_scan_inclusive_min(x) clg_pf_scan_inclusive_min((x)CLG_SG_SCRATCH)
#define sub_group_scan_inclusive_max(x) clg_pf_scan_inclusive_max((x)CLG_SG_SCRATCH)
#define sub_group_scan_exclusive_add(x) clg_pf_scan_exclusive_add((x)CLG_SG_SCRATCH)
#define sub_group_scan_exclusive_min(x) clg_pf_scan_exclusive_min((x)CLG_SG_SCRATCH)
#define sub_group_scan_exclusive_max(x) clg_pf_scan_exclusive_max((x)CLG_SG_SCRATCH)
#endif

#if CLG_PF_SHUFFLE
#ifndef cl_khr_subgroup_shuffle
#define cl_khr_subgroup_shuffle 1
#endif
#define sub_group_shuffle(x, id) clg_pf_shuffle((x), (uint)(id)CLG_SG_SCRATCH)
#define sub_group_shuffle_xor(x, mask) clg_pf_shuffle_xor((x), (uint)(mask)CLG_SG_SCRATCH)
#endif

#if CLG_PF_SHUFFLE_RELATIVE
#ifndef cl_khr_subgroup_shuffle_relative
#define cl_khr_subgroup_shuffle_relative 1
#endif
#define sub_group_shuffle_up(x, delta) clg_pf_shuffle_up((x), (uint)(delta)CLG_SG_SCRATCH)
#define sub_group_shuffle_down(x, delta) clg_pf_shuffle_down((x), (uint)(delta)CLG_SG_SCRATCH)
#endif

#if CLG_PF_BALLOT
#ifndef cl_khr_subgroup_ballot
#define cl_khr_subgroup_ballot 1
#endif
#define sub_group_non_uniform_broadcast(x, id) clg_pf_broadcast((x), (uint)(id)CLG_SG_SCRATCH)
#define sub_group_broadcast_first(x) clg_pf_broadcast((x), 0u CLG_SG_SCRATCH)
#define sub_group_ballot(p) clg_pf_ballot((int)(p)CLG_SG_SCRATCH)
#define sub_group_inverse_ballot(v) clg_pf_inverse_ballot(v)
#define sub_group_ballot_bit_extract(v, i) clg_pf_bit_extract((v), (uint)(i))
#define sub_group_ballot_bit_count(v) clg_pf_bit_count(v)
#define sub_group_ballot_inclusive_scan(v) clg_pf_ballot_inclusive_scan(v)
#define sub_group_ballot_exclusive_scan(v) clg_pf_ballot_exclusive_scan(v)
#define sub_group_ballot_find_lsb(v) clg_pf_find_lsb(v)
#define sub_group_ballot_find_msb(v) clg_pf_find_msb(v)
#define get_sub_group_eq_mask() clg_pf_mask_eq()
#define get_sub_group_ge_mask() clg_pf_mask_ge()
#define get_sub_group_gt_mask() clg_pf_mask_gt()
#define get_sub_group_le_mask() clg_pf_mask_le()
#define get_sub_group_lt_mask() clg_pf_mask_lt()
#endif

#if CLG_PF_INTEL
#ifndef cl_intel_subgroups
#define cl_intel_subgroups 1
#endif
#define intel_sub_group_shuffle(x, c) clg_pf_shuffle((x), (uint)(c)CLG_SG_SCRATCH)
#define intel_sub_group_shuffle_xor(x, c) clg_pf_shuffle_xor((x), (uint)(c)CLG_SG_SCRATCH)
#define intel_sub_group_shuffle_down(cur, next, d) clg_pf_intel_down((cur), (next), (uint)(d)CLG_SG_SCRATCH)
#define intel_sub_group_shuffle_up(prev, cur, d) clg_pf_intel_up((prev), (cur), (uint)(d)CLG_SG_SCRATCH)
#define intel_sub_group_block_read(p) clg_pf_block_read(p)
#define intel_sub_group_block_read2(p) clg_pf_block_read2(p)
#define intel_sub_group_block_read4(p) clg_pf_block_read4(p)
#define intel_sub_group_block_read8(p) clg_pf_block_read8(p)
#define intel_sub_group_block_write(p, v) clg_pf_block_write((p), (v))
#define intel_sub_group_block_write2(p, v) clg_pf_block_write2((p), (v))
#define intel_sub_group_block_write4(p, v) clg_pf_block_write4((p), (v))
#define intel_sub_group_block_write8(p, v) clg_pf_block_write8((p), (v))
#endif

#if CLG_PF_VOTE
#ifndef cl_khr_subgroup_non_uniform_vote
#define cl_khr_subgroup_non_uniform_vote 1
#endif
#define sub_group_elect() clg_pf_elect()
#define sub_group_non_uniform_all(p) clg_pf_nu_all((int)(p)CLG_SG_SCRATCH)
#define sub_group_non_uniform_any(p) clg_pf_nu_any((int)(p)CLG_SG_SCRATCH)
#define sub_group_non_uniform_all_equal(x) clg_pf_all_equal((x)CLG_SG_SCRATCH)
#endif

#if CLG_PF_ARITHMETIC
#ifndef cl_khr_subgroup_non_uniform_arithmetic
#define cl_khr_subgroup_non_uniform_arithmetic 1
#endif
#define sub_group_non_uniform_reduce_add(x) clg_pf_nu_reduce_add((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_add(x) clg_pf_nu_inclusive_add((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_add(x) clg_pf_nu_exclusive_add((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_mul(x) clg_pf_nu_reduce_mul((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_mul(x) clg_pf_nu_inclusive_mul((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_mul(x) clg_pf_nu_exclusive_mul((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_min(x) clg_pf_nu_reduce_mn((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_min(x) clg_pf_nu_inclusive_mn((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_min(x) clg_pf_nu_exclusive_mn((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_max(x) clg_pf_nu_reduce_mx((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_max(x) clg_pf_nu_inclusive_mx((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_max(x) clg_pf_nu_exclusive_mx((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_and(x) clg_pf_nu_reduce_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_and(x) clg_pf_nu_inclusive_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_and(x) clg_pf_nu_exclusive_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_or(x) clg_pf_nu_reduce_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_or(x) clg_pf_nu_inclusive_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_or(x) clg_pf_nu_exclusive_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_xor(x) clg_pf_nu_reduce_xor((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_xor(x) clg_pf_nu_inclusive_xor((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_xor(x) clg_pf_nu_exclusive_xor((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_logical_and(x) clg_pf_nu_reduce_logical_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_logical_and(x) clg_pf_nu_inclusive_logical_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_logical_and(x) clg_pf_nu_exclusive_logical_and((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_logical_or(x) clg_pf_nu_reduce_logical_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_logical_or(x) clg_pf_nu_inclusive_logical_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_logical_or(x) clg_pf_nu_exclusive_logical_or((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_reduce_logical_xor(x) clg_pf_nu_reduce_logical_xor((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_inclusive_logical_xor(x) clg_pf_nu_inclusive_logical_xor((x)CLG_SG_SCRATCH)
#define sub_group_non_uniform_scan_exclusive_logical_xor(x) clg_pf_nu_exclusive_logical_xor((x)CLG_SG_SCRATCH)
#endif

#if CLG_PF_CLUSTERED
#ifndef cl_khr_subgroup_clustered_reduce
#define cl_khr_subgroup_clustered_reduce 1
#endif
#define sub_group_clustered_reduce_add(x, c) clg_pf_nu_clustered_add((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_mul(x, c) clg_pf_nu_clustered_mul((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_min(x, c) clg_pf_nu_clustered_mn((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_max(x, c) clg_pf_nu_clustered_mx((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_and(x, c) clg_pf_nu_clustered_and((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_or(x, c) clg_pf_nu_clustered_or((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_xor(x, c) clg_pf_nu_clustered_xor((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_logical_and(x, c) clg_pf_nu_clustered_logical_and((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_logical_or(x, c) clg_pf_nu_clustered_logical_or((x), (uint)(c)CLG_SG_SCRATCH)
#define sub_group_clustered_reduce_logical_xor(x, c) clg_pf_nu_clustered_logical_xor((x), (uint)(c)CLG_SG_SCRATCH)
#endif

#if CLG_PF_ROTATE
#ifndef cl_khr_subgroup_rotate
#define cl_khr_subgroup_rotate 1
#endif
#define sub_group_rotate(x, delta) clg_pf_rotate((x), (int)(delta)CLG_SG_SCRATCH)
#define sub_group_clustered_rotate(x, delta, c) clg_pf_clustered_rotate((x), (int)(delta), (uint)(c)CLG_SG_SCRATCH)
#endif

#endif
