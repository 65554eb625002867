/*
 * cc_wdw_fwd_f32 (winograd.h): the driver.  Work items are (image, channel,
 * block of output rows); an item runs the ISA's plane kernel on its rows
 * (which transforms the channel's filter, computes each input row's
 * horizontal transform once into a ring of row slots and runs the row
 * kernel on blocks of output rows, zero rows for the padding).
 */
#include "wdw_internal.h"

#include <stdint.h>

#include "core/alloc.h"
#include "core/claim.h"
#include "core/parallel.h"

static inline int64_t wdw_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t wdw_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t wdw_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* Zeroed floats (core/alloc.h); NULL on failure or overflow. */
static void *wdw_zalloc(int64_t floats)
{
    return floats > (int64_t)(PTRDIFF_MAX / 8) ? NULL : cc_zalloc64(floats * (int64_t)sizeof(float));
}

/* Work (multiply-adds of the direct form) per thread, at least
 * (parallel.h: the depthwise grain, in dw_cost's units, of which a
 * multiply-add is one). */
#define WDW_MIN_PARALLEL_WORK CC_GRAIN_DW

int cc_wdw_fwd_f32(const cc_geom *g, const float *x, const float *w,
                   const float *bias, float *y, int nthreads, int *nonfinite)
{
    if (nonfinite)
        *nonfinite = 0;
    if (!cc_wdw_geom_ok(g))
        return CC_ERR_ARG;
    const int64_t N = g->batch, C = g->c_in;
    const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
    const int64_t ph = g->pad[1], pw = g->pad[2];
    if (N == 0)
        return CC_OK;
    if (!x || !w || !y)
        return CC_ERR_ARG;
    const wdw_kern *isa = cc_wdw_kern_f32();
    const int64_t v = isa->v;
    const int64_t TW = (OW + 1) / 2;
    const int64_t ntw = wdw_cdiv(TW, v) * v; /* tile columns hrow computes */
    const int64_t hs = ntw;                  /* stride between H_k arrays */
    const int64_t hrow_floats = 4 * hs;

    /* threads and work items */
    const int64_t items0 = N * C;
    const double work = (double)items0 * (double)OH * (double)OW * 9.0;
    /* blocks planned for the split threads, never for nthreads (parallel.h) */
    const int64_t want = 2 * cc_items_wanted(work, WDW_MIN_PARALLEL_WORK);
    int64_t nblk = 1;
    if (want > 2 && items0 < want)
        nblk = wdw_max(1, wdw_min(wdw_cdiv(want, items0), OH / 8));
    /* even blocks: the scalar kernel pairs rows into tiles from the block
     * start, so the same rows pair up whatever the thread count */
    const int64_t brows = 2 * wdw_cdiv(wdw_cdiv(OH, nblk), 2);
    nblk = wdw_cdiv(OH, brows);
    const int64_t nitems = items0 * nblk;
    const int nt = cc_threads_for(work, WDW_MIN_PARALLEL_WORK, nitems, nthreads);

    float *zrow = (float *)wdw_zalloc(hrow_floats);
    cc_claims claims; /* owner-first (core/claim.h) */
    if (!zrow || cc_claims_init(&claims, nt, nitems) != 0) {
        free(zrow);
        return CC_ERR_NOMEM;
    }

    int err = CC_OK, bad = 0;
    const cc_stop_t stop = cc_stop_flag();
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : bad)
    {
        /* the ring of hrow slots, then the kernel's scratch */
        float *ring = (float *)wdw_zalloc(WDW_RING * hrow_floats +
                                          WDW_SCRATCH / (int64_t)sizeof(float));
        void *scratch = ring ? (void *)(ring + WDW_RING * hrow_floats) : NULL;
        int ready = 0;
        if (!ring) {
#pragma omp atomic write
            err = CC_ERR_NOMEM;
        }
        cc_claimer me = cc_claimer_here(&claims);
        for (int64_t it; (it = cc_claim(&me)) >= 0;) {
            if (!ring || CC_STOPPED(stop))
                continue;
            const int64_t b = it % nblk, nc = it / nblk, c = nc % C;
            const int64_t oh0 = b * brows, oh1 = wdw_min(OH, oh0 + brows);
            const float *xc = x + nc * IH * IW;
            float *yc = y + nc * OH * OW;
            const wdw_plane pl = {xc, yc, IH, IW, OH, OW, ph, pw, oh0, oh1, ntw, hs,
                                  w + c * 9, bias ? bias[c] : 0.0f, ring, zrow,
                                  scratch, &ready};
            bad |= isa->plane(&pl);
        }
        free(ring);
    }
    cc_claims_free(&claims);
    free(zrow);
    if (nonfinite)
        *nonfinite = bad;
    return err;
}
