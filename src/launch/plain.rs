//! Plain-range launches ([`Launch::range`]): the rounding plan, bulk + tail splits, and
//! kernels with a required work-group size, prepared (every piece checked) before the first
//! is enqueued.

use super::prepare::Prepared;
use super::{Event, Launch};
use crate::error::Result;
use crate::plan::launch::Shape;
use crate::range::Range;

impl Launch<'_> {
    /// Enqueues over a plain range (no work-groups promised to the kernel): rounded up and
    /// guarded when the range is awkward, per `plan::rounding` (its
    /// `pieces` are enqueued in order). A kernel without rounded variants runs as bulk +
    /// tail launches where `plan::split` allows it (not when rounding is disabled),
    /// else unrounded. A kernel with `reqd_work_group_size` runs in exactly those groups.
    /// Kernels that ask for the work-group shape (`get_group_id`, `get_local_size`,
    /// `get_local_id`, ...) are never rounded: their plain range is the plain OpenCL launch it
    /// stands for (the driver's local size), or bulk + tail launches of exactly the range.
    ///
    /// # Safety
    ///
    /// The contract of [`Launch::nd_range`], for the work-items of `global` (shifted by the
    /// offset). Rounding adds work-items only outside `global`, and the generated guard makes
    /// them exit before the kernel's body runs, so they make no accesses; bulk + tail launches
    /// run exactly the work-items of `global`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     kernel void sq(global int *x) { size_t i = get_global_id(0); x[i] = (int)(i * i); }
    /// "#)?;
    /// let n = 1009; // prime: no good work-group divides it, so the range is rounded and guarded
    /// let x = Buffer::<i32>::new(&queue, n)?;
    /// // SAFETY: work-item i < n writes x[i], inside x (n elements).
    /// unsafe { p.kernel("sq")?.launch().arg(&x).range(Range::d1(n))? }.wait()?;
    /// assert_eq!(x.read(&queue)?[1008], 1008 * 1008);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub unsafe fn range(self, global: impl Into<Range>) -> Result<Event> {
        let global = global.into();
        let (launch, prepared) = self.or_emulated(|l| l.prepare_range(global))?;
        // SAFETY: this function's contract, for the range that was prepared (rounded pieces
        // run guarded variants whose extra work-items exit at once), on the kernel or its
        // emulated build, which does the same.
        unsafe { launch.execute(prepared) }
    }

    /// Prepares a plain-range launch of `user` as [`crate::plan::launch::plan`] plans it.
    pub(crate) fn prepare_range(&self, user: Range) -> Result<Prepared> {
        let plan = self.plan(user, Shape::Plain)?;
        let trace = self.kernel.program().rounding().trace;
        for line in plan
            .rounding
            .iter()
            .filter(|_| trace)
            .flat_map(|r| r.trace_lines())
        {
            println!("{line}");
        }
        self.prepared(plan, user)
    }
}
