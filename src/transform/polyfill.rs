//! The text of the standard sub-group built-ins' polyfill: which words name a built-in or an
//! extension, the probe kernel of each extension, and the lines a build puts in front of a
//! source whose device lacks some of them (the driver side, probing and caching, is
//! [`super::polyfill`]).

use crate::builtins::{self, Flags};
use std::collections::BTreeSet;

/// Sub-group extension and feature macros besides `cl_khr_subgroup_*`.
const EXTENSIONS: [&str; 3] = [
    "cl_khr_subgroups",
    "cl_intel_subgroups",
    "__opencl_c_subgroups",
];

/// Whether `word` is the name of a standard sub-group built-in (a kernel calling one uses the
/// sub-group layer wherever the polyfill provides it).
pub(crate) fn is_builtin(word: &str) -> bool {
    builtins::flags(word).has(Flags::POLYFILLED)
}

/// Whether `word` names a sub-group extension or feature macro.
fn is_extension(word: &str) -> bool {
    word.starts_with("cl_khr_subgroup_") || EXTENSIONS.contains(&word)
}

/// Whether one of a program's `words` names a sub-group built-in or extension (a false
/// positive only costs the header).
pub(crate) fn mentions_sub_groups(words: &BTreeSet<String>) -> bool {
    words.iter().any(|w| is_builtin(w) || is_extension(w))
}

/// The text to put after the layer's defines of a build: the polyfill header with the
/// `provided` extensions switched on, or nothing when the source `mentions` no sub-group
/// built-in ([`SourceFacts::mentions_sub_groups`](super::SourceFacts)) or nothing is provided.
///
/// Native built-ins are never replaced: kernels that call only standard built-ins are not
/// pinned to a sub-group size by clgroups, so they run at the driver's own size, which only the
/// driver's built-ins know (replacing them with the layer's fixed-size `cl_khr_subgroups` for a
/// build of size `size` gave 314,067 wrong results of 554,202 on PoCL 6.0). The one exception
/// is the caller's: builds of a fixed size on PoCL's native sub-groups, which get a partial last
/// sub-group wrong, pass every extension (`program::build::fixed_builtins`).
pub(crate) fn prelude(provided: &[&str], mentions: bool) -> String {
    if !mentions || provided.is_empty() {
        return String::new();
    }
    let mut p: String = provided
        .iter()
        .map(|ext| format!("#define {} 1\n", define(ext)))
        .collect();
    p.push_str("#include <clgroups/khr/polyfill.h>\n");
    p
}

/// The polyfill header's switch for an extension.
fn define(ext: &str) -> &'static str {
    match ext {
        "cl_khr_subgroups" => "CLG_PF_SUBGROUPS",
        "cl_khr_subgroup_extended_types" => "CLG_PF_EXTENDED_TYPES",
        "cl_khr_subgroup_shuffle" => "CLG_PF_SHUFFLE",
        "cl_khr_subgroup_shuffle_relative" => "CLG_PF_SHUFFLE_RELATIVE",
        "cl_khr_subgroup_ballot" => "CLG_PF_BALLOT",
        "cl_khr_subgroup_non_uniform_vote" => "CLG_PF_VOTE",
        "cl_khr_subgroup_non_uniform_arithmetic" => "CLG_PF_ARITHMETIC",
        "cl_khr_subgroup_clustered_reduce" => "CLG_PF_CLUSTERED",
        "cl_khr_subgroup_rotate" => "CLG_PF_ROTATE",
        _ => "CLG_PF_INTEL",
    }
}

/// A kernel calling every built-in of `ext`: it builds (compiles and links) where the driver
/// has them all.
pub(crate) fn probe_source(ext: &str) -> String {
    let body = match ext {
        "cl_khr_subgroups" => {
            "uint n = get_sub_group_size() + get_max_sub_group_size() + get_num_sub_groups() \
             + get_enqueued_num_sub_groups() + get_sub_group_id() + get_sub_group_local_id();\n\
             sub_group_barrier(CLK_LOCAL_MEM_FENCE);\n\
             int i = sub_group_all(n) + sub_group_any(n) + sub_group_broadcast((int)n, 0u);\n\
             long l = sub_group_reduce_add((long)i) + sub_group_reduce_min((long)i) + sub_group_reduce_max((long)i);\n\
             float f = sub_group_scan_inclusive_add((float)l) + sub_group_scan_inclusive_min((float)l) \
             + sub_group_scan_inclusive_max((float)l) + sub_group_scan_exclusive_add((float)l) \
             + sub_group_scan_exclusive_min((float)l) + sub_group_scan_exclusive_max((float)l);\n\
             o[0] = (uint)f + sub_group_reduce_add(n);"
        }
        "cl_khr_subgroup_extended_types" => {
            "char c = sub_group_reduce_add((char)o[1]) + sub_group_scan_exclusive_max((char)o[2]);\n\
             short s = sub_group_broadcast((short)o[3], 0u) + sub_group_scan_inclusive_min((short)o[4]);\n\
             o[0] = (uint)c + (uint)s + sub_group_reduce_max((uchar)o[5]) + sub_group_reduce_min((ushort)o[6]);"
        }
        "cl_khr_subgroup_shuffle" => {
            "o[0] = sub_group_shuffle(o[1], 1u) + sub_group_shuffle_xor(o[2], 1u) \
             + (uint)sub_group_shuffle((float)o[3], 1u) + (uint)sub_group_shuffle_xor((long)o[4], 1u);"
        }
        "cl_khr_subgroup_shuffle_relative" => {
            "o[0] = sub_group_shuffle_up(o[1], 1u) + sub_group_shuffle_down(o[2], 1u) \
             + (uint)sub_group_shuffle_up((float)o[3], 1u) + (uint)sub_group_shuffle_down((long)o[4], 1u);"
        }
        "cl_khr_subgroup_ballot" => {
            "uint4 b = sub_group_ballot((int)o[1]) + get_sub_group_eq_mask() + get_sub_group_ge_mask() \
             + get_sub_group_gt_mask() + get_sub_group_le_mask() + get_sub_group_lt_mask();\n\
             o[0] = sub_group_non_uniform_broadcast(o[2], 0u) + sub_group_broadcast_first(o[3]) \
             + sub_group_inverse_ballot(b) + sub_group_ballot_bit_extract(b, 1u) + sub_group_ballot_bit_count(b) \
             + sub_group_ballot_inclusive_scan(b) + sub_group_ballot_exclusive_scan(b) \
             + sub_group_ballot_find_lsb(b) + sub_group_ballot_find_msb(b);"
        }
        "cl_khr_subgroup_non_uniform_arithmetic" => {
            "float f = (float)o[1];\n\
             f = sub_group_non_uniform_reduce_add(f) + sub_group_non_uniform_scan_inclusive_mul(f) \
             + sub_group_non_uniform_scan_exclusive_min(f) + sub_group_non_uniform_reduce_max(f);\n\
             uint u = sub_group_non_uniform_reduce_and(o[2]) + sub_group_non_uniform_scan_inclusive_or(o[3]) \
             + sub_group_non_uniform_scan_exclusive_xor(o[4]) + (uint)sub_group_non_uniform_reduce_add((long)o[5]);\n\
             int i = sub_group_non_uniform_reduce_logical_and((int)o[6]) \
             + sub_group_non_uniform_scan_inclusive_logical_or((int)o[7]) \
             + sub_group_non_uniform_scan_exclusive_logical_xor((int)o[8]);\n\
             o[0] = (uint)f + u + (uint)i;"
        }
        "cl_khr_subgroup_non_uniform_vote" => {
            "o[0] = sub_group_elect() + sub_group_non_uniform_all((int)o[1]) + sub_group_non_uniform_any((int)o[2]) \
             + sub_group_non_uniform_all_equal(o[3]) + sub_group_non_uniform_all_equal((float)o[4]);"
        }
        "cl_khr_subgroup_clustered_reduce" => {
            "float f = sub_group_clustered_reduce_add((float)o[1], 4) + sub_group_clustered_reduce_max((float)o[2], 2);\n\
             uint u = sub_group_clustered_reduce_mul(o[3], 2) + sub_group_clustered_reduce_xor(o[4], 1) \
             + (uint)sub_group_clustered_reduce_logical_or((int)o[5], 2) + (uint)sub_group_clustered_reduce_min((long)o[6], 2);\n\
             o[0] = (uint)f + u;"
        }
        "cl_khr_subgroup_rotate" => {
            "o[0] = sub_group_rotate(o[1], 1) + (uint)sub_group_rotate((float)o[2], 3) \
             + sub_group_clustered_rotate(o[3], 1, 2u) + (uint)sub_group_clustered_rotate((long)o[4], 1, 4u);"
        }
        _ => {
            "uint a = intel_sub_group_shuffle(o[1], 1u) + intel_sub_group_shuffle_xor(o[2], 1u) \
             + intel_sub_group_shuffle_down(o[3], o[4], 1u) + intel_sub_group_shuffle_up(o[5], o[6], 1u) \
             + (uint)intel_sub_group_shuffle_down((float)o[3], (float)o[4], 1u);\n\
             uint8 v = intel_sub_group_block_read8(o + 64);\n\
             intel_sub_group_block_write8(o + 128, v);\n\
             intel_sub_group_block_write4(o + 256, intel_sub_group_block_read4(o + 64));\n\
             intel_sub_group_block_write2(o + 256, intel_sub_group_block_read2(o + 64));\n\
             intel_sub_group_block_write(o, intel_sub_group_block_read(o + 64) + a);"
        }
    };
    let pragma = if ext == "cl_intel_subgroups" {
        "#pragma OPENCL EXTENSION cl_intel_subgroups : enable\n"
    } else {
        "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n"
    };
    format!("{pragma}kernel void clg_probe(global uint *o) {{\n{body}\n}}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ShuffleBackend;
    use crate::transform::SourceFacts;

    /// [`SourceFacts::mentions_sub_groups`] of `src`.
    fn mentions(src: &str) -> bool {
        let facts = SourceFacts::read_on(src, ShuffleBackend::Khr, None);
        facts.unwrap().mentions_sub_groups
    }

    #[test]
    fn mentions_are_whole_words() {
        assert!(mentions("x = sub_group_reduce_add(v);"));
        assert!(mentions("#ifdef cl_khr_subgroups\n#endif"));
        assert!(mentions("uint n = get_num_sub_groups();"));
        assert!(mentions("intel_sub_group_block_read(p)"));
        assert!(!mentions("my_sub_group_reduce_add(v); sg_reduce_add(v);"));
        assert!(!mentions("kernel void k(global int *x) { x[0] = 1; }"));
    }

    #[test]
    fn builtins_exclude_extension_names() {
        assert!(is_builtin("sub_group_shuffle_up"));
        assert!(is_builtin("get_sub_group_lt_mask"));
        assert!(!is_builtin("cl_khr_subgroups"));
        assert!(!is_builtin("num_sub_groups"));
        assert!(!is_builtin("sub_group_size_of"));
    }

    #[test]
    fn non_uniform_clustered_and_rotate_builtins_are_emulated_collectives() {
        for w in [
            "sub_group_elect",
            "sub_group_non_uniform_all_equal",
            "sub_group_non_uniform_reduce_logical_xor",
            "sub_group_non_uniform_scan_exclusive_mul",
            "sub_group_clustered_reduce_add",
            "sub_group_rotate",
            "sub_group_clustered_rotate",
        ] {
            assert!(is_builtin(w), "{w}");
            assert!(super::super::layer::is_emulated_collective(w), "{w}");
        }
        let p = prelude(
            &["cl_khr_subgroup_rotate"],
            mentions("x = sub_group_rotate(v, 1);"),
        );
        assert!(p.starts_with("#define CLG_PF_ROTATE 1\n"), "{p}");
        for ext in [
            "cl_khr_subgroup_non_uniform_vote",
            "cl_khr_subgroup_non_uniform_arithmetic",
            "cl_khr_subgroup_clustered_reduce",
            "cl_khr_subgroup_rotate",
        ] {
            assert_ne!(define(ext), "CLG_PF_INTEL", "{ext}");
            assert!(probe_source(ext).contains("sub_group_"), "{ext}");
        }
    }

    #[test]
    fn the_prelude_switches_on_what_is_provided() {
        let src = "x = sub_group_reduce_add(v);";
        let p = prelude(&["cl_khr_subgroups", "cl_intel_subgroups"], mentions(src));
        assert!(
            p.starts_with("#define CLG_PF_SUBGROUPS 1\n#define CLG_PF_INTEL 1\n"),
            "{p}"
        );
        assert!(p.ends_with("#include <clgroups/khr/polyfill.h>\n"), "{p}");
        assert_eq!(prelude(&[], mentions(src)), "");
        assert_eq!(prelude(&["cl_khr_subgroups"], mentions("x = 1;")), "");
        assert!(probe_source("cl_intel_subgroups").contains("intel_sub_group_block_read8"));
    }
}
