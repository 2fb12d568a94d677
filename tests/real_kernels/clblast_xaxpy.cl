// CLBlast as it is written (src/kernels/common.opencl, level1/level1.opencl,
// level1/xaxpy.opencl, level1/xdot.opencl; single precision): every kernel's declaration selects
// its `reqd_work_group_size` with preprocessor lines, which clgroups cannot rewrite.

#ifndef PRECISION
  #define PRECISION 32
#endif
#ifndef USE_INLINE_KEYWORD
  #define USE_INLINE_KEYWORD 1
#endif
#if USE_INLINE_KEYWORD == 1
  #define INLINE_FUNC inline
#else
  #define INLINE_FUNC
#endif
#ifndef RELAX_WORKGROUP_SIZE
  #define RELAX_WORKGROUP_SIZE 0
#endif

#if PRECISION == 32
  typedef float real;
  typedef float2 real2;
  typedef float4 real4;
  #define ZERO 0.0f
#endif

// Single-scalar kernel arguments (complex precisions pass real2, not shown)
typedef real real_arg;
#define GetRealArg(x) x

#define SetToZero(a) a = ZERO
#define MultiplyAdd(c, a, b) c += a * b
#define Add(c, a, b) c = a + b

// level1.opencl
#ifndef WGS
  #define WGS 64
#endif
#ifndef WGS1
  #define WGS1 64
#endif
#ifndef WPT
  #define WPT 1
#endif
#ifndef VW
  #define VW 1
#endif
#if VW == 1
  typedef real realV;
#elif VW == 4
  typedef real4 realV;
#endif

INLINE_FUNC realV MultiplyAddVector(realV cvec, const real aval, const realV bvec) {
  #if VW == 1
    MultiplyAdd(cvec, aval, bvec);
  #elif VW == 4
    MultiplyAdd(cvec.x, aval, bvec.x);
    MultiplyAdd(cvec.y, aval, bvec.y);
    MultiplyAdd(cvec.z, aval, bvec.z);
    MultiplyAdd(cvec.w, aval, bvec.w);
  #endif
  return cvec;
}

// xaxpy.opencl: the full version, with offsets and strides. It covers any n with any number of
// threads (a grid-stride loop over get_global_size), so a rounded-up range would change which
// thread does what: clgroups refuses its awkward plain ranges.
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void Xaxpy(const int n, const real_arg arg_alpha,
           const __global real* restrict xgm, const int x_offset, const int x_inc,
           __global real* ygm, const int y_offset, const int y_inc) {
  const real alpha = GetRealArg(arg_alpha);

  // Loops over the work that needs to be done (allows for an arbitrary number of threads)
  for (int id = get_global_id(0); id < n; id += get_global_size(0)) {
    real xvalue = xgm[id*x_inc + x_offset];
    MultiplyAdd(ygm[id*y_inc + y_offset], alpha, xvalue);
  }
}

// xaxpy.opencl: the faster version, without offsets and strides but with an if-statement.
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void XaxpyFaster(const int n, const real_arg arg_alpha,
                 const __global realV* restrict xgm,
                 __global realV* ygm) {
  const real alpha = GetRealArg(arg_alpha);

  const int num_usefull_threads = n / (VW * WPT);
  if (get_global_id(0) < num_usefull_threads) {
    #pragma unroll
    for (int _w = 0; _w < WPT; _w += 1) {
      const int id = _w*num_usefull_threads + get_global_id(0);
      realV xvalue = xgm[id];
      realV yvalue = ygm[id];
      ygm[id] = MultiplyAddVector(yvalue, alpha, xvalue);
    }
  }
}

// Xaxpy's declaration (offsets, strides) with XaxpyFaster's if-statement: one element per thread.
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void XaxpyStrided(const int n, const real_arg arg_alpha,
                  const __global real* restrict xgm, const int x_offset, const int x_inc,
                  __global real* ygm, const int y_offset, const int y_inc) {
  const real alpha = GetRealArg(arg_alpha);
  const int id = get_global_id(0);
  if (id < n) {
    real xvalue = xgm[id*x_inc + x_offset];
    MultiplyAdd(ygm[id*y_inc + y_offset], alpha, xvalue);
  }
}

// XaxpyStrided without the if-statement (like XaxpyFastest, it trusts the launch to cover
// exactly n elements): only the wrapper's guard keeps the extra work-items out.
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void XaxpyExact(const int n, const real_arg arg_alpha,
                const __global real* restrict xgm, const int x_offset, const int x_inc,
                __global real* ygm, const int y_offset, const int y_inc) {
  const real alpha = GetRealArg(arg_alpha);
  const int id = get_global_id(0);
  real xvalue = xgm[id*x_inc + x_offset];
  MultiplyAdd(ygm[id*y_inc + y_offset], alpha, xvalue);
}

// xdot.opencl: the first stage of the dot product (per-work-group partial sums in local memory,
// reduced with barriers).
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(WGS1, 1, 1)))
#endif
void Xdot(const int n,
          const __global real* restrict xgm, const int x_offset, const int x_inc,
          const __global real* restrict ygm, const int y_offset, const int y_inc,
          __global real* output, const int do_conjugate) {
  __local real lm[WGS1];
  const int lid = get_local_id(0);
  const int wgid = get_group_id(0);
  const int num_groups = get_num_groups(0);

  // Performs multiplication and the first steps of the reduction
  real acc;
  SetToZero(acc);
  int id = wgid*WGS1 + lid;
  while (id < n) {
    real x = xgm[id*x_inc + x_offset];
    real y = ygm[id*y_inc + y_offset];
    MultiplyAdd(acc, x, y);
    id += WGS1*num_groups;
  }
  lm[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);

  // Performs reduction in local memory
  for (int s=WGS1/2; s>0; s=s>>1) {
    if (lid < s) {
      Add(lm[lid], lm[lid], lm[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Stores the per-workgroup result
  if (lid == 0) {
    output[wgid] = lm[0];
  }
}

// copy_fast.opencl (COPY_WPT 1, COPY_VW 1): a matrix copy in 8x8 work-groups. Its rows come from
// get_group_id, which a rounded-up range leaves to a partial last work-group: refused.
#ifndef COPY_DIMX
  #define COPY_DIMX 8
#endif
#ifndef COPY_DIMY
  #define COPY_DIMY 8
#endif
#ifndef COPY_WPT
  #define COPY_WPT 1
#endif
#ifndef COPY_VW
  #define COPY_VW 1
#endif
typedef real realC;

#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(COPY_DIMX, COPY_DIMY, 1)))
#endif
void CopyMatrixFast(const int ld,
                    __global const realC* restrict src,
                    __global realC* dest,
                    const real_arg arg_alpha) {
  const real alpha = GetRealArg(arg_alpha);
  #pragma unroll
  for (int _w_one = 0; _w_one < COPY_WPT; _w_one += 1) {
    const int id_one = get_global_id(0);
    const int id_two = (get_group_id(1)*COPY_WPT + _w_one) * COPY_DIMY + get_local_id(1);
    const int id = id_two*(ld/COPY_VW) + id_one;
    realC result;
    result = alpha * src[id];
    dest[id] = result;
  }
}

// The same copy indexed by global ids only: runs through the wrapper, guarded in both dimensions.
#if RELAX_WORKGROUP_SIZE == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(COPY_DIMX, COPY_DIMY, 1)))
#endif
void CopyMatrixGlobal(const int ld,
                      __global const realC* restrict src,
                      __global realC* dest,
                      const real_arg arg_alpha) {
  const real alpha = GetRealArg(arg_alpha);
  const int id = get_global_id(1)*ld + get_global_id(0);
  dest[id] = alpha * src[id];
}
