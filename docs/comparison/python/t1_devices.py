# Task 1 with PyOpenCL: every device, its work-group limit and sub-group capabilities.
# PyOpenCL has no query for CL_DEVICE_SUB_GROUP_SIZES_INTEL (its get_info rejects parameters
# it does not know), so the Intel sizes are not listed.
import pyopencl as cl

count = 0
for p, platform in enumerate(cl.get_platforms()):
    for i, device in enumerate(platform.get_devices()):
        try:  # an OpenCL 2.1 query: devices of older versions answer with an error
            max_sub_groups = device.max_num_sub_groups
        except cl.Error:
            max_sub_groups = 0
        extensions = [e for e in device.extensions.split() if "subgroup" in e]
        assert device.max_work_group_size >= 1
        print(f"{p}:{i} {platform.name} / {device.name}")
        print(f"  max work-group size  {device.max_work_group_size}")
        print(f"  max sub-groups       {max_sub_groups}")
        print(f"  sub-group extensions {' '.join(extensions)}")
        count += 1
assert count > 0, "no OpenCL device"
