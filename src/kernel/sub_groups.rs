//! [`SubGroupQueries`]: a kernel's sub-group descriptors, computed where clgroups fixes the
//! size, from the driver otherwise.

use super::{trim_ones, Kernel};
use crate::error::{Error, InputFault, Internal, Result, Unsupported};
use crate::ffi;
use crate::program::{derived_geometry, ResolvedSize, SubGroupSize};
use crate::range::Range;
use opencl3::kernel::{
    CL_KERNEL_COMPILE_NUM_SUB_GROUPS, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
    CL_KERNEL_MAX_NUM_SUB_GROUPS, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
    CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
};

/// `CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL`.
const CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL: u32 = 0x410A;

impl Kernel {
    /// Sub-group queries as clgroups provides them (computed where the backend defines the
    /// answer, from the driver otherwise).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     #include <clgroups/subgroup.h>
    ///     kernel void k(global uint *x) { x[get_global_id(0)] = sg_get_local_id(); }
    /// "#)?;
    /// let k = p.kernel("k")?;
    /// let s = k.sub_groups().max_sub_group_size(Range::d1(64))?;
    /// assert_eq!(k.sub_groups().sub_group_count(Range::d1(64))?, 64usize.div_ceil(s));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn sub_groups(&self) -> SubGroupQueries<'_> {
        SubGroupQueries {
            kernel: self,
            driver_only: false,
        }
    }

    /// Sub-group queries answered by the driver alone (`clGetKernelSubGroupInfo`);
    /// [`Error::Unsupported`] where the device has no native sub-groups.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, "kernel void k(global int *x) { x[0] = 1; }")?;
    /// match p.kernel("k")?.driver_sub_groups().max_num_sub_groups() {
    ///     Ok(n) => println!("the driver says at most {n} sub-groups per work-group"),
    ///     Err(e) => println!("no native sub-groups: {e}"), // e.g. PoCL 3.1
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn driver_sub_groups(&self) -> SubGroupQueries<'_> {
        SubGroupQueries {
            kernel: self,
            driver_only: true,
        }
    }
}

/// The kernel sub-group descriptors of the SYCL sub-group specification, for one kernel on its
/// device.
///
/// With a fixed sub-group size `S` (required, primary, a warp, or emulation) the answers are
/// computed: max size for a local range `L` = `S`, count = `ceil(|L| / S)`, local size
/// for `n` sub-groups = `n * S` (if the kernel allows it), max number = `ceil(max wg / S)`.
/// With an automatic size on a native device they come from `clGetKernelSubGroupInfo`.
///
/// ```
/// # use clgroups::prelude::*;
/// # let queue = Queue::new(&default_device()?)?;
/// let p = Program::from_source(&queue, r#"
///     #include <clgroups/subgroup.h>
///     kernel void k(global uint *x) { x[get_global_id(0)] = sg_get_group_id(); }
/// "#)?;
/// let k = p.kernel("k")?;
/// let q = k.sub_groups();
/// let s = q.max_sub_group_size(Range::d1(128))?;
/// println!("sub-groups of {s}, {} per 128 work-items, at most {} per work-group",
///     q.sub_group_count(Range::d1(128))?, q.max_num_sub_groups()?);
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SubGroupQueries<'k> {
    kernel: &'k Kernel,
    driver_only: bool,
}

impl SubGroupQueries<'_> {
    /// The fixed size `S`, or `None` to ask the driver.
    fn fixed(&self) -> Result<Option<usize>> {
        if self.driver_only {
            return self.native().map(|_| None);
        }
        self.kernel.check_sub_group_size()?;
        Ok(match self.kernel.inner.size {
            ResolvedSize::Size(0) => {
                self.size_unknown()?;
                None
            }
            ResolvedSize::Size(s) => Some(s),
            ResolvedSize::Unsupported(_) => unreachable!("checked above"),
        })
    }

    /// An error where the kernel may have a required size that neither clgroups nor the driver
    /// can tell (see `program::build::derived_geometry`: PoCL ignores the attribute in
    /// `clGetKernelSubGroupInfo`): a kernel the scanner did not find, or whose own
    /// `intel_reqd_sub_group_size` it cannot read, in a source that names the attribute.
    fn size_unknown(&self) -> Result<()> {
        let p = self.kernel.program();
        let name = self.kernel.name();
        let unknown = match p.decl(name) {
            Some(d) => d.unresolved_sub_group_attr.is_some(),
            None => true,
        };
        if unknown && derived_geometry(p.device(), 0, p.facts()) {
            return Err(Error::Unsupported {
                device: p.device().to_string(),
                what: Unsupported::HostSubGroupQueries {
                    kernel: name.into(),
                },
            });
        }
        Ok(())
    }

    fn native(&self) -> Result<()> {
        let dev = self.kernel.program().device();
        if dev.sub_groups().driver.native() {
            Ok(())
        } else {
            Err(Error::Unsupported {
                device: dev.to_string(),
                what: Unsupported::KernelSubGroupQueries {
                    kernel: self.kernel.name().into(),
                },
            })
        }
    }

    fn driver(&self, param: u32, input: &[usize], what: &str) -> Result<Vec<usize>> {
        self.native()?;
        let dev = self.kernel.program().device();
        ffi::kernel_sub_group_info(&self.kernel.raw(), dev.raw(), param, input).map_err(|e| {
            Error::cl(
                "clGetKernelSubGroupInfo",
                e.0,
                format!("{what} of kernel `{}` on {dev}", self.kernel.name()),
            )
        })
    }

    /// Maximum sub-group size for a launch with this local range: the largest sub-group of the
    /// launch, never above the work-group size (OpenCL's `CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE`,
    /// SYCL's `get_max_local_range()`), as `get_max_sub_group_size()` and
    /// `sg_get_max_local_range()` report inside the kernel. With a fixed size `S` this is
    /// `min(S, local.len())`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let p = Program::from_source(&queue, "#include <clgroups/subgroup.h>\nkernel void k(global uint *x) { x[0] = sg_get_local_id(); }")?;
    /// let k = p.kernel("k")?;
    /// let s = k.sub_groups().max_sub_group_size(Range::d1(32))?;
    /// assert!(s >= 1);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn max_sub_group_size(&self, local: Range) -> Result<usize> {
        let max = match self.fixed()? {
            Some(s) => s,
            None => first(self.driver(
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                local.as_slice(),
                "MAX_SUB_GROUP_SIZE_FOR_NDRANGE",
            )?)?,
        };
        Ok(max.min(local.len()))
    }

    /// Number of sub-groups in a work-group of this local range.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let p = Program::from_source(&queue, "#include <clgroups/subgroup.h>\nkernel void k(global uint *x) { x[0] = sg_get_local_id(); }")?;
    /// let q = p.kernel("k")?;
    /// let s = q.sub_groups().max_sub_group_size(Range::d1(64))?;
    /// assert_eq!(q.sub_groups().sub_group_count(Range::d1(64))?, 64usize.div_ceil(s));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn sub_group_count(&self, local: Range) -> Result<usize> {
        match self.fixed()? {
            Some(s) => Ok(local.len().div_ceil(s)),
            None => first(self.driver(
                CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                local.as_slice(),
                "SUB_GROUP_COUNT_FOR_NDRANGE",
            )?),
        }
    }

    /// A 1-D local range with exactly `count` sub-groups, or `None` if there is none.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let p = Program::from_source(&queue, "#include <clgroups/subgroup.h>\nkernel void k(global uint *x) { x[0] = sg_get_local_id(); }")?;
    /// let k = p.kernel("k")?;
    /// if let Some(local) = k.sub_groups().local_size_for_sub_group_count(2)? {
    ///     assert_eq!(k.sub_groups().sub_group_count(local)?, 2);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn local_size_for_sub_group_count(&self, count: usize) -> Result<Option<Range>> {
        match self.fixed()? {
            Some(s) => Ok(count
                .checked_mul(s)
                .filter(|&n| count > 0 && n <= self.kernel.limits().max_work_group_size)
                .map(Range::d1)),
            None => {
                let v = self.driver(
                    CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT,
                    &[count],
                    "LOCAL_SIZE_FOR_SUB_GROUP_COUNT",
                )?;
                let dims: Vec<usize> = v.into_iter().take(3).collect();
                Ok(if dims.iter().all(|&d| d == 0) {
                    None
                } else {
                    Some(Range::new(trim_ones(&dims))?)
                })
            }
        }
    }

    /// Maximum number of sub-groups in a work-group of this kernel. Where a driver answers 0
    /// (PoCL 6.0 does), the effective view answers the device's `CL_DEVICE_MAX_NUM_SUB_GROUPS`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let p = Program::from_source(&queue, "#include <clgroups/subgroup.h>\nkernel void k(global uint *x) { x[0] = sg_get_local_id(); }")?;
    /// assert!(p.kernel("k")?.sub_groups().max_num_sub_groups()? >= 1);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn max_num_sub_groups(&self) -> Result<usize> {
        match self.fixed()? {
            Some(s) => Ok(self.kernel.limits().max_work_group_size.div_ceil(s)),
            None => {
                let n =
                    first(self.driver(CL_KERNEL_MAX_NUM_SUB_GROUPS, &[], "MAX_NUM_SUB_GROUPS")?)?;
                let dev = self
                    .kernel
                    .program()
                    .device()
                    .sub_groups()
                    .driver
                    .max_num_sub_groups;
                Ok(if n == 0 && !self.driver_only {
                    dev as usize
                } else {
                    n
                })
            }
        }
    }

    /// Number of sub-groups the kernel requires at compile time (0: none; clgroups kernels
    /// never fix it).
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// # let p = Program::from_source(&queue, "#include <clgroups/subgroup.h>\nkernel void k(global uint *x) { x[0] = sg_get_local_id(); }")?;
    /// assert_eq!(p.kernel("k")?.sub_groups().compile_num_sub_groups()?, 0);
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn compile_num_sub_groups(&self) -> Result<usize> {
        match self.fixed()? {
            Some(_) => Ok(0),
            None => first(self.driver(
                CL_KERNEL_COMPILE_NUM_SUB_GROUPS,
                &[],
                "COMPILE_NUM_SUB_GROUPS",
            )?),
        }
    }

    /// The kernel's compile-time sub-group size: the required size, the device's primary size
    /// for `primary`, 0 for `automatic` (SYCL's `compile_sub_group_size`). Driver-only:
    /// `CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL`.
    ///
    /// ```
    /// # use clgroups::prelude::*;
    /// # let queue = Queue::new(&default_device()?)?;
    /// let p = Program::from_source(&queue, r#"
    ///     #include <clgroups/subgroup.h>
    ///     kernel CLG_REQD_SUB_GROUP_SIZE(8) void k(global uint *x) { x[0] = sg_get_local_id(); }
    /// "#)?;
    /// let k = p.kernel("k")?;
    /// if k.check_sub_group_size().is_ok() {
    ///     assert_eq!(k.sub_groups().compile_sub_group_size()?, 8);
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn compile_sub_group_size(&self) -> Result<usize> {
        if self.driver_only {
            let dev = self.kernel.program().device();
            if !dev
                .sub_groups()
                .driver
                .has("cl_intel_required_subgroup_size")
            {
                return Err(Error::Unsupported {
                    device: dev.to_string(),
                    what: Unsupported::CompileSubGroupSize,
                });
            }
            return first(self.driver(
                CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL,
                &[],
                "COMPILE_SUB_GROUP_SIZE_INTEL",
            )?);
        }
        self.kernel.check_sub_group_size()?;
        let dev = self.kernel.program().device();
        Ok(match self.kernel.inner.requested {
            SubGroupSize::Exact(s) => s,
            SubGroupSize::Primary => dev.sub_groups().effective.primary_sub_group_size,
            SubGroupSize::Automatic => 0,
        })
    }
}

fn first(v: Vec<usize>) -> Result<usize> {
    v.first()
        .copied()
        .ok_or_else(|| Error::input(InputFault::Internal(Internal::EmptyAnswer)))
}
