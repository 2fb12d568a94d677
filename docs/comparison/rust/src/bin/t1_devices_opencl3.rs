//! Task 1 with opencl3: every device, its work-group limit and sub-group capabilities.

use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::platform::get_platforms;

/// Not among opencl3's device constants (cl_intel_required_subgroup_size).
const CL_DEVICE_SUB_GROUP_SIZES_INTEL: u32 = 0x4108;

fn main() -> opencl3::Result<()> {
    let mut count = 0;
    for (p, platform) in get_platforms()?.iter().enumerate() {
        for (i, id) in platform
            .get_devices(CL_DEVICE_TYPE_ALL)?
            .into_iter()
            .enumerate()
        {
            let device = Device::new(id);
            let max_work_group_size = device.max_work_group_size()?;
            // An OpenCL 2.1 query: devices of older versions answer with an error.
            let max_sub_groups = device.max_num_sub_groups().unwrap_or(0);
            let all_extensions = device.extensions()?;
            let extensions: Vec<_> = all_extensions
                .split_whitespace()
                .filter(|e| e.contains("subgroup"))
                .collect();
            let sizes: Vec<usize> = device
                .get_data(CL_DEVICE_SUB_GROUP_SIZES_INTEL)
                .unwrap_or_default()
                .chunks_exact(size_of::<usize>())
                .map(|b| usize::from_ne_bytes(b.try_into().unwrap()))
                .collect();
            assert!(max_work_group_size >= 1);
            println!("{p}:{i} {} / {}", platform.name()?, device.name()?);
            println!("  max work-group size  {max_work_group_size}");
            println!("  max sub-groups       {max_sub_groups}");
            println!("  sub-group extensions {}", extensions.join(" "));
            println!("  Intel sub-group sizes {sizes:?}");
            count += 1;
        }
    }
    assert!(count > 0, "no OpenCL device");
    Ok(())
}
