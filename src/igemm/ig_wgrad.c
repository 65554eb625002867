/* Weight gradient of grouped convolutions with few output channels per
 * group on the implicit-GEMM band (ig_wgrad.inc), float32 and float64,
 * and the rule for when it runs. */
#include <string.h>
#include "core/omp_compat.h"

#include "cconv.h"
#include "igemm.h"
#include "ig_plan.h"

#include "ig_loops.h"
#define CC_TEMPLATE "igemm/ig_wgrad.inc"
#include "core/instances.h"

int cc_conv_wgrad_igemm_suits(const cc_geom *g, int64_t elsize) {
    /* few output channels per group: im2col + OpenBLAS there ran GEMMs of
     * <= 32 rows, and the im2col copy cost more than the product.  Grouped:
     * up to 32 per group; ungrouped: up to 8 (a GEMM of 16-32 rows is a
     * match for it there), never 1x1, which im2col reads in place; output
     * rows of at least one vector (7x7 planes: every row a masked load, and
     * im2col batches 8 images into one GEMM: measured slower; all in
     * benches/results/heuristics-2026-11-30-amd-epyc-avx2.md), or of 12 when a vector has
     * 16 lanes (AVX-512 float32: a 14-wide row is one masked load at 88% of
     * its lanes; ResNeXt 8x512x14x14 g32 2.3 -> 1.5x torch's time, 8x64x14x14
     * g4 1.8 -> 1.3x, batch-1 14x14 and 7x7 planes unchanged or worse:
     * benches/results/heuristics-2026-12-01-intel-xeon-avx512.md) */
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return 0;
    const int lanes = (int)cc_ig_lanes(elsize);
    const int64_t cog = g->c_out / g->groups;
    const int few = g->groups >= 2 ? cog <= IG_DIRECT_MAX_COG
                                   : cog <= IG_WGRAD_UNGROUPED_MAX_COG && !cc_is_1x1(g);
    return few && g->out[2] >= (lanes < 12 ? lanes : 12);
}

int64_t cc_conv_wgrad_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return -1;
    if (g->batch == 0 || g->c_in == 0 || g->c_out == 0 || g->out[0] * g->out[1] * g->out[2] == 0)
        return 0;
    ig_wplan w;
    if (elsize == 4) {
        const ig_kern_f32 *k = cc_ig_kern_f32();
        ig_wplan_make(g, nthreads, 4, k->mr, k->nr, k->mrw, k->nrw, k->lanes, &w);
    } else {
        const ig_kern_f64 *k = cc_ig_kern_f64();
        ig_wplan_make(g, nthreads, 8, k->mr, k->nr, k->mrw, k->nrw, k->lanes, &w);
    }
    if (!w.p.ok) return -1;
    const int64_t b = ig_wplan_bytes(&w, elsize);
    return b > CC_WORKSPACE_CAP ? -1 : b;
}
