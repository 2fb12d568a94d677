//! Task 1 with ocl: every device, its work-group limit and sub-group capabilities.

use ocl::enums::DeviceInfo;
use ocl::{Device, Platform};

/// OpenCL 2.1 and extension queries that ocl's `DeviceInfo` does not list.
const CL_DEVICE_MAX_NUM_SUB_GROUPS: u32 = 0x105C;
const CL_DEVICE_SUB_GROUP_SIZES_INTEL: u32 = 0x4108;

fn main() -> ocl::Result<()> {
    let mut count = 0;
    for (p, platform) in Platform::list().iter().enumerate() {
        for (i, device) in Device::list_all(platform)?.iter().enumerate() {
            let max_work_group_size = device.max_wg_size()?;
            // An OpenCL 2.1 query: devices of older versions answer with an error.
            let max_sub_groups = device
                .info_raw(CL_DEVICE_MAX_NUM_SUB_GROUPS)
                .map_or(0, |b| u32::from_ne_bytes(b[..4].try_into().unwrap()));
            let all_extensions = device.info(DeviceInfo::Extensions)?.to_string();
            let extensions: Vec<_> = all_extensions
                .split_whitespace()
                .filter(|e| e.contains("subgroup"))
                .collect();
            let sizes: Vec<usize> = device
                .info_raw(CL_DEVICE_SUB_GROUP_SIZES_INTEL)
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
