/*
 * Channels-last forward for one element type; included by nhwc_conv.c with
 * CC_T, CC_SFX and CC_GEMM defined.  See nhwc_conv.h and nhwc_plan.h.
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)
#define CC_FN(name) CC_CAT(name, CC_SFX)

static inline void CC_FN(cc_nhwc_copy_)(CC_T *dst, const CC_T *src, int64_t n) {
    if (n >= 16) {
        memcpy(dst, src, (size_t)n * sizeof(CC_T));
    } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    }
}

static inline void CC_FN(cc_nhwc_zero_)(CC_T *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = (CC_T)0;
}

/* col rows [r0, r0 + nr) of group gi: row r is output pixel r of the
 * flattened (batch, out) range.  Tap-major (pl->tapmajor): its K = kk * cig
 * columns are, tap by tap, the group's input channels under the tap (zeros
 * in the padding), runs of x copied whole.  Channel-major: column
 * ci * kk + t, the order of the weight as stored (no weight reorder; used
 * when there are few rows, so the scattered writes cost less than
 * reordering the weight would). */
static void CC_FN(cc_nhwc_im2col_)(const cc_geom *g, const cc_nhwc_plan *pl,
                                   const CC_T *x, int64_t gi, int64_t r0,
                                   int64_t nr, CC_T *col) {
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
    const int64_t Do = g->out[0], Ho = g->out[1], Wo = g->out[2];
    const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
    const int64_t C = g->c_in, cig = pl->cig, K = pl->K, kk = pl->kk;
    const int tapmajor = pl->tapmajor;
    /* all kw taps of a row are one run of x when they are adjacent pixels
     * and the group is all channels */
    const int run = tapmajor && g->dil[2] == 1 && cig == C;
    int64_t r = r0;
    int64_t n = r / pl->P, p = r % pl->P;
    int64_t ow = p % Wo, oh = (p / Wo) % Ho, od = p / (Wo * Ho);
    for (int64_t i = 0; i < nr; ++i, ++r) {
        CC_T *dst = col + i * K;
        const CC_T *xn = x + n * D * H * W * C + gi * cig;
        const int64_t iw0 = ow * g->stride[2] - g->pad[2];
        int64_t t = 0;
        for (int64_t td = 0; td < kd; ++td) {
            const int64_t id = od * g->stride[0] - g->pad[0] + td * g->dil[0];
            for (int64_t th = 0; th < kh; ++th) {
                const int64_t ih = oh * g->stride[1] - g->pad[1] + th * g->dil[1];
                const int inside = id >= 0 && id < D && ih >= 0 && ih < H;
                const CC_T *xrow = inside ? xn + (id * H + ih) * W * C : NULL;
                if (tapmajor) {
                    CC_T *d = dst + t * cig;
                    t += kw;
                    if (!inside) {
                        CC_FN(cc_nhwc_zero_)(d, kw * cig);
                        continue;
                    }
                    if (run && iw0 >= 0 && iw0 + kw <= W) {
                        CC_FN(cc_nhwc_copy_)(d, xrow + iw0 * C, kw * cig);
                        continue;
                    }
                    for (int64_t tw = 0; tw < kw; ++tw) {
                        const int64_t iw = iw0 + tw * g->dil[2];
                        if (iw < 0 || iw >= W)
                            CC_FN(cc_nhwc_zero_)(d + tw * cig, cig);
                        else
                            CC_FN(cc_nhwc_copy_)(d + tw * cig, xrow + iw * C, cig);
                    }
                    continue;
                }
                for (int64_t tw = 0; tw < kw; ++tw, ++t) {
                    const int64_t iw = iw0 + tw * g->dil[2];
                    CC_T *d = dst + t;
                    if (!inside || iw < 0 || iw >= W) {
                        for (int64_t ci = 0; ci < cig; ++ci) d[ci * kk] = (CC_T)0;
                    } else {
                        const CC_T *src = xrow + iw * C;
                        for (int64_t ci = 0; ci < cig; ++ci) d[ci * kk] = src[ci];
                    }
                }
            }
        }
        if (++ow == Wo) {
            ow = 0;
            if (++oh == Ho) {
                oh = 0;
                if (++od == Do) {
                    od = 0;
                    ++n;
                }
            }
        }
    }
}

/* One item: group gi, rows [r0, r0 + nr). */
static void CC_FN(cc_nhwc_item_)(const cc_geom *g, const cc_nhwc_plan *pl,
                                 const CC_T *x, const CC_T *wt,
                                 const CC_T *bias, CC_T *y, int y_cl,
                                 CC_T *slab, int64_t it) {
    const int64_t ch = it % pl->nchunks;
    const int64_t gi = (it / pl->nchunks) % g->groups;
    const int64_t tile = it / pl->nchunks / g->groups;
    const int64_t r0 = tile * pl->rows;
    const int64_t nr = cc_min64(pl->rows, pl->M - r0);
    const int64_t c0 = ch * pl->chunk;
    const int64_t cog = cc_min64(pl->chunk, pl->cog - c0); /* this item's channels */
    if (nr <= 0 || cog <= 0) return;
    const int64_t K = pl->K, Co = g->c_out, P = pl->P;
    const CC_T *A;
    int64_t lda;
    if (pl->direct) {
        A = x + r0 * g->c_in + gi * pl->cig;
        lda = g->c_in;
    } else {
        CC_FN(cc_nhwc_im2col_)(g, pl, x, gi, r0, nr, slab);
        A = slab;
        lda = K;
    }
    const int64_t cb = gi * pl->cog + c0; /* first output channel */
    const CC_T *wg = wt + cb * K;         /* (cog, K) row-major */
    const CC_T *bg = bias ? bias + cb : NULL;
    if (y_cl) {
        /* y rows (pixels) x cog, row stride c_out */
        CC_T *yt = y + r0 * Co + cb;
        CC_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, nr, cog, K, (CC_T)1, A,
                lda, wg, K, (CC_T)0, yt, Co);
        if (bg)
            for (int64_t i = 0; i < nr; ++i) {
                CC_T *row = yt + i * Co;
                for (int64_t c = 0; c < cog; ++c) row[c] += bg[c];
            }
        return;
    }
    /* channels-first y: one GEMM per image the tile touches,
     * y[n, group's channels, p0 : p0 + np] = W_g @ A_seg^T */
    int64_t r = r0;
    while (r < r0 + nr) {
        const int64_t n = r / P, p0 = r % P;
        const int64_t np = cc_min64(P - p0, r0 + nr - r);
        CC_T *yt = y + (n * Co + cb) * P + p0;
        CC_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, cog, np, K, (CC_T)1, wg,
                K, A + (r - r0) * lda, lda, (CC_T)0, yt, P);
        if (bg)
            for (int64_t c = 0; c < cog; ++c) {
                CC_T *row = yt + c * P;
                const CC_T b = bg[c];
                for (int64_t j = 0; j < np; ++j) row[j] += b;
            }
        r += np;
    }
}

int CC_FN(cc_nhwc_fwd_)(const cc_geom *g, const CC_T *x, const CC_T *w,
                        const CC_T *bias, CC_T *y, int y_cl, void *ws,
                        int64_t ws_bytes, int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    cc_nhwc_plan pl;
    cc_plan_nhwc(g, nthreads, (int64_t)sizeof(CC_T), &pl);
    if (cc_nhwc_ws_elems(&pl) * (int64_t)sizeof(CC_T) > ws_bytes) return CC_ERR_NOMEM;
    if (pl.M == 0 || g->c_out == 0) return CC_OK;
    if (pl.K == 0) { /* no input channels: y is the bias */
        for (int64_t r = 0; r < pl.M; ++r)
            for (int64_t c = 0; c < g->c_out; ++c) {
                const CC_T b = bias ? bias[c] : (CC_T)0;
                if (y_cl)
                    y[r * g->c_out + c] = b;
                else
                    y[((r / pl.P) * g->c_out + c) * pl.P + r % pl.P] = b;
            }
        return CC_OK;
    }
    CC_T *wsT = (CC_T *)ws;
    const CC_T *wt = w;
    CC_T *slabs = wsT;
    if (pl.tapmajor) {
        /* weight tap-major: wt[co][t][ci] = w[co][ci][t] */
        CC_T *wr = wsT;
        const int64_t kk = pl.kk, cig = pl.cig;
        for (int64_t co = 0; co < g->c_out; ++co)
            for (int64_t ci = 0; ci < cig; ++ci) {
                const CC_T *src = w + (co * cig + ci) * kk;
                CC_T *dst = wr + co * pl.K + ci;
                for (int64_t t = 0; t < kk; ++t) dst[t * cig] = src[t];
            }
        wt = wr;
        slabs = wsT + pl.wt_elems;
    }
    const int old = CC_BLAS_GET_THREADS();
    if (pl.omp) {
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(pl.nt)
        {
            CC_T *slab = slabs + (int64_t)omp_get_thread_num() * pl.slab_elems;
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; ++it)
                CC_FN(cc_nhwc_item_)(g, &pl, x, wt, bias, y, y_cl, slab, it);
        }
    } else {
        CC_BLAS_SET_THREADS(pl.nt);
        for (int64_t it = 0; it < pl.items; ++it)
            CC_FN(cc_nhwc_item_)(g, &pl, x, wt, bias, y, y_cl, slabs, it);
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

#undef CC_FN
#undef CC_CAT
#undef CC_CAT2
