/* Work split of the shifted forward and weight gradient (shift_conv.inc). */
#ifndef CC_SHIFT_PLAN_H
#define CC_SHIFT_PLAN_H

#include "cconv.h"
#include "gemm_plan.h"

/* Target wide columns per C tile, and the band buffer's size cap. */
#define CC_SHIFT_COLS 1024
#define CC_SHIFT_BAND_BYTES ((int64_t)1 << 20)

typedef struct cc_shift_plan {
    int nt;
    int64_t cig, cog;
    int64_t R, Wt;          /* output rows and columns per tile */
    int64_t nh, nw;         /* tiles along H and W */
    int64_t chunk, nchunks; /* output channels per item */
    int64_t items;
    int64_t band_elems;     /* band buffer, per thread */
    int64_t per_thread;     /* band + C tile */
    int64_t wt_elems;       /* weight by tap, shared */
    int64_t seg_tiles, nseg; /* weight gradient: tiles per segment, segments */
    int64_t cigp;           /* weight gradient: input channels padded to whole vectors */
    int64_t part_elems;     /* weight gradient: one segment's partial sum */
} cc_shift_plan;

/* What the weight gradient's shifted products can run: any stride (the
 * kernel steps through the band by the strides), input channels. */
static inline int cc_shift_wgrad_applies(const cc_geom *g) {
    return g->c_in >= g->groups && g->c_in > 0;
}

/* What the shifted forward GEMMs can run: that, at stride 1 everywhere. */
static inline int cc_shift_applies(const cc_geom *g) {
    return g->stride[0] == 1 && g->stride[1] == 1 && g->stride[2] == 1 &&
           cc_shift_wgrad_applies(g);
}

/* Where the defaults want them (the forward here, the weight gradient in
 * gemm_conv.c): several taps, >= min_cig input channels per group for the
 * per-tap products to run at speed, `positions` >= 256 (the forward's per
 * image, the weight gradient's in the batch) and output rows wide enough
 * that the wide columns waste little; the caller checks the strides. */
static inline int cc_shift_shape_ok(const cc_geom *g, int64_t positions, int64_t min_cig) {
    const int64_t kk = g->k[0] * g->k[1] * g->k[2];
    const int64_t cig = g->c_in / g->groups;
    if (!cc_shift_wgrad_applies(g)) return 0;
    if (kk < 2 || cig < min_cig || positions < 256 || g->batch < 1) return 0;
    const int64_t extw = (g->k[2] - 1) * g->dil[2];
    return !(g->out[1] > 1 && g->out[2] < 3 * extw);
}

static inline int cc_shift_wanted(const cc_geom *g) {
    return cc_shift_applies(g) &&
           cc_shift_shape_ok(g, g->out[0] * g->out[1] * g->out[2], 16); /* per image */
}

static inline void cc_plan_shift(const cc_geom *g, int nthreads, int64_t elsize,
                                 cc_shift_plan *sp) {
    const int64_t Ho = g->out[1], Wo = g->out[2];
    const int64_t exth = (g->k[1] - 1) * g->dil[1], extw = (g->k[2] - 1) * g->dil[2];
    const int64_t kd = g->k[0];
    sp->nt = nthreads < 1 ? 1 : nthreads;
    sp->cig = g->c_in / g->groups;
    sp->cog = g->c_out / g->groups;
    int64_t R, Wt;
    if (Ho == 1 || Wo >= CC_SHIFT_COLS) {
        R = 1;
        Wt = cc_min64(Wo, CC_SHIFT_COLS);
    } else {
        Wt = Wo;
        R = cc_max64(1, cc_min64(Ho, CC_SHIFT_COLS / (Wo + extw)));
    }
    /* keep the band buffer near its cap: fewer rows, then narrower tiles */
    while (R > 1 && sp->cig * kd * (R + exth) * (Wt + extw) * elsize > CC_SHIFT_BAND_BYTES) --R;
    if (R == 1)
        while (Wt > 64 && sp->cig * kd * (1 + exth) * (Wt + extw) * elsize > CC_SHIFT_BAND_BYTES)
            Wt = (Wt + 1) / 2;
    sp->R = R;
    sp->Wt = Wt;
    sp->nh = cc_ceil_div(Ho, cc_max64(1, R));
    sp->nw = cc_ceil_div(Wo, cc_max64(1, Wt));
    const int64_t base = cc_max64(1, g->batch * g->groups * g->out[0] * sp->nh * sp->nw);
    /* (the split depends on the problem only: parallel.h) */
    const double macs = cc_geom_macs(g);
    const int64_t want = cc_items_wanted(macs, CC_GRAIN_GEMM);
    int64_t nch = 1;
    if (want > 1 && base < want && sp->cog >= 32)
        nch = cc_max64(1, cc_min64(cc_ceil_div(want, base), sp->cog / 16));
    sp->chunk = sp->cog > 0 ? cc_ceil_div(sp->cog, nch) : 1;
    sp->nchunks = sp->cog > 0 ? cc_ceil_div(sp->cog, sp->chunk) : 1;
    sp->items = g->batch * g->groups * g->out[0] * sp->nh * sp->nw * sp->nchunks;
    sp->nt = cc_threads_for(macs, CC_GRAIN_GEMM, sp->items, sp->nt);
    sp->band_elems = sp->cig * kd * (R + exth) * (Wt + extw);
    sp->per_thread = sp->band_elems + sp->chunk * ((R - 1) * (Wt + extw) + Wt);
    sp->wt_elems = g->c_out * sp->cig * g->k[0] * g->k[1] * g->k[2];
}

/* The weight gradient's partial sums: at most this many segments, and
 * together at most this many bytes (each is weight-sized). */
#define CC_SHIFT_WGRAD_SEGS 8
#define CC_SHIFT_WGRAD_PART_BYTES ((int64_t)16 << 20)
#define CC_SHIFT_WGRAD_MIN_ROWS 128

/* The weight gradient's split (shift_conv.inc): the forward's tiles, cut
 * into nseg segments of consecutive tiles (image-major), an item per
 * (segment, group, chunk of output channels).  Segments depend on the problem only, not on the
 * thread count, so neither does the order of the sums. */
static inline void cc_plan_shift_wgrad(const cc_geom *g, int nthreads, int64_t elsize,
                                       int64_t lanes, cc_shift_plan *sp) {
    cc_plan_shift(g, nthreads, elsize, sp);
    const int64_t kd = g->k[0], kk = g->k[0] * g->k[1] * g->k[2];
    /* the forward's tiles, sized for stride 1: with strides a tile's band
     * is cc_rows_in(R) rows of cc_cols_in(Wt) columns, kept near the band
     * cap as the forward's */
    while (sp->R > 1 &&
           sp->cig * kd * cc_rows_in(g, sp->R) * cc_cols_in(g, sp->Wt) * elsize > CC_SHIFT_BAND_BYTES)
        --sp->R;
    if (sp->R == 1)
        while (sp->Wt > 64 &&
               sp->cig * kd * cc_rows_in(g, 1) * cc_cols_in(g, sp->Wt) * elsize > CC_SHIFT_BAND_BYTES)
            sp->Wt = (sp->Wt + 1) / 2;
    sp->nh = cc_ceil_div(g->out[1], cc_max64(1, sp->R));
    sp->nw = cc_ceil_div(g->out[2], cc_max64(1, sp->Wt));
    const int64_t wbytes = cc_max64(1, g->c_out * sp->cig * kk * elsize);
    const double macs = cc_geom_macs(g);
    const int64_t want = cc_items_wanted(macs, CC_GRAIN_GEMM);
    /* output channels first (no partial sums: each item owns its rows of
     * gw), in chunks of at least CC_SHIFT_WGRAD_MIN_ROWS; then segments */
    const int64_t per_g = cc_ceil_div(want, cc_max64(1, g->groups));
    int64_t nch = cc_max64(1, cc_min64(per_g, sp->cog / CC_SHIFT_WGRAD_MIN_ROWS));
    sp->chunk = sp->cog > 0 ? cc_ceil_div(sp->cog, nch) : 1;
    sp->nchunks = sp->cog > 0 ? cc_ceil_div(sp->cog, sp->chunk) : 1;
    int64_t nseg = cc_ceil_div(per_g, sp->nchunks);
    nseg = cc_min64(nseg, CC_SHIFT_WGRAD_SEGS);
    nseg = cc_min64(nseg, cc_max64(1, CC_SHIFT_WGRAD_PART_BYTES / wbytes));
    /* row tiles of equal height, and as many as the segments want where
     * the images and depths give fewer (one 33x33 image: tiles of 27 and 6
     * rows made two threads wait on one) */
    const int64_t outer = g->batch * g->out[0] * sp->nw;
    int64_t nh = sp->nh;
    if (outer * nh < nseg) nh = cc_min64(g->out[1], cc_ceil_div(nseg, cc_max64(1, outer)));
    if (g->out[1] > 0 && nh > 0) {
        sp->R = cc_ceil_div(g->out[1], nh);
        sp->nh = cc_ceil_div(g->out[1], sp->R);
    }
    const int64_t ntiles = outer * sp->nh;
    nseg = cc_max64(1, cc_min64(nseg, ntiles));
    sp->seg_tiles = cc_max64(1, cc_ceil_div(ntiles, nseg));
    sp->nseg = cc_max64(1, cc_ceil_div(ntiles, sp->seg_tiles)); /* none empty */
    sp->items = sp->nseg * g->groups * sp->nchunks;
    sp->nt = cc_threads_for(macs, CC_GRAIN_GEMM, sp->items, nthreads < 1 ? 1 : nthreads);
    /* partial sums [segment][group][tap][co][ci padded to whole vectors:
     * the kernel writes whole vectors] */
    lanes = cc_max64(1, lanes);
    sp->cigp = cc_ceil_div(sp->cig, lanes) * lanes;
    sp->part_elems = g->groups * kk * sp->cog * sp->cigp;
    /* the band, transposed (a row of cigp channels per band position), and
     * the staging of one depth tap's input rows before they are spread
     * into it (shift_conv.inc) */
    const int64_t bpos = cc_rows_in(g, sp->R) * cc_cols_in(g, sp->Wt);
    sp->band_elems = g->k[0] * bpos * sp->cigp;
    sp->per_thread = sp->band_elems + bpos * sp->cigp;
    const int64_t fixed = sp->nseg * sp->part_elems;
    if (sp->nt > 1 && (fixed + sp->nt * sp->per_thread) * elsize > CC_WORKSPACE_CAP)
        sp->nt = (int)cc_max64(1, (CC_WORKSPACE_CAP / elsize - fixed) / sp->per_thread);
}

#endif
