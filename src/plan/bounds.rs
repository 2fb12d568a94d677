//! Device bounds every enqueue must respect, checked before anything is enqueued: sizes and
//! offsets within the device's `size_t`, a work-group count drivers can index, and local
//! memory within `CL_DEVICE_LOCAL_MEM_SIZE`. Pure functions; their [`Refusal`]s become
//! [`Error::InvalidLaunch`](crate::Error::InvalidLaunch) reasons.

use super::Refusal;
use crate::range::Range;

/// The most work-groups one enqueue may have. OpenCL allows any count whose sizes fit in
/// `size_t`, but drivers index work-groups with 32-bit integers (PoCL's pthread scheduler
/// does, and aborts beyond), and no device runs 2^32 work-groups in reasonable time anyway.
pub const MAX_WORK_GROUPS: usize = u32::MAX as usize;

/// The largest value of the device's `size_t` (`CL_DEVICE_ADDRESS_BITS`), as a `usize`.
///
/// ```
/// use clgroups::launch::bounds::max_size_t;
/// assert_eq!(max_size_t(32), u32::MAX as usize);
/// assert_eq!(max_size_t(64), usize::MAX);
/// ```
pub fn max_size_t(address_bits: u32) -> usize {
    if address_bits >= usize::BITS {
        usize::MAX
    } else {
        (1usize << address_bits) - 1
    }
}

/// Why `global` at `offset` does not fit the device's `size_t`, if it does not: every
/// `offset[d] + global[d]` (the last global id plus one) must be representable
/// (`clEnqueueNDRangeKernel`'s `CL_INVALID_GLOBAL_WORK_SIZE` and `CL_INVALID_GLOBAL_OFFSET`
/// rules), and so must their product, so that linear ids over the whole range (offset
/// included, as kernels and multi-device launches compute them) cannot overflow.
///
/// ```
/// use clgroups::launch::bounds::check_global;
/// use clgroups::Range;
/// assert!(check_global(Range::d1(1 << 20), Range::d1(0), 64).is_ok());
/// let big = Range::d3(1 << 22, 1 << 22, 1 << 22); // 2^66 work-items
/// assert!(check_global(big, Range::d3(0, 0, 0), 64).unwrap_err().to_string().contains("spans"));
/// assert!(check_global(Range::d1(8), Range::d1(usize::MAX - 4), 64).is_err());
/// assert!(check_global(Range::d1(1 << 32), Range::d1(0), 32).is_err());
/// ```
pub fn check_global(global: Range, offset: Range, address_bits: u32) -> Result<(), Refusal> {
    let max = max_size_t(address_bits);
    for d in 0..global.rank() {
        let (g, o) = (global.get(d), offset.get(d));
        if o.checked_add(g).is_none_or(|end| end > max) {
            return Err(Refusal::BeyondSizeT {
                dim: d,
                global: g,
                offset: o,
                bits: address_bits,
            });
        }
    }
    let extent =
        (0..global.rank()).try_fold(1usize, |a, d| a.checked_mul(global.get(d) + offset.get(d)));
    match extent {
        Some(n) if n <= max => Ok(()),
        _ => Err(Refusal::SpanBeyondSizeT {
            global,
            offset,
            bits: address_bits,
        }),
    }
}

/// Why the launch would have too many work-groups ([`MAX_WORK_GROUPS`]), if it would. With
/// `local` unknown (a NULL local size), the driver may choose work-groups of one work-item, so
/// the work-item count is bounded instead.
///
/// ```
/// use clgroups::launch::bounds::check_groups;
/// use clgroups::Range;
/// assert!(check_groups(Range::d1(1 << 40), Some(Range::d1(1 << 10))).is_ok());
/// assert!(check_groups(Range::d1(1 << 40), Some(Range::d1(64))).is_err());
/// assert!(check_groups(Range::d1(1 << 40), None).unwrap_err().to_string().contains("LocalSize::Tuned"));
/// ```
pub fn check_groups(global: Range, local: Option<Range>) -> Result<(), Refusal> {
    let groups = match local {
        Some(l) => (0..global.rank()).try_fold(1usize, |acc, d| {
            acc.checked_mul(global.get(d).div_ceil(l.get(d).max(1)))
        }),
        None => global.checked_len(),
    };
    match (groups, local) {
        (Some(g), _) if g <= MAX_WORK_GROUPS => Ok(()),
        (_, Some(local)) => Err(Refusal::TooManyGroups { global, local }),
        (_, None) => Err(Refusal::TooManyItems),
    }
}

/// Why `bytes` of local memory arguments (`None`: their sum overflows) do not fit in
/// `CL_DEVICE_LOCAL_MEM_SIZE`, if they do not.
///
/// ```
/// use clgroups::launch::bounds::check_local_mem;
/// assert!(check_local_mem(&[1024, 4096], 65536).is_ok());
/// assert!(check_local_mem(&[usize::MAX, 1], 65536).is_err());
/// assert!(check_local_mem(&[65536, 1], 65536).unwrap_err().to_string().contains("65537"));
/// ```
pub fn check_local_mem(bytes: &[usize], device_local_mem: u64) -> Result<(), Refusal> {
    let total = bytes.iter().try_fold(0usize, |a, &b| a.checked_add(b));
    match total {
        Some(t) if (t as u64) <= device_local_mem => Ok(()),
        _ => Err(Refusal::LocalMemory {
            total,
            bytes: bytes.to_vec(),
            device: device_local_mem,
        }),
    }
}
