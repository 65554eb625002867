/*
 * 3x3 stride-1 convolution by Winograd F(2x2, 3x3) (ig_wino.c), on the
 * implicit GEMM's micro-kernels.  2-D (depth 1), kernel 3x3, stride 1,
 * dilation 1, any padding and groups, float32 and float64.
 *
 * The output is cut into 2x2 tiles, row-major over the plane (tw tiles per
 * row; tiles past the bottom or right edge are computed and clipped).
 * With U = G g G^T (4x4 per output/input channel pair, G = [1 0 0; 1/2 1/2
 * 1/2; 1/2 -1/2 1/2; 0 0 1]) and V = B^T d B of each tile's 4x4 input
 * window d, the 16 elements xi of the transformed domain are 16 matrix
 * products per group, M_xi (cog x tiles) = U_xi (cog x cig) V_xi (cig x
 * tiles), and the tile is Y = A^T M A + bias.  That is 16 multiply-adds per
 * tile and channel pair against 36 for the direct product.
 *
 * U is made once per call in the micro-kernel's A-panel layout (MR rows,
 * k-major), per (group, xi).  A work item is (image, group, panel of NR
 * tiles): its input transform writes V as B panels, vb[(xi * cig + ci) *
 * NR + j], 16 x ceil(cog / MR) micro-kernel calls write M, m[(xi * cog_pad
 * + co) * NR + j], and the output transform writes the tiles.  OpenMP over
 * the items.
 */
#ifndef CC_IG_WINO_H
#define CC_IG_WINO_H
#include "cconv.h"
#include "ig_plan.h"

typedef struct iw_plan {
    int nt, mr, nr;
    int64_t cig, cog, mpan;     /* channels per group; MR panels per group */
    int64_t th, tw, ntiles;     /* 2x2 tiles: rows, per row, per image */
    int64_t npanels, items;     /* NR-tile panels per image; items */
    int64_t ap_elems;           /* U, all groups and xi */
    int64_t vb_elems, mb_elems; /* per thread: V and M of one panel */
    int64_t es_elems;           /* per thread: 8 split input rows */
    int64_t per_thread;
} iw_plan;

/* 2-D 3x3 stride 1 dilation 1 (the geometry padded to 3-D: depth 1). */
static inline int cc_wino_applies(const cc_geom *g) {
    return cc_geom_valid(g) && g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 &&
           g->k[1] == 3 && g->k[2] == 3 && g->stride[1] == 1 && g->stride[2] == 1 &&
           g->dil[1] == 1 && g->dil[2] == 1 && g->pad[1] >= 0 && g->pad[2] >= 0 &&
           g->out[1] > 0 && g->out[2] > 0;
}

static inline void iw_plan_make(const cc_geom *g, int nthreads, int mr, int nr, iw_plan *p) {
    p->nt = nthreads < 1 ? 1 : nthreads;
    p->mr = mr;
    p->nr = nr;
    p->cig = g->c_in / g->groups;
    p->cog = g->c_out / g->groups;
    p->mpan = cc_ceil_div(p->cog, mr);
    p->th = cc_ceil_div(g->out[1], 2);
    p->tw = cc_ceil_div(g->out[2], 2);
    p->ntiles = p->th * p->tw;
    p->npanels = cc_ceil_div(p->ntiles, nr);
    p->items = g->batch * g->groups * p->npanels;
    if (p->items < p->nt) p->nt = (int)(p->items > 0 ? p->items : 1);
    p->ap_elems = g->groups * 16 * p->mpan * mr * p->cig;
    p->vb_elems = ig_round_up(16 * p->cig * nr, 16);
    p->mb_elems = ig_round_up(16 * p->mpan * mr * nr, 16);
    p->es_elems = ig_round_up(8 * (p->tw + 2), 16); /* >= 2 rows of 2 (tw + 1) */
    p->per_thread = p->vb_elems + p->mb_elems + p->es_elems;
}

static inline int64_t iw_plan_bytes(const iw_plan *p, int64_t elsize) {
    return ig_round_up(p->ap_elems * elsize, 64) + (int64_t)p->nt * p->per_thread * elsize + 64;
}
#endif
