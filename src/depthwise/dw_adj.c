/* Depthwise grad_input (adjoint): the OpenMP driver around the row kernels. */
#include "dw_internal.h"
#include "core/claim.h"

int cc_dw_adj_planes(const cc_geom *g)
{
    if (!cc_dw_geom_ok(g))
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    return dw_adj_planes(&d);
}

#define CC_TEMPLATE "depthwise/dw_adj.inc"
#include "core/instances.h"
