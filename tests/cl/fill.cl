// A fill and a guarded mixed-type kernel, for tests/checked_mode.rs and tests/soundness.rs.
kernel void fill(global int *o, int v) { o[get_global_id(0)] = v; }
kernel void mixed(global float *f, global int *i, uint n, float a) { if (get_global_id(0) < n) f[get_global_id(0)] = a + i[get_global_id(0)]; }
