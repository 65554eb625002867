/* Depthwise forward: the OpenMP driver around the row kernels. */
#include "dw_internal.h"
#include "core/claim.h"

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

int cc_dw_fwd_flat(const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_fwd_applies(CC_DW_PATH_PLANE, g, elsize))
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    /* the driver's row blocks and plane kernels (dw_fwd.inc) */
    int R, lanes;
    if (elsize == 4) {
        const dw_kern_f32 *kp = cc_dw_plane_kern_f32(&d);
        R = kp->rk_r, lanes = kp->lanes;
    } else {
        const dw_kern_f64 *kp = cc_dw_plane_kern_f64(&d);
        R = kp->rk_r, lanes = kp->lanes;
    }
    const int64_t P = d.OD * d.OH;
    const int64_t brows = dw_cdiv(P, dw_fwd_blocks(&d, dw_fwd_cost(&d), R));
    return P > 0 && dw_flat_use(&d, brows, lanes);
}

int cc_dw_fwd_direct(const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_fwd_applies(CC_DW_PATH_PLANE, g, elsize) || !cc_cpu_dw_direct())
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    if (d.KH != 3 || d.KW != 3 || d.sh != 1 || d.sw != 1 || d.dh != 1 || d.dw != 1)
        return 0;
    return elsize == 4 ? cc_dw_plane_kern_f32(&d)->direct : cc_dw_plane_kern_f64(&d)->direct;
}

#define CC_TEMPLATE "depthwise/dw_fwd.inc"
#include "core/instances.h"
