//! Launches of kernels whose sub-group collectives sit under `get_global_id(d) OP n` where
//! collectives are work-group barriers (the emulated backend, PoCL's CPU devices:
//! [`crate::Device::needs_group_uniform_collectives`]): the conditions' argument values, which
//! the planner ([`crate::plan::launch`]) decides each enqueue with, before anything is
//! enqueued ([`crate::plan::uniform_branch`]).

use super::Arg;
use crate::kernel::Kernel;
use crate::plan::uniform_branch::IdCondition;
use crate::plan::Refusal;

/// The values of the arguments of `args` that `k`'s launch-time id conditions compare with,
/// in the conditions' order (no allocation for a kernel without such conditions).
pub(crate) fn values(k: &Kernel, args: &[Arg]) -> Result<Vec<i128>, Refusal> {
    (k.id_conditions().iter()).map(|c| value(args, c)).collect()
}

/// `k`'s launch-time id conditions, each with its argument's value of `values`.
pub(crate) fn with_values(k: &Kernel, values: &[i128]) -> Vec<(IdCondition, i128)> {
    (k.id_conditions().iter().cloned())
        .zip(values.iter().copied())
        .collect()
}

/// The value of the scalar argument a condition compares with.
fn value(args: &[Arg], c: &IdCondition) -> Result<i128, Refusal> {
    let bytes = match args.get(c.param) {
        Some(Arg::Scalar { bytes, .. }) => bytes,
        _ => {
            return Err(Refusal::NotScalar {
                param: c.param,
                condition: c.text.clone(),
            })
        }
    };
    decode(bytes, c.signed).ok_or_else(|| Refusal::NotInteger {
        param: c.param,
        condition: c.text.clone(),
        bytes: bytes.len(),
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
