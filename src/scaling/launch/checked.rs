//! Checked mode's extra arguments of a launch's parts and the report of the first access
//! outside a device's chunk.

use super::terms::Copies;
use super::RootLaunch;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::launch::{Arg, KernelArg};
use crate::transform::{Violation, CHECK_WORDS};

impl RootLaunch<'_> {
    /// Appends the checked variant's arguments for device `d` (held ranges in bytes, which
    /// the variant turns into the pointees it holds whatever their type, and a zeroed check
    /// buffer, which it returns).
    pub(super) fn push_check_args(
        &self,
        d: usize,
        args: &mut Vec<Arg>,
        c: &Copies,
    ) -> Result<Buffer<u32>> {
        for i in self.global_params() {
            let (lo, hi) = self.held(i, d, c);
            let es = self.elem_size(i);
            let (lo, hi) = match es {
                0 => (lo, hi),
                _ => (lo * es, hi * es),
            };
            args.push(lo.to_arg());
            args.push(hi.to_arg());
        }
        let q = self.queue(d);
        let buf = Buffer::from_slice(q, &[0u32; CHECK_WORDS])?;
        args.push((&buf).to_arg());
        Ok(buf)
    }

    /// The first out-of-chunk access device `d`'s checked variant recorded, as an error.
    pub(super) fn report(&self, d: usize, buf: &Buffer<u32>, copies: &Copies) -> Result<()> {
        let k = &self.kernel.kernels[d];
        let Some(v) = Violation::decode(&buf.read(k.program().queue())?) else {
            return Ok(());
        };
        // The variant counts the pointees wholly held; so does the message where their size
        // is known (else the buffer's elements).
        let (lo, hi) = self.held(v.param, d, copies);
        let es = self.elem_size(v.param);
        let (lo, hi) = match self.pointee(v.param).filter(|&p| p > 0 && es > 0) {
            Some(p) => ((lo * es).div_ceil(p as u64), hi * es / p as u64),
            None => (lo, hi),
        };
        let name = self
            .kernel
            .params
            .get(v.param)
            .map_or("?", |p| p.name.as_str());
        Err(Error::OutOfChunk {
            kernel: self.kernel.name().to_string(),
            device: k.program().device().to_string(),
            argument: format!("argument {} (`{name}`)", v.param),
            index: v.index,
            lo,
            hi,
            global_id: v.global_id,
        })
    }
}
