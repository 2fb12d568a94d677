/* clgroups internal: geometry of fixed-width sub-groups (CLG_SUB_GROUP_SIZE = S > 0), computed from the
 * linear local id so partial last sub-groups are right whatever the runtime reports.
 * Needs clg_sg_id() from the backend. */
#ifndef CLGROUPS_DETAIL_SG_FIXED_H
#define CLGROUPS_DETAIL_SG_FIXED_H

/* The largest sub-group of the launch (OpenCL's get_max_sub_group_size, SYCL's get_max_local_range):
 * never above the work-group size, so a work-group of W < S items has one sub-group of W. */
CLG_FN uint clg_max_range(void) { return min((uint)CLG_SUB_GROUP_SIZE, clg_wg_size()); }
CLG_FN uint clg_range(void) { return min((uint)CLG_SUB_GROUP_SIZE, clg_wg_size() - clg_sg_id() * CLG_SUB_GROUP_SIZE); }
CLG_FN uint clg_sg_count(void) { return (clg_wg_size() + CLG_SUB_GROUP_SIZE - 1) / CLG_SUB_GROUP_SIZE; }

#endif
