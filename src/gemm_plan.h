/*
 * How a GEMM convolution is split into work: shared by the kernels and by
 * the *_workspace functions, so the scratch size asked for is the one used.
 *
 * Two schedules, never nested (build-notes.md section 4):
 *   omp  - an OpenMP loop over work items (batch x group x tile), each item
 *          doing its own im2col/col2im and a single-threaded GEMM;
 *   seq  - items one after another, each GEMM threaded by OpenBLAS and the
 *          im2col/col2im copies split over channels by OpenMP.
 * omp is chosen when there are enough items to balance the threads.
 */
#ifndef CC_GEMM_PLAN_H
#define CC_GEMM_PLAN_H

#include <stdint.h>

#include "cconv.h"

typedef struct cc_plan {
    int omp;        /* 1: OpenMP over items, 0: sequential + threaded BLAS */
    int nt;         /* threads */
    int direct;     /* 1x1, stride 1, no padding: no im2col at all */
    int64_t kk;     /* taps per channel: k0*k1*k2 */
    int64_t cig;    /* input channels per group */
    int64_t cog;    /* output channels per group */
    int64_t P;      /* output positions per image */
    int64_t nin;    /* input positions per image */
    int64_t ncols;  /* columns per tile */
    int64_t ntiles; /* tiles per image */
    int64_t chunk;  /* channels per chunk (adjoint: input channels) */
    int64_t nchunks;
    int64_t items;  /* batch * groups * ntiles (or * nchunks) */
    int64_t ws_per_thread; /* elements */
    int64_t ws_threads;    /* how many per-thread slabs */
} cc_plan;

static inline int64_t cc_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static inline int cc_is_direct(const cc_geom *g) {
    for (int d = 0; d < 3; ++d)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0 || g->in[d] != g->out[d])
            return 0;
    return 1;
}

static inline void cc_plan_common(const cc_geom *g, int nthreads, cc_plan *pl) {
    pl->nt = nthreads < 1 ? 1 : nthreads;
    pl->direct = cc_is_direct(g);
    pl->kk = g->k[0] * g->k[1] * g->k[2];
    pl->cig = g->c_in / g->groups;
    pl->cog = g->c_out / g->groups;
    pl->P = g->out[0] * g->out[1] * g->out[2];
    pl->nin = g->in[0] * g->in[1] * g->in[2];
    pl->chunk = pl->cig;
    pl->nchunks = 1;
}

/* Column tiling for fwd and wgrad: tiles over the output positions. */
static inline void cc_plan_cols(const cc_geom *g, int nthreads, int64_t elsize,
                                cc_plan *pl) {
    cc_plan_common(g, nthreads, pl);
    const int64_t K = pl->cig * pl->kk;
    const int64_t base = g->batch * g->groups;
    const int64_t P = pl->P > 0 ? pl->P : 1;
    int64_t maxcols = P;
    if (!pl->direct && K > 0) {
        int64_t budget = CC_WORKSPACE_CAP / pl->nt / elsize / K;
        if (budget < 64) budget = 64;
        if (budget < maxcols) maxcols = budget;
    }
    int64_t ntiles = cc_ceil_div(P, maxcols);
    const int64_t want = 2 * (int64_t)pl->nt;
    if (pl->nt > 1 && base * ntiles < want) {
        int64_t t = cc_ceil_div(want, base);
        int64_t tmax = P / 96 > 1 ? P / 96 : 1; /* keep tiles >= ~96 columns */
        if (t > tmax) t = tmax;
        if (t > ntiles) ntiles = t;
    }
    pl->ncols = cc_ceil_div(P, ntiles);
    pl->ntiles = cc_ceil_div(P, pl->ncols);
    pl->items = base * pl->ntiles;
    pl->omp = pl->nt > 1 && (pl->items >= 2 * (int64_t)pl->nt ||
                             (pl->items >= pl->nt && pl->items % pl->nt == 0));
    if (!pl->omp) {
        /* Sequential: one tile as large as the cap allows. */
        int64_t cols = P;
        if (!pl->direct && K > 0) {
            int64_t budget = CC_WORKSPACE_CAP / elsize / K;
            if (budget < 64) budget = 64;
            if (budget < cols) cols = budget;
        }
        pl->ncols = cols;
        pl->ntiles = cc_ceil_div(P, cols);
        pl->items = base * pl->ntiles;
    }
    pl->ws_per_thread = pl->direct ? 0 : K * pl->ncols;
    pl->ws_threads = pl->omp ? pl->nt : 1;
}

/* Adjoint: items are batch x group x chunk of input channels, so that two
 * threads never add into the same image rows; tiles run inside an item. */
static inline void cc_plan_adj(const cc_geom *g, int nthreads, int64_t elsize,
                               cc_plan *pl) {
    cc_plan_common(g, nthreads, pl);
    const int64_t base = g->batch * g->groups;
    const int64_t want = 2 * (int64_t)pl->nt;
    int64_t nch = 1;
    if (pl->nt > 1 && base < want && pl->cig > 1) {
        nch = cc_ceil_div(want, base);
        if (nch > pl->cig) nch = pl->cig;
    }
    pl->chunk = pl->cig > 0 ? cc_ceil_div(pl->cig, nch) : 1;
    pl->nchunks = pl->cig > 0 ? cc_ceil_div(pl->cig, pl->chunk) : 1;
    pl->items = base * pl->nchunks;
    pl->omp = pl->nt > 1 && (pl->items >= 2 * (int64_t)pl->nt ||
                             (pl->items >= pl->nt && pl->items % pl->nt == 0));
    const int64_t rows = (pl->omp ? pl->chunk : pl->cig) * pl->kk;
    const int64_t P = pl->P > 0 ? pl->P : 1;
    int64_t cols = P;
    if (!pl->direct && rows > 0) {
        int64_t budget = CC_WORKSPACE_CAP / (pl->omp ? pl->nt : 1) / elsize / rows;
        if (budget < 64) budget = 64;
        if (budget < cols) cols = budget;
    }
    pl->ncols = cols;
    pl->ntiles = cc_ceil_div(P, cols);
    pl->ws_per_thread = pl->direct ? 0 : rows * pl->ncols;
    pl->ws_threads = pl->omp ? pl->nt : 1;
}

#endif
