//! Vectors, structs, views, atomics; shapes, element types and ranges.

use super::*;

const WRITES_SRC: &str = r#"
typedef struct { int a; short b; char c; } S;
typedef struct { global int *p; int off; } View;
kernel void vec4(global int *y, global const int *x) {
    int i = get_global_id(0);
    int4 v = vload4(i, x);
    vstore4(v * 2 + (int4)(1, 2, 3, 4), i, y);
}
kernel void vec4_shifted(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (4 * i + 5 < 4 * n) vstore4(vload4(i + 1, x), i, y + 1);
}
kernel void half_only(global float *y, global const half *x) {
    int i = get_global_id(0);
    y[i] = vload_half(i, x) * 2.0f;
}
kernel void struct_member(global S *s, global const int *x) {
    int i = get_global_id(0);
    s[i].a = x[i];
    s[i].b = (short)(x[i] * 3);
    s[i].c = (char)i;
}
kernel void through_view(global int *y, global const int *x, int off, int n) {
    int i = get_global_id(0);
    View v;
    v.p = y;
    v.off = off;
    if (i + off < n) v.p[i + v.off] = x[i];
}
kernel void offset_param(global int *y, global const int *x, int off, int n) {
    global int *row = y + off;
    int i = get_global_id(0);
    if (i + off < n) row[i] = x[i] * 7;
}
kernel void rows(global int *a, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    global int *row = a + y * w;
    row[x] = row[x] * 2 + y;
}
kernel void const_cast(global const int *x) {
    int i = get_global_id(0);
    ((global int *)x)[i] = x[i] + 1000;
}
kernel void hist(global int *h, global const int *x, int nb) {
    int i = get_global_id(0);
    atomic_add(&h[(x[i] & 0xff) % nb], 1);
}
kernel void counter_max(global int *m, global const int *x) {
    atomic_max(&m[0], x[get_global_id(0)]);
}
"#;

#[test]
fn vectors_structs_views_atomics() {
    each_diff(
        "vectors_structs_views_atomics",
        WRITES_SRC,
        "",
        SIZES,
        |d, n| {
            let x = ints(4 * n + 8, 11);
            let y = d.col(&vec![-9i32; 4 * n]);
            let xb = d.col(&x);
            d.launch("vec4", d1(n), None, &[B(y), B(xb)]);
            d.check("vec4");
            d.launch("vec4_shifted", d1(n), None, &[B(y), B(xb), I(n as i32)]);
            d.check("vec4_shifted");

            d.reset();
            let hx: Vec<u16> = (0..n)
                .map(|i| half::f16::from_f32(i as f32 - 3.5).to_bits())
                .collect();
            let hx: Vec<half::f16> = hx.into_iter().map(half::f16::from_bits).collect();
            let y = d.col(&vec![0f32; n]);
            let xb = d.col(&hx);
            d.launch("half_only", d1(n), None, &[B(y), B(xb)]);
            d.check("half_only");

            d.reset();
            let s = d.col(&vec![[0i32; 2]; n]);
            let xb = d.col(&x);
            d.launch("struct_member", d1(n), None, &[B(s), B(xb)]);
            d.check("struct_member");

            for off in [0, 1, 5] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                d.launch(
                    "through_view",
                    d1(n),
                    None,
                    &[B(y), B(xb), I(off), I(n as i32)],
                );
                d.check("through_view");
                d.launch(
                    "offset_param",
                    d1(n),
                    None,
                    &[B(y), B(xb), I(off), I(n as i32)],
                );
                d.check("offset_param");
            }

            d.reset();
            let w = 5;
            let a = d.col(&ints(w * n, 2));
            d.launch("rows", Range::d2(w, n), None, &[B(a), I(w as i32)]);
            d.check("rows");

            d.reset();
            let h = d.col(&[0i32; 2]);
            let xb = d.col(&x);
            d.launch("hist", d1(n), None, &[B(h), B(xb), I(2)]);
            d.check("hist");
            let h = d.col(&[0i32; 7]);
            d.launch("hist", d1(n), None, &[B(h), B(xb), I(7)]);
            d.check("hist 7");
            let m = d.col(&[i32::MIN]);
            d.launch("counter_max", d1(n), None, &[B(m), B(xb)]);
            d.check("counter_max");
        },
    );
}

/// Fixed finding: writes through a `const` pointee cast away, `((global int *)x)[i] = ...`,
/// were lost in partitioned placement: "only reads" was the driver's `const`, so the buffer was
/// replicated and not merged (root: x unchanged). Valid C where the buffer itself is writable;
/// the source now shows the cast (`footprint::const_dropped`), so `x` counts as written.
#[test]
fn const_cast_away_writes_are_kept() {
    each_diff(
        "const_cast_away_writes_are_kept",
        WRITES_SRC,
        "",
        &[1, 64],
        |d, n| {
            let x = ints(n, 11);
            let xb = d.col(&x);
            d.launch("const_cast", d1(n), None, &[B(xb)]);
            d.check("const_cast");
            let want: Vec<i32> = x.iter().map(|v| v + 1000).collect();
            assert_eq!(d.ints_of(xb), want, "{}", d.name);
        },
    );
}

const SHAPES_SRC: &str = r#"
kernel void with_offset(global int *y, global const int *x) {
    int i = get_global_id(0);
    int o = get_global_offset(0);
    y[i] = x[i - o] * 2 + o;
}
kernel void transpose(global int *dst, global const int *src, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    dst[x * h + y] = src[y * w + x];
}
kernel void col_sums(global int *out, global const int *a, int w, int h) {
    int c = get_global_id(0);
    int s = 0;
    for (int r = 0; r < h; r++) s += a[r * w + c];
    out[c] = s;
}
kernel void tiled(global int *y, global const int *x, local int *tile, int n) {
    int l = get_local_id(0), g = get_group_id(0), L = get_local_size(0);
    int base = g * L;
    tile[l] = x[base + l];
    if (l == 0 && base + L < n) tile[L] = x[base + L];
    barrier(CLK_LOCAL_MEM_FENCE);
    int right = (l + 1 < L || base + L < n) ? tile[l + 1] : 0;
    y[base + l] = tile[l] * 10 + right;
}
kernel void grid_stride(global int *y, global const int *x, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + i;
}
kernel void radius(global int *y, global const int *x, int r, int n) {
    int i = get_global_id(0);
    int s = 0;
    for (int k = -r; k <= r; k++) {
        int j = i + k;
        if (j >= 0 && j < n) s += x[j];
    }
    y[i] = s;
}
kernel void radius3(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 3 && i + 3 < n) y[i] = x[i - 3] + x[i + 3] * 2;
    else y[i] = x[i];
}
kernel void early_return(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= n) return;
    if (x[i] < 0) return;
    y[i] = x[i] + 1;
}
kernel void chars(global char *y, global const char *x, int n) {
    int i = get_global_id(0);
    y[i] = (char)(x[i] + (i + 1 < n ? x[i + 1] : 0));
}
kernel void shorts(global short *y, global const short *x, int n) {
    int i = get_global_id(0);
    y[i] = (short)(x[i] * 3 - (i > 0 ? x[i - 1] : 0));
}
kernel void doubles(global double *y, global const double *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i] * 0.5 + (i > 0 ? x[i - 1] : 1.0);
}
kernel void longs(global long *y, global const long *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] + (long)i;
}
kernel void bytes_as_ints(global uchar *y, global const int *x) {
    int i = get_global_id(0);
    y[4 * i] = (uchar)x[i];
    y[4 * i + 1] = (uchar)(x[i] >> 8);
    y[4 * i + 2] = 0;
    y[4 * i + 3] = 1;
}
kernel void inplace_neighbour(global int *a, int n) {
    int i = get_global_id(0);
    a[i] = a[i] * 2 + 1;
}
kernel void gather(global int *y, global const int *x, global const int *idx) {
    int i = get_global_id(0);
    y[i] = x[idx[i]];
}
kernel void scatter(global int *y, global const int *x, global const int *idx) {
    int i = get_global_id(0);
    y[idx[i]] = x[i];
}
kernel void cond_write(global int *y, global const int *x) {
    int i = get_global_id(0);
    if (x[i] > 0) y[i] = x[i];
}
"#;

#[test]
fn shapes_types_and_ranges() {
    each_diff("shapes_types_and_ranges", SHAPES_SRC, "", SIZES, |d, n| {
        let ni = n as i32;
        let x = ints(n, 21);
        // A global offset (the kernel subtracts it).
        for off in [1usize, 5] {
            d.reset();
            let y = d.col(&vec![-9i32; n + off]);
            let xb = d.col(&x);
            d.try_launch("with_offset", d1(n), None, Some(d1(off)), &[B(y), B(xb)])
                .unwrap_or_else(|e| panic!("with_offset refused: {e}"));
            d.check("with_offset");
        }
        // 2-D: a transpose and column sums of w x n, the split along rows.
        for w in [1usize, 3, 17] {
            d.reset();
            let a = d.col(&ints(w * n, 4));
            let t = d.col(&vec![-9i32; w * n]);
            d.launch(
                "transpose",
                Range::d2(w, n),
                None,
                &[B(t), B(a), I(w as i32), I(ni)],
            );
            d.check("transpose");
            // back again: the transposed is n wide, w high
            let b = d.col(&vec![-9i32; w * n]);
            d.launch(
                "transpose",
                Range::d2(n, w),
                None,
                &[B(b), B(t), I(ni), I(w as i32)],
            );
            d.check("transpose back");
            let s = d.col(&vec![-9i32; w]);
            d.launch("col_sums", d1(w), None, &[B(s), B(a), I(w as i32), I(ni)]);
            d.check("col_sums");
        }
        // Tiles in local memory, one element beyond.
        for l in [1usize, 2, 4] {
            if n % l != 0 {
                continue;
            }
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch(
                "tiled",
                d1(n),
                Some(d1(l)),
                &[B(y), B(xb), Arg::Local(4 * (l + 1)), I(ni)],
            );
            d.check("tiled");
        }
        // Grid-stride over fewer work-items than elements.
        for g in [1usize, 3, 8] {
            if n < d.root.len() && g > n && std::env::var("HUNT_TINY").is_err() {
                continue; // finding: tiny_buffer_under_a_wider_launch_is_refused
            }
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("grid_stride", d1(g), None, &[B(y), B(xb), I(ni)]);
            d.check("grid_stride");
        }
        for r in [0, 1, 3, 40] {
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("radius", d1(n), None, &[B(y), B(xb), I(r), I(ni)]);
            d.check("radius");
        }
        d.reset();
        let y = d.col(&vec![-9i32; n]);
        let xb = d.col(&x);
        d.launch("radius3", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("radius3");
        d.launch("early_return", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("early_return");
        d.launch("cond_write", d1(n), None, &[B(y), B(xb)]);
        d.check("cond_write");
        d.launch("inplace_neighbour", d1(n), None, &[B(y), I(ni)]);
        d.check("inplace_neighbour");
        let p = perm(n, n as u64);
        let pb = d.col(&p);
        d.launch("gather", d1(n), None, &[B(y), B(xb), B(pb)]);
        d.check("gather");
        d.launch("scatter", d1(n), None, &[B(y), B(xb), B(pb)]);
        d.check("scatter");

        d.reset();
        let cx: Vec<i8> = x.iter().map(|&v| v as i8).collect();
        let y = d.col(&vec![0i8; n]);
        let xb = d.col(&cx);
        d.launch("chars", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("chars");
        let sx: Vec<i16> = x.iter().map(|&v| v as i16).collect();
        let y = d.col(&vec![0i16; n]);
        let xb = d.col(&sx);
        d.launch("shorts", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("shorts");
        let fx: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let y = d.col(&vec![0f64; n]);
        let xb = d.col(&fx);
        d.launch("doubles", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("doubles");
        let lx: Vec<i64> = x.iter().map(|&v| (v as i64) << 33).collect();
        let y = d.col(&vec![0i64; n]);
        let xb = d.col(&lx);
        d.launch("longs", d1(n), None, &[B(y), B(xb), I(ni)]);
        d.check("longs");
        let y = d.col(&vec![0u8; 4 * n]);
        let xb = d.col(&x);
        d.launch("bytes_as_ints", d1(n), None, &[B(y), B(xb)]);
        d.check("bytes_as_ints");
    });
}
