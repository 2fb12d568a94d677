//! One table of the OpenCL C built-ins (and the layer's words) clgroups reasons about, with
//! what each is ([`Flags`]): the rounding, wrapping, splitting and partitioning deny-lists, the
//! sub-group classifiers of the layer, hoist, mask and polyfill, and the work-item queries the
//! footprint reads. Exact names come from [`BUILTINS`], name patterns (every `work_group_*`,
//! every name with `sub_group` in it, ...) from [`PATTERNS`].

use std::collections::HashMap;
use std::ops::BitOr;
use std::sync::OnceLock;

/// What a built-in is: a set of bits, tested with [`Flags::has`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flags(u32);

impl Flags {
    /// A work-group collective: `barrier`, `*_barrier`, `work_group_*`, `async_work_group*`,
    /// `wait_group_events`.
    pub(crate) const WORK_GROUP: Flags = Flags(1 << 0);
    /// A `work_group_*` function.
    pub(crate) const WORK_GROUP_FUNCTION: Flags = Flags(1 << 1);
    /// A sub-group operation: OpenCL's (`sub_group`/`subgroup` in the name) or the layer's
    /// `sg_*`.
    pub(crate) const SUB_GROUP: Flags = Flags(1 << 2);
    /// The sub-group layer's: `sg_*` and the `CLG_SG_SCRATCH*` plumbing macros.
    pub(crate) const LAYER: Flags = Flags(1 << 3);
    /// The layer's scratch plumbing (`CLG_SG_SCRATCH*`).
    pub(crate) const PLUMBING: Flags = Flags(1 << 4);
    /// A query (`get_*`, `sg_get_*`): no side effects, not a collective.
    pub(crate) const QUERY: Flags = Flags(1 << 5);
    /// A standard sub-group built-in the polyfill provides.
    pub(crate) const POLYFILLED: Flags = Flags(1 << 6);
    /// Defined over the work-items that reach it (`sub_group_non_uniform_*`,
    /// `sub_group_clustered_*`, `sub_group_elect`): masked, never moved as it is.
    pub(crate) const NON_UNIFORM: Flags = Flags(1 << 7);
    /// `non_uniform` in the name (whatever the prefix).
    pub(crate) const NAMES_NON_UNIFORM: Flags = Flags(1 << 8);
    /// A `cl_khr_subgroups` collective every work-item of the sub-group must reach: a reduction,
    /// scan, broadcast or vote.
    pub(crate) const MUST_REACH: Flags = Flags(1 << 9);
    /// `barrier` in the name: nothing that can be computed ahead.
    pub(crate) const BARRIER: Flags = Flags(1 << 10);
    /// A name of a result shared by the sub-group (`reduce`, `any`, `all`, `broadcast` in it).
    pub(crate) const SHARED: Flags = Flags(1 << 11);
    /// A name of a result per work-item (`non_uniform`, `clustered`, `scan`, `shuffle`, `ballot`,
    /// `elect` in it).
    pub(crate) const PER_LANE: Flags = Flags(1 << 12);
    /// The sub-group's own id or size: uniform in each sub-group.
    pub(crate) const SUB_GROUP_ID: Flags = Flags(1 << 13);
    /// A value that differs between the work-items of a work-group (a sub-group's id and size
    /// too; the collectives whose result differs between the work-items of a sub-group whatever
    /// their operands: scans, `elect`, inverse ballots, clustered operations, block reads).
    pub(crate) const ID: Flags = Flags(1 << 14);
    /// A global-range query (size, offset, linear id): a called function would see a rounded
    /// range.
    pub(crate) const GLOBAL_RANGE: Flags = Flags(1 << 15);
    /// A work-group shape query: indices computed from it change with the shape.
    pub(crate) const SHAPE: Flags = Flags(1 << 16);
    /// An answer that differs between one launch and a bulk + tail split.
    pub(crate) const SPLIT: Flags = Flags(1 << 17);
    /// An answer that describes the whole launch in a partitioned variant.
    pub(crate) const WHOLE_LAUNCH: Flags = Flags(1 << 18);
    /// An answer a rounded-up range changes (a wrapper cannot hide it).
    pub(crate) const ROUNDED_UP: Flags = Flags(1 << 19);
    /// A work-group id (the last work-group of a rounded-up range is partial).
    pub(crate) const GROUP_ID: Flags = Flags(1 << 20);
    /// A function without side effects an operand moved ahead may call.
    pub(crate) const PURE: Flags = Flags(1 << 21);
    /// A clustered operation (`sub_group_clustered_*`): its cluster size is one more argument.
    pub(crate) const CLUSTERED: Flags = Flags(1 << 22);

    /// Whether any of `other`'s bits is set.
    pub(crate) fn has(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

/// A work-item query with a value the footprint models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Query {
    /// `get_global_id(d)`.
    GlobalId,
    /// `get_local_id(d)`.
    LocalId,
    /// `get_group_id(d)`.
    GroupId,
    /// `get_global_size(d)`.
    GlobalSize,
    /// `get_local_size(d)`.
    LocalSize,
    /// `get_global_offset(d)`.
    GlobalOffset,
    /// `get_global_linear_id()`.
    GlobalLinearId,
}

/// A built-in known by name.
pub(crate) struct Builtin {
    name: &'static str,
    flags: Flags,
    #[cfg_attr(not(feature = "scaling"), allow(dead_code))]
    // the footprint and root fallback are the scaling's
    query: Option<Query>,
}

/// The union of `flags`, in constants.
const fn all(flags: &[Flags]) -> Flags {
    let (mut out, mut i) = (0, 0);
    while i < flags.len() {
        out |= flags[i].0;
        i += 1;
    }
    Flags(out)
}

/// A [`BUILTINS`] entry.
const fn b(name: &'static str, flags: &[Flags], query: Option<Query>) -> Builtin {
    Builtin {
        name,
        flags: all(flags),
        query,
    }
}

/// Short for the table.
type F = Flags;

/// The built-ins known by name, in the order [`named`] lists them.
const BUILTINS: &[Builtin] = &[
    b(
        "get_global_size",
        &[F::GLOBAL_RANGE, F::SPLIT, F::WHOLE_LAUNCH, F::ROUNDED_UP],
        Some(Query::GlobalSize),
    ),
    b(
        "get_global_offset",
        &[F::GLOBAL_RANGE, F::SPLIT, F::WHOLE_LAUNCH],
        Some(Query::GlobalOffset),
    ),
    b(
        "get_global_linear_id",
        &[
            F::ID,
            F::GLOBAL_RANGE,
            F::SPLIT,
            F::WHOLE_LAUNCH,
            F::ROUNDED_UP,
        ],
        Some(Query::GlobalLinearId),
    ),
    b(
        "get_group_id",
        &[F::SHAPE, F::SPLIT, F::WHOLE_LAUNCH, F::GROUP_ID],
        Some(Query::GroupId),
    ),
    b(
        "get_num_groups",
        &[F::SHAPE, F::SPLIT, F::WHOLE_LAUNCH, F::ROUNDED_UP],
        None,
    ),
    b("get_work_dim", &[F::SPLIT], None),
    b("get_global_id", &[F::ID], Some(Query::GlobalId)),
    b("get_local_id", &[F::ID, F::SHAPE], Some(Query::LocalId)),
    b("get_local_linear_id", &[F::ID, F::SHAPE], None),
    b("get_local_size", &[F::SHAPE], Some(Query::LocalSize)),
    b("get_enqueued_local_size", &[F::SHAPE], None),
    b("sg_get_local_id", &[F::ID], None),
    b("sg_get_local_linear_id", &[F::ID], None),
    b("sg_get_local_range", &[F::ID, F::SUB_GROUP_ID], None),
    b("sg_get_group_id", &[F::ID, F::SUB_GROUP_ID], None),
    b("sg_get_group_linear_id", &[F::ID, F::SUB_GROUP_ID], None),
    // The build prelude's vote of the work-group (`transform::lockstep`).
    b(
        "clg_group_any",
        &[F::WORK_GROUP, F::WORK_GROUP_FUNCTION],
        None,
    ),
    // Of another size in a partial last sub-group: uniform in each sub-group only.
    b(
        "get_sub_group_size",
        &[F::POLYFILLED, F::ID, F::SUB_GROUP_ID],
        None,
    ),
    b("get_max_sub_group_size", &[F::POLYFILLED], None),
    b("get_num_sub_groups", &[F::POLYFILLED], None),
    b("get_enqueued_num_sub_groups", &[F::POLYFILLED], None),
    b(
        "get_sub_group_id",
        &[F::POLYFILLED, F::ID, F::SUB_GROUP_ID],
        None,
    ),
    b("get_sub_group_local_id", &[F::POLYFILLED, F::ID], None),
    b("sub_group_barrier", &[F::POLYFILLED], None),
    b("sub_group_all", &[F::POLYFILLED, F::MUST_REACH], None),
    b("sub_group_any", &[F::POLYFILLED, F::MUST_REACH], None),
    b("sub_group_broadcast", &[F::POLYFILLED, F::MUST_REACH], None),
    b("sub_group_reduce_add", &[F::POLYFILLED], None),
    b("sub_group_reduce_min", &[F::POLYFILLED], None),
    b("sub_group_reduce_max", &[F::POLYFILLED], None),
    b("sub_group_scan_inclusive_add", &[F::POLYFILLED], None),
    b("sub_group_scan_inclusive_min", &[F::POLYFILLED], None),
    b("sub_group_scan_inclusive_max", &[F::POLYFILLED], None),
    b("sub_group_scan_exclusive_add", &[F::POLYFILLED], None),
    b("sub_group_scan_exclusive_min", &[F::POLYFILLED], None),
    b("sub_group_scan_exclusive_max", &[F::POLYFILLED], None),
    b("sub_group_shuffle", &[F::POLYFILLED], None),
    b("sub_group_shuffle_xor", &[F::POLYFILLED], None),
    b("sub_group_shuffle_up", &[F::POLYFILLED], None),
    b("sub_group_shuffle_down", &[F::POLYFILLED], None),
    b("sub_group_non_uniform_broadcast", &[F::POLYFILLED], None),
    b("sub_group_broadcast_first", &[F::POLYFILLED], None),
    b("sub_group_ballot", &[F::POLYFILLED], None),
    b("sub_group_inverse_ballot", &[F::POLYFILLED], None),
    b("sub_group_ballot_bit_extract", &[F::POLYFILLED], None),
    b("sub_group_ballot_bit_count", &[F::POLYFILLED], None),
    b("sub_group_ballot_inclusive_scan", &[F::POLYFILLED], None),
    b("sub_group_ballot_exclusive_scan", &[F::POLYFILLED], None),
    b("sub_group_ballot_find_lsb", &[F::POLYFILLED], None),
    b("sub_group_ballot_find_msb", &[F::POLYFILLED], None),
    b("get_sub_group_eq_mask", &[F::POLYFILLED, F::ID], None),
    b("get_sub_group_ge_mask", &[F::POLYFILLED, F::ID], None),
    b("get_sub_group_gt_mask", &[F::POLYFILLED, F::ID], None),
    b("get_sub_group_le_mask", &[F::POLYFILLED, F::ID], None),
    b("get_sub_group_lt_mask", &[F::POLYFILLED, F::ID], None),
    b("intel_sub_group_shuffle", &[F::POLYFILLED], None),
    b("intel_sub_group_shuffle_xor", &[F::POLYFILLED], None),
    b("intel_sub_group_shuffle_down", &[F::POLYFILLED], None),
    b("intel_sub_group_shuffle_up", &[F::POLYFILLED], None),
    b("intel_sub_group_block_read", &[F::POLYFILLED], None),
    b("intel_sub_group_block_read2", &[F::POLYFILLED], None),
    b("intel_sub_group_block_read4", &[F::POLYFILLED], None),
    b("intel_sub_group_block_read8", &[F::POLYFILLED], None),
    b("intel_sub_group_block_write", &[F::POLYFILLED], None),
    b("intel_sub_group_block_write2", &[F::POLYFILLED], None),
    b("intel_sub_group_block_write4", &[F::POLYFILLED], None),
    b("intel_sub_group_block_write8", &[F::POLYFILLED], None),
    b("sub_group_elect", &[F::POLYFILLED], None),
    b("sub_group_non_uniform_all", &[F::POLYFILLED], None),
    b("sub_group_non_uniform_any", &[F::POLYFILLED], None),
    b("sub_group_non_uniform_all_equal", &[F::POLYFILLED], None),
    b("sub_group_non_uniform_reduce_add", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_add",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_add",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_mul", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_mul",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_mul",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_min", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_min",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_min",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_max", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_max",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_max",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_and", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_and",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_and",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_or", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_or",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_or",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_non_uniform_reduce_xor", &[F::POLYFILLED], None),
    b(
        "sub_group_non_uniform_scan_inclusive_xor",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_xor",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_reduce_logical_and",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_inclusive_logical_and",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_logical_and",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_reduce_logical_or",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_inclusive_logical_or",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_logical_or",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_reduce_logical_xor",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_inclusive_logical_xor",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_non_uniform_scan_exclusive_logical_xor",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_clustered_reduce_add", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_mul", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_min", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_max", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_and", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_or", &[F::POLYFILLED], None),
    b("sub_group_clustered_reduce_xor", &[F::POLYFILLED], None),
    b(
        "sub_group_clustered_reduce_logical_and",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_clustered_reduce_logical_or",
        &[F::POLYFILLED],
        None,
    ),
    b(
        "sub_group_clustered_reduce_logical_xor",
        &[F::POLYFILLED],
        None,
    ),
    b("sub_group_rotate", &[F::POLYFILLED], None),
    b("sub_group_clustered_rotate", &[F::POLYFILLED], None),
    b("min", &[F::PURE], None),
    b("max", &[F::PURE], None),
    b("abs", &[F::PURE], None),
    b("fabs", &[F::PURE], None),
    b("fmin", &[F::PURE], None),
    b("fmax", &[F::PURE], None),
    b("clamp", &[F::PURE], None),
    b("select", &[F::PURE], None),
    b("mad", &[F::PURE], None),
    b("mul24", &[F::PURE], None),
    b("mad24", &[F::PURE], None),
    b("convert_int", &[F::PURE], None),
    b("convert_uint", &[F::PURE], None),
    b("convert_float", &[F::PURE], None),
    b("convert_long", &[F::PURE], None),
    b("convert_ulong", &[F::PURE], None),
];

/// How a pattern matches a word.
enum Pattern {
    Is(&'static str),
    Prefix(&'static str),
    Suffix(&'static str),
    Contains(&'static str),
}

use Pattern::{Contains, Is, Prefix, Suffix};

/// Flags every word matching a pattern has.
const PATTERNS: &[(Pattern, Flags)] = &[
    (Is("barrier"), F::WORK_GROUP),
    (Suffix("_barrier"), F::WORK_GROUP),
    (
        Prefix("work_group_"),
        all(&[F::WORK_GROUP, F::WORK_GROUP_FUNCTION]),
    ),
    (Prefix("async_work_group"), F::WORK_GROUP),
    (Is("wait_group_events"), F::WORK_GROUP),
    (Contains("sub_group"), F::SUB_GROUP),
    (Contains("subgroup"), F::SUB_GROUP),
    (Prefix("sg_"), all(&[F::SUB_GROUP, F::LAYER])),
    (Prefix("CLG_SG_SCRATCH"), all(&[F::LAYER, F::PLUMBING])),
    (Prefix("get_"), F::QUERY),
    (Prefix("sg_get_"), F::QUERY),
    (Contains("barrier"), F::BARRIER),
    (
        Contains("non_uniform"),
        all(&[F::NAMES_NON_UNIFORM, F::PER_LANE]),
    ),
    (Prefix("sub_group_non_uniform_"), F::NON_UNIFORM),
    (
        Prefix("sub_group_clustered_"),
        all(&[F::NON_UNIFORM, F::CLUSTERED]),
    ),
    (Is("sub_group_elect"), all(&[F::NON_UNIFORM, F::ID])),
    (Prefix("sub_group_reduce_"), F::MUST_REACH),
    (Prefix("sub_group_scan_"), F::MUST_REACH),
    (Prefix("sub_group_scan_"), F::ID),
    (Prefix("sub_group_non_uniform_scan_"), F::ID),
    (Prefix("sub_group_clustered_"), F::ID),
    (Prefix("work_group_scan_"), F::ID),
    (Prefix("sg_inclusive_scan_"), F::ID),
    (Prefix("sg_exclusive_scan_"), F::ID),
    (Prefix("intel_sub_group_block_read"), F::ID),
    (Is("sub_group_ballot_inclusive_scan"), F::ID),
    (Is("sub_group_ballot_exclusive_scan"), F::ID),
    (Is("sub_group_inverse_ballot"), F::ID),
    (Contains("reduce"), F::SHARED),
    (Contains("any"), F::SHARED),
    (Contains("all"), F::SHARED),
    (Contains("broadcast"), F::SHARED),
    (Contains("clustered"), F::PER_LANE),
    (Contains("scan"), F::PER_LANE),
    (Contains("shuffle"), F::PER_LANE),
    (Contains("ballot"), F::PER_LANE),
    (Contains("elect"), F::PER_LANE),
];

/// The flags of `word`: its [`BUILTINS`] entry's and every matching [`PATTERNS`] entry's.
pub(crate) fn flags(word: &str) -> Flags {
    // The analyses ask for every token's flags, again and again: each word's are kept per
    // thread (a few thousand distinct words at most in a source).
    thread_local! {
        static KNOWN: std::cell::RefCell<HashMap<Box<str>, Flags>> = Default::default();
    }
    if let Some(f) = KNOWN.with(|k| k.borrow().get(word).copied()) {
        return f;
    }
    let f = flags_of(word);
    KNOWN.with(|k| k.borrow_mut().insert(word.into(), f));
    f
}

/// [`flags`], looked up.
fn flags_of(word: &str) -> Flags {
    static BY_NAME: OnceLock<HashMap<&'static str, Flags>> = OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| BUILTINS.iter().map(|b| (b.name, b.flags)).collect());
    let named = by_name.get(word).copied().unwrap_or_default();
    PATTERNS.iter().fold(named, |acc, (p, f)| {
        let hit = match *p {
            Is(w) => word == w,
            Prefix(w) => word.starts_with(w),
            Suffix(w) => word.ends_with(w),
            Contains(w) => word.contains(w),
        };
        if hit {
            acc | *f
        } else {
            acc
        }
    })
}

/// Whether `word` is a sub-group *collective* (a shuffle, broadcast, reduction, scan, vote or
/// barrier of the layer or the standard), not a query such as `get_sub_group_local_id`.
pub(crate) fn is_sub_group_collective(word: &str) -> bool {
    collective_flags(flags(word))
}

/// [`is_sub_group_collective`] of a word's flags.
fn collective_flags(flags: Flags) -> bool {
    flags.has(Flags::LAYER | Flags::SUB_GROUP) && !flags.has(Flags::QUERY | Flags::PLUMBING)
}

/// Whether a call of `word` gives every work-item of a sub-group the same value, whatever its
/// operands: collectives whose result the sub-group (or work-group) shares, and the
/// sub-group's own id.
pub(crate) fn uniform_in_sub_group(word: &str) -> bool {
    let f = flags(word);
    let collective = collective_flags(f) || f.has(Flags::WORK_GROUP_FUNCTION);
    (collective && f.has(Flags::SHARED) && !f.has(Flags::PER_LANE)) || f.has(Flags::SUB_GROUP_ID)
}

/// The built-ins known by name with any of `flag`'s bits, in table order.
pub(crate) fn named(flag: Flags) -> impl Iterator<Item = &'static str> {
    BUILTINS
        .iter()
        .filter(move |b| b.flags.has(flag))
        .map(|b| b.name)
}

/// The work-item query `word` names, if it is one the footprint models.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // the footprint and root fallback are the scaling's
pub(crate) fn query(word: &str) -> Option<Query> {
    BUILTINS.iter().find(|b| b.name == word)?.query
}

/// The built-ins known by name with `flag`, as prose: `a, b or c`.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // the footprint and root fallback are the scaling's
pub(crate) fn listed(flag: Flags) -> String {
    let names: Vec<&str> = named(flag).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_patterns_combine() {
        let f = flags("sub_group_reduce_add");
        assert!(f.has(Flags::POLYFILLED) && f.has(Flags::MUST_REACH) && f.has(Flags::SUB_GROUP));
        assert!(!f.has(Flags::QUERY));
        assert!(flags("get_sub_group_size").has(Flags::QUERY));
        assert!(flags("sg_reduce_add").has(Flags::LAYER) && !flags("msg_len").has(Flags::LAYER));
        assert!(flags("my_barrier").has(Flags::WORK_GROUP));
        assert_eq!(flags("x"), Flags::default());
        // A sub-group operation of any kind: the layer's or OpenCL's.
        let sub_group = |w: &str| flags(w).has(Flags::LAYER | Flags::SUB_GROUP);
        assert!(sub_group("sub_group_broadcast") && sub_group("sg_shuffle"));
        assert!(!sub_group("barrier"));
        assert_eq!(query("get_local_id"), Some(Query::LocalId));
        assert_eq!(
            listed(Flags::SPLIT),
            "get_global_size, get_global_offset, get_global_linear_id, get_group_id, \
             get_num_groups or get_work_dim"
        );
    }
}
