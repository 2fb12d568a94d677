// CLBlast-style: preprocessor lines inside the declaration select the attributes.
#define WGS 16
#define RELAX_A 1
#define RELAX_B 0

#if RELAX_A == 1
__kernel
#else
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void xaxpy_relaxed(__global float *out, __global const float *in, const uint n) {
    for (uint id = get_global_id(0); id < n; id += get_global_size(0)) {
        out[id] = 2.0f * in[id];
    }
}

#if RELAX_B == 1
__kernel
#else
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
#endif
void xaxpy_strict(__global float *out, __global const float *in, const uint n) {
    const uint id = get_global_id(0);
    if (id < n) { out[id] = 2.0f * in[id] + 1.0f; }
}

#if defined(DOUBLE_IT)
kernel void dup_if(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 2.0f;
}
#else
kernel void dup_if(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 3.0f;
}
#endif
