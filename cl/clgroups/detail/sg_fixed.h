/* clgroups internal: geometry of fixed-width sub-groups (CLG_SUB_GROUP_SIZE = S > 0), computed from the
 * linear local id so partial last sub-groups are right whatever the runtime reports.
 * Needs clg_sg_id() from the backend. */
#ifndef CLGROUPS_DETAIL_SG_FIXED_H
#define CLGROUPS_DETAIL_SG_FIXED_H

CLG_FN uint clg_max_range(void) { return CLG_SUB_GROUP_SIZE; }
CLG_FN uint clg_range(void) { return min((uint)CLG_SUB_GROUP_SIZE, clg_wg_size() - clg_sg_id() * CLG_SUB_GROUP_SIZE); }
CLG_FN uint clg_sg_count(void) { return (clg_wg_size() + CLG_SUB_GROUP_SIZE - 1) / CLG_SUB_GROUP_SIZE; }

#endif
