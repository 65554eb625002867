/*
 * GEMM convolutions (forward, adjoint, weight gradient) for one element
 * type; included by gemm_conv.c with CC_T, CC_SFX and CC_GEMM defined.
 * Work split: gemm_plan.h.  Matrices per image n and group gi:
 *   W_g : cog x K          (K = cig * kk), row-major, the weight as stored
 *   col : K x ncols        im2col of one tile (or of nb small images)
 *   Y_g : cog x P          rows of y, row stride P
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)
#define CC_FN(name) CC_CAT(name, CC_SFX)

static int CC_FN(cc_ws_ok_)(const cc_plan *pl, int64_t extra, int64_t ws_bytes) {
    int64_t need = (pl->ws_per_thread + extra) * pl->ws_threads * (int64_t)sizeof(CC_T);
    return need <= ws_bytes;
}

/* Run items [0, pl->items) of a kernel: an OpenMP loop with single-threaded
 * GEMMs, or in order with OpenBLAS threading each GEMM. */
#define CC_RUN_ITEMS(pl, slab_elems, BODY)                                        \
    do {                                                                          \
        const int old_ = CC_BLAS_GET_THREADS();                                   \
        if ((pl).omp) {                                                           \
            CC_BLAS_SET_THREADS(1);                                               \
            _Pragma("omp parallel num_threads((pl).nt)") {                        \
                CC_T *slab = wsT ? wsT + (int64_t)omp_get_thread_num() * (slab_elems) \
                                 : NULL;                                          \
                _Pragma("omp for schedule(static)")                               \
                for (int64_t it = 0; it < (pl).items; ++it) { BODY; }             \
            }                                                                     \
        } else {                                                                  \
            CC_BLAS_SET_THREADS((pl).nt);                                         \
            CC_T *slab = wsT;                                                     \
            for (int64_t it = 0; it < (pl).items; ++it) { BODY; }                 \
        }                                                                         \
        CC_BLAS_SET_THREADS(old_);                                                \
    } while (0)

/* ------------------------------------------------------------------ fwd */
/* rows[co][0, np) += bias[co] for nc rows of stride P (no bias: nothing). */
static inline void CC_FN(cc_add_bias_)(CC_T *rows, int64_t P, int64_t nc, int64_t np,
                                      const CC_T *bias) {
    for (int64_t co = 0; bias && co < nc; ++co) {
        CC_T *row = rows + co * P;
        const CC_T b = bias[co];
        for (int64_t j = 0; j < np; ++j) row[j] += b;
    }
}

/* A block GEMM's result yt (nc rows of ld columns: nbi images of P
 * positions side by side) into the images' rows of y, starting at channel
 * c (absolute), with the bias. */
static inline void CC_FN(cc_scatter_block_)(const cc_geom *g, const CC_T *yt, int64_t ld,
                                           int64_t n0, int64_t nbi, int64_t c, int64_t nc,
                                           int64_t P, const CC_T *bias, CC_T *y) {
    for (int64_t j = 0; j < nbi; ++j)
        for (int64_t co = 0; co < nc; ++co) {
            CC_T *dst = y + ((n0 + j) * g->c_out + c + co) * P;
            const CC_T *src = yt + co * ld + j * P;
            const CC_T b = bias ? bias[co] : (CC_T)0;
            for (int64_t p = 0; p < P; ++p) dst[p] = src[p] + b;
        }
}

static inline void CC_FN(cc_fwd_item_)(const cc_geom *g, const cc_plan *pl,
                                      const CC_T *x, const CC_T *w,
                                      const CC_T *bias, CC_T *y, CC_T *slab,
                                      int64_t it) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin;
    const cc_item d = cc_decode(g, pl, it, pl->cog);
    if (d.nc <= 0 || d.nbi <= 0) return;
    const CC_T *wg = w + (d.gi * pl->cog + d.c0) * K;
    const CC_T *bg = bias ? bias + d.gi * pl->cog + d.c0 : NULL;
    if (pl->nb == 1) {
        const int64_t n = d.n0;
        const int64_t p0 = d.tile * pl->ncols;
        const int64_t np = cc_min64(P - p0, pl->ncols);
        const CC_T *xg = x + (n * g->c_in + d.gi * pl->cig) * nin;
        CC_T *yg = y + (n * g->c_out + d.gi * pl->cog + d.c0) * P + p0;
        const CC_T *B = xg + p0;
        int64_t ldb = nin;
        if (!pl->direct) {
            CC_FN(cc_im2col_)(g, pl->cig, xg, p0, np, slab, np);
            B = slab;
            ldb = np;
        }
        CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.nc, np, K,
                (CC_T)1, wg, K, B, ldb, (CC_T)0, yg, P);
        CC_FN(cc_add_bias_)(yg, P, d.nc, np, bg);
        return;
    }
    /* nb > 1 small images share one GEMM: col | result rows */
    const int64_t nc = d.nbi * P, ld = pl->ncols;
    CC_T *col = slab, *yt = slab + K * ld;
    for (int64_t j = 0; j < d.nbi; ++j)
        CC_FN(cc_im2col_)(g, pl->cig, x + ((d.n0 + j) * g->c_in + d.gi * pl->cig) * nin,
                          0, P, col + j * P, ld);
    CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.nc, nc, K, (CC_T)1, wg,
            K, col, ld, (CC_T)0, yt, ld);
    CC_FN(cc_scatter_block_)(g, yt, ld, d.n0, d.nbi, d.gi * pl->cog + d.c0, d.nc, P, bg, y);
}

/* Few tiles, split by output channels (one small image, or one block of
 * small images: the plan's chunks): the chunks of a tile share one im2col,
 * made by all threads (split by image and input channel), then each thread
 * runs its chunks' GEMMs.  As separate items every chunk redid the tile's
 * whole im2col: 4 chunks of a 4x4x4 volume's 3456-row im2col made 2 threads
 * slower than 1.  The column buffer is the front of the workspace; behind
 * it, with a block of images, each thread's GEMM result (chunk x ncols)
 * before it is scattered to the images' rows (the plan's per-thread slabs
 * hold K + chunk columns' rows, so both fit). */
static void CC_FN(cc_fwd_shared_col_)(const cc_geom *g, const cc_plan *pl, const CC_T *x,
                                      const CC_T *w, const CC_T *bias, CC_T *y, CC_T *ws) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin, ld = pl->ncols;
    const int64_t tiles = pl->nblocks * g->groups * pl->ntiles;
    CC_T *col = ws;
    const int old = CC_BLAS_GET_THREADS();
    CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl->nt)
    {
        CC_T *yt = ws + K * ld + (int64_t)omp_get_thread_num() * pl->chunk * ld;
        for (int64_t tt = 0; tt < tiles; ++tt) {
            const cc_item d = cc_decode(g, pl, tt * pl->nchunks, pl->cog);
            const int64_t p0 = pl->nb == 1 ? d.tile * pl->ncols : 0;
            const int64_t np = pl->nb == 1 ? cc_min64(P - p0, pl->ncols) : P;
            const int64_t ncol = pl->nb == 1 ? np : d.nbi * P; /* GEMM columns */
#pragma omp for schedule(static)
            for (int64_t jc = 0; jc < d.nbi * pl->cig; ++jc) {
                const int64_t j = jc / pl->cig, ci = jc % pl->cig;
                const CC_T *xc = x + ((d.n0 + j) * g->c_in + d.gi * pl->cig + ci) * nin;
                CC_FN(cc_im2col_)(g, 1, xc, p0, np, col + ci * pl->kk * ld + j * P, ld);
            }
#pragma omp for schedule(static)
            for (int64_t ch = 0; ch < pl->nchunks; ++ch) {
                const int64_t c0 = ch * pl->chunk, nc = cc_min64(pl->chunk, pl->cog - c0);
                const CC_T *wg = w + (d.gi * pl->cog + c0) * K;
                const CC_T *bg = bias ? bias + d.gi * pl->cog + c0 : NULL;
                if (pl->nb == 1) { /* straight into the image's rows */
                    CC_T *yg = y + (d.n0 * g->c_out + d.gi * pl->cog + c0) * P + p0;
                    CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, nc, np, K, (CC_T)1, wg,
                            K, col, ld, (CC_T)0, yg, P);
                    CC_FN(cc_add_bias_)(yg, P, nc, np, bg);
                    continue;
                }
                CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, nc, ncol, K, (CC_T)1, wg, K,
                        col, ld, (CC_T)0, yt, ld);
                CC_FN(cc_scatter_block_)(g, yt, ld, d.n0, d.nbi, d.gi * pl->cog + c0, nc, P,
                                         bg, y);
            }
        }
    }
    CC_BLAS_SET_THREADS(old);
}

int64_t CC_FN(cc_conv_fwd_workspace_elems_)(const cc_geom *g, int nthreads) {
    if (!cc_geom_valid(g)) return -1;
    cc_plan pl;
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return pl.ws_per_thread * pl.ws_threads;
}

int CC_FN(cc_conv_fwd_)(const cc_geom *g, const CC_T *x, const CC_T *w,
                        const CC_T *bias, CC_T *y, void *ws, int64_t ws_bytes,
                        int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    cc_plan pl;
    const int m = cc_conv_fwd_method(g, nthreads, (int64_t)sizeof(CC_T));
    if (m == CC_FWD_IGEMM)
        return CC_FN(cc_conv_fwd_igemm_)(g, x, w, bias, y, ws, ws_bytes, nthreads);
    if (m == CC_FWD_WINO) {
        /* Winograd's transforms turn an infinity into inf - inf = NaN and
         * spread a NaN over whole tiles: where w or x holds one, the
         * implicit GEMM gives the direct product's pattern (PyTorch's).
         * The checked forward stops there; the implicit GEMM's workspace is
         * its own, taken on this rare path. */
        const int r = CC_FN(cc_conv_fwd_wino_checked_)(g, x, w, bias, y, ws, ws_bytes, nthreads);
        if (r != CC_NONFINITE) return r;
        const int64_t need = cc_conv_fwd_igemm_workspace(g, nthreads, (int64_t)sizeof(CC_T));
        if (need < 0) /* (no implicit GEMM for this geometry: Winograd's values) */
            return CC_FN(cc_conv_fwd_wino_)(g, x, w, bias, y, ws, ws_bytes, nthreads);
        void *ws2 = malloc((size_t)need);
        if (!ws2) return CC_ERR_NOMEM;
        const int r2 = CC_FN(cc_conv_fwd_igemm_)(g, x, w, bias, y, ws2, need, nthreads);
        free(ws2);
        return r2;
    }
    if (m == CC_FWD_SHIFT)
        return CC_FN(cc_conv_fwd_shift_)(g, x, w, bias, y, ws, ws_bytes, nthreads);
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, 0, ws_bytes)) return CC_ERR_NOMEM;
    if (pl.P == 0 || g->batch == 0 || g->c_out == 0) return CC_OK;
    if (pl.cig * pl.kk == 0) { /* no input channels: y is the bias */
        for (int64_t n = 0; n < g->batch; ++n)
            for (int64_t c = 0; c < g->c_out; ++c)
                for (int64_t p = 0; p < pl.P; ++p)
                    y[(n * g->c_out + c) * pl.P + p] = bias ? bias[c] : (CC_T)0;
        return CC_OK;
    }
    CC_T *wsT = (CC_T *)ws;
    if (pl.omp && pl.nchunks > 1 && !pl.direct) {
        CC_FN(cc_fwd_shared_col_)(g, &pl, x, w, bias, y, wsT);
        return CC_OK;
    }
    CC_RUN_ITEMS(pl, pl.ws_per_thread,
                 CC_FN(cc_fwd_item_)(g, &pl, x, w, bias, y, slab, it));
    return CC_OK;
}

/* ------------------------------------------------------------------ adj */
static inline void CC_FN(cc_adj_item_)(const cc_geom *g, const cc_plan *pl,
                                      const CC_T *y, const CC_T *w,
                                      const CC_T *bias, CC_T *x, CC_T *slab,
                                      int64_t it) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin;
    /* adjoint items do not include column tiles: those run inside the item */
    cc_plan q = *pl;
    q.ntiles = 1;
    const cc_item d = cc_decode(g, &q, it, pl->cig);
    if (d.nc <= 0 || d.nbi <= 0) return;
    const CC_T *bc = bias ? bias + d.gi * pl->cig + d.c0 : NULL;
    /* col2im in gather form (col2im_gather.c, which says where it wins)
     * for whole outputs with rows longer than CC_PAD_LINE_MAX: it sets x,
     * the pass setting x to the bias is skipped */
    void *gs = NULL;
    if (!pl->direct && pl->cog > 0 && P > 0 && pl->ntiles == 1 &&
        g->out[2] > CC_PAD_LINE_MAX) {
        const int64_t gbytes = CC_FN(cc_col2im_gather_scratch_)(g);
        if (gbytes > 0) gs = malloc((size_t)gbytes);
        if (gs) CC_FN(cc_col2im_gather_plan_)(g, gs); /* once for the item's images */
    }
    if (!gs)
        for (int64_t j = 0; j < d.nbi; ++j)
            for (int64_t c = 0; c < d.nc; ++c) {
                CC_T *row = x + ((d.n0 + j) * g->c_in + d.gi * pl->cig + d.c0 + c) * nin;
                const CC_T b = bc ? bc[c] : (CC_T)0;
                for (int64_t i = 0; i < nin; ++i) row[i] = b;
            }
    if (pl->cog == 0 || P == 0) return;
    const CC_T *wg = w + d.gi * pl->cog * K + d.c0 * pl->kk;
    const int64_t rows = d.nc * pl->kk;
    if (pl->nb == 1) {
        const int64_t n = d.n0;
        const CC_T *yg = y + (n * g->c_out + d.gi * pl->cog) * P;
        CC_T *xc = x + (n * g->c_in + d.gi * pl->cig + d.c0) * nin;
        for (int64_t t = 0; t < pl->ntiles; ++t) {
            const int64_t p0 = t * pl->ncols;
            const int64_t np = cc_min64(P - p0, pl->ncols);
            if (pl->direct) {
                CC_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, rows, np, pl->cog,
                        (CC_T)1, wg, K, yg + p0, P, (CC_T)1, xc + p0, nin);
            } else {
                CC_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, rows, np, pl->cog,
                        (CC_T)1, wg, K, yg + p0, P, (CC_T)0, slab, np);
                if (gs) /* (one tile: p0 = 0, np = P) */
                    CC_FN(cc_col2im_gather_)(g, d.nc, slab, np, bc, gs, xc);
                else
                    CC_FN(cc_col2im_)(g, d.nc, slab, p0, np, np, xc);
            }
        }
        free(gs);
        return;
    }
    /* nb > 1 small images share one GEMM: gathered y rows | col */
    const int64_t ncl = d.nbi * P, ld = pl->ncols;
    CC_T *yt = slab, *col = slab + pl->cog * ld;
    for (int64_t j = 0; j < d.nbi; ++j)
        for (int64_t co = 0; co < pl->cog; ++co)
            memcpy(yt + co * ld + j * P,
                   y + ((d.n0 + j) * g->c_out + d.gi * pl->cog + co) * P,
                   (size_t)P * sizeof(CC_T));
    CC_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, rows, ncl, pl->cog, (CC_T)1,
            wg, K, yt, ld, (CC_T)0, col, ld);
    for (int64_t j = 0; j < d.nbi; ++j) {
        CC_T *xj = x + ((d.n0 + j) * g->c_in + d.gi * pl->cig + d.c0) * nin;
        if (gs)
            CC_FN(cc_col2im_gather_)(g, d.nc, col + j * P, ld, bc, gs, xj);
        else
            CC_FN(cc_col2im_)(g, d.nc, col + j * P, 0, P, ld, xj);
    }
    free(gs);
}

int64_t CC_FN(cc_conv_adj_workspace_elems_)(const cc_geom *g, int nthreads) {
    if (!cc_geom_valid(g)) return -1;
    cc_plan pl;
    cc_plan_adj(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return pl.ws_per_thread * pl.ws_threads;
}

int CC_FN(cc_conv_adj_)(const cc_geom *g, const CC_T *y, const CC_T *w,
                        const CC_T *bias, CC_T *x, void *ws, int64_t ws_bytes,
                        int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    cc_plan pl;
    cc_plan_adj(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, 0, ws_bytes)) return CC_ERR_NOMEM;
    if (pl.nin == 0 || g->batch == 0 || g->c_in == 0) return CC_OK;
    CC_T *wsT = (CC_T *)ws;
    CC_RUN_ITEMS(pl, pl.ws_per_thread,
                 CC_FN(cc_adj_item_)(g, &pl, y, w, bias, x, slab, it));
    return CC_OK;
}

/* ---------------------------------------------------------------- wgrad */
/* Accumulates one item's share into gw (beta = 1): its images or tile, its
 * group, and the weight-gradient columns of its input channels (every
 * output channel of the group). */
static inline void CC_FN(cc_wgrad_item_)(const cc_geom *g, const cc_plan *pl,
                                        const CC_T *x, const CC_T *gy, CC_T *gw,
                                        CC_T *slab, int64_t it) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin, cog = pl->cog;
    const cc_item d = cc_decode(g, pl, it, pl->cig);
    if (d.nc <= 0 || d.nbi <= 0) return;
    const int64_t rows = d.nc * pl->kk;
    CC_T *gwg = gw + d.gi * cog * K + d.c0 * pl->kk;
    if (pl->nb == 1) {
        const int64_t n = d.n0;
        const int64_t p0 = d.tile * pl->ncols;
        const int64_t np = cc_min64(P - p0, pl->ncols);
        const CC_T *xg = x + (n * g->c_in + d.gi * pl->cig + d.c0) * nin;
        const CC_T *gyg = gy + (n * g->c_out + d.gi * cog) * P + p0;
        const CC_T *B = xg + p0;
        int64_t ldb = nin;
        if (!pl->direct) {
            CC_FN(cc_im2col_)(g, d.nc, xg, p0, np, slab, np);
            B = slab;
            ldb = np;
        }
        CC_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, cog, rows, np, (CC_T)1,
                gyg, P, B, ldb, (CC_T)1, gwg, K);
        return;
    }
    const int64_t ncl = d.nbi * P, ld = pl->ncols;
    CC_T *col = slab, *gyt = slab + rows * ld;
    for (int64_t j = 0; j < d.nbi; ++j) {
        CC_FN(cc_im2col_)(g, d.nc,
                          x + ((d.n0 + j) * g->c_in + d.gi * pl->cig + d.c0) * nin,
                          0, P, col + j * P, ld);
        for (int64_t co = 0; co < cog; ++co)
            memcpy(gyt + co * ld + j * P,
                   gy + ((d.n0 + j) * g->c_out + d.gi * cog + co) * P,
                   (size_t)P * sizeof(CC_T));
    }
    CC_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, cog, rows, ncl, (CC_T)1, gyt,
            ld, col, ld, (CC_T)1, gwg, K);
}

static inline int64_t CC_FN(cc_wgrad_extra_)(const cc_geom *g, const cc_plan *pl) {
    /* OpenMP: each thread keeps a private weight-sized partial sum */
    return pl->omp ? g->c_out * pl->cig * pl->kk : 0;
}

int64_t CC_FN(cc_conv_wgrad_workspace_elems_)(const cc_geom *g, int nthreads) {
    if (!cc_geom_valid(g)) return -1;
    cc_plan pl;
    cc_plan_wgrad(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return (pl.ws_per_thread + CC_FN(cc_wgrad_extra_)(g, &pl)) * pl.ws_threads;
}

int CC_FN(cc_conv_wgrad_)(const cc_geom *g, const CC_T *x, const CC_T *gy,
                          CC_T *gw, void *ws, int64_t ws_bytes, int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    if (cc_conv_wgrad_method(g, nthreads, (int64_t)sizeof(CC_T)) == CC_WGRAD_IGEMM)
        return CC_CAT(cc_conv_wgrad_igemm_, CC_SFX)(g, x, gy, gw, ws, ws_bytes, nthreads);
    cc_plan pl;
    cc_plan_wgrad(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    const int64_t wsz = g->c_out * pl.cig * pl.kk;
    const int64_t extra = CC_FN(cc_wgrad_extra_)(g, &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, extra, ws_bytes)) return CC_ERR_NOMEM;
    if (wsz == 0) return CC_OK;
    memset(gw, 0, (size_t)wsz * sizeof(CC_T));
    if (pl.P == 0 || g->batch == 0 || pl.cog == 0) return CC_OK;
    CC_T *wsT = (CC_T *)ws;
    const int old = CC_BLAS_GET_THREADS();
    if (pl.omp) {
        const int64_t slabsz = pl.ws_per_thread + extra;
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl.nt)
        {
            CC_T *part = wsT + (int64_t)omp_get_thread_num() * slabsz;
            memset(part, 0, (size_t)wsz * sizeof(CC_T));
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; ++it)
                CC_FN(cc_wgrad_item_)(g, &pl, x, gy, part, part + extra, it);
            /* fixed-order reduction of the threads' partial sums */
#pragma omp for schedule(static)
            for (int64_t i = 0; i < wsz; ++i) {
                CC_T s = 0;
                for (int t = 0; t < pl.nt; ++t) s += wsT[(int64_t)t * slabsz + i];
                gw[i] = s;
            }
        }
    } else {
        CC_BLAS_SET_THREADS(pl.nt);
        for (int64_t it = 0; it < pl.items; ++it)
            CC_FN(cc_wgrad_item_)(g, &pl, x, gy, gw, wsT, it);
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

#undef CC_RUN_ITEMS
#undef CC_FN
#undef CC_CAT
#undef CC_CAT2
