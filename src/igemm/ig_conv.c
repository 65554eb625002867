/* Implicit-GEMM forward convolution, float32 and float64 (ig_conv.inc),
 * and the rule for when it runs. */
#include <string.h>
#include "core/omp_compat.h"

#include "cconv.h"
#include "igemm.h"
#include "ig_plan.h"

#include "ig_loops.h"
#include "core/claim.h"
#define CC_TEMPLATE "igemm/ig_conv.inc"
#include "core/instances.h"

/* The plan of the kernel set in use for elements of elsize bytes. */
static void ig_plan_for(const cc_geom *g, int nthreads, int64_t elsize, ig_plan *p) {
    if (elsize == 4)
        ig_plan_make(g, nthreads, 4, cc_ig_kern_f32()->mr, cc_ig_kern_f32()->nr,
                     cc_ig_kern_f32()->lanes, p);
    else
        ig_plan_make(g, nthreads, 8, cc_ig_kern_f64()->mr, cc_ig_kern_f64()->nr,
                     cc_ig_kern_f64()->lanes, p);
}

/* The workspace bytes of g's plan (made into *p), 0 when there is nothing
 * to compute (p not made), -1 when the implicit GEMM cannot run it. */
static int64_t ig_plan_checked(const cc_geom *g, int nthreads, int64_t elsize, ig_plan *p) {
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return -1;
    if (g->batch == 0 || g->c_in == 0 || g->c_out == 0 || g->out[0] * g->out[1] * g->out[2] == 0)
        return 0;
    ig_plan_for(g, nthreads, elsize, p);
    if (!p->ok) return -1;
    const int64_t b = ig_plan_bytes(p, elsize);
    return b > CC_WORKSPACE_CAP ? -1 : b;
}

int64_t cc_conv_fwd_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    ig_plan p;
    return ig_plan_checked(g, nthreads, elsize, &p);
}

int cc_conv_fwd_igemm_inplace(const cc_geom *g, int64_t elsize) {
    ig_plan p; /* (the plan's modes do not depend on the threads) */
    return ig_plan_checked(g, 1, elsize, &p) > 0 && p.inplace;
}
