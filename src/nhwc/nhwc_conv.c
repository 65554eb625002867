/* Channels-last forward convolution: im2col with pixels as rows + GEMM;
 * see nhwc_conv.h.  The bodies are nhwc_conv.inc, the work split
 * nhwc_plan.h. */
#include <string.h>
#include "core/omp_compat.h"

#include "core/blas.h"
#include "gemm/gemm_small.h"
#include "cconv.h"
#include "nhwc_conv.h"
#include "nhwc_plan.h"

#define CC_TEMPLATE "nhwc/nhwc_conv.inc"
#include "core/instances.h"

int64_t cc_nhwc_fwd_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return -1;
    cc_nhwc_plan pl;
    cc_plan_nhwc(g, nthreads, elsize, &pl);
    return cc_nhwc_ws_elems(&pl) * elsize;
}
