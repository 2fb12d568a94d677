/* clgroups/subgroup.h - portable sub-groups for OpenCL C (SYCL_INTEL_sub_group as functions).
 *
 * BUILD CONTRACT (the host prepends these defines; the user never writes them):
 *   exactly one of CLG_BACKEND_KHR, CLG_BACKEND_INTEL, CLG_BACKEND_NVIDIA_PTX, CLG_BACKEND_EMULATED = 1
 *   CLG_SUB_GROUP_SIZE   sub-group size S of every kernel of the build:
 *                        khr/intel: the size pinned by intel_reqd_sub_group_size(S) on each kernel, or
 *                        0 = automatic (the device's native size; builtins decide);
 *                        nvidia-ptx: 1, 2, 4, 8, 16 or 32 (segments of a warp; 32 unless pinned);
 *                        emulated: host-chosen width S >= 1, a power of two.
 *   CLG_HAS_FP64         1 when the device has cl_khr_fp64 (enables the double overloads), else 0
 *   CLG_HAS_SHUFFLE_RELATIVE  1 when cl_khr_subgroup_shuffle_relative is present, else 0
 *   CLG_EMU_SCRATCH_ITEMS     emulated only: largest work-group size the scratch must cover
 *   CLG_KHR_DERIVED      khr/intel with CLG_SUB_GROUP_SIZE 0 only, optional: 1 = sizes and counts computed from
 *                        get_max_sub_group_size() and the linear local id, reductions and scans on the exchange
 *                        (drivers that report a partial last sub-group of a required size wrong: PoCL)
 *   emulated only: the host appends a trailing `__local ulong *clg_sg_scratch` parameter to every kernel
 *   whose body uses sg_*, and sets it at launch to one ulong per work-item of the work-group (a kernel-scope
 *   __local array was shared between concurrently running work-groups on PoCL 3.1's pthread device).
 *
 * SEMANTICS (identical on every backend; S = CLG_SUB_GROUP_SIZE, or the native size when automatic):
 *   - Sub-groups are 1-D and numbered over the work-group LINEAR local id
 *     l = x + X*(y + Y*z) (x fastest): sub-group id = l / S, lane (local id) = l % S.
 *     Lane i+1 of a sub-group is the work-item with linear local id l+1.
 *   - Local range = min(S, W - id*S) where W is the work-group size: only the last sub-group may be
 *     partial. Max local range = min(S, W): the largest sub-group of
 *     the launch, never above the work-group size (OpenCL and SYCL). Group range = ceil(W / S). Max group range = group range
 *     (clgroups launches uniform work-groups).
 *   - Uniform control flow rule: EVERY work-item of the WORK-GROUP must reach each sg_* call (same calls,
 *     same order, uniform loop trip counts, no early return before them). The emulated backend and PoCL
 *     need it (they use work-group barriers); it is the portable rule on all backends. On the emulated
 *     backend the host refuses (before any launch) a kernel with a collective under a condition, loop or
 *     early exit on a work-item id (get_local_id, get_global_id, sg_get_local_id, ... or a variable
 *     computed from one): PoCL 3.1 hangs or crashes there; an `if (get_global_id(d) OP n)` on a scalar
 *     argument n is checked per launch instead. A collective under a condition shown uniform in each
 *     sub-group (its id values only through reductions, votes, broadcasts or the sub-group id) is first
 *     moved ahead by the host where its operand has no side effects. Compute collectives unconditionally.
 *   - nvidia-ptx: any work-group size; the last sub-group of a work-group (in its last warp) is partial
 *     when the size is not a multiple of S (shuffles and votes over the sub-group's active lanes).
 *   - Unspecified results (a value, never a crash, hang or out-of-bounds access); callers must not rely on
 *     them: sg_shuffle / sg_broadcast with id >= local range; sg_shuffle_xor when lane^mask >= local range;
 *     sg_shuffle_up when lane < delta; sg_shuffle_down when lane + delta >= local range.
 *   - sg_broadcast(x, id): id must be the same on every work-item of the sub-group.
 *   - Reductions and scans cover the active lanes of the (possibly partial) sub-group only;
 *     sg_exclusive_scan_add gives 0 on lane 0. Float/double results may differ in the last bits between
 *     backends (summation order differs), but every lane of a sub-group gets the same reduction result.
 *   - sg_any / sg_all take an int predicate (non-zero = true) and return int 0 or 1.
 *   - sg_barrier(): synchronises the sub-group and fences local and global memory.
 *
 * API (generic via __attribute__((overloadable))); T = int, uint, long, ulong, float, double (CLG_HAS_FP64):
 *   uint sg_get_local_id(), sg_get_local_linear_id(), sg_get_local_range(), sg_get_max_local_range(),
 *        sg_get_group_id(), sg_get_group_linear_id(), sg_get_group_range(), sg_get_max_group_range();
 *   void sg_barrier();
 *   T sg_shuffle(T x, uint id), sg_shuffle_xor(T x, uint mask), sg_shuffle_up(T x, uint delta),
 *     sg_shuffle_down(T x, uint delta), sg_broadcast(T x, uint id);
 *   T sg_reduce_add(T x), sg_reduce_min(T x), sg_reduce_max(T x), sg_inclusive_scan_add(T x),
 *     sg_exclusive_scan_add(T x);
 *   int sg_any(int pred), sg_all(int pred).
 *   The sg_* names are macros. Helper functions may call them like any function: when built through clgroups,
 *   the emulated backend's scratch is threaded through every function that (transitively) uses the layer.
 *   Code that threads it by hand (or is built without clgroups' host) uses CLG_SG_SCRATCH_PARAM / CLG_SG_SCRATCH:
 *     float row_sum(float v CLG_SG_SCRATCH_PARAM) { return sg_reduce_add(v); }   // declare
 *     ... row_sum(v CLG_SG_SCRATCH) ...                                           // call
 *   and, for helpers without other parameters, CLG_SG_SCRATCH_PARAM_ONLY / CLG_SG_SCRATCH_ONLY
 *   (they expand to nothing except on the emulated backend; such helpers are left as written).
 *   Kernel attributes CLG_REQD_SUB_GROUP_SIZE(S) and CLG_NAMED_SUB_GROUP_SIZE(primary|automatic) are read by
 *   the host and expand to nothing here.
 *   Feature-test macro: CLGROUPS_SUB_GROUP == 1.
 */
#ifndef CLGROUPS_SUBGROUP_H
#define CLGROUPS_SUBGROUP_H

#define CLGROUPS_SUB_GROUP 1

#define CLG_REQD_SUB_GROUP_SIZE(S)
#define CLG_NAMED_SUB_GROUP_SIZE(NAME)

#if (defined(CLG_BACKEND_KHR) + defined(CLG_BACKEND_INTEL) + defined(CLG_BACKEND_NVIDIA_PTX) + \
     defined(CLG_BACKEND_EMULATED)) != 1
#error "clgroups: define exactly one of CLG_BACKEND_KHR, CLG_BACKEND_INTEL, CLG_BACKEND_NVIDIA_PTX, CLG_BACKEND_EMULATED"
#endif
#ifndef CLG_SUB_GROUP_SIZE
#error "clgroups: CLG_SUB_GROUP_SIZE is not defined"
#endif
#ifndef CLG_HAS_FP64
#define CLG_HAS_FP64 0
#endif
#ifndef CLG_HAS_SHUFFLE_RELATIVE
#define CLG_HAS_SHUFFLE_RELATIVE 0
#endif

#if CLG_HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CLG_OVL __attribute__((overloadable))
#define CLG_FN static inline

#ifdef CLG_BACKEND_EMULATED
#if CLG_SUB_GROUP_SIZE < 1 || (CLG_SUB_GROUP_SIZE & (CLG_SUB_GROUP_SIZE - 1)) != 0
#error "clgroups: the emulated CLG_SUB_GROUP_SIZE must be a power of two >= 1"
#endif
#ifndef CLG_EMU_SCRATCH_ITEMS
#error "clgroups: CLG_EMU_SCRATCH_ITEMS is not defined"
#endif
/* Internal: scratch parameter and argument of the clg_* implementation functions. */
#define CLG_SP , __local ulong *clg_s
#define CLG_SA , clg_s
/* Public: for user helper functions that call sg_*. */
#define CLG_SG_SCRATCH_PARAM , __local ulong *clg_sg_scratch
#define CLG_SG_SCRATCH , clg_sg_scratch
#define CLG_SG_SCRATCH_PARAM_ONLY __local ulong *clg_sg_scratch
#define CLG_SG_SCRATCH_ONLY clg_sg_scratch
#else
#define CLG_SP
#define CLG_SA
#define CLG_SG_SCRATCH_PARAM
#define CLG_SG_SCRATCH
#define CLG_SG_SCRATCH_PARAM_ONLY
#define CLG_SG_SCRATCH_ONLY
#endif

/* Applies M to every supported element type. */
#if CLG_HAS_FP64
#define CLG_FOREACH_TYPE(M) M(int) M(uint) M(long) M(ulong) M(float) M(double)
#else
#define CLG_FOREACH_TYPE(M) M(int) M(uint) M(long) M(ulong) M(float)
#endif

/* Combining operations of the reductions. */
#define CLG_OP_ADD(a, b) ((a) + (b))
#define CLG_OP_MIN(a, b) min((a), (b))
#define CLG_OP_MAX(a, b) max((a), (b))

/* Bit casts: clg_bits(T) gives uint for 32-bit T and ulong for 64-bit T; clg_unbits_T undoes it. */
CLG_FN CLG_OVL uint clg_bits(int x) { return as_uint(x); }
CLG_FN CLG_OVL uint clg_bits(uint x) { return x; }
CLG_FN CLG_OVL uint clg_bits(float x) { return as_uint(x); }
CLG_FN CLG_OVL ulong clg_bits(long x) { return as_ulong(x); }
CLG_FN CLG_OVL ulong clg_bits(ulong x) { return x; }
#define clg_unbits_int(b) as_int((uint)(b))
#define clg_unbits_uint(b) ((uint)(b))
#define clg_unbits_float(b) as_float((uint)(b))
#define clg_unbits_long(b) as_long((ulong)(b))
#define clg_unbits_ulong(b) ((ulong)(b))
#if CLG_HAS_FP64
CLG_FN CLG_OVL ulong clg_bits(double x) { return as_ulong(x); }
#define clg_unbits_double(b) as_double((ulong)(b))
#endif

/* Work-group linear geometry (x fastest). */
CLG_FN uint clg_wg_linear_id(void) {
    return (uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)));
}
CLG_FN uint clg_wg_size(void) { return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)); }

#if defined(CLG_BACKEND_KHR) || defined(CLG_BACKEND_INTEL)
#include <clgroups/detail/sg_khr.h>
#elif defined(CLG_BACKEND_NVIDIA_PTX)
#include <clgroups/detail/sg_ptx.h>
#else
#include <clgroups/detail/sg_emulated.h>
#endif

/* Public names (macros, so the emulated scratch is passed implicitly). */
#define sg_get_local_id() clg_lane()
#define sg_get_local_linear_id() clg_lane()
#define sg_get_local_range() clg_range()
#define sg_get_max_local_range() clg_max_range()
#define sg_get_group_id() clg_sg_id()
#define sg_get_group_linear_id() clg_sg_id()
#define sg_get_group_range() clg_sg_count()
#define sg_get_max_group_range() clg_sg_count()
#define sg_barrier() clg_barrier()
#define sg_shuffle(x, id) clg_shuffle((x), (uint)(id) CLG_SG_SCRATCH)
#define sg_shuffle_xor(x, mask) clg_shuffle_xor((x), (uint)(mask) CLG_SG_SCRATCH)
#define sg_shuffle_up(x, delta) clg_shuffle_up((x), (uint)(delta) CLG_SG_SCRATCH)
#define sg_shuffle_down(x, delta) clg_shuffle_down((x), (uint)(delta) CLG_SG_SCRATCH)
#define sg_broadcast(x, id) clg_broadcast((x), (uint)(id) CLG_SG_SCRATCH)
#define sg_reduce_add(x) clg_reduce_add((x) CLG_SG_SCRATCH)
#define sg_reduce_min(x) clg_reduce_min((x) CLG_SG_SCRATCH)
#define sg_reduce_max(x) clg_reduce_max((x) CLG_SG_SCRATCH)
#define sg_inclusive_scan_add(x) clg_inclusive_scan_add((x) CLG_SG_SCRATCH)
#define sg_exclusive_scan_add(x) clg_exclusive_scan_add((x) CLG_SG_SCRATCH)
#define sg_any(pred) clg_any((int)(pred) CLG_SG_SCRATCH)
#define sg_all(pred) clg_all((int)(pred) CLG_SG_SCRATCH)

#endif /* CLGROUPS_SUBGROUP_H */
