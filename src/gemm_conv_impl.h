/*
 * GEMM convolutions (forward, adjoint, weight gradient) for one element
 * type; included by gemm_conv.c with CC_T, CC_SFX and CC_GEMM defined.
 * Schedules: see gemm_plan.h.  Matrices per image n and group gi:
 *   W_g : cog x K          (K = cig * kk), row-major, the weight as stored
 *   col : K x ncols        im2col of one column tile of the image
 *   Y_g : cog x P          rows of y, row stride P
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)
#define CC_FN(name) CC_CAT(name, CC_SFX)

static int CC_FN(cc_ws_ok_)(const cc_plan *pl, int64_t extra, int64_t ws_bytes) {
    int64_t need = (pl->ws_per_thread + extra) * pl->ws_threads * (int64_t)sizeof(CC_T);
    return need <= ws_bytes;
}

/* One column tile of the forward for image n, group gi. */
static inline void CC_FN(cc_fwd_tile_)(const cc_geom *g, const cc_plan *pl,
                                      const CC_T *x, const CC_T *w,
                                      const CC_T *bias, CC_T *y, CC_T *col,
                                      int64_t n, int64_t gi, int64_t tile) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin;
    const int64_t p0 = tile * pl->ncols;
    const int64_t np = (P - p0) < pl->ncols ? (P - p0) : pl->ncols;
    const CC_T *xg = x + (n * g->c_in + gi * pl->cig) * nin;
    CC_T *yg = y + (n * g->c_out + gi * pl->cog) * P + p0;
    const CC_T *wg = w + gi * pl->cog * K;
    const CC_T *B;
    int64_t ldb;
    if (pl->direct) {
        B = xg + p0;
        ldb = nin;
    } else {
        CC_FN(cc_im2col_)(g, pl->cig, xg, p0, np, col, np);
        B = col;
        ldb = np;
    }
    if (K == 0) {
        for (int64_t co = 0; co < pl->cog; ++co)
            memset(yg + co * P, 0, (size_t)np * sizeof(CC_T));
    } else {
        CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, pl->cog, np, K,
                (CC_T)1, wg, K, B, ldb, (CC_T)0, yg, P);
    }
    if (bias) {
        for (int64_t co = 0; co < pl->cog; ++co) {
            const CC_T b = bias[gi * pl->cog + co];
            CC_T *row = yg + co * P;
            for (int64_t j = 0; j < np; ++j) row[j] += b;
        }
    }
}

int64_t CC_FN(cc_conv_fwd_workspace_elems_)(const cc_geom *g, int nthreads) {
    cc_plan pl;
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return pl.ws_per_thread * pl.ws_threads;
}

int CC_FN(cc_conv_fwd_)(const cc_geom *g, const CC_T *x, const CC_T *w,
                        const CC_T *bias, CC_T *y, void *ws, int64_t ws_bytes,
                        int nthreads) {
    cc_plan pl;
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, 0, ws_bytes)) return CC_ERR_NOMEM;
    if (pl.P == 0 || g->batch == 0 || g->c_out == 0) return CC_OK;
    const int64_t per_n = g->groups * pl.ntiles;
    CC_T *wsT = (CC_T *)ws;
    const int old = CC_BLAS_GET_THREADS();
    if (pl.omp) {
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl.nt)
        {
            CC_T *col = wsT ? wsT + (int64_t)omp_get_thread_num() * pl.ws_per_thread : NULL;
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; ++it) {
                int64_t n = it / per_n, r = it % per_n;
                CC_FN(cc_fwd_tile_)(g, &pl, x, w, bias, y, col, n, r / pl.ntiles, r % pl.ntiles);
            }
        }
    } else {
        CC_BLAS_SET_THREADS(pl.nt);
        for (int64_t it = 0; it < pl.items; ++it) {
            int64_t n = it / per_n, r = it % per_n;
            CC_FN(cc_fwd_tile_)(g, &pl, x, w, bias, y, wsT, n, r / pl.ntiles, r % pl.ntiles);
        }
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

/* Adjoint for image n, group gi, input channels [c0, c0 + nc). */
static inline void CC_FN(cc_adj_item_)(const cc_geom *g, const cc_plan *pl,
                                      const CC_T *y, const CC_T *w,
                                      const CC_T *bias, CC_T *x, CC_T *col,
                                      int64_t n, int64_t gi, int64_t c0,
                                      int64_t nc) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin;
    const CC_T *yg = y + (n * g->c_out + gi * pl->cog) * P;
    const CC_T *wg = w + gi * pl->cog * K + c0 * pl->kk;
    CC_T *xc = x + (n * g->c_in + gi * pl->cig + c0) * nin;
    for (int64_t c = 0; c < nc; ++c) {
        CC_T *row = xc + c * nin;
        if (bias) {
            const CC_T b = bias[gi * pl->cig + c0 + c];
            for (int64_t j = 0; j < nin; ++j) row[j] = b;
        } else {
            memset(row, 0, (size_t)nin * sizeof(CC_T));
        }
    }
    if (pl->cog == 0 || nc == 0) return;
    const int64_t rows = nc * pl->kk;
    for (int64_t t = 0; t < pl->ntiles; ++t) {
        const int64_t p0 = t * pl->ncols;
        const int64_t np = (P - p0) < pl->ncols ? (P - p0) : pl->ncols;
        if (pl->direct) {
            CC_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, rows, np, pl->cog,
                    (CC_T)1, wg, K, yg + p0, P, (CC_T)1, xc + p0, nin);
        } else {
            CC_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, rows, np, pl->cog,
                    (CC_T)1, wg, K, yg + p0, P, (CC_T)0, col, np);
            CC_FN(cc_col2im_)(g, nc, col, p0, np, np, xc);
        }
    }
}

int64_t CC_FN(cc_conv_adj_workspace_elems_)(const cc_geom *g, int nthreads) {
    cc_plan pl;
    cc_plan_adj(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return pl.ws_per_thread * pl.ws_threads;
}

int CC_FN(cc_conv_adj_)(const cc_geom *g, const CC_T *y, const CC_T *w,
                        const CC_T *bias, CC_T *x, void *ws, int64_t ws_bytes,
                        int nthreads) {
    cc_plan pl;
    cc_plan_adj(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, 0, ws_bytes)) return CC_ERR_NOMEM;
    if (pl.nin == 0 || g->batch == 0 || g->c_in == 0) return CC_OK;
    if (pl.P == 0) { /* nothing flows back: x is the bias (or zero) */
        pl.cog = 0;
    }
    const int64_t per_n = g->groups * pl.nchunks;
    CC_T *wsT = (CC_T *)ws;
    const int old = CC_BLAS_GET_THREADS();
    if (pl.omp) {
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl.nt)
        {
            CC_T *col = wsT ? wsT + (int64_t)omp_get_thread_num() * pl.ws_per_thread : NULL;
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; ++it) {
                int64_t n = it / per_n, r = it % per_n;
                int64_t gi = r / pl.nchunks, ch = r % pl.nchunks;
                int64_t c0 = ch * pl.chunk;
                int64_t nc = pl.cig - c0 < pl.chunk ? pl.cig - c0 : pl.chunk;
                CC_FN(cc_adj_item_)(g, &pl, y, w, bias, x, col, n, gi, c0, nc);
            }
        }
    } else {
        CC_BLAS_SET_THREADS(pl.nt);
        for (int64_t n = 0; n < g->batch; ++n)
            for (int64_t gi = 0; gi < g->groups; ++gi)
                CC_FN(cc_adj_item_)(g, &pl, y, w, bias, x, wsT, n, gi, 0, pl.cig);
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

/* Weight gradient of one column tile, accumulated into gw (beta = 1). */
static inline void CC_FN(cc_wgrad_tile_)(const cc_geom *g, const cc_plan *pl,
                                        const CC_T *x, const CC_T *gy, CC_T *gw,
                                        CC_T *col, int64_t n, int64_t gi,
                                        int64_t tile) {
    const int64_t K = pl->cig * pl->kk, P = pl->P, nin = pl->nin;
    const int64_t p0 = tile * pl->ncols;
    const int64_t np = (P - p0) < pl->ncols ? (P - p0) : pl->ncols;
    const CC_T *xg = x + (n * g->c_in + gi * pl->cig) * nin;
    const CC_T *gyg = gy + (n * g->c_out + gi * pl->cog) * P + p0;
    CC_T *gwg = gw + gi * pl->cog * K;
    const CC_T *B;
    int64_t ldb;
    if (pl->direct) {
        B = xg + p0;
        ldb = nin;
    } else {
        CC_FN(cc_im2col_)(g, pl->cig, xg, p0, np, col, np);
        B = col;
        ldb = np;
    }
    CC_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, pl->cog, K, np, (CC_T)1,
            gyg, P, B, ldb, (CC_T)1, gwg, K);
}

static inline int64_t CC_FN(cc_wgrad_extra_)(const cc_geom *g, const cc_plan *pl) {
    /* omp: each thread keeps a private weight-sized partial sum */
    return pl->omp ? g->c_out * pl->cig * pl->kk : 0;
}

int64_t CC_FN(cc_conv_wgrad_workspace_elems_)(const cc_geom *g, int nthreads) {
    cc_plan pl;
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    return (pl.ws_per_thread + CC_FN(cc_wgrad_extra_)(g, &pl)) * pl.ws_threads;
}

int CC_FN(cc_conv_wgrad_)(const cc_geom *g, const CC_T *x, const CC_T *gy,
                          CC_T *gw, void *ws, int64_t ws_bytes, int nthreads) {
    cc_plan pl;
    cc_plan_cols(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    const int64_t wsz = g->c_out * pl.cig * pl.kk;
    const int64_t extra = CC_FN(cc_wgrad_extra_)(g, &pl);
    if (!CC_FN(cc_ws_ok_)(&pl, extra, ws_bytes)) return CC_ERR_NOMEM;
    if (wsz == 0) return CC_OK;
    memset(gw, 0, (size_t)wsz * sizeof(CC_T));
    if (pl.P == 0 || g->batch == 0 || pl.cog == 0) return CC_OK;
    const int64_t per_n = g->groups * pl.ntiles;
    CC_T *wsT = (CC_T *)ws;
    const int old = CC_BLAS_GET_THREADS();
    if (pl.omp) {
        const int64_t slab = pl.ws_per_thread + extra;
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl.nt)
        {
            CC_T *part = wsT + (int64_t)omp_get_thread_num() * slab;
            CC_T *col = part + extra;
            memset(part, 0, (size_t)wsz * sizeof(CC_T));
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; ++it) {
                int64_t n = it / per_n, r = it % per_n;
                CC_FN(cc_wgrad_tile_)(g, &pl, x, gy, part, col, n, r / pl.ntiles, r % pl.ntiles);
            }
            /* fixed-order reduction over the threads' partial sums */
#pragma omp for schedule(static)
            for (int64_t i = 0; i < wsz; ++i) {
                CC_T s = 0;
                for (int t = 0; t < pl.nt; ++t) s += wsT[(int64_t)t * slab + i];
                gw[i] = s;
            }
        }
    } else {
        CC_BLAS_SET_THREADS(pl.nt);
        for (int64_t it = 0; it < pl.items; ++it) {
            int64_t n = it / per_n, r = it % per_n;
            CC_FN(cc_wgrad_tile_)(g, &pl, x, gy, gw, wsT, n, r / pl.ntiles, r % pl.ntiles);
        }
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

#undef CC_FN
#undef CC_CAT
#undef CC_CAT2
