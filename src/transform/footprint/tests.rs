use super::*;
use crate::transform::source::{scan_kernels, Scanned};
use proptest::prelude::*;

fn fp(src: &str) -> Footprint {
    let k = &scan_kernels(src).unwrap()[0];
    footprint(&Scanned::new(src).unwrap(), k)
}

/// A 2-D part: rows `y0..y0 + ny` of a `w x h` launch (no offset) in `lx x ly` groups.
fn rows(w: u64, h: u64, y0: u64, ny: u64) -> Part {
    Part {
        global: [w, h, 1],
        local: [16, 1, 1],
        base: [0; 3],
        first: [0, y0, 0],
        size: [w, ny, 1],
    }
}

fn one_d(n: u64, first: u64, size: u64) -> Part {
    Part {
        global: [n, 1, 1],
        local: [64, 1, 1],
        base: [0; 3],
        first: [first, 0, 0],
        size: [size, 1, 1],
    }
}

const MANDELBROT: &str = "kernel void mandelbrot(global uint *out, uint w, uint h, uint max_iter) {
    int px = get_global_id(0);
    int py = get_global_id(1);
    if (px >= w || py >= h) return;
    float x0 = -2.0f + 3.0f * px / w, y0 = -1.5f + 3.0f * py / h;
    float x = 0.0f, y = 0.0f;
    uint i = 0;
    while (x * x + y * y < 4.0f && i < max_iter) { float t = x * x - y * y + x0; y = 2.0f * x * y + y0; x = t; i++; }
    out[py * w + px] = i;
}";

const HEAT: &str = "kernel void heat(global const float *t, global float *u, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) { u[y * w + x] = t[y * w + x]; return; }
    u[y * w + x] = 0.25f * (t[y * w + x - 1] + t[y * w + x + 1] + t[(y - 1) * w + x] + t[(y + 1) * w + x]);
}";

const BLUR: &str = "kernel void blur(global const float *x, global float *y, uint n) {
    size_t i = get_global_id(0);
    if (i > 0 && i + 1 < n) y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0f;
    else y[i] = x[i];
}";

const GEMM: &str = "kernel void gemm(global const float *a, global const float *b, global float *c,
                       int M, int N, int K, int lda) {
    int row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    int k;
    for (k = 0; k < K; k++)
        acc += a[row * lda + k] * b[k * N + col];
    c[row * N + col] = acc;
}";

#[test]
fn mandelbrot_writes_its_rows() {
    let f = fp(MANDELBROT);
    assert_eq!(f.params[0].reads, Some(vec![]));
    let s = [None, Some(100), Some(50), Some(64)];
    // Rows 10..20 of a 100 x 50 image: elements 1000..2000.
    let r = f.reach(0, Dir::Write, &rows(100, 50, 10, 10), &s);
    assert_eq!(r, Some(Some((1000, 2000))));
    assert_eq!(
        f.reach(0, Dir::Read, &rows(100, 50, 10, 10), &s),
        Some(None)
    );
    // Without the value of w: unknown.
    assert_eq!(
        f.reach(0, Dir::Write, &rows(100, 50, 10, 10), &[None; 4]),
        None
    );
}

#[test]
fn heat_reads_a_row_either_side() {
    let f = fp(HEAT);
    let s = [None, None, Some(64), Some(32)];
    let p = rows(64, 32, 8, 8);
    assert_eq!(
        f.reach(1, Dir::Write, &p, &s),
        Some(Some((8 * 64, 16 * 64)))
    );
    assert_eq!(f.reach(0, Dir::Read, &p, &s), Some(Some((7 * 64, 17 * 64))));
    assert_eq!(f.reach(0, Dir::Write, &p, &s), Some(None));
}

#[test]
fn blur_reads_one_either_side_and_loops_are_bounded() {
    let f = fp(BLUR);
    let s = [None, None, Some(1000)];
    let p = one_d(1000, 500, 500);
    assert_eq!(f.reach(0, Dir::Read, &p, &s), Some(Some((499, 1001))));
    assert_eq!(f.reach(1, Dir::Write, &p, &s), Some(Some((500, 1000))));
    let g = fp(GEMM);
    // M = 8 rows, N = 16 columns, K = 4, lda = 4; rows 2..4.
    let s = [None, None, None, Some(8), Some(16), Some(4), Some(4)];
    let p = rows(16, 8, 2, 2);
    assert_eq!(g.reach(0, Dir::Read, &p, &s), Some(Some((8, 16))));
    assert_eq!(g.reach(1, Dir::Read, &p, &s), Some(Some((0, 64))));
    assert_eq!(g.reach(2, Dir::Write, &p, &s), Some(Some((32, 64))));
}

#[test]
fn other_forms_are_read() {
    let cases = [
        // direct, cast, linear id, macro constant, local and group ids, `<=` loop, `+=` step
        ("kernel void k(global int *y) { y[(int)get_global_id(0) + 2] = 0; }", (2, 12)),
        ("kernel void k(global int *y) { y[get_global_linear_id()] = 0; }", (0, 10)),
        ("#define OFF 5\nkernel void k(global int *y) { y[get_global_id(0) + OFF] = 0; }", (5, 15)),
        (
            "kernel void k(global int *y) { y[get_group_id(0) * get_local_size(0) + get_local_id(0)] = 0; }",
            (0, 10),
        ),
        (
            "kernel void k(global int *y) { for (uint j = 0; j <= 3; j += 2) y[get_global_id(0) * 4 + j] = 0; }",
            (0, 40),
        ),
    ];
    for (src, want) in cases {
        let f = fp(src);
        let p = Part {
            local: [10, 1, 1],
            ..one_d(10, 0, 10)
        };
        let got = f.reach(0, Dir::Write, &p, &[None]);
        assert_eq!(got, Some(Some(want)), "{src}");
    }
}

#[test]
fn what_is_not_proven_is_unknown() {
    let unknown_writes = [
        // a step not proven positive, changed index, data-dependent, alias, pointer arithmetic
        "kernel void k(global int *y, int n) { for (size_t i = get_global_id(0); i < 9; i += n) y[i] = 0; }",
        "kernel void k(global int *y, int n) { for (size_t i = get_global_id(0); i < n; i += get_global_id(0)) y[i] = 0; }",
        "kernel void k(global int *y) { size_t i = get_global_id(0); i += 1; y[i] = 0; }",
        "kernel void k(global int *y, global const int *ix) { y[ix[get_global_id(0)]] = 0; }",
        "kernel void k(global int *y) { global int *z = y; z += 1; z[get_global_id(0)] = 0; }",
        "kernel void k(global int *y) { *(y + get_global_id(0)) = 0; }",
        "kernel void k(global int *y) { atomic_inc(&y[0]); }",
        "kernel void k(global int *y) { atomic_inc(y); }",
        // macros that mention it, or receive a variable
        "#define AT(i) y[i]\nkernel void k(global int *y) { AT(get_global_id(0)) = 0; }",
        "#define BUMP(v) v++\nkernel void k(global int *y) { int i = get_global_id(0); BUMP(i); y[i] = 0; }",
        "#define CAT(a, b) a##b\nkernel void k(global int *y) { y[get_global_id(0)] = 0; }",
        // division, shifts, conditionals, changed parameter, short locals
        "kernel void k(global int *y) { y[get_global_id(0) / 2] = 0; }",
        "kernel void k(global int *y) { y[get_global_id(0) << 1] = 0; }",
        "kernel void k(global int *y, int n) { n = 3; y[get_global_id(0) + n] = 0; }",
        "kernel void k(global int *y) { short i = get_global_id(0); y[i] = 0; }",
        "kernel void k(global int *y) { int i = get_global_id(0); { int i; i = 3; y[i] = 0; } }",
        "kernel void k(global int *y) { int i = get_global_id(0); f(&i); y[i] = 0; }",
        // a loop whose variable its body changes, or whose type is unknown
        "kernel void k(global int *y) { for (int j = 0; j < 4; j++) { j++; y[j] = 0; } }",
        "kernel void k(global int *y) { char j; for (j = 0; j < 4; j++) y[j] = 0; }",
        // a 2-D index into a pointer of pointers
        "kernel void k(global int *y) { y[get_global_id(0)][0] = 0; }",
        // a typedef'd scalar
        "typedef int idx;\nkernel void k(global int *y, idx n) { y[get_global_id(0) + n] = 0; }",
    ];
    for src in unknown_writes {
        let f = fp(src);
        let p = one_d(10, 0, 10);
        let got = f.reach(0, Dir::Write, &p, &[None, Some(4)]);
        assert_eq!(got, None, "{src}");
    }
    // A read through an index array is unknown; the write at the own id is not.
    let gather = fp(
        "kernel void k(global int *y, global const int *x, global const int *ix) {
        size_t i = get_global_id(0); y[i] = x[ix[i]]; }",
    );
    let p = one_d(10, 0, 10);
    assert_eq!(gather.reach(1, Dir::Read, &p, &[None; 3]), None);
    assert_eq!(
        gather.reach(2, Dir::Read, &p, &[None; 3]),
        Some(Some((0, 10)))
    );
    assert_eq!(
        gather.reach(0, Dir::Write, &p, &[None; 3]),
        Some(Some((0, 10)))
    );
    // Read-modify-write counts both ways; members too.
    let rmw = fp("kernel void k(global int *y) { y[get_global_id(0)] += 1; ++y[0]; }");
    assert_eq!(rmw.reach(0, Dir::Read, &p, &[None]), Some(Some((0, 10))));
    assert_eq!(rmw.reach(0, Dir::Write, &p, &[None]), Some(Some((0, 10))));
}

#[test]
fn offsets_and_values_beyond_32_bits() {
    let f = fp("kernel void k(global int *y) { y[get_global_id(0) - get_global_offset(0)] = 0; }");
    let p = Part {
        base: [100, 0, 0],
        ..one_d(10, 100, 10)
    };
    assert_eq!(f.reach(0, Dir::Write, &p, &[None]), Some(Some((0, 10))));
    let big = fp("kernel void k(global int *y, long n) { y[get_global_id(0) * n] = 0; }");
    let p = one_d(10, 0, 10);
    assert_eq!(big.reach(0, Dir::Write, &p, &[None, Some(1 << 40)]), None);
    assert_eq!(scalar_value(&(-3i32).to_le_bytes(), true), Some(-3));
    assert_eq!(
        scalar_value(&u32::MAX.to_le_bytes(), false),
        Some(u32::MAX.into())
    );
    assert_eq!(scalar_value(&[1, 2, 3], true), None);
}

/// Every index a kernel reaches, by brute force, for `w x h` launches split by rows.
fn brute(w: i128, y0: i128, y1: i128, f: impl Fn(i128, i128) -> Vec<i128>) -> (i128, i128) {
    let all: Vec<i128> = (y0..y1)
        .flat_map(|y| (0..w).flat_map(|x| f(x, y)).collect::<Vec<_>>())
        .collect();
    (*all.iter().min().unwrap(), *all.iter().max().unwrap() + 1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn hulls_are_exact_for_affine_indices(w in 1u64..40, h in 1u64..40, a in 0u64..40, b in 1u64..40) {
        let (y0, ny) = (a.min(h - 1), b.min(h - a.min(h - 1)));
        let p = rows(w, h, y0, ny);
        let (wi, y0i, y1i) = (w as i128, y0 as i128, (y0 + ny) as i128);
        let heat = fp(HEAT);
        let s = [None, None, Some(wi), Some(h as i128)];
        let want = brute(wi, y0i, y1i, |x, y| vec![y * wi + x - 1, y * wi + x + 1, (y - 1) * wi + x, (y + 1) * wi + x, y * wi + x]);
        prop_assert_eq!(heat.reach(0, Dir::Read, &p, &s), Some(Some(want)));
        let m = fp(MANDELBROT);
        let want = brute(wi, y0i, y1i, |x, y| vec![y * wi + x]);
        prop_assert_eq!(m.reach(0, Dir::Write, &p, &[None, Some(wi), None, None]), Some(Some(want)));
    }

    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(prop::sample::select(vec![
        "x", "y", "i", "n", "=", "+", "-", "*", "/", "&", "<", ">", ";", ",", "(", ")", "[", "]",
        "{", "}", "int", "for", "size_t", "0", "1", "get_global_id", "get_global_linear_id",
        "const", ".", "++", "return", "if",
    ]), 0..60)) {
        let src = format!("kernel void k(global int *y, global const int *x, int n) {{ {} }}", words.join(" "));
        if let (Ok(s), Ok(ks)) = (Scanned::new(&src), scan_kernels(&src)) {
            if let Some(k) = ks.first() {
                let f = footprint(&s, k);
                for i in 0..3 {
                    for dir in [Dir::Read, Dir::Write] {
                        let _ = f.reach(i, dir, &one_d(100, 0, 50), &[None, None, Some(7)]);
                    }
                }
            }
        }
    }

    #[test]
    fn mutated_kernels_never_panic(cut in 0usize..400, len in 0usize..20, pick in 0usize..4) {
        let src = [MANDELBROT, HEAT, BLUR, GEMM][pick];
        let (a, b) = (cut.min(src.len()), (cut + len).min(src.len()));
        if !src.is_char_boundary(a) || !src.is_char_boundary(b) { return Ok(()); }
        let mutated = format!("{}{}", &src[..a], &src[b..]);
        if let (Ok(s), Ok(ks)) = (Scanned::new(&mutated), scan_kernels(&mutated)) {
            for k in &ks {
                let f = footprint(&s, k);
                for i in 0..k.params.len() {
                    let _ = f.reach(i, Dir::Write, &rows(64, 64, 3, 9), &[Some(64); 8]);
                }
            }
        }
    }
}

#[test]
fn macros_that_change_nothing_keep_their_arguments() {
    let clamp = "#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))\n";
    let blur = format!(
        "{clamp}kernel void k(global const float *in, global float *out, int w, int h) {{
        int x = get_global_id(0), y = get_global_id(1);
        out[y * w + x] = in[CLAMP(y - 1, 0, h - 1) * w + CLAMP(x, 0, w - 1)]; }}"
    );
    let f = fp(&blur);
    let s = [None, None, Some(100), Some(50)];
    let p = rows(100, 50, 10, 10);
    assert_eq!(f.reach(1, Dir::Write, &p, &s), Some(Some((1000, 2000))));
    // The read goes through the macro: unknown.
    assert_eq!(f.reach(0, Dir::Read, &p, &s), None);
    // A macro that may change what it is given, or a call that is changed, taints.
    for src in [
        format!("{clamp}kernel void k(global int *y) {{ int i = get_global_id(0); CLAMP(i, 0, 9) = 1; y[i] = 0; }}"),
        format!("{clamp}kernel void k(global int *y) {{ int i = get_global_id(0); ++CLAMP(i, 0, 9); y[i] = 0; }}"),
        "#define SET(v) (v = 0)\nkernel void k(global int *y) { int i = get_global_id(0); SET(i); y[i] = 0; }".into(),
        "#define P(v) f(&v)\nkernel void k(global int *y) { int i = get_global_id(0); P(i); y[i] = 0; }".into(),
        "#define Q(v) { v; }\nkernel void k(global int *y) { int i = get_global_id(0); Q(i); y[i] = 0; }".into(),
        "#define D(v) int v\nkernel void k(global int *y) { int i = get_global_id(0); { D(i); y[i] = 0; } }".into(),
        "#define S(v) (v)--\nkernel void k(global int *y) { int i = get_global_id(0); S(i); y[i] = 0; }".into(),
        "#define R(v) SET(v)\n#define SET(v) v\nkernel void k(global int *y) { int i = get_global_id(0); R(i); y[i] = 0; }".into(),
    ] {
        assert_eq!(fp(&src).reach(0, Dir::Write, &one_d(10, 0, 10), &[None]), None, "{src}");
    }
}

#[test]
fn grid_stride_loops_are_bounded() {
    // Before issue 36 this loop was unknown; its values are in [get_global_id(0), n - 1].
    let f = fp("kernel void k(global int *y, int n) { for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = 0; }");
    assert_eq!(
        f.reach(0, Dir::Write, &one_d(10, 0, 10), &[None, Some(4)]),
        Some(Some((0, 4)))
    );
    assert_eq!(
        f.reach(0, Dir::Write, &one_d(100, 40, 20), &[None, Some(1000)]),
        Some(Some((40, 1000)))
    );
    // A work-group per row, its work-items across it.
    let rows = fp("kernel void k(global float *o, global const float *x, int w) {
        size_t r = get_group_id(0);
        for (int j = get_local_id(0); j < w; j += get_local_size(0)) o[r * w + j] = 2 * x[r * w + j]; }");
    let p = Part {
        local: [4, 1, 1],
        ..one_d(40, 8, 12)
    };
    // Groups 2..5 of rows of 7.
    assert_eq!(
        rows.reach(0, Dir::Write, &p, &[None, None, Some(7)]),
        Some(Some((14, 35)))
    );
}

#[test]
fn members_are_the_element() {
    let src = "typedef struct { float x, y, z, m; } P;
    kernel void k(global const P *p, global P *q, uint n) {
        size_t i = get_global_id(0);
        float a = 0.0f;
        for (uint j = 0; j < n; ++j) a += p[j].x - p[i].m;
        q[i].x = a; q[i].y += 1.0f; q[i].z = q[i].m; }";
    let f = fp(src);
    let p = one_d(100, 20, 10);
    let s = [None, None, Some(100)];
    assert_eq!(f.reach(0, Dir::Read, &p, &s), Some(Some((0, 100))));
    assert_eq!(f.reach(0, Dir::Write, &p, &s), Some(None));
    assert_eq!(f.reach(1, Dir::Write, &p, &s), Some(Some((20, 30))));
    assert_eq!(f.reach(1, Dir::Read, &p, &s), Some(Some((20, 30))));
    assert_eq!(f.pointees, vec![Some(16), Some(16), None]);
    // A member array or a pointer member counts both ways.
    let arr = fp("typedef struct { int a[2]; } T;
    kernel void k(global const T *p) { int v = p[get_global_id(0)].a[1]; }");
    assert_eq!(arr.reach(0, Dir::Write, &p, &[None]), Some(Some((20, 30))));
}

#[test]
fn pointee_sizes_follow_the_c_layout() {
    let size = |decl: &str, ty: &str| {
        let src = format!("{decl}\nkernel void k(global {ty} *p) {{ p[0] = p[1]; }}");
        fp(&src).pointees[0]
    };
    assert_eq!(size("", "float4"), Some(16));
    assert_eq!(size("", "float3"), Some(16));
    assert_eq!(
        size("typedef struct { float a; float b; } pair_t;", "pair_t"),
        Some(8)
    );
    assert_eq!(size("typedef struct T { char c; int i; } T;", "T"), Some(8));
    assert_eq!(
        size("struct q { double d; char c; };", "struct q"),
        Some(16)
    );
    assert_eq!(
        size("typedef struct { float3 v; int n[3]; } S;", "S"),
        Some(32)
    );
    for (decl, ty) in [
        (
            "typedef struct { float a; } __attribute__((packed)) T;",
            "T",
        ),
        (
            "typedef struct __attribute__((packed)) { float a; } T;",
            "T",
        ),
        ("#pragma pack(1)\ntypedef struct { char c; int i; } T;", "T"),
        ("typedef union { float a; int b; } T;", "T"),
        ("typedef struct { struct { int a; } in; } T;", "T"),
        ("typedef struct { bool b; } T;", "T"),
        ("typedef float real;", "real"),
        (
            "typedef struct { int a; } T;\ntypedef struct { long a; } T;",
            "T",
        ),
        ("", "Undeclared"),
    ] {
        assert_eq!(size(decl, ty), None, "{decl}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `in_elements` is the exact set of elements holding the pointees' bytes.
    #[test]
    fn pointees_in_elements(lo in 0i128..64, n in 1i128..16, p in prop::sample::select(vec![1usize, 2, 4, 8, 12, 16, 24]), e in prop::sample::select(vec![1usize, 2, 4, 8, 16])) {
        let (a, b) = in_elements((lo, lo + n), p, e);
        let (pi, ei) = (p as i128, e as i128);
        let bytes = lo * pi..(lo + n) * pi;
        prop_assert_eq!(a, bytes.start / ei);
        prop_assert_eq!(b, (bytes.end + ei - 1) / ei);
    }
}

#[test]
fn aliases_at_an_offset() {
    let saxpy = fp(
        "kernel void k(global float *Y, global const float *X, float a, uint off) {
        global float *y = Y + off;
        global const float *x = X + off;
        size_t i = get_global_id(0);
        y[i] = a * x[i] + y[i]; }",
    );
    let p = one_d(100, 20, 10);
    let s = [None, None, None, Some(7)];
    assert_eq!(saxpy.reach(0, Dir::Write, &p, &s), Some(Some((27, 37))));
    // Before issue 36, in what_is_not_proven_is_unknown.
    let plain = fp("kernel void k(global int *y) { global int *z = y; z[get_global_id(0)] = 0; }");
    assert_eq!(
        plain.reach(0, Dir::Write, &p, &[None]),
        Some(Some((20, 30)))
    );
    assert_eq!(saxpy.reach(0, Dir::Read, &p, &s), Some(Some((27, 37))));
    assert_eq!(saxpy.reach(1, Dir::Read, &p, &s), Some(Some((27, 37))));
    for src in [
        // another pointee, an alias changed, passed on, aliased again, or not declared
        "kernel void k(global float *Y) { global char *y = Y; y[get_global_id(0)] = 0; }",
        "kernel void k(global float *Y) { global float *y = Y; y++; y[get_global_id(0)] = 0; }",
        "kernel void k(global float *Y) { global float *y = Y; f(y); }",
        "kernel void k(global float *Y) { global float *y = Y; global float *z = y; z[0] = 1; }",
        "kernel void k(global float *Y, global float *y) { y = Y + 1; y[get_global_id(0)] = 0; }",
        "kernel void k(global float *Y) { global float *y = Y + get_global_id(0) / 2; y[0] = 0; }",
    ] {
        assert_eq!(
            fp(src).reach(0, Dir::Write, &p, &[None, None]),
            None,
            "{src}"
        );
    }
}

#[test]
fn column_bands_reach_one_run_per_row() {
    let f = fp(MANDELBROT);
    let values = [None, Some(8), Some(3), Some(10)];
    let band = Part {
        global: [8, 3, 1],
        local: [4, 1, 1],
        base: [0; 3],
        first: [4, 0, 0],
        size: [4, 3, 1],
    };
    assert_eq!(f.reach(0, Dir::Write, &band, &values), Some(Some((4, 24))));
    let runs = f.pieces(0, Dir::Write, &band, &values);
    assert_eq!(runs, Some(vec![(4, 8), (12, 16), (20, 24)]));
    // A row inside one work-group sees only its own local ids.
    let f = fp("kernel void k(global int *o) { o[get_local_id(0)] = 1; }");
    let inside = Part {
        first: [5, 0, 0],
        size: [2, 1, 1],
        ..one_d(16, 0, 16)
    };
    assert_eq!(f.reach(0, Dir::Write, &inside, &[]), Some(Some((5, 7))));
    assert_eq!(
        f.reach(0, Dir::Write, &one_d(256, 64, 128), &[]),
        Some(Some((0, 64)))
    );
}

#[test]
fn grid_stride_loops_reach_one_run_per_stride() {
    let f = fp(
        "kernel void g(global int *y, global const int *x, int a, uint n) {
        for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) y[i] += a * x[i];
    }",
    );
    let values = [None, None, Some(3), Some(1000)];
    let half = one_d(256, 128, 128);
    assert_eq!(
        f.reach(0, Dir::Write, &half, &values),
        Some(Some((128, 1000)))
    );
    let want = vec![(128, 256), (384, 512), (640, 768), (896, 1000)];
    assert_eq!(f.pieces(0, Dir::Write, &half, &values), Some(want.clone()));
    assert_eq!(f.pieces(1, Dir::Read, &half, &values), Some(want));
    // A step of 1 and steps no wider than the start interval stay one hull.
    let f = fp("kernel void g(global int *y, uint n) {
        for (uint i = get_global_id(0); i < n; i += 4) y[i] = 1;
    }");
    let values = [None, Some(1000)];
    assert_eq!(
        f.pieces(0, Dir::Write, &half, &values),
        Some(vec![(128, 1000)])
    );
}

#[test]
fn parenthesized_lvalues_are_changes() {
    let p = one_d(10, 0, 10);
    // `(y[i + 1]) = v` writes y[i + 1]; `&(y[i])` lets it escape.
    let f = fp("kernel void k(global int *y) { int i = get_global_id(0); (y[i + 1]) = 0; }");
    assert_eq!(f.reach(0, Dir::Write, &p, &[None]), Some(Some((1, 11))));
    let f = fp("kernel void k(global int *y) { int i = get_global_id(0); ++((y[i])); }");
    assert_eq!(f.reach(0, Dir::Write, &p, &[None]), Some(Some((0, 10))));
    let f = fp("kernel void k(global int *y) { f(&(y[get_global_id(0)])); }");
    assert_eq!(f.reach(0, Dir::Write, &p, &[None]), None);
    // A local, parameter or loop variable changed through parentheses is unknown.
    let changed = [
        "kernel void k(global int *y, int n) { int j = get_global_id(0); (j) = n; y[j] = 0; }",
        "kernel void k(global int *y) { int j = get_global_id(0); int *q = &(j); y[j] = 0; }",
        "kernel void k(global int *y, int n) { (n) = 0; y[get_global_id(0) + n] = 0; }",
        "kernel void k(global int *y) { for (int j = 0; j < 4; j++) { ((j)) += 2; y[j] = 0; } }",
        "kernel void k(global int *y) { int j = 0; if (1) (j)++; y[j] = 0; }",
        "kernel void k(global int *y, int j) { int (j) = 5; y[j] = 0; }",
    ];
    for src in changed {
        assert_eq!(
            fp(src).reach(0, Dir::Write, &p, &[None, Some(4)]),
            None,
            "{src}"
        );
    }
    // A call's or a condition's parentheses change nothing.
    let f = fp("kernel void k(global int *y, int n) { if (n) y[get_global_id(0) + n] = 0; }");
    assert!(f.reach(0, Dir::Write, &p, &[None, Some(4)]).is_some());
}

#[test]
fn macros_a_build_option_may_change_and_twice_declared_names_are_unknown() {
    let p = one_d(10, 0, 10);
    let unknown = [
        // a default under `#ifndef` (`-DS=2` wins), one `#undef`ined, one defined twice
        "#ifndef S\n#define S 1\n#endif\nkernel void k(global int *y) { y[get_global_id(0) * S] = 0; }",
        "#define S 1\n#undef S\nkernel void k(global int *y) { y[get_global_id(0) * S] = 0; }",
        // a local declared in both branches of an `#if`
        "kernel void k(global int *y, int n) { int i = get_global_id(0);\n#if 1\nint j = n - i;\n#else\nint j = i;\n#endif\ny[j] = 0; }",
    ];
    for src in unknown {
        assert_eq!(
            fp(src).reach(0, Dir::Write, &p, &[None, Some(4)]),
            None,
            "{src}"
        );
    }
    let known = "#define S 1\nkernel void k(global int *y) { y[get_global_id(0) * S] = 0; }";
    assert_eq!(
        fp(known).reach(0, Dir::Write, &p, &[None]),
        Some(Some((0, 10)))
    );
}
