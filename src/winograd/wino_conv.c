/* Winograd F(2x2, 3x3) forward (wino_conv.h), float32 and float64
 * (wino_conv.inc), and its workspace. */
#include <stdint.h>
#include <string.h>
#include "core/omp_compat.h"

#include "cconv.h"
#include "core/nonfinite.h"
#include "igemm/igemm.h"
#include "wino_conv.h"

#include "igemm/ig_loops.h"
#define CC_TEMPLATE "winograd/wino_conv.inc"
#include "core/instances.h"

int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_wino_applies(g) || (elsize != 4 && elsize != 8)) return -1;
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
