// Vector types: float4 buffers and vload/vstore.
kernel void vec4_scale(global float4 *out, global const float4 *in) {
    size_t i = get_global_id(0);
    out[i] = in[i] * (float4)(2.0f);
}

kernel void vload_mix(global float *out, global const float *in) {
    size_t i = get_global_id(0);
    float4 v = vload4(i, in);
    vstore4(v.wzyx, i, out);
}

kernel void vol3(global float *out, global const float *in) {
    size_t i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    out[i] = in[i] + 0.25f;
}
