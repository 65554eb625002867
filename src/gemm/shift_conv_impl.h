/*
 * Forward convolution of stride 1 by shifted GEMMs, no im2col: for a band of
 * output rows, the input rows it needs are copied once (with their zero
 * padding) into a band buffer whose rows are Wb = Wt + (kw-1)*dw wide.
 * Output positions are then computed "wide" (row stride Wb), and for every
 * kernel tap t the input operand is the band buffer shifted by the tap's
 * offset: a plain strided cig x Q matrix.  One GEMM per tap accumulates into
 * a C tile (nc x Q), whose valid columns are copied to y with the bias.
 * Included by shift_conv.c with CC_T, CC_SFX and CC_GEMM defined.
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)
#define CC_FN(name) CC_CAT(name, CC_SFX)

static void CC_FN(cc_shift_item_)(const cc_geom *g, const cc_shift_plan *sp,
                                  const CC_T *x, const CC_T *wt,
                                  const CC_T *bias, CC_T *y, CC_T *slab,
                                  int64_t it) {
    const int64_t kd = g->k[0], kh = g->k[1], kw = g->k[2];
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
    const int64_t Do = g->out[0], Ho = g->out[1], Wo = g->out[2];
    const int64_t cig = sp->cig, cog = sp->cog, kk = kd * kh * kw;
    /* decode: chunk fastest, then w tile, h tile, od, group, image */
    int64_t r = it;
    const int64_t ch = r % sp->nchunks; r /= sp->nchunks;
    const int64_t tw_i = r % sp->nw; r /= sp->nw;
    const int64_t th_i = r % sp->nh; r /= sp->nh;
    const int64_t od = r % Do; r /= Do;
    const int64_t gi = r % g->groups;
    const int64_t n = r / g->groups;
    const int64_t c0 = ch * sp->chunk;
    const int64_t nc = cc_min64(sp->chunk, cog - c0);
    if (nc <= 0) return;
    const int64_t oh0 = th_i * sp->R, Rr = cc_min64(sp->R, Ho - oh0);
    const int64_t ow0 = tw_i * sp->Wt, Wtt = cc_min64(sp->Wt, Wo - ow0);
    const int64_t exth = (kh - 1) * g->dil[1], extw = (kw - 1) * g->dil[2];
    const int64_t Wb = Wtt + extw, rows = Rr + exth;
    const int64_t CS = kd * rows * Wb; /* channel stride in the band */
    const int64_t Q = (Rr - 1) * Wb + Wtt;
    CC_T *band = slab, *ct = slab + sp->band_elems;

    /* 1. the band: input rows with their padding, per channel and depth tap */
    const CC_T *xg = x + (n * g->c_in + gi * cig) * D * H * W;
    const int64_t iw0 = ow0 - g->pad[2];
    const int64_t ca = iw0 < 0 ? -iw0 : 0;                 /* first copied col */
    const int64_t cb = cc_min64(Wb, W - iw0);              /* one past last */
    for (int64_t ci = 0; ci < cig; ++ci)
        for (int64_t td = 0; td < kd; ++td) {
            const int64_t id = od - g->pad[0] + td * g->dil[0];
            for (int64_t rr = 0; rr < rows; ++rr) {
                CC_T *dst = band + ci * CS + (td * rows + rr) * Wb;
                const int64_t ih = oh0 - g->pad[1] + rr;
                if (id < 0 || id >= D || ih < 0 || ih >= H || ca >= cb) {
                    memset(dst, 0, (size_t)Wb * sizeof(CC_T));
                    continue;
                }
                const CC_T *src = xg + ((ci * D + id) * H + ih) * W + iw0;
                if (ca > 0) memset(dst, 0, (size_t)ca * sizeof(CC_T));
                memcpy(dst + ca, src + ca, (size_t)(cb - ca) * sizeof(CC_T));
                if (cb < Wb) memset(dst + cb, 0, (size_t)(Wb - cb) * sizeof(CC_T));
            }
        }

    /* 2. one GEMM per tap into the wide C tile */
    int64_t t = 0;
    for (int64_t td = 0; td < kd; ++td)
        for (int64_t th = 0; th < kh; ++th)
            for (int64_t tw = 0; tw < kw; ++tw, ++t) {
                const CC_T *B = band + (td * rows + th * g->dil[1]) * Wb + tw * g->dil[2];
                const CC_T *A = wt + ((gi * kk + t) * cog + c0) * cig;
                CC_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, nc, Q, cig,
                        (CC_T)1, A, cig, B, CS, t == 0 ? (CC_T)0 : (CC_T)1, ct, Q);
            }

    /* 3. valid columns to y, with the bias */
    for (int64_t co = 0; co < nc; ++co) {
        const CC_T b = bias ? bias[gi * cog + c0 + co] : (CC_T)0;
        CC_T *yrow = y + (((n * g->c_out + gi * cog + c0 + co) * Do + od) * Ho + oh0) * Wo + ow0;
        const CC_T *crow = ct + co * Q;
        for (int64_t rr = 0; rr < Rr; ++rr)
            for (int64_t c = 0; c < Wtt; ++c) yrow[rr * Wo + c] = crow[rr * Wb + c] + b;
    }
}

int CC_FN(cc_conv_fwd_shift_)(const cc_geom *g, const CC_T *x, const CC_T *w,
                              const CC_T *bias, CC_T *y, void *ws,
                              int64_t ws_bytes, int nthreads) {
    cc_shift_plan sp;
    cc_plan_shift(g, nthreads, (int64_t)sizeof(CC_T), &sp);
    if ((sp.wt_elems + sp.per_thread * sp.nt) * (int64_t)sizeof(CC_T) > ws_bytes)
        return CC_ERR_NOMEM;
    CC_T *wt = (CC_T *)ws, *slabs = wt + sp.wt_elems;
    const int64_t cig = sp.cig, cog = sp.cog, kk = g->k[0] * g->k[1] * g->k[2];
    /* weight by tap: wt[gi][t][co][ci] = w[gi*cog + co][ci][t] */
    for (int64_t gi = 0; gi < g->groups; ++gi)
        for (int64_t co = 0; co < cog; ++co)
            for (int64_t ci = 0; ci < cig; ++ci) {
                const CC_T *src = w + ((gi * cog + co) * cig + ci) * kk;
                for (int64_t t = 0; t < kk; ++t)
                    wt[((gi * kk + t) * cog + co) * cig + ci] = src[t];
            }
    const int old = CC_BLAS_GET_THREADS();
    if (sp.nt > 1) {
        CC_BLAS_SET_THREADS(1);
#pragma omp parallel num_threads(sp.nt)
        {
            CC_T *slab = slabs + (int64_t)omp_get_thread_num() * sp.per_thread;
#pragma omp for schedule(static)
            for (int64_t it = 0; it < sp.items; ++it)
                CC_FN(cc_shift_item_)(g, &sp, x, wt, bias, y, slab, it);
        }
    } else {
        CC_BLAS_SET_THREADS(1);
        for (int64_t it = 0; it < sp.items; ++it)
            CC_FN(cc_shift_item_)(g, &sp, x, wt, bias, y, slabs, it);
    }
    CC_BLAS_SET_THREADS(old);
    return CC_OK;
}

#undef CC_FN
#undef CC_CAT
#undef CC_CAT2
