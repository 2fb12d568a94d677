//! Types under data conditions with fast math; per-sub-group partials in 2-D and 3-D groups.

use super::*;

// ---------------------------------------------------------------------------------------------
// Right everywhere: coverage the other suites lack.
// ---------------------------------------------------------------------------------------------

const TYPES_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_extended_types : enable
#define W 10
kernel void masked(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0);
    int v = x[g];
    float f = (float)(v % 100) + 0.5f;
    uchar u = (uchar)(v & 0xff);
    char ch = (char)(v & 0xff);
    ulong ul = (ulong)(uint)v * 3000000000UL;
    int r0 = -7, r1 = -7, r2 = -7, r3 = -7, r4 = -7, r5 = -7, r6 = -7, r7 = -7;
    if (x[g] > 0) {
        r0 = (int)(sub_group_reduce_min(f) * 2.0f);
        r1 = (int)(sub_group_reduce_max(-f) * 2.0f);
        r2 = sub_group_reduce_min(u);
        r3 = sub_group_reduce_max(ch);
        r4 = (int)(sub_group_reduce_min(ul) >> 20);
        r5 = sub_group_scan_inclusive_min(ch);
        r6 = sub_group_scan_exclusive_max(u);
        r7 = (int)(sub_group_scan_inclusive_min(f) * 2.0f);
    }
    out[W*g] = get_sub_group_id(); out[W*g+1] = get_sub_group_local_id();
    out[W*g+2] = r0; out[W*g+3] = r1; out[W*g+4] = r2; out[W*g+5] = r3; out[W*g+6] = r4;
    out[W*g+7] = r5; out[W*g+8] = r6; out[W*g+9] = r7;
}
"#;

fn masked_types(s: &Sg) -> Vec<Vec<i32>> {
    let act: Vec<usize> = (0..s.xs.len()).filter(|&l| s.xs[l] > 0).collect();
    let f = |i: usize| (s.xs[i] % 100) as f32 + 0.5;
    let u = |i: usize| (s.xs[i] & 0xff) as u8 as i32;
    let ch = |i: usize| (s.xs[i] & 0xff) as u8 as i8 as i32;
    let ul = |i: usize| (s.xs[i] as u32 as u64).wrapping_mul(3_000_000_000);
    (0..s.xs.len())
        .map(|l| {
            if s.xs[l] <= 0 {
                return vec![-7; 8];
            }
            let k = act.iter().position(|&a| a == l).unwrap();
            let fmin = act.iter().map(|&i| f(i)).fold(f32::INFINITY, f32::min);
            let fmax_neg = act.iter().map(|&i| -f(i)).fold(f32::NEG_INFINITY, f32::max);
            let r7 = (act[..=k]
                .iter()
                .map(|&i| f(i))
                .fold(f32::INFINITY, f32::min)
                * 2.0) as i32;
            vec![
                (fmin * 2.0) as i32,
                (fmax_neg * 2.0) as i32,
                act.iter().map(|&i| u(i)).min().unwrap(),
                act.iter().map(|&i| ch(i)).max().unwrap(),
                (act.iter().map(|&i| ul(i)).min().unwrap() >> 20) as i32,
                act[..=k].iter().map(|&i| ch(i)).min().unwrap(),
                act[..k].iter().map(|&i| u(i)).max().unwrap_or(0),
                r7,
            ]
        })
        .collect()
}

/// Reductions and scans of `float`, `uchar`, `char` and `ulong` under a condition on a loaded
/// value (masked with each type's identity: `+INFINITY` for a float minimum, 255 for a `uchar`
/// one, -128 for a `char` maximum, `ULONG_MAX`), also under `-cl-fast-relaxed-math` and
/// `-cl-finite-math-only`, where an infinite identity could be folded away.
#[test]
fn extended_types_under_data_conditions_with_fast_math() {
    let test = "extended_types_under_data_conditions_with_fast_math";
    common::in_child_with(test, &[], || {
        let q = common::queue();
        for options in ["", "-cl-fast-relaxed-math", "-cl-finite-math-only"] {
            let p = build(&q, TYPES_SRC, options);
            check_all(&q, &p, &[("masked", &masked_types)], &WIDE, (10, 0));
        }
    });
}

const PARTIALS_SRC: &str = r#"
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
#define W 8
kernel void partials(global const int *x, global int *out, int n) {
    size_t g = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
    int v = x[g] % 50;
    local int part[64];
    uint sg = get_sub_group_id(), lane = get_sub_group_local_id();
    int ra = sub_group_reduce_add(v);
    if (lane == 0) part[sg] = ra;
    barrier(CLK_LOCAL_MEM_FENCE);
    int tot = 0;
    for (uint i = 0; i < get_num_sub_groups(); i++) tot += part[i];
    out[W*g] = sg; out[W*g+1] = lane;
    out[W*g+2] = tot;
    out[W*g+3] = sub_group_scan_inclusive_add(v);
    out[W*g+4] = sub_group_shuffle(v, (lane + 1) % get_sub_group_size());
    out[W*g+5] = get_sub_group_size();
    out[W*g+6] = get_num_sub_groups() * 100 + get_enqueued_num_sub_groups();
    out[W*g+7] = sub_group_broadcast(v, get_sub_group_size() - 1);
}
"#;

/// The classic two-level reduction (each sub-group's lane 0 writes its partial to
/// `local int part[get_sub_group_id()]`, a barrier, every work-item sums
/// `get_num_sub_groups()` partials), plus a scan, a rotating shuffle, a broadcast of the last
/// lane and the counts, in 2-D and 3-D work-groups whose size is not a multiple of the
/// sub-group size ((8, 3), (5, 5), (3, 3, 3), (7, 2)). The work-group total is checked against
/// the host's sum over the work-group.
#[test]
fn per_sub_group_partials_in_2d_and_3d_groups() {
    let test = "per_sub_group_partials_in_2d_and_3d_groups";
    common::in_child_with(test, &[], || {
        let q = common::queue();
        let p = build(&q, PARTIALS_SRC, "");
        let shapes: [(&[usize], &[usize]); 5] = [
            (&[16, 6], &[8, 3]),
            (&[10, 10], &[5, 5]),
            (&[6, 6, 6], &[3, 3, 3]),
            (&[7, 2], &[7, 2]),
            (&[4, 4, 4], &[2, 2, 4]),
        ];
        let mut bad = Vec::new();
        for (global, local) in shapes {
            let total: usize = global.iter().product();
            let x = common::values(total, 1);
            let group_of = |g: usize| {
                let (mut rest, mut group) = (g, Vec::new());
                for (dim, l) in global.iter().zip(local) {
                    group.push(rest % dim / l);
                    rest /= dim;
                }
                group
            };
            let mut sums: BTreeMap<Vec<usize>, i32> = BTreeMap::new();
            for (g, xv) in x.iter().enumerate() {
                *sums.entry(group_of(g)).or_default() += xv % 50;
            }
            let model = |s: &Sg| {
                let v = s.v();
                let n = v.len();
                let tot = sums[&group_of(s.gs[0])];
                (0..n)
                    .map(|l| {
                        vec![
                            tot,
                            v[..=l].iter().sum(),
                            v[(l + 1) % n],
                            n as i32,
                            s.count * 101,
                            v[n - 1],
                        ]
                    })
                    .collect()
            };
            bad.extend(check(&q, &p, "partials", (global, local), 8, 0, &model));
        }
        assert!(
            bad.is_empty(),
            "{}:\n{}",
            device_line(q.device()),
            bad.join("\n")
        );
    });
}
