//! Launches the contract cannot split as declared (partitioned placement): each device runs
//! its part on whole copies of the buffers its chunks cannot serve, and what the devices
//! wrote is merged element by element; launches that cannot be merged run on device 0.

use super::super::arg::Value;
use super::super::{MultiEvent, Placement, Spread};
use super::terms::{copy, mem_key, Copies, Feed, Held, Shape3};
use super::RootLaunch;
use crate::buffer::Buffer;
use crate::error::{Error, InputFault, Result};
use crate::ffi;
use crate::launch::Arg;
use crate::plan::partition::Partition;
use crate::plan::Refusal;
use crate::queue::Queue;
use std::sync::Arc;

impl RootLaunch<'_> {
    /// How a merged launch feeds each argument: written buffers (colored, or plain global
    /// pointers) are merged; read-only colored buffers a device's chunk cannot serve
    /// (`unserved`) are replicated.
    pub(super) fn feeds(&self, unserved: &[bool]) -> Vec<Feed> {
        let params = &self.kernel.params;
        let written = |i: usize| params.get(i).is_none_or(|p| p.global && !p.read_only);
        (self.args.iter().enumerate())
            .map(|(i, v)| match v {
                Value::Colored(_) if written(i) => Feed::Merged,
                Value::Colored(_) if unserved[i] => Feed::Replicated,
                Value::Plain(Arg::Buffer { .. }) if written(i) => Feed::Merged,
                _ => Feed::Direct,
            })
            .collect()
    }

    /// The whole launch on device 0 (every colored buffer copied whole there, and those the
    /// kernel may write copied back), logged with `why`.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn one_device(&self, s: &Shape3, why: Refusal) -> Result<MultiEvent> {
        let n = self.kernel.kernels.len();
        let dim = s.global.rank() - 1;
        let mut chunks = vec![0; n];
        chunks[0] = s.global.get(dim) / s.local.get(dim);
        let plan = Partition { dim, chunks };
        let feeds: Vec<Feed> = match self.kernel.placement {
            Placement::Shared => vec![Feed::Direct; self.args.len()],
            Placement::Partitioned => (self.args.iter().enumerate())
                .map(|(i, v)| match v {
                    Value::Colored(_) if self.kernel.params.get(i).is_some_and(|p| p.read_only) => {
                        Feed::Replicated
                    }
                    Value::Colored(_) => Feed::Merged,
                    Value::Plain(_) => Feed::Direct,
                })
                .collect(),
        };
        log::info!(
            "kernel `{}` over {n} devices: the whole launch on device 0: {why}",
            self.kernel.name()
        );
        // SAFETY: the caller's contract; one device sees every colored buffer whole.
        let mut ev = unsafe { self.merged(s, plan, &feeds, None) }?;
        ev.spread = Spread::OneDevice(why);
        Ok(ev)
    }

    /// The launch `s` split by `plan`, with the arguments `feeds` does not pass directly
    /// copied whole to every busy device, and the written ones merged after (waits for the
    /// launch). Where two devices changed one element differently, the launch runs again on
    /// device 0 from the untouched originals.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch `s`.
    pub(super) unsafe fn merged(
        &self,
        s: &Shape3,
        plan: Partition,
        feeds: &[Feed],
        why: Option<&Refusal>,
    ) -> Result<MultiEvent> {
        let queues: Vec<&Queue> = self
            .kernel
            .kernels
            .iter()
            .map(|k| k.program().queue())
            .collect();
        self.waits.iter().try_for_each(|e| e.wait())?;
        queues.iter().try_for_each(|q| q.finish())?;
        let busy: Vec<usize> = (plan.sub_ranges(s.global, s.local).iter().enumerate())
            .filter_map(|(d, sub)| sub.map(|_| d))
            .collect();
        let mut before: Vec<Option<Vec<u8>>> = Vec::with_capacity(feeds.len());
        let mut copies: Copies = Vec::with_capacity(feeds.len());
        for (i, feed) in feeds.iter().enumerate() {
            if *feed == Feed::Direct {
                before.push(None);
                copies.push(Vec::new());
                continue;
            }
            // An argument that is an earlier one's buffer shares its copy (merged once).
            let key = mem_key(&self.args[i]);
            let same = (0..i).find(|&j| !copies[j].is_empty() && mem_key(&self.args[j]) == key);
            if let Some(j) = same {
                copies.push(copies[j].clone());
                before.push(None);
                if *feed == Feed::Merged && before[j].is_none() {
                    before[j] = Some(self.host_copy(j, &queues)?);
                }
                continue;
            }
            let host = self.host_copy(i, &queues)?;
            let per_device = (0..queues.len())
                .map(|d| {
                    let on = busy.contains(&d);
                    let b = on.then(|| Buffer::from_slice(queues[d], &host)).transpose();
                    b.map(|b| {
                        b.map(|b| Held {
                            buf: Arc::new(b),
                            lo: 0,
                        })
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            copies.push(per_device);
            before.push((*feed == Feed::Merged).then_some(host));
        }
        // SAFETY: the caller's contract; every argument the chunks cannot serve is whole.
        let mut ev = unsafe { self.execute(s, plan, &copies) }?;
        ev.wait()?;
        let mut merged = Vec::new();
        for (i, pre) in before.iter().enumerate() {
            let Some(pre) = pre else { continue };
            let mut after = Vec::with_capacity(busy.len());
            for &d in &busy {
                let b = copy(&copies, i, d).expect("a copy on every busy device");
                after.push(b.buf.read(queues[d])?);
            }
            match merge_elements(pre, &after, self.elem_size_of(i)) {
                Ok(m) => merged.push((i, m)),
                Err(at) => {
                    let again = Refusal::MergeRace {
                        devices: busy.len(),
                        element: at,
                        arg: i,
                        why: why.cloned().map(Box::new),
                    };
                    // SAFETY: the caller's contract; the originals are untouched.
                    return unsafe { self.one_device(s, again) };
                }
            }
        }
        for (i, m) in &merged {
            if Some(m) != before[*i].as_ref() {
                self.write_back(*i, m, &queues)?;
            }
        }
        let pick = |f: Feed| {
            (0..feeds.len())
                .filter(|&i| feeds[i] == f)
                .collect::<Vec<_>>()
        };
        if busy.len() > 1 {
            let (replicated, merged) = (pick(Feed::Replicated), pick(Feed::Merged));
            log::debug!(
                "kernel `{}` over {} devices: merged (arguments {merged:?} copied whole and \
                 merged, {replicated:?} replicated): {}",
                self.kernel.name(),
                busy.len(),
                why.map(ToString::to_string).unwrap_or_default()
            );
            ev.spread = Spread::Merged { replicated, merged };
        }
        Ok(ev)
    }

    fn elem_size_of(&self, i: usize) -> usize {
        match self.args.get(i) {
            Some(Value::Colored(c)) => c.elem_size,
            Some(Value::Plain(Arg::Buffer { elem, .. })) => elem.size,
            _ => 1,
        }
        .max(1)
    }

    /// Argument `i` (a buffer) whole, as bytes: a colored buffer's elements from the devices
    /// that own them, a plain buffer read through device 0's queue.
    fn host_copy(&self, i: usize, queues: &[&Queue]) -> Result<Vec<u8>> {
        match &self.args[i] {
            Value::Colored(c) => {
                let es = c.elem_size;
                let mut host = vec![0u8; c.len * es];
                for (d, runs) in c.owned.iter().enumerate() {
                    let (mem, lo) = match (&c.whole, c.part(d)) {
                        (Some(Arg::Buffer { mem, .. }), _) => (mem.raw(), 0),
                        (_, Some(Arg::Buffer { mem, .. })) => (mem.raw(), c.stored[d].0),
                        _ => continue,
                    };
                    for &(a, b) in runs {
                        // SAFETY: the buffer holds elements from `lo` on, its own run [a, b)
                        // among them.
                        unsafe {
                            ffi::read_bytes(
                                queues[d].raw(),
                                mem,
                                (a - lo) * es,
                                &mut host[a * es..b * es],
                            )
                        }
                        .map_err(|e| transfer("clEnqueueReadBuffer", e.0, queues[d]))?;
                    }
                }
                Ok(host)
            }
            Value::Plain(Arg::Buffer { mem, .. }) => {
                let mut host = vec![0u8; mem.bytes()];
                // SAFETY: the buffer holds `mem.bytes()` bytes.
                unsafe { ffi::read_bytes(queues[0].raw(), mem.raw(), 0, &mut host) }
                    .map_err(|e| transfer("clEnqueueReadBuffer", e.0, queues[0]))?;
                Ok(host)
            }
            Value::Plain(_) => Err(Error::input(InputFault::NotABuffer { argument: i })),
        }
    }

    /// Writes the merged argument `i` back: every element each device's part holds, or the
    /// whole plain buffer.
    fn write_back(&self, i: usize, host: &[u8], queues: &[&Queue]) -> Result<()> {
        let write = |q: &Queue, mem, bytes: &[u8]| {
            // SAFETY: `mem` holds at least `bytes.len()` bytes (callers below).
            unsafe { ffi::write_bytes(q.raw(), mem, 0, bytes) }
                .map_err(|e| transfer("clEnqueueWriteBuffer", e.0, q))
        };
        match &self.args[i] {
            Value::Colored(c) => match &c.whole {
                Some(Arg::Buffer { mem, .. }) => write(queues[0], mem.raw(), host),
                _ => {
                    let es = c.elem_size;
                    for (d, &(lo, hi)) in c.stored.iter().enumerate() {
                        if let Some(Arg::Buffer { mem, .. }) = c.part(d) {
                            // The part holds exactly elements [lo, hi).
                            write(queues[d], mem.raw(), &host[lo * es..hi * es])?;
                        }
                    }
                    Ok(())
                }
            },
            Value::Plain(Arg::Buffer { mem, .. }) => write(queues[0], mem.raw(), host),
            Value::Plain(_) => Ok(()),
        }
    }
}

fn transfer(call: &'static str, code: i32, q: &Queue) -> Error {
    Error::cl(
        call,
        code,
        format!("merging a launch's buffers on {}", q.device()),
    )
}

/// `before` with every element of `elem` bytes that some of `after` (one copy per device)
/// changed taken from it; `Err(element index)` where devices changed one element to
/// different values (a device writing an element's old value back changes nothing).
pub(super) fn merge_elements(
    before: &[u8],
    after: &[Vec<u8>],
    elem: usize,
) -> std::result::Result<Vec<u8>, usize> {
    let mut out = before.to_vec();
    // Blocks of whole elements, compared at once where nothing changed.
    let block = elem * 1024;
    for start in (0..before.len()).step_by(block) {
        let end = (start + block).min(before.len());
        let pre = &before[start..end];
        let changed: Vec<&Vec<u8>> = after.iter().filter(|a| &a[start..end] != pre).collect();
        match changed[..] {
            [] => continue,
            [one] => out[start..end].copy_from_slice(&one[start..end]),
            _ => {
                for e in (start..end).step_by(elem) {
                    let f = (e + elem).min(end);
                    let mut new: Option<&[u8]> = None;
                    for a in &changed {
                        let v = &a[e..f];
                        if v == &before[e..f] {
                            continue;
                        }
                        match new {
                            Some(w) if w != v => return Err(e / elem),
                            _ => new = Some(v),
                        }
                    }
                    if let Some(v) = new {
                        out[e..f].copy_from_slice(v);
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_taken_from_the_device_that_made_them() {
        let before = vec![0u8; 8];
        let a = vec![1, 0, 0, 0, 0, 0, 0, 0];
        let b = vec![0, 0, 0, 0, 7, 7, 0, 0];
        assert_eq!(
            merge_elements(&before, &[a.clone(), b], 2),
            Ok(vec![1, 0, 0, 0, 7, 7, 0, 0])
        );
        // Nothing changed, or one device only.
        assert_eq!(
            merge_elements(&before, std::slice::from_ref(&before), 4),
            Ok(before.clone())
        );
        assert_eq!(
            merge_elements(&before, std::slice::from_ref(&a), 4),
            Ok(a.clone())
        );
        // The same new value from two devices (a flag both set) is no conflict.
        assert_eq!(merge_elements(&before, &[a.clone(), a.clone()], 2), Ok(a));
    }

    #[test]
    fn different_changes_to_one_element_conflict() {
        let before = vec![0u8; 8];
        // Element 1 (bytes 4..8 of 4-byte elements): different bytes, same element.
        let a = vec![0, 0, 0, 0, 1, 0, 0, 0];
        let b = vec![0, 0, 0, 0, 0, 1, 0, 0];
        assert_eq!(merge_elements(&before, &[a.clone(), b.clone()], 4), Err(1));
        // As bytes they would be separate elements.
        assert_eq!(
            merge_elements(&before, &[a, b], 1),
            Ok(vec![0, 0, 0, 0, 1, 1, 0, 0])
        );
        // Beyond the first block of 1024 elements.
        let big = vec![0u8; 4 * 3000];
        let (mut x, mut y) = (big.clone(), big.clone());
        x[4 * 2500] = 3;
        y[4 * 2500] = 4;
        assert_eq!(merge_elements(&big, &[x, y], 4), Err(2500));
    }
}
