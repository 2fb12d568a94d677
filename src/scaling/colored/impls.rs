//! [`ColoredBuffer`]'s trait implementations: `Debug`, and [`RootArg`] for launches.

use super::super::arg::{RootArg, RootArgValue};
use super::ColoredBuffer;
use crate::buffer::Pod;
use std::fmt;

impl<T: Pod + Send + Sync> fmt::Debug for ColoredBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ColoredBuffer<{}>[{}] {:?} ({})",
            crate::buffer::ElemType::of::<T>(),
            self.len(),
            self.chunks,
            self.placement
        )
    }
}

impl<T: Pod> super::super::arg::sealed::Sealed for &ColoredBuffer<T> {}
impl<T: Pod> super::super::arg::sealed::Sealed for &mut ColoredBuffer<T> {}

impl<T: Pod + Send + Sync> RootArg for &ColoredBuffer<T> {
    fn to_root_arg(&self) -> RootArgValue {
        self.root_arg()
    }
}

impl<T: Pod + Send + Sync> RootArg for &mut ColoredBuffer<T> {
    fn to_root_arg(&self) -> RootArgValue {
        self.root_arg()
    }
}
