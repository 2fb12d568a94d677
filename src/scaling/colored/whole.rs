//! [`ColoredBuffer`] held whole on one device ([`super::super::resident`]): where its valid
//! data is, and moving it whole to a device or back to its parts.

use super::super::arg::{RootArgValue, Value};
use super::super::resident;
use super::ColoredBuffer;
#[cfg(feature = "algorithms")]
use crate::buffer::Buffer;
use crate::buffer::Pod;
use crate::error::Result;
use crate::queue::Queue;

impl<T: Pod + Send + Sync> ColoredBuffer<T> {
    /// Moves the buffer back to its parts where a launch left it whole on one device (see
    /// [`super::resident`]), enqueued device to device.
    pub(in crate::scaling) fn settle(&self) -> Result<()> {
        if self.residence.holder().is_none() {
            return Ok(());
        }
        let RootArgValue(Value::Colored(arg)) = self.root_arg() else {
            return Ok(());
        };
        let queues: Vec<&Queue> = self.queues.iter().collect();
        resident::settle(&arg, &queues).map(drop)
    }

    /// Orders everything enqueued so far before uses of the parts on their own queues (a
    /// reduce's or scan's): every queue finishes where another queue may have touched a part,
    /// that is in shared placement (a split launch's parts may write anywhere in the parent)
    /// or where the parts were crossed (a merge, a fallback, a move between devices).
    #[cfg(feature = "algorithms")]
    pub(in crate::scaling) fn order_parts(&self) -> Result<()> {
        if self.placement == super::super::Placement::Shared || self.residence.crossed() {
            self.finish()?;
        }
        Ok(())
    }

    /// The buffer held whole on one device, as a buffer of `T` there, and that device.
    #[cfg(feature = "algorithms")]
    pub(in crate::scaling) fn whole_typed(&self) -> Result<Option<(usize, Buffer<T>)>> {
        let Some((d, whole)) = self.residence.whole() else {
            return Ok(None);
        };
        Ok(Some((d, whole.view_as::<T>(self.len)?)))
    }

    /// The device holding the buffer whole and whether its parts are stale, if it is whole.
    #[cfg(feature = "algorithms")]
    pub(in crate::scaling) fn holder(&self) -> Option<(usize, bool)> {
        self.residence.holder()
    }

    /// Moves the buffer whole to device `d` (see [`super::resident`]); the bytes moved
    /// between devices.
    #[cfg(feature = "algorithms")]
    pub(in crate::scaling) fn gather_to(&self, d: usize) -> Result<u64> {
        let RootArgValue(Value::Colored(arg)) = self.root_arg() else {
            return Ok(0);
        };
        let queues: Vec<&Queue> = self.queues.iter().collect();
        resident::gather(&arg, d, &queues, &[]).map(|(_, moved)| moved)
    }

    /// Bytes moving the buffer whole to each device would copy between devices.
    #[cfg(feature = "algorithms")]
    pub(in crate::scaling) fn gather_bytes(&self) -> Vec<u64> {
        let RootArgValue(Value::Colored(arg)) = self.root_arg() else {
            return vec![0; self.queues.len()];
        };
        (0..self.queues.len())
            .map(|d| resident::gather_bytes(&arg, d))
            .collect()
    }

    /// The device holding the buffer whole (a launch ran there alone and left it there; in
    /// shared placement: the device using its parent alone), or `None` where each device holds
    /// its part (see [whole-buffer placement](crate::scaling#whole-buffer-placement)).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let x = clgroups::ColoredBuffer::from_slice(&root, &[1u32; 64])?;
    /// assert_eq!(x.whole_on(), None); // written by the host: in its parts
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn whole_on(&self) -> Option<usize> {
        self.residence.holder().map(|h| h.0)
    }
}
