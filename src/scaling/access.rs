//! [`Access`]: how kernels reach a colored buffer in partitioned placement, and what each
//! device stores for it.

/// How kernels reach a [`ColoredBuffer`](super::ColoredBuffer) in partitioned placement, where each device holds
/// only part of it (see [the contract](super#the-contract)). Shared placement ignores it:
/// every device sees the whole buffer there.
///
/// ```
/// use clgroups::scaling::{Access, ColoredBuffer, Placement, RootDevice};
/// let root = RootDevice::from_env()?.with_placement(Placement::Partitioned);
/// let n = 1 << 12;
/// // A 3-point average reads x[i - 1 ..= i + 1]: declared as a halo of one element.
/// let mut x = ColoredBuffer::<f32>::with_access(&root, n, Access::Halo(1))?;
/// x.write(&vec![1.0; n])?;
/// let mut y = ColoredBuffer::<f32>::new(&root, n)?; // Access::Auto: proven from the source
/// let p = root.program(r#"
///     kernel void avg(global const float *x, global float *y, uint n) {
///         size_t i = get_global_id(0);
///         float l = i > 0 ? x[i - 1] : x[i], r = i + 1 < n ? x[i + 1] : x[i];
///         y[i] = (l + x[i] + r) / 3.0f;
///     }
/// "#)?;
/// let avg = p.kernel("avg")?;
/// // SAFETY: work-item i reads x[i - 1 ..= i + 1] within 0..n and writes y[i], i < n.
/// unsafe { avg.launch().arg(&x).arg(&mut y).arg(n as u32).range(n)? }.wait()?;
/// assert!(y.read()?.iter().all(|&v| (v - 1.0).abs() < 1e-6));
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Let the library decide: launches split the buffer when they can prove from the kernel
    /// source that every access is at the work-item's own global id, and otherwise replicate
    /// it (only read) or merge it (written), or refuse it in [strict
    /// mode](super::RootDevice::strict) (with an error saying which kind to declare).
    #[default]
    Auto,
    /// Declared by the user: every access, read or write, is at the launch's global linear id
    /// `i` (or at `m * i + j`, `0 <= j < m`, for a buffer `m` times as long). Each device holds
    /// its chunk. Checked mode verifies it.
    Partitioned,
    /// Read-only, any index: each device holds a copy of the whole buffer (host writes update
    /// every copy). Kernels must not write it.
    Replicated,
    /// Read-only, indices within `n` elements of the work-item's own (as [`Partitioned`]):
    /// each device holds its chunk and `n` elements either side. Kernels must not write it.
    ///
    /// [`Partitioned`]: Access::Partitioned
    Halo(usize),
    /// Read within `n` elements of the work-item's own index and written only at it (as
    /// [`Partitioned`]): each device holds its chunk and `n` elements either side, and after
    /// every launch whose kernel may write the buffer each device's halo is copied from the
    /// devices that own those elements (device to device, ordered after their writes). For
    /// stencils launched again and again on the same buffers (heat, Jacobi, Rodinia's
    /// hotspot) whose kernel source clgroups cannot read: only the halos move between
    /// devices, at every launch. Where it can read the source, leave such buffers
    /// [`Auto`](Access::Auto): the footprints prove the reach, and the parts keep margins
    /// that the cost model may deepen so that halos move once every several launches (heat
    /// 8192² on two H200s: 1.80× undeclared, 1.44× declared).
    ///
    /// [`Partitioned`]: Access::Partitioned
    Stencil(usize),
}

/// The elements `[lo, hi)` device chunk `[start, start + chunk)` stores for `access` in
/// partitioned placement (`(start, start)` when it stores none).
pub(super) fn stored_range(
    access: Access,
    len: usize,
    start: usize,
    chunk: usize,
) -> (usize, usize) {
    match access {
        Access::Auto | Access::Partitioned => (start, start + chunk),
        Access::Replicated => (0, len),
        Access::Halo(_) | Access::Stencil(_) if chunk == 0 => (start, start),
        Access::Halo(n) | Access::Stencil(n) => (
            start.saturating_sub(n),
            (start + chunk).saturating_add(n).min(len),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_ranges_per_access() {
        // 100 elements; a device owning [40, 70).
        assert_eq!(stored_range(Access::Auto, 100, 40, 30), (40, 70));
        assert_eq!(stored_range(Access::Partitioned, 100, 40, 30), (40, 70));
        assert_eq!(stored_range(Access::Replicated, 100, 40, 30), (0, 100));
        assert_eq!(stored_range(Access::Halo(5), 100, 40, 30), (35, 75));
        assert_eq!(stored_range(Access::Stencil(5), 100, 40, 30), (35, 75));
        // Halos stop at the array's ends; an empty chunk stores nothing.
        assert_eq!(stored_range(Access::Halo(50), 100, 40, 30), (0, 100));
        assert_eq!(stored_range(Access::Halo(3), 100, 0, 10), (0, 13));
        assert_eq!(stored_range(Access::Halo(3), 100, 100, 0), (100, 100));
    }
}
