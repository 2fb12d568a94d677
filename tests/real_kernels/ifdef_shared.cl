// Two headers, one body: valid C once preprocessed; no scanner can balance its braces.
#define USE_FAST 1
#ifdef USE_FAST
kernel void shared_hdr(global float *out, global const float *in, uint n) {
    const float k = 4.0f;
#else
kernel void shared_hdr(global float *out, global const float *in, uint n, float k) {
#endif
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * k;
}

kernel void shared_other(global float *out, global const float *in, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] - 1.0f;
}
