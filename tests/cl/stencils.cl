// The stencils of tests/scaling_cost.rs, tests/scaling_footprint.rs and tests/scaling_margins.rs,
// in integers (bit-exact results), with their host references in tests/common/partitioned.rs.

// One step of the 2-D heat stencil over `t` (`w` by `h`, borders kept).
kernel void heat(global const int *t, global int *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]) / 4;
}

// One step of the 1-D 3-point blur over `x` (ends kept).
kernel void blur(global const int *x, global int *y, uint n) {
    size_t i = get_global_id(0);
    if (i > 0 && i + 1 < n) y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3;
    else y[i] = x[i];
}
