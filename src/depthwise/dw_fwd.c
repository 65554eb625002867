/* Depthwise forward: the OpenMP driver around the row kernels. */
#include "dw_internal.h"

int cc_dw_fwd_applies(int path, const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_geom_ok(g) || (elsize != 4 && elsize != 8))
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    switch (path) {
    case CC_DW_PATH_ROWS:
        return 1;
    case CC_DW_PATH_PLANE:
        return dw_plane_spec(&d);
    case CC_DW_PATH_CL:
        return cc_dw_cl_applies(&d, elsize);
    default:
        return 0;
    }
}

int cc_dw_fwd_wanted(int path, const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_fwd_applies(path, g, elsize))
        return 0;
    if (path != CC_DW_PATH_CL)
        return 1;
    dw_dims d;
    dw_dims_get(g, &d);
    return cc_dw_cl_wanted(&d, elsize);
}

int cc_dw_fwd_parallel(const cc_geom *g)
{
    if (!cc_dw_geom_ok(g))
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    const double cost = dw_fwd_cost(&d);
    return d.N * d.C * dw_fwd_blocks(&d, cost, 1) >= dw_split(cost);
}

#define CC_TEMPLATE "depthwise/dw_fwd.inc"
#include "core/instances.h"
