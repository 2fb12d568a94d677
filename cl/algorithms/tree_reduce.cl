/* A classic local-memory tree reduction in the style of PyOpenCL's ReductionKernel (the
 * baseline of benches/reduce.rs): each work-item sums `seq` scalar loads strided by the
 * work-group size (coalesced), then a tree over local memory with a barrier per level.
 * The work-group size must be a power of two. out[group] = the group's sum.
 * Build define: CLG_T (element type). */
#define T CLG_T

kernel void tree_reduce(global const T *in, global T *out, ulong n, ulong seq, local T *ldata) {
    size_t lid = get_local_id(0);
    size_t size = get_local_size(0);
    size_t i = get_group_id(0) * size * seq + lid;
    T acc = 0;
    for (ulong s = 0; s < seq; s++, i += size)
        if (i < n)
            acc += in[i];
    ldata[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t step = size / 2; step > 0; step /= 2) {
        if (lid < step)
            ldata[lid] += ldata[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = ldata[0];
}
