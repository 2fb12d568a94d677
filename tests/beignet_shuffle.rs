//! Issue 32: beignet's `compiler_sub_group_shuffle` test kernel (Intel's open-source OpenCL for
//! its GPUs; LGPL-2.1, `kernels/compiler_sub_group_shuffle.cl`), paraphrased for this test: work-item 0
//! records `get_max_sub_group_size()`, then every work-item stores its sub-group local id and
//! `intel_sub_group_shuffle` of its global id from lane `c` (an argument), from lane 5 and from
//! the mirrored lane `get_max_sub_group_size() - 1 - lane`. On NVIDIA, in work-groups of 16,
//! `get_max_sub_group_size()` was 32, and the mirrored lane did not exist (63 of 257 values
//! wrong); here it runs in work-groups of 16 and 1..7 and is checked against the host.

mod common;

use clgroups::{Buffer, LocalSize, Program, Range};

const SHUFFLE: &str = r#"
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
typedef int T;

__kernel void compiler_sub_group_shuffle_int(global T *dst, int c)
{
    int i = get_global_id(0);
    if (i == 0)
        dst[0] = get_max_sub_group_size();
    dst++;

    T from = i;
    int j = get_max_sub_group_size() - get_sub_group_local_id() - 1;
    T o0 = get_sub_group_local_id();
    T o1 = intel_sub_group_shuffle(from, c);
    T o2 = intel_sub_group_shuffle(from, 5);
    T o3 = intel_sub_group_shuffle(from, j);
    dst[i * 4] = o0;
    dst[i * 4 + 1] = o1;
    dst[i * 4 + 2] = o2;
    dst[i * 4 + 3] = o3;
}
"#;

/// Work-groups of 16 and 1..7 (one sub-group, or whole ones, each), eight of them, lane `c` = 3:
/// every value the kernel wrote that OpenCL defines (lanes 3 and 5 where they exist) is right,
/// and its largest sub-group is the host's.
#[test]
fn shuffles_in_small_work_groups() {
    let q = common::queue();
    let d = q.device().clone();
    let p = Program::from_source(&q, SHUFFLE).expect("beignet's kernel builds");
    let k = p.kernel("compiler_sub_group_shuffle_int").unwrap();
    let c = 3usize;
    let mut checked = 0usize;
    for local in [16usize, 1, 2, 3, 4, 5, 6, 7] {
        let n = 8 * local;
        let dst = Buffer::from_slice(&q, &vec![-1i32; 1 + 4 * n]).unwrap();
        // SAFETY: work-item i < n writes dst[0] (i = 0) and dst[1 + 4i ..= 4 + 4i]; dst holds
        // 1 + 4n.
        let launched = unsafe {
            k.launch()
                .arg(&dst)
                .arg(c as i32)
                .nd_range(Range::d1(n), LocalSize::Exact(Range::d1(local)))
        }
        .and_then(|e| e.wait());
        match launched {
            Ok(()) => {}
            Err(e) => panic!("work-groups of {local} on {d}: {e}"),
        }
        let v = dst.read(&q).unwrap();
        let sgs = v[0] as usize;
        let host = k.sub_groups().max_sub_group_size(Range::d1(local)).unwrap();
        assert_eq!(
            sgs, host,
            "work-groups of {local}: kernel and host disagree"
        );
        assert!(
            sgs >= 1 && sgs <= local,
            "work-groups of {local}: sub-groups of {sgs}"
        );
        assert_eq!(local % sgs, 0, "these work-groups are whole sub-groups");
        let mut wrong = 0;
        for i in 0..n {
            let base = (i / sgs * sgs) as i32;
            let lane = i % sgs;
            let r = &v[1 + 4 * i..][..4];
            let mut want = vec![(0, lane as i32), (3, base + (sgs - 1 - lane) as i32)];
            if c < sgs {
                want.push((1, base + c as i32));
            }
            if 5 < sgs {
                want.push((2, base + 5));
            }
            for (f, w) in want {
                checked += 1;
                if r[f] != w {
                    wrong += 1;
                    eprintln!("local {local}, item {i}: field {f} is {}, want {w}", r[f]);
                }
            }
        }
        assert_eq!(
            wrong, 0,
            "work-groups of {local} on {d}: {wrong} wrong (sub-groups of {sgs})"
        );
    }
    assert!(checked > 0);
    println!("compiler_sub_group_shuffle_int: {checked} values right on {d}");
}
