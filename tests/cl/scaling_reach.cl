// Kernels that reach across device chunks, for tests/scaling_reach.rs (strict roots: refused
// or right) and tests/scaling_implicit.rs (appended to implicit_scaling.cl: never refused).

kernel void stencil(global int *y, global const int *x, uint n) {
    size_t i = get_global_id(0);
    int s = x[i];
    if (i > 0) s += x[i - 1];
    if (i + 1 < n) s += x[i + 1];
    y[i] = s;
}

kernel void stencil2d(global int *y, global const int *x, uint w, uint h) {
    size_t c = get_global_id(0), r = get_global_id(1);
    int s = 4 * x[r * w + c];
    if (r > 0) s -= x[(r - 1) * w + c];
    if (r + 1 < h) s -= x[(r + 1) * w + c];
    if (c > 0) s -= x[r * w + c - 1];
    if (c + 1 < w) s -= x[r * w + c + 1];
    y[r * w + c] = s;
}

kernel void gather(global int *y, global const int *x, global const uint *idx) {
    size_t i = get_global_id(0);
    y[i] = x[idx[i]];
}

kernel void scatter(global int *y, global const int *x, global const uint *idx) {
    size_t i = get_global_id(0);
    y[idx[i]] = x[i];
}

kernel void atomic_sum(global int *sum, global const int *x) {
    atomic_add(&sum[0], x[get_global_id(0)]);
}

kernel void prefix(global int *y, global const int *x) {
    size_t i = get_global_id(0);
    int s = 0;
    for (size_t j = 0; j <= i; ++j) s += x[j];
    y[i] = s;
}

kernel void row_sums(global int *out, global const int *x, uint w) {
    size_t r = get_global_id(1);
    int s = 0;
    for (uint c = 0; c < w; ++c) s += x[r * w + c];
    out[r] = s;
}

kernel void grid_stride(global int *y, global const int *x, int a, uint n) {
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) y[i] += a * x[i];
}

size_t total(void) { return get_global_size(0); }

kernel void via_helper(global int *y) {
    y[get_global_id(0)] = (int)total();
}
