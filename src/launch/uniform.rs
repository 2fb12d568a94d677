//! Launches of kernels whose sub-group collectives sit under `get_global_id(d) OP n` where
//! collectives are work-group barriers (the emulated backend, PoCL's CPU devices:
//! [`crate::Device::needs_group_uniform_collectives`]): each enqueue is decided with the argument's value, the local size and the
//! offset, before anything is enqueued ([`crate::plan::uniform_branch`]).

use super::Arg;
use crate::kernel::Kernel;
use crate::plan::uniform_branch::{uniform_branch, uniform_local, IdCondition};
use crate::range::Range;
#[cfg(doc)]
use crate::Error;

/// The local size to enqueue `global` at `offset` of `k` with `args`: `local`, or, where the
/// driver would pick one (`None`) for a kernel with such conditions, one that keeps them uniform
/// ([`uniform_local`]); or why a condition would split a work-group.
pub(crate) fn check_uniform(
    k: &Kernel,
    args: &[Arg],
    global: Range,
    local: Option<Range>,
    offset: Range,
) -> Result<Option<Range>, String> {
    let conds = k.id_conditions();
    if conds.is_empty() {
        return Ok(local);
    }
    let values = conds
        .iter()
        .map(|c| Ok((c, value(args, c)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let picked = local.is_none();
    let local = local.unwrap_or_else(|| uniform_local(&values, global, offset, k.limits()));
    let min = k.constraints().min_group;
    if picked && local.len() < min {
        return Err(format!(
            "the only work-groups that keep {} uniform have {} work-item(s), and sub-group \
             collectives in work-groups of fewer than {min} work-items abort PoCL's process \
             (undefined symbol __pocl_work_group_alloca); choose a bound that shares a larger \
             factor with the range",
            values[0].0.text,
            local.len()
        ));
    }
    for &(c, n) in &values {
        let uniform = uniform_branch(c, n, global, local, offset);
        log::debug!(
            "kernel `{}`: {} with argument {} = {n}, global {global:?}, local {local:?}, \
             offset {offset:?}: uniform over every work-group: {uniform}",
            k.name(),
            c.text,
            c.param
        );
        if !uniform {
            return Err(format!(
                "its sub-group collectives sit under {} (argument {} = {n}), which differs \
                 between the work-items of a work-group of {:?} at offset {:?}; {}: make \
                 the bound a multiple of the local size (or beyond the range), or compute the \
                 collective unconditionally (`sg_reduce_add(i < n ? x[i] : 0)`)",
                c.text,
                c.param,
                local.as_slice(),
                offset.as_slice(),
                reason(k)
            ));
        }
    }
    Ok(Some(local))
}

/// Why `k`'s device needs uniform branches around collectives, for messages.
fn reason(k: &Kernel) -> &'static str {
    k.program()
        .device()
        .group_uniform_reason()
        .unwrap_or("sub-group collectives are work-group barriers here")
}

/// The value of the scalar argument a condition compares with.
fn value(args: &[Arg], c: &IdCondition) -> Result<i128, String> {
    let bytes = match args.get(c.param) {
        Some(Arg::Scalar { bytes, .. }) => bytes,
        _ => {
            return Err(format!(
                "argument {} of {} is not a scalar",
                c.param, c.text
            ))
        }
    };
    decode(bytes, c.signed).ok_or_else(|| {
        format!(
            "argument {} of {} has {} bytes, not an integer's",
            c.param,
            c.text,
            bytes.len()
        )
    })
}

/// An integer of 1, 2, 4 or 8 bytes in the host's (and the CPU device's) byte order.
fn decode(bytes: &[u8], signed: bool) -> Option<i128> {
    let mut b = [0u8; 8];
    let n = bytes.len();
    if !matches!(n, 1 | 2 | 4 | 8) {
        return None;
    }
    let negative = signed
        && bytes[if cfg!(target_endian = "little") {
            n - 1
        } else {
            0
        }] & 0x80
            != 0;
    let fill = if negative { 0xff } else { 0 };
    b.fill(fill);
    if cfg!(target_endian = "little") {
        b[..n].copy_from_slice(bytes);
    } else {
        b[8 - n..].copy_from_slice(bytes);
    }
    Some(match signed {
        true => i64::from_ne_bytes(b) as i128,
        false => u64::from_ne_bytes(b) as i128,
    })
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn integers_of_every_width_and_sign() {
        assert_eq!(decode(&(-3i32).to_ne_bytes(), true), Some(-3));
        assert_eq!(
            decode(&u32::MAX.to_ne_bytes(), false),
            Some(u32::MAX as i128)
        );
        assert_eq!(decode(&(-1i8).to_ne_bytes(), true), Some(-1));
        assert_eq!(
            decode(&u64::MAX.to_ne_bytes(), false),
            Some(u64::MAX as i128)
        );
        assert_eq!(decode(&1000u16.to_ne_bytes(), false), Some(1000));
        assert_eq!(decode(&[0u8; 3], false), None);
    }
}
