/* Winograd F(2x2, 3x3) forward (wino_conv.h) and 1-D F(2, 3) (wino1d.h),
 * float32 and float64 (wino_conv.inc, wino1d.inc), and their workspace. */
#include <stdint.h>
#include <string.h>
#include "core/omp_compat.h"

#include "cconv.h"
#include "core/nonfinite.h"
#include "igemm/igemm.h"
#include "wino_conv.h"
#include "wino1d.h"

#include "igemm/ig_loops.h"
#define CC_TEMPLATE "winograd/wino1d.inc"
#include "core/instances.h"
#define CC_TEMPLATE "winograd/wino_conv.inc"
#include "core/instances.h"

static int64_t w1_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    w1_plan p;
    if (elsize == 4)
        w1_plan_make(g, nthreads, cc_ig_kern_f32()->mr, cc_ig_kern_f32()->nr,
                     cc_ig_kern_f32()->lanes, elsize, &p);
    else
        w1_plan_make(g, nthreads, cc_ig_kern_f64()->mr, cc_ig_kern_f64()->nr,
                     cc_ig_kern_f64()->lanes, elsize, &p);
    const int64_t b = w1_plan_bytes(&p, elsize);
    return b < 0 || b > CC_WORKSPACE_CAP ? -1 : b;
}

int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    if (elsize != 4 && elsize != 8) return -1;
    if (cc_wino1d_applies(g)) return w1_workspace(g, nthreads, elsize);
    if (!cc_wino_applies(g)) return -1;
    iw_plan p;
    if (elsize == 4)
        iw_plan_make(g, nthreads, cc_ig_kern_f32()->mr, cc_ig_kern_f32()->nr,
                     cc_ig_kern_f32()->lanes, elsize, &p);
    else
        iw_plan_make(g, nthreads, cc_ig_kern_f64()->mr, cc_ig_kern_f64()->nr,
                     cc_ig_kern_f64()->lanes, elsize, &p);
    const int64_t b = iw_plan_bytes(&p, elsize);
    return b > CC_WORKSPACE_CAP ? -1 : b;
}
