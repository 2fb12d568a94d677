// Typedefs, structs, byte views and size_t, as in Rodinia / PyOpenCL examples.
typedef float real;
typedef ulong count_t;
typedef struct { float a; float b; } pair_t;
struct particle { float x; float y; };

kernel void real_scale(global real *restrict out, global const real *restrict in, const uint n) {
    const real s = 1.5f;
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * s;
}

kernel void pair_sum(global float *out, global const pair_t *pairs, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = pairs[i].a + pairs[i].b;
}

kernel void particle_y(global float *out, global const struct particle *p, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = p[i].y;
}

kernel void bytes_copy(global float *out, global const char *raw, uint n) {
    global const float *f = (global const float *)raw;
    size_t i = get_global_id(0);
    if (i < n) out[i] = f[i];
}

kernel void size_t_n(global float *out, global const float *in, const count_t n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] + 2.0f;
}
