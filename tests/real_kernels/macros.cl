// Kernels made by macros, in the styles of OpenCV / Caffe's OpenCL backends.
#define MAKE_SCALE(NAME, F)                                                          \
    kernel void NAME(global float *out, global const float *in, uint n) {            \
        size_t i = get_global_id(0);                                                 \
        if (i < n) out[i] = in[i] * (F);                                             \
    }

MAKE_SCALE(scale3, 3.0f)
MAKE_SCALE(scale_half, 0.5f)

#define CONCAT(A, B) A##_##B
#define TEMPLATE(NAME, T) CONCAT(NAME, T)
#define Dtype float

__kernel void TEMPLATE(axpb, Dtype)(__global Dtype *out, __global const Dtype *in, const uint n) {
    const int i = get_global_id(0);
    if (i < (int)n) out[i] = 2 * in[i] + 1;
}

#define ADD_ONE add_one
__kernel void ADD_ONE(__global float *out, __global const float *in) {
    size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    out[i] = in[i] + 1.0f;
}
