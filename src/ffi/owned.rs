//! Owned OpenCL objects: released on drop without panicking (a failed release is logged).

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::event::Event;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem};
use opencl3::types::cl_int;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// An OpenCL object clgroups owns, released when dropped without panicking or blocking: a
/// failed release is logged (`log::warn!`) and the object leaked. (opencl3's own `Drop` impls
/// `expect` success, which would panic in `drop`, possibly while unwinding.) Every buffer,
/// kernel, program, queue, context and event of clgroups is held in one.
pub struct Owned<T: Release>(ManuallyDrop<T>);

impl<T: Release> Owned<T> {
    /// Takes ownership of `object` (of the reference its creation returned).
    pub fn new(object: T) -> Self {
        Owned(ManuallyDrop::new(object))
    }
}

impl<T: Release> Deref for Owned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Release> DerefMut for Owned<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Release + std::fmt::Debug> std::fmt::Debug for Owned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Release> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is released here only, once, and never used afterwards.
        if let Err(code) = unsafe { T::release(&mut self.0) } {
            log::warn!("{} failed with {code}: the object is leaked", T::CALL);
        }
    }
}

/// A program clgroups owns.
pub type ClProgram = Owned<opencl3::program::Program>;

/// OpenCL objects [`Owned`] can release.
pub trait Release: Sized {
    /// The OpenCL call that releases it (for the log).
    const CALL: &'static str;
    /// Releases the reference `this` holds, and whatever else it owns.
    ///
    /// # Safety
    ///
    /// Called once; `this` is not used afterwards (not even dropped).
    unsafe fn release(this: &mut ManuallyDrop<Self>) -> Result<(), cl_int>;
}

/// Objects that are only a handle: released through the handle, nothing else to drop.
macro_rules! release_handle {
    ($(($t:ty, $call:literal, $f:path)),*) => {$(
        impl Release for $t {
            const CALL: &'static str = $call;
            unsafe fn release(this: &mut ManuallyDrop<Self>) -> Result<(), cl_int> {
                // SAFETY: gives up the reference `this` holds, once (the caller's contract),
                // exactly as opencl3's own `Drop` would; the opencl3 value holds no other
                // resource (its fields are the handle and plain data), so skipping its `Drop`
                // leaks nothing. (An invalid handle, e.g. null, is reported as CL_INVALID_*.)
                unsafe { $f(this.get()) }
            }
        }
    )*};
}

release_handle!(
    (ClKernel, "clReleaseKernel", opencl3::kernel::release_kernel),
    (
        CommandQueue,
        "clReleaseCommandQueue",
        opencl3::command_queue::release_command_queue
    ),
    (Event, "clReleaseEvent", opencl3::event::release_event)
);

impl<T> Release for ClBuffer<T> {
    const CALL: &'static str = "clReleaseMemObject";
    unsafe fn release(this: &mut ManuallyDrop<Self>) -> Result<(), cl_int> {
        // SAFETY: as for `release_handle!`: a `Buffer<T>` is a `cl_mem` and a `PhantomData`.
        unsafe { opencl3::memory::release_mem_object(this.get()) }
    }
}

/// Objects that own heap memory besides their handle (a context its device list, a program its
/// kernel names): a reference is added first, so that opencl3's `Drop` frees that memory and
/// releases only the added reference (which cannot fail on a live object: the failures of
/// `clRelease*` are an invalid handle, excluded by the successful retain, and running out of host
/// resources); then the object's own reference is released here, where a failure is logged. If
/// the retain fails, nothing is dropped: a few bytes leak with the object.
macro_rules! release_retained {
    ($(($t:ty, $call:literal, $retain:path, $release:path)),*) => {$(
        impl Release for $t {
            const CALL: &'static str = $call;
            unsafe fn release(this: &mut ManuallyDrop<Self>) -> Result<(), cl_int> {
                let handle = this.get();
                // SAFETY: `this` still holds its reference (an invalid handle, e.g. null, is
                // reported as CL_INVALID_*).
                unsafe { $retain(handle) }?;
                // SAFETY: dropped once (the caller's contract); its release undoes the retain.
                unsafe { ManuallyDrop::drop(this) };
                // SAFETY: the reference `this` held, given up once.
                unsafe { $release(handle) }
            }
        }
    )*};
}

release_retained!(
    (
        ClContext,
        "clReleaseContext",
        cl3::context::retain_context,
        cl3::context::release_context
    ),
    (
        opencl3::program::Program,
        "clReleaseProgram",
        opencl3::program::retain_program,
        opencl3::program::release_program
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use opencl3::error_codes::{
        CL_INVALID_COMMAND_QUEUE, CL_INVALID_CONTEXT, CL_INVALID_EVENT, CL_INVALID_KERNEL,
        CL_INVALID_MEM_OBJECT,
    };
    use std::ptr;

    /// A release that fails is an error for `Owned`'s drop to log, never a panic. A null handle
    /// is the one failure that is defined behaviour to provoke: it is not a valid object, so
    /// `clRetain*`/`clRelease*` return `CL_INVALID_*` (the ICD loader checks for null before
    /// dispatching); opencl3's own `Drop` would panic on it.
    #[test]
    fn failed_releases_are_errors_not_panics() {
        if opencl3::platform::get_platforms().map_or(true, |p| p.is_empty()) {
            eprintln!("not run: no OpenCL platform");
            return;
        }
        fn release<T: Release>(object: T) -> Result<(), cl_int> {
            // SAFETY: released once and not used afterwards.
            unsafe { T::release(&mut ManuallyDrop::new(object)) }
        }
        let null = ptr::null_mut();
        assert_eq!(release(Event::new(null)), Err(CL_INVALID_EVENT));
        assert_eq!(release(ClKernel::new(null)), Err(CL_INVALID_KERNEL));
        assert_eq!(
            release(ClBuffer::<u8>::new(null)),
            Err(CL_INVALID_MEM_OBJECT)
        );
        let queue = CommandQueue::new(null, 3);
        assert_eq!(release(queue), Err(CL_INVALID_COMMAND_QUEUE));
        // A retained kind: the retain fails, so opencl3's drop never runs.
        assert_eq!(release(ClContext::new(null, &[])), Err(CL_INVALID_CONTEXT));
        drop(Owned::new(Event::new(null)));
        drop(Owned::new(ClContext::new(null, &[])));
    }
}
