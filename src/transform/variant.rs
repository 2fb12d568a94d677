//! The kernels clgroups generates, as data: [`VariantKind::name`] names a kernel's variant and
//! [`VariantKind::parse`] reads a name back; [`GENERATED`] is the one place the names' marker is
//! written.

/// What every name clgroups generates contains (variants, hoisted temporaries), and no
/// user's name may: the driver's kernel list and the wrappers leave such names out.
pub(crate) const GENERATED: &str = "__clg_";

/// Whether `name` is one clgroups generated ([`GENERATED`]).
pub(crate) fn is_generated(name: &str) -> bool {
    name.contains(GENERATED)
}

/// The name of the driver probe's own kernel (`program::probe`): a generated name, so the
/// kernels a program lists leave it out.
pub(crate) fn probe_canary() -> String {
    format!("{GENERATED}probe_canary")
}

/// A generated variant of a kernel (not to be confused with
/// [`crate::plan::rounding::Variant`], which says which of a kernel's variants runs a piece of a
/// launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VariantKind {
    /// Rounded plain ranges: guarded against the user's range (`__clg_rounded`).
    Rounded,
    /// Exact pieces of a rounded plain range, reporting the user's range (`__clg_sized`).
    Sized,
    /// Checked mode's bounds-checked copy (`__clg_checked`).
    Checked,
    /// A root device's per-device part, seeing the whole launch (`__clg_part`).
    Partitioned,
    /// The guarded partitioned variant, for rounded ranges over a root device (`__clg_pguard`).
    Guarded,
    /// The wrapper of a kernel whose declaration cannot be rewritten (`__clg_wrapped`).
    Wrapped,
}

impl VariantKind {
    const ALL: [VariantKind; 6] = [
        VariantKind::Rounded,
        VariantKind::Sized,
        VariantKind::Checked,
        VariantKind::Partitioned,
        VariantKind::Guarded,
        VariantKind::Wrapped,
    ];

    /// What follows the marker in the variant's name.
    fn tag(self) -> &'static str {
        match self {
            VariantKind::Rounded => "rounded",
            VariantKind::Sized => "sized",
            VariantKind::Checked => "checked",
            VariantKind::Partitioned => "part",
            VariantKind::Guarded => "pguard",
            VariantKind::Wrapped => "wrapped",
        }
    }

    /// The name of `kernel`'s variant of this kind.
    pub(crate) fn name(self, kernel: &str) -> String {
        format!("{kernel}{GENERATED}{}", self.tag())
    }

    /// The kernel and kind of the variant named `name`, or `None` for a name that is no
    /// variant's (of the last marker: a checked kernel's partitioned variant is the
    /// partitioned variant of `k__clg_checked`).
    pub(crate) fn parse(name: &str) -> Option<(&str, VariantKind)> {
        let (kernel, tag) = name.rsplit_once(GENERATED)?;
        let kind = VariantKind::ALL.into_iter().find(|v| v.tag() == tag)?;
        Some((kernel, kind))
    }

    /// Whether a root device runs this variant (partitioned or guarded).
    pub(crate) fn is_root(self) -> bool {
        matches!(self, VariantKind::Partitioned | VariantKind::Guarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        let names = ["rounded", "sized", "checked", "part", "pguard", "wrapped"];
        for (kind, tag) in VariantKind::ALL.into_iter().zip(names) {
            let name = kind.name("saxpy");
            assert_eq!(name, format!("saxpy__clg_{tag}"));
            assert!(is_generated(&name));
            assert_eq!(VariantKind::parse(&name), Some(("saxpy", kind)));
        }
        assert_eq!(VariantKind::parse("saxpy"), None);
        assert_eq!(VariantKind::parse("saxpy__clg_u0"), None);
        assert!(!is_generated("saxpy_clg"));
    }
}
