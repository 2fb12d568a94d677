// Kernels written the way real code is, for tests/scaling_implicit.rs (which appends
// scaling_reach.cl): none declares how it reaches its buffers; over a root device in
// partitioned placement each must give the single-device answer.

#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
typedef struct { float x, y, z, m; } Particle;

// Pointer offsets: the arrays start `off` elements in.
kernel void saxpy_offset(global float *Y, global const float *X, float a, uint off) {
    global float *y = Y + off;
    global const float *x = X + off;
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}

// A transpose: dst[x * h + y].
kernel void transpose(global float *dst, global const float *src, uint w, uint h) {
    uint x = get_global_id(0), y = get_global_id(1);
    dst[x * h + y] = src[y * w + x];
}

// A 3x3 box blur of a 2-D image stored as a buffer, edges clamped.
kernel void box_blur(global const float *in, global float *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            s += in[CLAMP(y + dy, 0, h - 1) * w + CLAMP(x + dx, 0, w - 1)];
    out[y * w + x] = s / 9.0f;
}

// A 3x3 median filter (sorting network on 9 values).
kernel void median3(global const uint *in, global uint *out, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    uint v[9];
    int k = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            v[k++] = in[CLAMP(y + dy, 0, h - 1) * w + CLAMP(x + dx, 0, w - 1)];
    for (int i = 0; i < 9; ++i)
        for (int j = i + 1; j < 9; ++j)
            if (v[j] < v[i]) { uint t = v[i]; v[i] = v[j]; v[j] = t; }
    out[y * w + x] = v[4];
}

// A gather through an index array.
kernel void gather_f(global float *out, global const float *data, global const uint *idx, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = data[idx[i]];
}

// A histogram with global atomics.
kernel void histogram(global const uint *data, global uint *bins, uint nbins) {
    atomic_inc(&bins[data[get_global_id(0)] % nbins]);
}

// Structs: the centre of mass contribution of each particle, scaled.
kernel void particles(global const Particle *p, global Particle *q, float s) {
    size_t i = get_global_id(0);
    Particle a = p[i];
    a.x *= s * a.m; a.y *= s * a.m; a.z *= s * a.m;
    q[i] = a;
}

// n-body accelerations (O(n^2), every particle reads every other).
kernel void nbody(global const Particle *p, global float *acc, uint n) {
    size_t i = get_global_id(0);
    float ax = 0.0f;
    for (uint j = 0; j < n; ++j) {
        float dx = p[j].x - p[i].x, dy = p[j].y - p[i].y, dz = p[j].z - p[i].z;
        float d2 = dx * dx + dy * dy + dz * dz + 0.01f;
        ax += p[j].m * dx / (d2 * sqrt(d2));
    }
    acc[i] = ax;
}

// Black-Scholes (after NVIDIA's SDK), call and put per option.
float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}
kernel void black_scholes(global float *call, global float *put, global const float *S,
                          global const float *X, global const float *T, float R, float V, uint n) {
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        float sq = sqrt(T[i]);
        float d1 = (log(S[i] / X[i]) + (R + 0.5f * V * V) * T[i]) / (V * sq);
        float d2 = d1 - V * sq;
        float e = exp(-R * T[i]);
        call[i] = S[i] * cnd(d1) - X[i] * e * cnd(d2);
        put[i] = X[i] * e * (1.0f - cnd(d2)) - S[i] * (1.0f - cnd(d1));
    }
}

// Mandelbrot: iterations per pixel of a w x h image.
kernel void mandelbrot(global uint *out, uint w, uint h, uint max_iter) {
    uint px = get_global_id(0), py = get_global_id(1);
    float cx = -2.0f + 3.0f * px / w, cy = -1.5f + 3.0f * py / h, x = 0.0f, y = 0.0f;
    uint it = 0;
    while (x * x + y * y < 4.0f && it < max_iter) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        ++it;
    }
    out[py * w + px] = it;
}

// Rodinia hotspot-style step: temperature from power and 4 neighbours.
kernel void hotspot(global const float *power, global const float *temp, global float *out,
                    int cols, int rows, float cap, float rx, float ry) {
    int c = get_global_id(0), r = get_global_id(1), i = r * cols + c;
    float t = temp[i];
    float n = temp[CLAMP(r - 1, 0, rows - 1) * cols + c], s = temp[CLAMP(r + 1, 0, rows - 1) * cols + c];
    float e = temp[r * cols + CLAMP(c + 1, 0, cols - 1)], w = temp[r * cols + CLAMP(c - 1, 0, cols - 1)];
    out[i] = t + cap * (power[i] + (n + s - 2.0f * t) * ry + (e + w - 2.0f * t) * rx);
}

// Rodinia pathfinder-style row: the cheapest of three predecessors.
kernel void pathfinder(global const int *wall, global const int *prev, global int *next, int cols, int row) {
    int c = get_global_id(0);
    int best = prev[c];
    if (c > 0) best = min(best, prev[c - 1]);
    if (c < cols - 1) best = min(best, prev[c + 1]);
    next[c] = wall[row * cols + c] + best;
}

// Rodinia bfs-style step: many work-items set the same flag.
kernel void bfs_step(global const int *start, global const int *count, global const int *edges,
                     global int *mask, global int *visited, global int *cost, global int *over, int n) {
    int v = get_global_id(0);
    if (v >= n || !mask[v]) return;
    mask[v] = 0;
    for (int e = start[v]; e < start[v] + count[v]; ++e) {
        int u = edges[e];
        if (!visited[u]) { cost[u] = cost[v] + 1; *over = 1; }
    }
}

// kmeans-style assignment: features[i * nf + f], clusters read by everyone.
kernel void kmeans_assign(global const float *features, global const float *clusters,
                          global int *membership, int npoints, int nclusters, int nf) {
    int p = get_global_id(0);
    if (p >= npoints) return;
    int best = 0;
    float best_d = FLT_MAX;
    for (int c = 0; c < nclusters; ++c) {
        float d = 0.0f;
        for (int f = 0; f < nf; ++f) {
            float t = features[p * nf + f] - clusters[c * nf + f];
            d += t * t;
        }
        if (d < best_d) { best_d = d; best = c; }
    }
    membership[p] = best;
}

// Naive GEMM: C = A (m x k) * B (k x n).
kernel void gemm(global const float *A, global const float *B, global float *C, int k, int n) {
    int col = get_global_id(0), row = get_global_id(1);
    float s = 0.0f;
    for (int i = 0; i < k; ++i) s += A[row * k + i] * B[i * n + col];
    C[row * n + col] = s;
}

// Matrix-vector: one row per work-item.
kernel void gemv(global const float *A, global const float *x, global float *y, int w) {
    int r = get_global_id(0);
    float s = 0.0f;
    for (int c = 0; c < w; ++c) s += A[r * w + c] * x[c];
    y[r] = s;
}

// Interleaved complex numbers: z[2i], z[2i+1].
kernel void cmul(global float *z, global const float *w) {
    size_t i = get_global_id(0);
    float re = z[2 * i] * w[2 * i] - z[2 * i + 1] * w[2 * i + 1];
    float im = z[2 * i] * w[2 * i + 1] + z[2 * i + 1] * w[2 * i];
    z[2 * i] = re;
    z[2 * i + 1] = im;
}

// A work-group reduction into one partial sum per group, through local memory.
kernel void group_sums(global const int *x, global int *partial, local int *scratch) {
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = n / 2; s > 0; s /= 2) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = scratch[0];
}

// A conditional update: elements it skips keep their values.
kernel void relu_inplace(global float *x) {
    size_t i = get_global_id(0);
    if (x[i] < 0.0f) x[i] = 0.0f;
}

// Reverses an array (every device writes the other's half).
kernel void reverse(global int *y, global const int *x, uint n) {
    size_t i = get_global_id(0);
    y[n - 1 - i] = x[i];
}

// 2-D heat/Jacobi step over rows of w.
kernel void heat(global const float *t, global float *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = 0.25f * (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]);
}

// Racy on purpose: the first and the last work-item write one element.
kernel void last_writer(global int *y, uint n) {
    size_t i = get_global_id(0);
    if (i == 0 || i == n - 1) y[0] = (int)i + 1;
}

// Two views of one buffer: the lower half written through `lo`, the upper through `hi`.
kernel void halves(global int *lo, global int *hi, uint n) {
    size_t i = get_global_id(0);
    lo[i] = (int)i;
    hi[n - 1 - i] = -(int)i;
}
