// Local memory and barriers: a shifted read through a tile (a 1-D stencil's halo pattern).
kernel void shift_tile(global float *out, global const float *in, uint n, local float *tile) {
    size_t i = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
    tile[lid] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    float next = lid + 1 < lsz ? tile[lid + 1] : (i + 1 < n ? in[i + 1] : 0.0f);
    if (i < n) out[i] = i + 1 < n ? next : 0.0f;
}

__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void fixed_tile(global float *out, global const float *in, uint n) {
    local float tile[64];
    size_t i = get_global_id(0), lid = get_local_id(0);
    tile[lid] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < n) out[i] = tile[lid] * 2.0f;
}
