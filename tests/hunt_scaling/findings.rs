//! Findings: parenthesized lvalues, build options, `#if` branches, headers, atomics, lent
//! parts, tiny buffers.

use super::*;

/// Finding 1: a parenthesized element as the target of an assignment, `(y[i + 1]) = v`, is
/// not seen as a write (`footprint/uses.rs` looks only at the token after `]`): `y` counts as
/// read at `i + 1`, so the device whose last work-item writes `y[i + 1]` into its fetched
/// margin copy loses that write. 2 devices, n = 64: y[32] stays -9 (one device: 31).
#[test]
fn finding_parenthesized_element_write_is_lost() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        if (i + 1 < n) (y[i + 1]) = x[i];
    }";
    repro_yxn(
        "finding_parenthesized_element_write_is_lost",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

/// Finding 2: a local (or scalar parameter, or loop variable) changed through a parenthesized
/// name, `(j) = ...`, `&(j)`, `(k) += ...`, keeps the value of its declaration
/// (`footprint/parse.rs::modified` and `address_of` look only at the neighbouring tokens), so
/// `y[j]` counts as `y[i]`: each device writes the other's elements outside its part.
/// Release builds (checked mode off): heap corruption (abort, SIGSEGV) or wrong values;
/// `CLGROUPS_CHECKED=1` reports `OutOfChunk`. 2 devices, n = 64.
#[test]
fn finding_parenthesized_change_of_a_local_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        int j = i;
        (j) = n - 1 - i;
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_local_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

#[test]
fn finding_address_of_parenthesized_local_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        int j = i;
        int *pj = &(j);
        *pj = n - 1 - i;
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_address_of_parenthesized_local_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

#[test]
fn finding_parenthesized_change_of_a_parameter_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        (n) = 0;
        y[63 - i + n] = x[i];
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_parameter_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

/// Finding 3: build options are not seen by the footprints: with `#ifndef STRIDE` /
/// `#define STRIDE 1` in the source and `-DSTRIDE=2` in the options, `y[i * STRIDE]` is read
/// as `y[i]` (the macro's one definition in the source: `footprint/expr.rs::resolve`), so the
/// launch is split as own-id while each device writes `y[2 i]`: outside its part. Release:
/// heap corruption; checked: `OutOfChunk`. 2 or 3 devices, n = 64.
#[test]
fn finding_build_option_overriding_a_default_macro() {
    const SRC: &str = "#ifndef STRIDE
    #define STRIDE 1
    #endif
    kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        y[i * STRIDE] = x[i];
    }";
    repro_in_child(
        "finding_build_option_overriding_a_default_macro",
        SRC,
        "-DSTRIDE=2",
        "k",
        64,
        128,
    );
}

/// Finding 3b: the same for a read: `x[i + R]` with `#define R 1` by default and `-DR=3`:
/// each device fetches a margin of 1 and reads 3 beyond its part.
#[test]
fn finding_build_option_widening_a_read() {
    const SRC: &str = "#ifndef R
    #define R 1
    #endif
    kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        y[i] = i + R < n ? x[i + R] : -1;
    }";
    repro_in_child(
        "finding_build_option_widening_a_read",
        SRC,
        "-DR=3",
        "k",
        64,
        64,
    );
}

/// Finding 4 (valid launch refused): a colored buffer shorter than the device count (device 1
/// holds none of it) under a launch wider than it whose extra work-items touch nothing
/// (a grid-stride loop over 8 work-items: two work-groups): `InvalidInput: ...
/// device 1 holds none of its elements`. One device runs it.
#[test]
fn finding_tiny_buffer_under_a_wider_launch_is_refused() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        for (int i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + 1;
    }";
    for root in roots("finding_tiny_buffer_under_a_wider_launch_is_refused") {
        let mut d = Diff::new(&format!("tiny {}", desc(&root)), &root, SRC, "");
        for g in [1, 3, 8, 64] {
            d.reset();
            let y = d.col(&[-9i32]);
            let x = d.col(&[5i32]);
            d.launch("k", d1(g), None, &[B(y), B(x), I(1)]);
            d.check("k");
        }
    }
}

/// Finding 5: a part lent out by `ColoredBuffer::part` goes stale when a later root launch
/// runs on one device with the buffer moved whole there (`SpreadPolicy::OneDevice`, or the
/// cost model's `Spread::Resident` under the default `Model`): the part is still a valid
/// `&Buffer` (the borrow allows it), but reading it (or launching on it) sees the values from
/// before that launch. 2 devices, n = 2: part 1 reads [1] instead of [8]. (`part()` moves the
/// buffer back to its parts only when called; the resident move does not check for lent parts.)
#[test]
fn finding_lent_part_stale_after_a_resident_launch() {
    let Some(root) = partitioned_split("finding_lent_part_stale_after_a_resident_launch") else {
        return;
    };
    let one_dev = root.clone().with_spread(SpreadPolicy::OneDevice);
    let p = one_dev.program(PART_SRC).unwrap();
    let x = ColoredBuffer::from_slice(&root, &[0i32, 1]).unwrap();
    let part = x.part(1).unwrap();
    // SAFETY: one work-item per element.
    let ev = unsafe { p.kernel("add").unwrap().launch().arg(&x).arg(7i32).range(2) }.unwrap();
    ev.wait().unwrap();
    eprintln!("spread: {}", words(ev.spread()));
    root.finish().unwrap();
    let got = part.read(&root.queues()[1]).unwrap();
    assert_eq!(x.read().unwrap(), [7, 8]);
    assert_eq!(got, [8], "part 1 after the launch");
}

/// Finding 2c: the same for a counted loop's variable changed as `(k) += ...` in its body.
#[test]
fn finding_parenthesized_change_of_a_loop_variable_corrupts_memory() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
        for (int k = 0; k < 1; k++) {
            (k) += n - 1 - 2 * i;
            y[i + k] = x[i];
            break;
        }
    }";
    repro_in_child(
        "finding_parenthesized_change_of_a_loop_variable_corrupts_memory",
        SRC,
        "",
        "k",
        64,
        64,
    );
}

/// Finding 6: atomics the crate cannot see are merged element by element, and where every
/// device's updates leave an element at the same value the merge keeps that value: a
/// histogram over `n` ones with the increment in a header included through `-I` (or
/// named through token pasting, `CAT(ato, mic_inc)`) counts each device's share once
/// (`contract::uses_atomics` reads only the program's source; `launch/merge.rs` takes an
/// element two devices changed alike). 48 work-items in groups of 4 (equal shares): 2
/// devices h[0] = 24, 3 devices 16; one device 48.
#[test]
fn finding_atomics_in_a_header_are_merged() {
    const SRC: &str = "#include \"count.h\"
    kernel void hist(global int *h, global const int *x) {
        count(&h[x[get_global_id(0)]]);
    }";
    let Some(root) = partitioned_split("finding_atomics_in_a_header_are_merged") else {
        return;
    };
    let opts = format!("-I {}", header_dir().display());
    let mut d = Diff::new("atomics in a header", &root, SRC, &opts);
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

#[test]
fn finding_atomics_named_by_token_pasting_are_merged() {
    const SRC: &str = "#define CAT(a, b) a##b
    kernel void hist(global int *h, global const int *x) {
        CAT(ato, mic_inc)(&h[x[get_global_id(0)]]);
    }";
    let Some(root) = partitioned_split("finding_atomics_named_by_token_pasting_are_merged") else {
        return;
    };
    let mut d = Diff::new("pasted atomics", &root, SRC, "");
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

/// Finding 6c: clang's `__sync_fetch_and_add` (accepted by PoCL's compiler) is not seen as
/// an atomic either.
#[test]
fn finding_sync_builtins_are_merged() {
    const SRC: &str = "kernel void hist(global int *h, global const int *x) {
        __sync_fetch_and_add(&h[x[get_global_id(0)]], 1);
    }";
    let Some(root) = partitioned_split("finding_sync_builtins_are_merged") else {
        return;
    };
    let mut d = Diff::new("sync builtins", &root, SRC, "");
    let h = d.col(&[0i32; 2]);
    let x = d.col(&[0i32; 48]);
    // 12 work-groups: equal shares on 2, 3 or 4 devices, so every device counts alike.
    d.launch("hist", d1(48), Some(d1(4)), &[B(h), B(x)]);
    d.check("hist");
}

/// Finding 7: a helper in an included header asking for `get_group_id` (or the global size,
/// offset, number of groups, linear id) is not refused: the crate scans only the program's
/// source (`src/scaling/program.rs`), and each device's part reports its own group ids.
/// 2 devices, 64 work-items in groups of 4: y[32] = 0 (one device: 8).
#[test]
fn finding_launch_values_in_a_header_helper() {
    const SRC: &str = "#include \"group.h\"
    kernel void k(global int *y) { y[get_global_id(0)] = group_of(); }";
    let Some(root) = partitioned_split("finding_launch_values_in_a_header_helper") else {
        return;
    };
    let opts = format!("-I {}", header_dir().display());
    let mut d = Diff::new("group id in a header", &root, SRC, &opts);
    let y = d.col(&[-9i32; 64]);
    d.launch("k", d1(64), Some(d1(4)), &[B(y)]);
    d.check("k");
}

/// Finding 8: both branches of an `#if` inside a kernel are read as one text, so a local
/// declared in each branch takes the value of the last declaration: with the first branch
/// compiled (`#if 1`, or `#ifdef FLIP` with `#define FLIP` or `-DFLIP`) `y[j]` is read as
/// `y[i]` while each device writes `y[n - 1 - i]`: outside its part. Release: heap
/// corruption or wrong values; checked: `OutOfChunk`. 2 devices, n = 64.
#[test]
fn finding_declarations_in_both_if_branches() {
    const SRC: &str = "kernel void k(global int *y, global const int *x, int n) {
        int i = get_global_id(0);
    #if 1
        int j = n - 1 - i;
    #else
        int j = i;
    #endif
        y[j] = x[i];
    }";
    repro_in_child(
        "finding_declarations_in_both_if_branches",
        SRC,
        "",
        "k",
        64,
        64,
    );
}
