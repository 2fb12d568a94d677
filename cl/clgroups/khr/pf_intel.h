/* clgroups internal (khr/polyfill.h): cl_intel_subgroups on the layer. S = the maximum sub-group size.
 *   intel_sub_group_shuffle_down(cur, next, d): lane i gets cur of lane i+d if i+d < S, else next of lane i+d-S;
 *   intel_sub_group_shuffle_up(prev, cur, d):   lane i gets cur of lane i-d if i >= d, else prev of lane S+i-d;
 *   intel_sub_group_block_readN(p) on lane i: component k = p[i + k*S] (p the same on every lane);
 *   intel_sub_group_block_writeN(p, v): p[i + k*S] = component k. */
#ifndef CLGROUPS_KHR_PF_INTEL_H
#define CLGROUPS_KHR_PF_INTEL_H

#define CLG_PF_INTEL_FNS(T)                                                                              \
    CLG_FN CLG_OVL T clg_pf_intel_down(T cur, T next, uint d CLG_SP) {                                   \
        uint s = clg_max_range();                                                                        \
        uint i = clg_lane() + d;                                                                         \
        T a = clg_pf_shuffle(cur, i CLG_SA);                                                             \
        T b = clg_pf_shuffle(next, i - s CLG_SA);                                                        \
        return i < s ? a : b;                                                                            \
    }                                                                                                    \
    CLG_FN CLG_OVL T clg_pf_intel_up(T prev, T cur, uint d CLG_SP) {                                     \
        uint s = clg_max_range();                                                                        \
        uint l = clg_lane();                                                                             \
        T a = clg_pf_shuffle(cur, l - d CLG_SA);                                                         \
        T b = clg_pf_shuffle(prev, s + l - d CLG_SA);                                                    \
        return l >= d ? a : b;                                                                           \
    }
#define CLG_PF_INTEL_WIDE(T, MAXV, MINV) CLG_PF_INTEL_FNS(T)
#define CLG_PF_INTEL_NARROW(T, C, MAXV, MINV) CLG_PF_INTEL_FNS(T)
CLG_PF_WIDE(CLG_PF_INTEL_WIDE)
CLG_PF_NARROW_ID(CLG_PF_INTEL_NARROW)

CLG_FN uint clg_pf_block_read(const __global uint *p) { return p[clg_lane()]; }
CLG_FN uint2 clg_pf_block_read2(const __global uint *p) {
    uint l = clg_lane(), s = clg_max_range();
    return (uint2)(p[l], p[l + s]);
}
CLG_FN uint4 clg_pf_block_read4(const __global uint *p) {
    uint l = clg_lane(), s = clg_max_range();
    return (uint4)(p[l], p[l + s], p[l + 2u * s], p[l + 3u * s]);
}
CLG_FN uint8 clg_pf_block_read8(const __global uint *p) {
    uint l = clg_lane(), s = clg_max_range();
    return (uint8)(p[l], p[l + s], p[l + 2u * s], p[l + 3u * s], p[l + 4u * s], p[l + 5u * s], p[l + 6u * s], p[l + 7u * s]);
}
CLG_FN void clg_pf_block_write(__global uint *p, uint v) { p[clg_lane()] = v; }
CLG_FN void clg_pf_block_write2(__global uint *p, uint2 v) {
    uint l = clg_lane(), s = clg_max_range();
    p[l] = v.s0;
    p[l + s] = v.s1;
}
CLG_FN void clg_pf_block_write4(__global uint *p, uint4 v) {
    uint l = clg_lane(), s = clg_max_range();
    for (uint k = 0; k < 4u; ++k) p[l + k * s] = k == 0 ? v.s0 : k == 1 ? v.s1 : k == 2 ? v.s2 : v.s3;
}
CLG_FN void clg_pf_block_write8(__global uint *p, uint8 v) {
    clg_pf_block_write4(p, v.lo);
    clg_pf_block_write4(p + 4u * clg_max_range(), v.hi);
}

#endif
