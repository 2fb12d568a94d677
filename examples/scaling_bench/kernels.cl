kernel void saxpy(global float *y, global const float *x, float a) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
kernel void heat(global const float *t, global float *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = 0.25f * (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]);
}
float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = RSQRT2PI * exp(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}
kernel void blur(global const float *x, global float *y, uint n) {
    size_t i = get_global_id(0);
    if (i > 0 && i + 1 < n) y[i] = (x[i - 1] + x[i] + x[i + 1]) * (1.0f / 3.0f);
    else if (i < n) y[i] = x[i];
}
kernel void black_scholes(global float *call, global float *put, global const float *S,
                          global const float *X, global const float *T, float R, float V) {
    size_t i = get_global_id(0);
    float sq = sqrt(T[i]);
    float d1 = (log(S[i] / X[i]) + (R + 0.5f * V * V) * T[i]) / (V * sq);
    float d2 = d1 - V * sq;
    float e = exp(-R * T[i]);
    call[i] = S[i] * cnd(d1) - X[i] * e * cnd(d2);
    put[i] = X[i] * e * (1.0f - cnd(d2)) - S[i] * (1.0f - cnd(d1));
}
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
/* C = A B for n x n row-major matrices, in 16 x 16 tiles through local memory. */
#define TS 16
kernel void gemm(global const float *a, global const float *b, global float *c, int n) {
    local float as[TS][TS], bs[TS][TS];
    int lx = get_local_id(0), ly = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / TS; t++) {
        as[ly][lx] = a[row * n + t * TS + lx];
        bs[ly][lx] = b[(t * TS + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            acc += as[ly][k] * bs[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}
/* One step of an all-pairs n-body: bodies are (x, y, z, mass) in pos, velocities (x, y, z, 0) in vel;
 * the new positions go to out. */
kernel void nbody(global const float *pos, global float *vel, global float *out, int n, float dt) {
    int i = get_global_id(0);
    float px = pos[4 * i], py = pos[4 * i + 1], pz = pos[4 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float dx = pos[4 * j] - px, dy = pos[4 * j + 1] - py, dz = pos[4 * j + 2] - pz;
        float inv = rsqrt(dx * dx + dy * dy + dz * dz + 0.01f);
        float s = pos[4 * j + 3] * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    float vx = vel[4 * i] + dt * ax, vy = vel[4 * i + 1] + dt * ay, vz = vel[4 * i + 2] + dt * az;
    vel[4 * i] = vx;
    vel[4 * i + 1] = vy;
    vel[4 * i + 2] = vz;
    out[4 * i] = px + dt * vx;
    out[4 * i + 1] = py + dt * vy;
    out[4 * i + 2] = pz + dt * vz;
    out[4 * i + 3] = pos[4 * i + 3];
}
