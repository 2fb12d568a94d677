//! Memory coloring: how one allocation is spread over several devices ("stacks"), after the
//! rule Intel's root-device driver uses for implicit scaling.
//!
//! The allocation is cut into pages; the pages are split into `stacks` contiguous chunks, in
//! order (device 0 holds the start), by [`shares`], the rule launches are partitioned by: in
//! units of one page (or a power of two of them, when every device gets at least 64 units), the
//! first chunks taking one more unit when the units do not divide evenly (or in proportion to
//! weights). An allocation of at most one page lives on device 0 only; three pages on two
//! devices put two on device 0 and one on device 1. Only the last page may be partial, so the
//! bytes per device add up exactly to the allocation.
//!
//! ```
//! use clgroups::plan::coloring::color;
//! assert_eq!(color(3 * 4096, 4096, 2).unwrap(), vec![8192, 4096]);
//! assert_eq!(color(100, 4096, 2).unwrap(), vec![100, 0]);
//! ```

use crate::error::{Error, InputFault, Result};
use crate::plan::gcd;
use crate::plan::shares::{shares, Devices};

/// Default coloring page: 64 KiB.
///
/// It is the page Intel's GPU driver places device-local memory with (and so, presumably, the
/// granule of its coloring), it is a multiple of every power-of-two element size and of every
/// `CL_DEVICE_MEM_BASE_ADDR_ALIGN` seen in practice (at most 1024 bits = 128 bytes on GPUs, the
/// size of `long16` on CPUs), so sub-buffers cut on its boundaries are valid; and it is large
/// enough that a chunk's fixed costs (one sub-buffer, one transfer) are small against its data.
pub const DEFAULT_PAGE_SIZE: usize = 65536;

/// Bytes of a `bytes`-long allocation held by each of `stacks` devices, in device order, at
/// `page` granularity (see the [module documentation](self)).
///
/// Errors ([`Error::InvalidInput`]): `page == 0` or `stacks == 0`. An empty allocation gives
/// zeros.
///
/// ```
/// use clgroups::plan::coloring::color;
/// // 10 pages of 1000 bytes, the last one partial, on 4 devices: 3, 3, 2, 2 pages.
/// assert_eq!(color(9500, 1000, 4).unwrap(), vec![3000, 3000, 2000, 1500]);
/// ```
#[cfg(any(test, feature = "unstable-internals"))] // the rule itself, for tests and tools
pub fn color(bytes: usize, page: usize, stacks: usize) -> Result<Vec<usize>> {
    if page == 0 || stacks == 0 {
        return Err(Error::input(InputFault::ColoringPage {
            page,
            devices: stacks,
        }));
    }
    shares(bytes, page, Devices::Even(stacks))
}

/// Bytes per device of `len` elements of `T`, colored so that every chunk boundary is a
/// multiple of `size_of::<T>()` (no element is split) and of `align`, so each chunk can be a
/// sub-buffer.
///
/// `align` is the device's `CL_DEVICE_MEM_BASE_ADDR_ALIGN` divided by 8 (it is in bits); `page`
/// must be a multiple of it. Pages whose size is not a multiple of `size_of::<T>()` are widened
/// to the least common multiple (e.g. 64 KiB pages of a 12-byte type become 192 KiB).
///
/// Errors ([`Error::InvalidInput`]): `page`, `align` or `stacks` is 0, `T` is zero-sized,
/// `page` is not a multiple of `align`, or `len` elements overflow `usize` bytes.
///
/// ```
/// use clgroups::plan::coloring::color_elements;
/// // 40000 floats (160000 bytes) in 64 KiB pages: 3 pages, 2 on device 0.
/// assert_eq!(color_elements::<f32>(40_000, 65536, 128, 2).unwrap(), vec![131072, 28928]);
/// assert!(color_elements::<f32>(10, 100, 128, 2).is_err()); // 100 is not a multiple of 128
/// ```
#[cfg(any(test, feature = "unstable-internals"))] // the rule itself, for tests and tools
pub fn color_elements<T>(
    len: usize,
    page: usize,
    align: usize,
    stacks: usize,
) -> Result<Vec<usize>> {
    let size = std::mem::size_of::<T>();
    let chunks = element_shares(len, size, page, align, Devices::Even(stacks))?;
    Ok(chunks.iter().map(|n| n * size).collect())
}

/// Elements per device of `len` elements of `size` bytes colored in pages of `page` bytes
/// over `devices` (evenly or weighted), every chunk boundary a multiple of `align` bytes:
/// [`color_elements`] in elements, with weights. Pages that are not a whole number of
/// elements are widened to the least common multiple. A page of one element colors a buffer
/// like a 1-D launch over its elements in work-groups of a power of two (see
/// [`crate::plan::shares`]).
///
/// Errors ([`Error::InvalidInput`]) as [`color_elements`]'s, and bad weights.
///
/// ```
/// use clgroups::plan::{coloring::element_shares, shares::Devices};
/// // 2^20 floats, pages of one float, weighted 3 : 1 : 1 : 1 (units of 2048 floats).
/// let c = element_shares(1 << 20, 4, 4, 1, Devices::Weighted(&[3.0, 1.0, 1.0, 1.0]))?;
/// assert_eq!(c, [256 * 2048, 86 * 2048, 85 * 2048, 85 * 2048]);
/// # Ok::<(), clgroups::Error>(())
/// ```
pub fn element_shares(
    len: usize,
    size: usize,
    page: usize,
    align: usize,
    devices: Devices,
) -> Result<Vec<usize>> {
    if align == 0 || size == 0 || page == 0 || page % align != 0 {
        return Err(Error::input(InputFault::ElementColoring {
            page,
            align,
            size,
        }));
    }
    let bytes = len
        .checked_mul(size)
        .ok_or_else(|| Error::input(InputFault::Overflow { len, size }))?;
    let granule = page
        .checked_mul(size / gcd(page, size))
        .ok_or_else(|| Error::input(InputFault::PageOverflow { page, size }))?;
    let chunks = shares(len, granule / size, devices)?;
    log::debug!(
        "coloring: {bytes} bytes in pages of {granule} over {devices:?} -> elements {chunks:?}"
    );
    Ok(chunks)
}

/// The index of each chunk's first element.
#[cfg_attr(not(feature = "scaling"), allow(dead_code))] // used by `scaling` only
pub(crate) fn starts_of(chunks: &[usize]) -> Vec<usize> {
    chunks
        .iter()
        .scan(0, |at, &n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_start_where_the_previous_ends() {
        assert_eq!(starts_of(&[3, 0, 4]), vec![0, 3, 3]);
    }
    use proptest::prelude::*;

    #[test]
    fn seed_examples() {
        let p = DEFAULT_PAGE_SIZE;
        assert_eq!(color(3 * p, p, 2).unwrap(), vec![2 * p, p]);
        assert_eq!(color(p, p, 2).unwrap(), vec![p, 0]);
        assert_eq!(color(17, p, 4).unwrap(), vec![17, 0, 0, 0]);
        // Two halves: a[0..N/2] on stack 0, the rest on stack 1.
        assert_eq!(color(4 * p, p, 2).unwrap(), vec![2 * p, 2 * p]);
    }

    #[test]
    fn partial_last_page_and_few_pages() {
        assert_eq!(color(2 * 4096 + 1, 4096, 2).unwrap(), vec![8192, 1]);
        assert_eq!(
            color(2 * 4096 + 1, 4096, 5).unwrap(),
            vec![4096, 4096, 1, 0, 0]
        );
        assert_eq!(color(0, 4096, 3).unwrap(), vec![0, 0, 0]);
        assert_eq!(
            color(usize::MAX, 1 << 40, 2).unwrap().iter().sum::<usize>(),
            usize::MAX
        );
    }

    #[test]
    fn element_granule_widens_page() {
        // 12-byte elements: 3 * 4096 = 12288-byte granules; 5000 elements = 60000 bytes
        // = 5 granules (last partial) -> 3 + 2.
        let c = color_elements::<[f32; 3]>(5000, 4096, 128, 2).unwrap();
        assert_eq!(c, vec![36864, 23136]);
        assert_eq!(c[0] % 12, 0);
        assert_eq!(c[0] % 128, 0);
    }

    #[test]
    fn rejects_bad_input() {
        let msg = |r: Result<Vec<usize>>| r.unwrap_err().to_string();
        assert!(msg(color(10, 0, 2)).contains("page 0, devices 2"));
        assert!(msg(color(10, 64, 0)).contains("page 64, devices 0"));
        assert!(msg(color_elements::<u8>(10, 64, 0, 2)).contains("align 0"));
        assert!(msg(color_elements::<()>(10, 64, 8, 2)).contains("element size 0"));
        assert!(msg(color_elements::<u8>(10, 96, 64, 2)).contains("page 96, align 64"));
        assert!(msg(color_elements::<u64>(usize::MAX, 64, 8, 2)).contains("overflow"));
    }

    proptest! {
        #[test]
        fn coloring_properties(bytes in 0usize..1 << 24, page in 1usize..1 << 16, stacks in 1usize..=8) {
            let c = color(bytes, page, stacks).unwrap();
            prop_assert_eq!(c.len(), stacks);
            prop_assert_eq!(c.iter().sum::<usize>(), bytes);
            let unit = crate::plan::shares::unit(page, bytes, stacks);
            prop_assert_eq!(unit % page, 0);
            let units: Vec<usize> = c.iter().map(|b| b.div_ceil(unit)).collect();
            prop_assert_eq!(units.iter().sum::<usize>(), bytes.div_ceil(unit));
            prop_assert!(units.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
            // Every chunk but the one holding the last byte is whole units (so whole pages).
            let last = c.iter().rposition(|&b| b > 0);
            for (i, &b) in c.iter().enumerate() {
                prop_assert!(Some(i) == last || b % unit == 0);
            }
            if bytes <= page {
                prop_assert_eq!(c[0], bytes);
            }
        }

        #[test]
        fn element_boundaries_aligned(len in 0usize..1 << 16, align_log in 0u32..8, pages in 1usize..64, stacks in 1usize..=8) {
            let align = 1usize << align_log;
            let c = color_elements::<[u8; 12]>(len, align * pages, align, stacks).unwrap();
            prop_assert_eq!(c.iter().sum::<usize>(), len * 12);
            let mut offset = 0;
            // Every non-empty chunk starts on an element and alignment boundary.
            for b in c.into_iter().filter(|&b| b > 0) {
                prop_assert_eq!(offset % 12, 0);
                prop_assert_eq!(offset % align, 0);
                offset += b;
            }
        }
    }
}
