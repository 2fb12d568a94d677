// Grid-stride loops and CUDA-style indexing.
kernel void grid_scale(global float *out, global const float *in, uint n) {
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) out[i] = in[i] * 6.0f;
}

kernel void cuda_style(global float *out, global const float *in, uint n) {
    uint idx = get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (idx < n) out[idx] = in[idx] + 4.0f;
}
