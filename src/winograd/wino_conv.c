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
#include "core/claim.h"

#include "igemm/ig_loops.h"
#define CC_TEMPLATE "winograd/wino1d.inc"
#include "core/instances.h"
#define CC_TEMPLATE "winograd/wino_conv.inc"
#include "core/instances.h"

/* The micro-kernel table's MR, NR and lanes for the element size. */
static void kern_dims(int64_t elsize, int *mr, int *nr, int *lanes) {
    if (elsize == 4)
        *mr = cc_ig_kern_f32()->mr, *nr = cc_ig_kern_f32()->nr, *lanes = cc_ig_kern_f32()->lanes;
    else
        *mr = cc_ig_kern_f64()->mr, *nr = cc_ig_kern_f64()->nr, *lanes = cc_ig_kern_f64()->lanes;
}

int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    if (elsize != 4 && elsize != 8) return -1;
    int mr, nr, lanes;
    kern_dims(elsize, &mr, &nr, &lanes);
    int64_t b;
    if (cc_wino1d_applies(g)) {
        w1_plan p;
        w1_plan_make(g, nthreads, mr, nr, lanes, elsize, &p);
        b = w1_plan_bytes(&p, elsize);
    } else if (cc_wino_applies(g)) {
        iw_plan p;
        iw_plan_make(g, nthreads, mr, nr, lanes, elsize, &p);
        b = iw_plan_bytes(&p, elsize);
    } else {
        return -1;
    }
    return b < 0 || b > CC_WORKSPACE_CAP ? -1 : b;
}

int64_t cc_conv_fwd_wino_phased(const cc_geom *g, int nthreads, int64_t elsize) {
    if ((elsize != 4 && elsize != 8) || cc_wino1d_applies(g) || !cc_wino_applies(g)) return 0;
    int mr, nr, lanes;
    kern_dims(elsize, &mr, &nr, &lanes);
    iw_plan p;
    iw_plan_make(g, nthreads, mr, nr, lanes, elsize, &p);
    return p.phased ? p.bs : 0;
}
