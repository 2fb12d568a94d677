// Work-group attributes and hints.
__attribute__((reqd_work_group_size(16, 1, 1)))
kernel void reqd16(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 5.0f;
}

kernel __attribute__((reqd_work_group_size(4, 2, 1))) void reqd2d(global float *out, global const float *in) {
    size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
    out[i] = in[i] + 7.0f;
}

__kernel __attribute__((vec_type_hint(float4))) void vechint(__global float *out, __global const float *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * in[i];
}

__kernel void wghint(__global float *out, __global const float *in, uint n)
    __attribute__((work_group_size_hint(64, 1, 1)))
{
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] / 2.0f;
}
