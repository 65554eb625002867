/* Work split of the channels-last forward (nhwc_conv.inc).
 *
 * The output pixels of all images form one row range [0, M), M = batch * P;
 * a work item is (group, tile of rows).  Tiles may straddle images, so many
 * small images (late ResNet stages) still make GEMMs with enough rows, with
 * no batching logic of their own.  Split and schedule as in gemm_plan.h:
 * the items depend on the problem only, an OpenMP loop runs them (none on
 * one thread), every GEMM single-threaded. */
#ifndef CC_NHWC_PLAN_H
#define CC_NHWC_PLAN_H

#include "cconv.h"
#include "gemm/gemm_plan.h"

/* Per-thread col tile: at least CC_NHWC_TILE_ROWS rows (every GEMM call
 * packs the whole weight of its group again, so a tile of few rows would
 * spend its time packing), more while it stays under CC_NHWC_TILE_BYTES,
 * never over CC_NHWC_SLAB_MAX_BYTES. */
#ifndef CC_NHWC_TILE_ROWS
#define CC_NHWC_TILE_ROWS 256
#endif
#ifndef CC_NHWC_TILE_BYTES
#define CC_NHWC_TILE_BYTES ((int64_t)1 << 20)
#endif
#define CC_NHWC_SLAB_MAX_BYTES ((int64_t)8 << 20)
/* Tap-major col when rows >= this * c_out. */
#define CC_NHWC_TAPMAJOR_ROWS 2
/* Fewest rows per tile when splitting for threads. */
#define CC_NHWC_MIN_ROWS 64

typedef struct cc_nhwc_plan {
    int nt, omp, direct;
    int tapmajor;            /* col columns (t, ci), weight reordered */
    int64_t kk, cig, cog, K; /* K = kk * cig */
    int64_t P, M;            /* pixels per image, batch * P */
    int64_t rows, ntiles, items;
    int64_t chunk, nchunks;  /* output channels per item (few rows, threads) */
    int64_t wt_elems;        /* reordered weight (0 when kk == 1), shared */
    int64_t slab_elems;      /* col tile per thread (0 when direct) */
} cc_nhwc_plan;

static inline void cc_plan_nhwc(const cc_geom *g, int nthreads, int64_t elsize,
                                cc_nhwc_plan *pl) {
    pl->nt = nthreads < 1 ? 1 : nthreads;
    pl->kk = g->k[0] * g->k[1] * g->k[2];
    pl->cig = g->c_in / g->groups;
    pl->cog = g->c_out / g->groups;
    pl->K = pl->kk * pl->cig;
    pl->P = g->out[0] * g->out[1] * g->out[2];
    pl->M = g->batch * pl->P;
    pl->direct = cc_is_1x1(g);
    const int64_t M = pl->M > 0 ? pl->M : 1;
    int64_t cap = M;
    if (!pl->direct && pl->K > 0) {
        const int64_t want_rows = cc_max64(CC_NHWC_TILE_ROWS, CC_NHWC_TILE_BYTES / elsize / pl->K);
        const int64_t mem_rows = cc_max64(16, CC_NHWC_SLAB_MAX_BYTES / elsize / pl->K);
        cap = cc_min64(M, cc_min64(want_rows, mem_rows));
    }
    int64_t ntiles = cc_ceil_div(M, cap);
    const double macs = cc_geom_macs(g);
    const int64_t want = cc_items_wanted(macs, CC_GRAIN_GEMM);
    if (want > 1 && g->groups * ntiles < want) {
        const int64_t t = cc_min64(cc_ceil_div(want, g->groups),
                                   cc_max64(1, M / CC_NHWC_MIN_ROWS));
        if (t > ntiles) ntiles = t;
    }
    pl->rows = cc_ceil_div(M, ntiles);
    pl->ntiles = cc_ceil_div(M, pl->rows);
    /* too few tiles for the threads (few output pixels): split the output
     * channels too; each chunk redoes its tile's col, which is small then */
    int64_t nch = 1;
    if (want > 1 && g->groups * pl->ntiles < want && pl->cog >= 32)
        nch = cc_max64(1, cc_min64(cc_ceil_div(want, g->groups * pl->ntiles), pl->cog / 16));
    pl->chunk = pl->cog > 0 ? cc_ceil_div(pl->cog, nch) : 1;
    pl->nchunks = pl->cog > 0 ? cc_ceil_div(pl->cog, pl->chunk) : 1;
    pl->items = g->groups * pl->ntiles * pl->nchunks;
    pl->nt = cc_threads_for(macs, CC_GRAIN_GEMM, pl->items, pl->nt);
    pl->omp = pl->nt > 1;
    /* reordering the weight costs c_out * K scattered writes, a
     * channel-major col M * K of them: tap-major pays off with many rows */
    pl->tapmajor = pl->kk > 1 && !pl->direct && pl->M >= CC_NHWC_TAPMAJOR_ROWS * g->c_out;
    pl->wt_elems = pl->tapmajor ? g->c_out * pl->K : 0;
    pl->slab_elems = pl->direct ? 0 : pl->rows * pl->K;
}

static inline int64_t cc_nhwc_ws_elems(const cc_nhwc_plan *pl) {
    return pl->wt_elems + pl->slab_elems * (pl->omp ? pl->nt : 1);
}

#endif
