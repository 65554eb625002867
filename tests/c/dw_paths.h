/* The depthwise forward path cconv's default choice takes (the Python
 * dispatcher's order: channels-last blocks, plane kernels, row kernel),
 * for the C benchmarks. */
#ifndef DW_PATHS_H
#define DW_PATHS_H
/* (included after depthwise.h) */

static inline int dw_default_path(const cc_geom *g, int64_t elsize)
{
    if (cc_dw_fwd_wanted(CC_DW_PATH_CL, g, elsize))
        return CC_DW_PATH_CL;
    if (cc_dw_fwd_wanted(CC_DW_PATH_PLANE, g, elsize))
        return CC_DW_PATH_PLANE;
    return CC_DW_PATH_ROWS;
}
#endif
