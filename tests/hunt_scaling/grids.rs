//! Work-item built-ins, grids, offsets, tiles, weights, const pointers, helpers, scalars.

use super::*;

const BUILTINS_SRC: &str = r#"
kernel void sizes1(global int *y) {
    size_t i = get_global_id(0) - get_global_offset(0);
    y[i] = (int)(get_global_size(0) * 100000 + get_num_groups(0) * 1000 + get_group_id(0) * 10
                 + get_work_dim()) ^ (int)(get_local_size(0) << 20) ^ (int)(get_global_linear_id() << 8)
                 ^ (int)(get_local_linear_id() << 4) ^ (int)get_global_offset(0);
}
kernel void sizes2(global int *y) {
    size_t x = get_global_id(0) - get_global_offset(0), r = get_global_id(1) - get_global_offset(1);
    size_t i = r * get_global_size(0) + x;
    y[i] = (int)(get_global_size(1) * 100000 + get_num_groups(1) * 1000 + get_group_id(1) * 10
                 + get_work_dim()) ^ (int)(get_local_size(1) << 20) ^ (int)(get_global_linear_id() << 8)
                 ^ (int)(get_global_size(0) << 24) ^ (int)(get_group_id(0) << 16)
                 ^ (int)get_global_offset(1);
}
#define get_global_id(d) get_local_id(d)
kernel void redefined_builtin(global int *y, global const int *x) {
    if (get_group_id(0) == 0) y[get_global_id(0)] = x[get_global_id(0)] + 1;
}
"#;

#[test]
fn work_item_builtins_report_the_whole_launch() {
    each_diff(
        "work_item_builtins_report_the_whole_launch",
        BUILTINS_SRC,
        "",
        &[1, 3, 7, 64, 97],
        |d, n| {
            for off in [0usize, 3] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let o = (off > 0).then(|| d1(off));
                let l = if n % 8 == 0 { 8 } else { 1 };
                d.try_launch("sizes1", d1(n), Some(d1(l)), o, &[B(y)])
                    .unwrap();
                d.check("sizes1 nd");
                for w in [1usize, 5] {
                    d.reset();
                    let y = d.col(&vec![-9i32; w * n]);
                    let o = (off > 0).then(|| Range::d2(off, off + 1));
                    let l = if n % 8 == 0 { 8 } else { 1 };
                    d.try_launch("sizes2", Range::d2(w, n), Some(Range::d2(1, l)), o, &[B(y)])
                        .unwrap();
                    d.check("sizes2 nd");
                }
            }
        },
    );
}

/// Fixed finding (contrived): a macro named like a work-item built-in (`#define
/// get_global_id(d) get_local_id(d)`) also rewrote the partitioned variant's own `get_group_id`
/// macro (defined through `get_global_id`, `src/transform/partitioned.rs`), so device 1's
/// work-items saw group 0 and wrote outside their part: heap corruption in release builds
/// (PoCL aborted in `pocl_create_migration_commands`), `OutOfChunk` in checked mode. The
/// variant's definitions now call the real built-ins through functions defined before the
/// user's code: group 0 alone writes `y[l] = x[l] + 1`, as on one device.
#[test]
fn redefined_builtin() {
    each_diff("redefined_builtin", BUILTINS_SRC, "", &[64], |d, n| {
        let y = d.col(&vec![-9i32; n]);
        let x = d.col(&iota(n));
        let spread = d.launch("redefined_builtin", d1(n), Some(d1(16)), &[B(y), B(x)]);
        d.check("redefined_builtin");
        // Split, or split by the footprints (`Fetched`).
        assert!(!matches!(spread, Spread::OneDevice(_)), "{spread:?}");
        let want: Vec<i32> = (0..n as i32)
            .map(|i| if i < 16 { i + 1 } else { -9 })
            .collect();
        assert_eq!(d.ints_of(y), want, "{}", d.name);
    });
}

/// A macro named like a built-in the variants define themselves: no variants, the kernel runs
/// as written (`Obstacle::DefinesQuery`), with the user's `get_group_id`.
#[test]
fn redefined_variant_builtin_runs_as_written() {
    let src = "#define get_group_id(d) (get_global_id(d) / 8)\n\
               kernel void k(global int *y) { y[get_global_id(0)] = get_group_id(0); }";
    each_diff("redefined_variant_builtin", src, "", &[64], |d, n| {
        let y = d.col(&vec![-9i32; n]);
        let spread = d.launch("k", d1(n), None, &[B(y)]);
        d.check("k");
        let want: Vec<i32> = (0..n as i32).map(|i| i / 8).collect();
        assert_eq!(d.ints_of(y), want, "{}", d.name);
        assert!(matches!(spread, Spread::OneDevice(_)), "{spread:?}");
    });
}

const GRID_SRC: &str = r#"
kernel void offset2d(global int *y, global const int *x, int w) {
    int gx = get_global_id(0) - get_global_offset(0), gy = get_global_id(1) - get_global_offset(1);
    y[gy * w + gx] = x[gy * w + gx] * 3 + (gy > 0 ? x[(gy - 1) * w + gx] : 0);
}
kernel void tile2d(global int *y, global const int *x, local int *t, int w, int h) {
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_group_id(0) * get_local_size(0) + lx, gy = get_group_id(1) * get_local_size(1) + ly;
    t[ly * get_local_size(0) + lx] = x[gy * w + gx];
    barrier(CLK_LOCAL_MEM_FENCE);
    int mx = get_local_size(0) - 1 - lx;
    y[gy * w + gx] = t[ly * get_local_size(0) + mx] + (gy + 1 < h ? x[(gy + 1) * w + gx] : 0);
}
kernel void transpose(global int *dst, global const int *src, int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    dst[x * h + y] = src[y * w + x];
}
"#;

/// 2-D launches split along either dimension (odd slowest dimensions make the partition split
/// the faster one), offsets, tiles in local memory, transposes, over even and uneven weights.
#[test]
fn grids_offsets_tiles_and_weights() {
    for root in roots("grids_offsets_tiles_and_weights") {
        let weighted = root
            .clone()
            .with_weights(
                &vec![1.0; root.len() - 1]
                    .into_iter()
                    .chain([3.0])
                    .collect::<Vec<_>>(),
            )
            .unwrap();
        for r in [root, weighted] {
            let mut d = Diff::new("grids", &r, GRID_SRC, "");
            for (w, h, lx, ly) in [
                (4usize, 3usize, 2usize, 1usize),
                (64, 3, 8, 1),
                (6, 19, 2, 1),
                (8, 21, 4, 3),
                (2, 64, 2, 8),
                (33, 5, 1, 5),
            ] {
                d.reset();
                d.name = format!("grids {w}x{h} local {lx}x{ly}");
                let x = d.col(&ints(w * h, 9));
                let y = d.col(&vec![-9i32; w * h]);
                d.launch(
                    "offset2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[B(y), B(x), I(w as i32)],
                );
                d.check("offset2d");
                d.try_launch(
                    "offset2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    Some(Range::d2(3, 2)),
                    &[B(y), B(x), I(w as i32)],
                )
                .unwrap();
                d.check("offset2d with offset");
                d.launch(
                    "tile2d",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[
                        B(y),
                        B(x),
                        Arg::Local(4 * lx * ly),
                        I(w as i32),
                        I(h as i32),
                    ],
                );
                d.check("tile2d");
                let t = d.col(&vec![-9i32; w * h]);
                d.launch(
                    "transpose",
                    Range::d2(w, h),
                    Some(Range::d2(lx, ly)),
                    &[B(t), B(y), I(w as i32), I(h as i32)],
                );
                d.check("transpose");
                d.launch(
                    "transpose",
                    Range::d2(h, w),
                    None,
                    &[B(x), B(t), I(h as i32), I(w as i32)],
                );
                d.check("transpose back");
            }
            eprintln!("grids [{} weights {:?}]: right", desc(&r), r.weights());
        }
    }
}

const CONST_POINTER_SRC: &str = r#"
kernel void own(global int *const y, global const int *x) {
    int i = get_global_id(0);
    y[i] = x[i] + 1;
}
kernel void shifted(global int *const y, global const int *x, int n) {
    int i = get_global_id(0);
    if (i + 1 < n) y[i + 1] = x[i] + 2;
}
kernel void mirrored(global int *const restrict y, global int const *x, int n) {
    int i = get_global_id(0);
    y[n - 1 - i] = x[i] + 3;
}
"#;

/// A const pointer to writable elements (`global int *const y`).
#[test]
fn const_pointers_to_writable_elements() {
    each_diff(
        "const_pointers_to_writable_elements",
        CONST_POINTER_SRC,
        "",
        &[2, 3, 64, 97],
        |d, n| {
            let ni = n as i32;
            for (k, extra) in [
                ("own", None),
                ("shifted", Some(I(ni))),
                ("mirrored", Some(I(ni))),
            ] {
                d.reset();
                let y = d.col(&vec![-9i32; n]);
                let x = d.col(&iota(n));
                let mut args = vec![B(y), B(x)];
                args.extend(extra);
                d.launch(k, d1(n), None, &args);
                d.check(k);
            }
        },
    );
}

const HELPERS_SRC: &str = r#"
int group_of(void) { return (int)get_group_id(0); }
int groups(void) { return (int)get_num_groups(0); }
int linear(void) { return (int)get_global_linear_id(); }
int size_of_launch(void) { return (int)get_global_size(0); }
int off_of(void) { return (int)get_global_offset(0); }
int plain_id(void) { return (int)get_global_id(0); }
kernel void via_group(global int *y) { y[get_global_id(0)] = group_of(); }
kernel void via_groups(global int *y) { y[get_global_id(0)] = groups(); }
kernel void via_linear(global int *y) { y[get_global_id(0)] = linear(); }
kernel void via_size(global int *y) { y[get_global_id(0)] = size_of_launch(); }
kernel void via_off(global int *y) { y[get_global_id(0) - off_of()] = off_of(); }
kernel void via_id(global int *y) { y[get_global_id(0)] = plain_id() * 2; }
"#;

/// Helpers asking for whole-launch values: right or refused, never wrong.
#[test]
fn helpers_asking_for_launch_values() {
    each_diff(
        "helpers_asking_for_launch_values",
        HELPERS_SRC,
        "",
        &[8, 64, 97],
        |d, n| {
            for k in [
                "via_group",
                "via_groups",
                "via_linear",
                "via_size",
                "via_off",
                "via_id",
            ] {
                d.reset();
                let y = d.col(&vec![-9i32; n + 2]);
                let l = if n % 8 == 0 { 4 } else { 1 };
                let o = (k == "via_off").then(|| d1(2));
                match d.try_launch(k, d1(n), Some(d1(l)), o, &[B(y)]) {
                    Ok(_) => d.check(k),
                    Err(e) => eprintln!("{k}: refused: {e}"),
                }
            }
        },
    );
}

const SCALARS_SRC: &str = r#"
kernel void by_short(global int *y, global const int *x, short off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i] = x[i + off]; else y[i] = -1;
}
kernel void by_long(global int *y, global const int *x, long off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i] = x[i + off]; else y[i] = -1;
}
kernel void write_by_short(global int *y, global const int *x, short off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i + off] = x[i];
}
kernel void write_by_long(global int *y, global const int *x, long off, int n) {
    int i = get_global_id(0);
    if (i + off >= 0 && i + off < n) y[i + off] = x[i];
}
"#;

/// Negative offsets in `short` and `long` scalar parameters.
#[test]
fn narrow_and_wide_signed_scalars() {
    each_diff(
        "narrow_and_wide_signed_scalars",
        SCALARS_SRC,
        "",
        &[3, 64, 97],
        |d, n| {
            let ni = n as i32;
            for off in [-3i64, -1, 1, 2] {
                for k in ["by_short", "by_long", "write_by_short", "write_by_long"] {
                    d.reset();
                    let y = d.col(&vec![-9i32; n]);
                    let x = d.col(&iota(n));
                    let o = if k.ends_with("short") {
                        Arg::S(off as i16)
                    } else {
                        Arg::L(off)
                    };
                    d.launch(k, d1(n), None, &[B(y), B(x), o, I(ni)]);
                    d.check(&format!("{k} {off}"));
                }
            }
        },
    );
}
