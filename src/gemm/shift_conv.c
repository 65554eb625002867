/* Stride-1 forward convolution by one GEMM per kernel tap over a padded
 * band of input rows, and the weight gradient by per-tap products over the
 * band transposed on the instruction set's kernel (no im2col either way);
 * see shift_conv.inc. */
#include <string.h>
#include "core/omp_compat.h"

#include "core/blas.h"
#include "gemm/gemm_small.h"
#include "cconv.h"
#include "shift_plan.h"
#include "shift_conv.h"
#include "igemm/igemm.h"
#include "transpose/tr_internal.h"

#define CC_TEMPLATE "gemm/shift_conv.inc"
#include "core/instances.h"

int64_t cc_conv_fwd_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    cc_shift_plan sp;
    cc_plan_shift(g, nthreads, elsize, &sp);
    return (sp.wt_elems + sp.per_thread * sp.nt) * elsize;
}

int64_t cc_conv_wgrad_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    cc_shift_plan sp;
    cc_plan_shift_wgrad(g, nthreads, elsize, cc_ig_lanes(elsize), &sp);
    const int64_t b = (sp.nseg * sp.part_elems + sp.per_thread * sp.nt) * elsize;
    return b > CC_WORKSPACE_CAP ? -1 : b;
}
