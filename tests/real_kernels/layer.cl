// The sub-group layer inside helper functions, without any plumbing.
#include <clgroups/subgroup.h>

float same(float x) { return sg_shuffle(x, sg_get_local_id()); }
float twice(float x) { return same(x) + sg_shuffle_xor(x, 0); }

kernel void sg_helper(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    float v = i < n ? in[i] : 0.0f;
    float r = same(v);
    if (i < n) out[i] = r + 1.0f;
}

kernel void sg_nested(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    float r = twice(i < n ? in[i] : 0.0f);
    if (i < n) out[i] = r;
}
