//! [`ColoredBuffer`]'s host access: reads, writes and fills of the whole array.

use super::super::margins::Coherence;
use super::ColoredBuffer;
use crate::buffer::{Buffer, Pod};
use crate::error::{Error, InputFault, Result};
use crate::ffi;
use crate::queue::Queue;
use std::sync::Arc;

impl<T: Pod + Send + Sync> ColoredBuffer<T> {
    /// Every device's part, to write: the margins of all of them become stale.
    pub(super) fn parts_to_write(&mut self) -> Result<Vec<Option<&mut Buffer<T>>>> {
        // Every element is overwritten: the parts hold the valid data from now on.
        self.residence.discard();
        self.margins.written();
        // The cached launch argument shares the margins: dropped, so that they are ours.
        self.arg.clear();
        if Arc::get_mut(&mut self.margins).is_none() && self.margins.any_kept() {
            return Err(Error::input(InputFault::MarginsShared));
        }
        let kept = match Arc::get_mut(&mut self.margins) {
            Some(m) => m.parts_mut(),
            None => (0..self.parts.len()).map(|_| None).collect(),
        };
        Ok((kept.into_iter())
            .zip(self.parts.iter_mut())
            .map(|(k, p)| k.or(p.as_mut()))
            .collect())
    }

    /// Reads the whole array (blocking); in partitioned placement each chunk through its
    /// device's queue.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[1u16, 2, 3])?;
    /// assert_eq!(x.read()?, [1, 2, 3]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn read(&self) -> Result<Vec<T>> {
        self.finish()?;
        if let Some(parent) = &self.parent {
            return parent.read(&self.queues[0]);
        }
        let mut out = vec![T::zeroed(); self.len];
        if let Some((d, whole)) = self.residence.whole() {
            // Held whole on device d (a launch ran there alone): read it there.
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
            // SAFETY: the whole buffer holds len() elements, `bytes` is their size.
            unsafe { ffi::read_bytes(self.queues[d].raw(), whole.as_raw(), 0, bytes) }.map_err(
                |e| {
                    Error::cl(
                        "clEnqueueReadBuffer",
                        e.0,
                        self.queues[d].device().to_string(),
                    )
                },
            )?;
            return Ok(out);
        }
        for (d, runs) in self.owned.iter().enumerate() {
            let Some(p) = self.held_part(d) else { continue };
            for &(a, b) in runs {
                p.read_into(&self.queues[d], a - self.stored[d].0, &mut out[a..b])?;
            }
        }
        Ok(out)
    }

    /// Writes `data` (exactly [`len`](Self::len) elements) and migrates the chunks back.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let mut x = clgroups::ColoredBuffer::<u16>::new(&root, 3)?;
    /// x.write(&[4, 5, 6])?;
    /// assert_eq!(x.read()?, [4, 5, 6]);
    /// assert!(x.write(&[1]).is_err()); // exactly len() elements
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn write(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::input(InputFault::ColoredWrite {
                data: data.len(),
                len: self.len(),
            }));
        }
        self.finish()?;
        if let Some(parent) = &mut self.parent {
            // The parts hold the data again (where a launch used it whole on one device).
            self.residence.discard();
            parent.write(&self.queues[0], data)?;
            return self.migrate();
        }
        let (queues, stored) = (self.queues.clone(), self.stored.clone());
        for ((part, q), &(lo, hi)) in self.parts_to_write()?.into_iter().zip(&queues).zip(&stored) {
            if let Some(p) = part {
                p.write(q, &data[lo..hi])?;
            }
        }
        Ok(())
    }

    /// Sets every element to `value` and migrates the chunks back.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let mut x = clgroups::ColoredBuffer::<i8>::new(&root, 5)?;
    /// x.fill(-3)?;
    /// assert_eq!(x.read()?, [-3; 5]);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.finish()?;
        if let Some(parent) = &mut self.parent {
            self.residence.discard();
            parent.fill(&self.queues[0], value)?;
            return self.migrate();
        }
        let queues = self.queues.clone();
        for (part, q) in self.parts_to_write()?.into_iter().zip(&queues) {
            if let Some(p) = part {
                p.fill(q, value)?;
            }
        }
        Ok(())
    }

    /// Waits for every device's queue, so that host access sees finished launches.
    pub(super) fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(Queue::finish)?;
        // Nothing is pending on any queue: its parts' order is every queue's own again.
        self.residence.ordered();
        Ok(())
    }
}
