/* Depthwise forward: the OpenMP driver around the row kernels. */
#include "dw_internal.h"

int cc_dw_fwd_path(const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_geom_ok(g) || (elsize != 4 && elsize != 8))
        return -1;
    dw_dims d;
    dw_dims_get(g, &d);
    if (cc_dw_cl_wanted(&d, elsize))
        return CC_DW_PATH_CL;
    return dw_plane3_spec(&d) ? CC_DW_PATH_PLANE : CC_DW_PATH_ROWS;
}

#define CC_TEMPLATE "depthwise/dw_fwd.inc"
#include "core/instances.h"
