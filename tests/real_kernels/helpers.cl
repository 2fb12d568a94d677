/* Helpers and comments with braces and keywords: kernel void fake(global int *x) { */
// } kernel void also_fake() {
inline float sq(float x) { return x * x; }
float poly(float x) { return sq(x) + 1.0f; } /* } */

kernel void poly_k(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0); // kernel void nope() {
    if (i < n) out[i] = poly(in[i]);
}

__kernel void clampk(__global float *out, __global const float *in) {
    int i = (int)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2)));
    out[i] = fmin(fmax(in[i], 2.0f), 20.0f);
}

__kernel void
comment_heavy /* { */ ( __global float * out, // }
                        __global const float * in )
{
    /* barrier(CLK_LOCAL_MEM_FENCE); local float t[4]; */
    out[get_global_id(0)] = in[get_global_id(0)] - 3.0f;
}

__kernel void pyopencl_sum(__global const float *a_g, __global const float *b_g, __global float *res_g) {
    int gid = get_global_id(0);
    res_g[gid] = a_g[gid] + b_g[gid];
}
