/* clgroups internal (khr/polyfill.h): cl_khr_subgroup_ballot on the layer, for uniform control flow.
 * A ballot is a uint4 over lanes 0..127: lane i is bit i % 32 of component i / 32. */
#ifndef CLGROUPS_KHR_PF_BALLOT_H
#define CLGROUPS_KHR_PF_BALLOT_H

/* Component w (0..3) of v. */
CLG_FN uint clg_pf_word(uint4 v, uint w) { return w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w; }

/* The mask of lanes below n (n <= 128). */
CLG_FN uint clg_pf_below_word(uint n, uint w) {
    uint lo = 32u * w;
    return n >= lo + 32u ? 0xffffffffu : n <= lo ? 0u : (1u << (n - lo)) - 1u;
}
CLG_FN uint4 clg_pf_below(uint n) {
    return (uint4)(clg_pf_below_word(n, 0), clg_pf_below_word(n, 1), clg_pf_below_word(n, 2), clg_pf_below_word(n, 3));
}
CLG_FN uint clg_pf_popcount4(uint4 v) { return popcount(v.x) + popcount(v.y) + popcount(v.z) + popcount(v.w); }

/* Lanes hold disjoint bits, so a sum over the sub-group is their OR. Words past the largest possible
 * sub-group are not reduced. */
CLG_FN uint4 clg_pf_ballot(int pred CLG_SP) {
    uint l = clg_lane();
    uint bit = pred != 0 && l < 128u ? 1u << (l % 32u) : 0u;
    uint w = l / 32u;
    uint4 r = (uint4)(0u);
    r.x = clg_reduce_add(w == 0 ? bit : 0u CLG_SA);
#if CLG_SUB_GROUP_SIZE == 0 || CLG_SUB_GROUP_SIZE > 32
    r.y = clg_reduce_add(w == 1 ? bit : 0u CLG_SA);
    r.z = clg_reduce_add(w == 2 ? bit : 0u CLG_SA);
    r.w = clg_reduce_add(w == 3 ? bit : 0u CLG_SA);
#endif
    return r;
}

CLG_FN int clg_pf_bit_extract(uint4 v, uint i) { return i < 128u && ((clg_pf_word(v, i / 32u) >> (i % 32u)) & 1u) != 0u; }
CLG_FN int clg_pf_inverse_ballot(uint4 v) { return clg_pf_bit_extract(v, clg_lane()); }
CLG_FN uint clg_pf_bit_count(uint4 v) { return clg_pf_popcount4(v & clg_pf_below(clg_range())); }
CLG_FN uint clg_pf_ballot_inclusive_scan(uint4 v) { return clg_pf_popcount4(v & clg_pf_below(clg_lane() + 1u)); }
CLG_FN uint clg_pf_ballot_exclusive_scan(uint4 v) { return clg_pf_popcount4(v & clg_pf_below(clg_lane())); }
/* Lowest / highest set bit of the sub-group's lanes (undefined, here 0xffffffff, when none is set). */
CLG_FN uint clg_pf_find_lsb(uint4 v) {
    v &= clg_pf_below(clg_range());
    for (uint w = 0; w < 4u; ++w) {
        uint x = clg_pf_word(v, w);
        if (x != 0u) return 32u * w + popcount((x & (0u - x)) - 1u);
    }
    return 0xffffffffu;
}
CLG_FN uint clg_pf_find_msb(uint4 v) {
    v &= clg_pf_below(clg_range());
    for (uint w = 4u; w-- > 0u;) {
        uint x = clg_pf_word(v, w);
        if (x != 0u) return 32u * w + 31u - clz(x);
    }
    return 0xffffffffu;
}
CLG_FN uint4 clg_pf_mask_eq(void) { return clg_pf_below(clg_lane() + 1u) & ~clg_pf_below(clg_lane()); }
CLG_FN uint4 clg_pf_mask_ge(void) { return clg_pf_below(clg_range()) & ~clg_pf_below(clg_lane()); }
CLG_FN uint4 clg_pf_mask_gt(void) { return clg_pf_below(clg_range()) & ~clg_pf_below(clg_lane() + 1u); }
CLG_FN uint4 clg_pf_mask_le(void) { return clg_pf_below(clg_lane() + 1u); }
CLG_FN uint4 clg_pf_mask_lt(void) { return clg_pf_below(clg_lane()); }

#endif
