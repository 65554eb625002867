/* Stride-1 forward convolution and weight gradient by one GEMM per kernel
 * tap over a padded band of input rows (no im2col); see shift_conv.inc. */
#include <string.h>
#include "core/omp_compat.h"

#include "core/blas.h"
#include "gemm/gemm_small.h"
#include "cconv.h"
#include "core/nonfinite.h"
#include "shift_plan.h"
#include "shift_conv.h"

#define CC_TEMPLATE "gemm/shift_conv.inc"
#include "core/instances.h"

int64_t cc_conv_fwd_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    cc_shift_plan sp;
    cc_plan_shift(g, nthreads, elsize, &sp);
    return (sp.wt_elems + sp.per_thread * sp.nt) * elsize;
}

int64_t cc_conv_wgrad_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    cc_shift_plan sp;
    cc_plan_shift_wgrad(g, nthreads, elsize, &sp);
    const int64_t b = (sp.nseg * g->c_out * sp.cig * g->k[0] * g->k[1] * g->k[2] +
                       sp.per_thread * sp.nt) * elsize;
    return b > CC_WORKSPACE_CAP ? -1 : b;
}
