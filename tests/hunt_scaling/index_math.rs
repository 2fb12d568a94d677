//! Index math of every spelling; build options and redefined macros.

use super::*;

const INDEX_MATH: &str = r#"
int idx(int i, int w) { return i * w; }
int mirror(int i, int n) { return n - 1 - i; }
#define AT(a, i) a[(i) + 1]
#define W 2

kernel void through_helper(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[mirror(i, n)] = x[idx(i, 1)] + 1;
}
kernel void through_macro(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) AT(y, i) = x[i] * 3;
}
kernel void twice_by_literal(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[W * i] = x[i];
    y[W * i + 1] = -x[i];
}
kernel void minus_chain(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 1 && i + 1 < n) y[i] = x[i - 1 - 1 + 1] * 10 + x[i + 1 - 1 + 1];
}
kernel void negative_scale(global int *y, global const int *x, int s, int o) {
    int i = get_global_id(0);
    y[i * s + o] = x[i] + 5;
}
kernel void octal_hex(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 010 < n) y[i] = x[i + 010] + x[i + 0x3];
    else y[i] = -1;
}
kernel void narrow_cast(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 256) y[(uchar)i] = x[i];
}
kernel void short_cast(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i >= 40) y[(ushort)(i + 65496)] = x[i];
}
kernel void unsigned_wrap(global int *y, global const int *x, uint n) {
    uint i = get_global_id(0);
    uint j = i - 1u;
    y[i] = j < n ? x[j] : 100;
}
kernel void shadowed(global int *y, global int *z, global const int *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i];
    if (i == 0) {
        int i = n - 1;
        z[i] = 77;
    }
}
kernel void local_changed_via_pointer(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    int j = i;
    int *pj = &j;
    *pj = n - 1 - i;
    y[j] = x[i];
}
void bump(int *k, int n) { *k = n - 1 - *k; }
kernel void local_changed_in_helper(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    int j = i;
    bump(&j, n);
    y[j] = x[i];
}
kernel void deref_write(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) *(y + i + 1) = x[i];
}
kernel void comment_in_index(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) y[i /* + 5 */ + 1 // - 1
    ] = x[i];
}
kernel void group_math(global int *y, global const int *x) {
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    y[i] = x[i] * 2 + (int)get_local_id(0);
}
kernel void dim1_in_1d(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i + get_global_id(1) * 1000] = x[i] + 1;
}
"#;

#[test]
fn index_math_of_every_spelling() {
    each_diff(
        "index_math_of_every_spelling",
        INDEX_MATH,
        "",
        SIZES,
        |d, n| {
            let x = ints(n, n as u64);
            let n_i = n as i32;
            let cases: &[(&str, Vec<Arg>)] = &[
                ("through_helper", vec![I(n_i)]),
                ("through_macro", vec![I(n_i)]),
                ("minus_chain", vec![I(n_i)]),
                ("octal_hex", vec![I(n_i)]),
                ("narrow_cast", vec![I(n_i)]),
                ("short_cast", vec![I(n_i)]),
                ("unsigned_wrap", vec![U(n as u32)]),
                ("local_changed_via_pointer", vec![I(n_i)]),
                ("local_changed_in_helper", vec![I(n_i)]),
                ("deref_write", vec![I(n_i)]),
                ("comment_in_index", vec![I(n_i)]),
                ("group_math", vec![]),
                ("dim1_in_1d", vec![]),
            ];
            for (k, rest) in cases {
                if (*k == "octal_hex" && n < 9) || (*k == "group_math" && n % 2 == 1 && n > 3) {
                    continue;
                }
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                let mut args = vec![B(y), B(xb)];
                args.extend(rest.iter().copied());
                let local = (*k == "group_math").then(|| d1(if n % 2 == 0 { 2 } else { 1 }));
                d.launch(k, d1(n), local, &args);
                d.check(k);
            }
            // Two outputs, and the literal multiple.
            d.reset();
            let y = d.col(&vec![-9i32; 2 * n]);
            let xb = d.col(&x);
            d.launch("twice_by_literal", d1(n), None, &[B(y), B(xb)]);
            d.check("twice_by_literal");
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let z = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch("shadowed", d1(n), None, &[B(y), B(z), B(xb), I(n_i)]);
            d.check("shadowed");
            // Reversed through a negative scalar stride.
            d.reset();
            let y = d.col(&vec![-9i32; n]);
            let xb = d.col(&x);
            d.launch(
                "negative_scale",
                d1(n),
                None,
                &[B(y), B(xb), I(-1), I(n_i - 1)],
            );
            d.check("negative_scale");
        },
    );
}

const OPTIONS_SRC: &str = r#"
#ifndef STRIDE
#define STRIDE 1
#endif
kernel void strided(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * STRIDE] = x[i] + 1;
}
#ifdef SHIFTED
kernel void variant(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i];
}
#else
kernel void variant(global int *y, global const int *x, int n) {
    int i = get_global_id(0);
    y[i] = x[i];
}
#endif
#define K 1
kernel void first_k(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * K] = x[i];
}
#undef K
#define K 2
kernel void second_k(global int *y, global const int *x) {
    int i = get_global_id(0);
    y[i * K] = x[i];
}
"#;

#[test]
fn build_options_and_redefined_macros() {
    // -DSTRIDE=2 over the source's default: finding_build_option_overriding_a_default_macro.
    for opts in ["", "-DSHIFTED", "-D SHIFTED=1"] {
        let stride = 1;
        each_diff(
            "build_options_and_redefined_macros",
            OPTIONS_SRC,
            opts,
            SIZES,
            |d, n| {
                let x = ints(n, 3);
                let y = d.col(&vec![-9i32; stride * n]);
                let xb = d.col(&x);
                d.launch("strided", d1(n), None, &[B(y), B(xb)]);
                d.check(&format!("strided {opts}"));
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let xb = d.col(&x);
                d.launch("variant", d1(n), None, &[B(y), B(xb), I(n as i32)]);
                d.check(&format!("variant {opts}"));
                d.reset();
                let y = d.col(&vec![-9i32; 2 * n]);
                let xb = d.col(&x);
                d.launch("first_k", d1(n), None, &[B(y), B(xb)]);
                d.launch("second_k", d1(n), None, &[B(y), B(xb)]);
                d.check("first_k, second_k");
            },
        );
    }
}
