//! The harness of the CTS-style sub-group tables (`tests/khr_non_uniform.rs`,
//! `tests/khr_polyfill.rs`, `tests/subgroup_layer.rs`): one program of checking kernels on one
//! queue, its launches, and the checks counted with their first failures. Each table adds its
//! own checks in an `impl Suite<'_>` block of its own.

use clgroups::buffer::Scalar;
use clgroups::launch::{Launch, LocalSize};
use clgroups::program::SubGroupSize;
use clgroups::{Buffer, Kernel, Program, Queue, Range};
use std::fmt::Debug;
use std::time::Instant;

/// The checks of one program on one queue.
pub struct Suite<'a> {
    pub queue: &'a Queue,
    pub program: Program,
    /// The backend and the program's default sub-group size: the prefix of every failure.
    pub label: String,
    /// The program's default sub-group size.
    pub size: SubGroupSize,
    pub checks: usize,
    pub failed: usize,
    /// The first 1000 failures.
    pub fails: Vec<String>,
    start: Instant,
}

impl<'a> Suite<'a> {
    /// Builds `src` (named `file` in build logs) on `queue` with the default sub-group size
    /// `size`; panics naming the backend where it does not build.
    pub fn build(queue: &'a Queue, src: &str, file: &str, size: SubGroupSize) -> Suite<'a> {
        let backend = queue.device().sub_groups().effective.shuffle_backend;
        let start = Instant::now();
        let program = Program::builder(src)
            .file_name(file)
            .default_sub_group_size(size)
            .build(queue)
            .unwrap_or_else(|e| panic!("{backend}: the test kernels build: {e}"));
        eprintln!("{backend}: built in {:?}", start.elapsed());
        Suite {
            queue,
            program,
            label: format!("{backend} {size:?}"),
            size,
            checks: 0,
            failed: 0,
            fails: Vec::new(),
            start,
        }
    }

    /// The size the program pins (`SubGroupSize::Exact`), if it does.
    pub fn pinned(&self) -> Option<usize> {
        match self.size {
            SubGroupSize::Exact(s) => Some(s),
            _ => None,
        }
    }

    pub fn kernel(&self, name: &str) -> Kernel {
        self.program.kernel(name).expect(name)
    }

    pub fn buf<T: Scalar>(&self, data: &[T]) -> Buffer<T> {
        Buffer::from_slice(self.queue, data).expect("buffer")
    }

    pub fn read<T: Scalar>(&self, b: &Buffer<T>) -> Vec<T> {
        b.read(self.queue).expect("read")
    }

    /// Launches `l` over `global` in work-groups of exactly `local` and waits.
    ///
    /// # Safety
    ///
    /// The kernel of `l` stays inside the buffers of `l` over this range.
    pub unsafe fn try_launch(
        &self,
        l: Launch<'_>,
        global: &[usize],
        local: &[usize],
    ) -> clgroups::Result<()> {
        let global = Range::new(global).expect("global");
        let local = LocalSize::Exact(Range::new(local).expect("local"));
        // SAFETY: the caller's.
        unsafe { l.nd_range(global, local) }.and_then(|e| e.wait())
    }

    /// [`Suite::try_launch`], panicking with the label and the work-group where it fails.
    ///
    /// # Safety
    ///
    /// As [`Suite::try_launch`].
    pub unsafe fn launch(&self, l: Launch<'_>, global: &[usize], local: &[usize]) {
        // SAFETY: the caller's.
        unsafe { self.try_launch(l, global, local) }
            .unwrap_or_else(|e| panic!("{}: launch over {local:?}: {e}", self.label));
    }

    /// Counts one check, recording it as a failure where `got` is not `want`.
    pub fn check<T: Debug + PartialEq>(&mut self, what: impl FnOnce() -> String, got: T, want: T) {
        if got != want {
            self.fail(format!("{}: got {got:?} want {want:?}", what()));
        } else {
            self.checks += 1;
        }
    }

    /// Records a failed check (the first 1000 with their message).
    pub fn fail(&mut self, msg: String) {
        self.checks += 1;
        self.failed += 1;
        if self.fails.len() < 1000 {
            self.fails.push(format!("{} {msg}", self.label));
        }
    }

    /// Prints the count (with the extensions the crate provides on the queue) and fails
    /// listing the first 30 failures, if any.
    pub fn report(&self) {
        let device = self.queue.device();
        let provided: Vec<String> = clgroups::program::polyfill::extensions(self.queue)
            .into_iter()
            .map(|(e, p)| format!("{e}={}", p.name()))
            .collect();
        let (checks, failed) = (self.checks, self.failed);
        eprintln!(
            "{} on {device}: {checks} checks, {failed} failures, {:?} [{}]",
            self.label,
            self.start.elapsed(),
            provided.join(" ")
        );
        assert!(
            failed == 0,
            "{failed} of {checks} checks failed on {device}:\n{}",
            self.fails[..self.fails.len().min(30)].join("\n")
        );
    }
}
