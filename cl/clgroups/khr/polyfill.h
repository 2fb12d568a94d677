/* clgroups/khr/polyfill.h - the standard sub-group built-ins (cl_khr_subgroups and friends,
 * cl_intel_subgroups) on devices that lack them, implemented on the clgroups layer.
 *
 * The host build prepends this header (after the layer's defines) to programs whose text names a
 * sub-group built-in or extension and whose device lacks at least one of them; kernels need no
 * #include and no change. BUILD CONTRACT, on top of subgroup.h's:
 *   CLG_PF_SUBGROUPS         1: provide cl_khr_subgroups (work-item functions, sub_group_barrier, all/any,
 *                            broadcast, reduce/scan add/min/max) and __opencl_c_subgroups
 *   CLG_PF_EXTENDED_TYPES    1: provide cl_khr_subgroup_extended_types (char, uchar, short, ushort for
 *                            broadcast, reduce and scans)
 *   CLG_PF_SHUFFLE           1: provide cl_khr_subgroup_shuffle (sub_group_shuffle, sub_group_shuffle_xor)
 *   CLG_PF_SHUFFLE_RELATIVE  1: provide cl_khr_subgroup_shuffle_relative (sub_group_shuffle_up/down)
 *   CLG_PF_BALLOT            1: provide cl_khr_subgroup_ballot
 *   CLG_PF_INTEL             1: provide cl_intel_subgroups (scalar shuffles incl. the two-source up/down,
 *                            intel_sub_group_block_read/write of uint 1/2/4/8 on __global memory)
 *   CLG_PF_VOTE              1: provide cl_khr_subgroup_non_uniform_vote (sub_group_elect,
 *                            sub_group_non_uniform_all/any/all_equal)
 *   CLG_PF_ARITHMETIC        1: provide cl_khr_subgroup_non_uniform_arithmetic (sub_group_non_uniform_reduce,
 *                            _scan_inclusive, _scan_exclusive of add, mul, min, max; and, or, xor on integers;
 *                            logical_and/or/xor on int)
 *   CLG_PF_CLUSTERED         1: provide cl_khr_subgroup_clustered_reduce (sub_group_clustered_reduce_* of the
 *                            same operations; cluster size a power of two up to the maximum sub-group size)
 *   CLG_PF_ROTATE            1: provide cl_khr_subgroup_rotate (sub_group_rotate, sub_group_clustered_rotate)
 *   A group at 0 is the driver's own and is left untouched. The extension macro of every provided group
 *   is defined (if the compiler has not defined it), and no other.
 *
 * Types: int, uint, long, ulong, float, double (cl_khr_fp64), half (cl_khr_fp16), char, uchar, short,
 * ushort; scalars only (no vector overloads).
 * Rules the polyfill adds (as the layer): every work-item of the work-group reaches each call (uniform
 * control flow; the emulated backend uses work-group barriers); sub_group_barrier is a work-group barrier
 * where provided; ballot masks cover the first 128 lanes; sub_group_broadcast_first and
 * sub_group_non_uniform_broadcast assume every lane is active. The non-uniform votes, reductions, scans,
 * clustered reductions and rotations also run in divergent control flow on nvidia-ptx (over the active
 * lanes); elsewhere they follow the uniform rule (the host refuses divergent calls on emulated). On the emulated backend the names are
 * macros passing the hidden scratch argument `clg_sg_scratch`, which the build adds to kernels that call
 * them in their own body (helpers need it threaded, see subgroup.h).
 */
#ifndef CLGROUPS_KHR_POLYFILL_H
#define CLGROUPS_KHR_POLYFILL_H

#include <clgroups/subgroup.h>

#ifndef CLG_PF_SUBGROUPS
#define CLG_PF_SUBGROUPS 0
#endif
#ifndef CLG_PF_EXTENDED_TYPES
#define CLG_PF_EXTENDED_TYPES 0
#endif
#ifndef CLG_PF_SHUFFLE
#define CLG_PF_SHUFFLE 0
#endif
#ifndef CLG_PF_SHUFFLE_RELATIVE
#define CLG_PF_SHUFFLE_RELATIVE 0
#endif
#ifndef CLG_PF_BALLOT
#define CLG_PF_BALLOT 0
#endif
#ifndef CLG_PF_INTEL
#define CLG_PF_INTEL 0
#endif
#ifndef CLG_PF_VOTE
#define CLG_PF_VOTE 0
#endif
#ifndef CLG_PF_ARITHMETIC
#define CLG_PF_ARITHMETIC 0
#endif
#ifndef CLG_PF_CLUSTERED
#define CLG_PF_CLUSTERED 0
#endif
#ifndef CLG_PF_ROTATE
#define CLG_PF_ROTATE 0
#endif

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#include <clgroups/khr/pf_core.h>
#include <clgroups/khr/pf_ballot.h>
#include <clgroups/khr/pf_intel.h>
#include <clgroups/khr/pf_non_uniform.h>
#include <clgroups/khr/pf_names.h>

#endif /* CLGROUPS_KHR_POLYFILL_H */
