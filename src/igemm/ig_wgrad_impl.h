/*
 * Weight-gradient body for grouped convolutions with few output channels
 * per group, included by ig_wgrad.c with IG_T (element), IG_SFX (f32/f64) and
 * IG_KERN (the micro-kernel table getter) defined.  See ig_plan.h (ig_wplan)
 * and igemm.h (the ukrw micro-kernel).
 */
#define IG_CAT2(a, b) a##b
#define IG_CAT(a, b) IG_CAT2(a, b)
#define IG_FN(name) IG_CAT(name, IG_SFX)

#include "ig_band_impl.h"

/* Weight gradient for few output channels per group (ig_plan.h: ig_wplan):
 * gw[co][k] = sum over images and output positions of gy[co][pos] times
 * the band element of tap k at pos, by the ukrw micro-kernel reading gy and
 * the band in place. */
int IG_FN(cc_conv_wgrad_igemm_)(const cc_geom *g, const IG_T *x, const IG_T *gy, IG_T *gw,
                                void *ws, int64_t ws_bytes, int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    const int64_t K = g->c_in / g->groups * g->k[0] * g->k[1] * g->k[2];
    const int64_t wsz = g->c_out * K;
    const int64_t Do = g->out[0], Ho = g->out[1], Wo = g->out[2];
    if (wsz == 0) return CC_OK;
    if (g->batch == 0 || Do * Ho * Wo == 0) {
        memset(gw, 0, (size_t)wsz * sizeof(IG_T));
        return CC_OK;
    }
    const int es = (int)sizeof(IG_T);
    const IG_KERN_T *kern = IG_KERN();
    if (kern->mrw > IG_MRW_MAX) return CC_ERR_ARG; /* gyr below */
    ig_wplan wp;
    ig_wplan_make(g, nthreads, es, kern->mr, kern->nr, kern->mrw, kern->nrw, kern->lanes, &wp);
    if (!wp.p.ok) return CC_ERR_ARG;
    if (ig_wplan_bytes(&wp, es) > ws_bytes || ws == NULL) return CC_ERR_NOMEM;
    const ig_plan *p = &wp.p;
    uintptr_t at = ((uintptr_t)ws + 63) & ~(uintptr_t)63;
    int64_t *koff = (int64_t *)at;
    at += (uintptr_t)ig_round_up(wp.kpad * 8, 64);
    IG_T *slabs = (IG_T *)at;
    ig_plan_koff(g, p, koff);
    for (int64_t k = K; k < wp.kpad; ++k) koff[k] = 0; /* padding taps: read, dropped */
    const int64_t al = 64 / es, band_sz = ig_round_up(p->band_elems, al);
    const int mrw = wp.mrw, nrw = wp.nrw, lanes = wp.lanes;
    const int64_t plane = Do * Ho * Wo, cog = p->cog, nib = wp.copad / mrw;
    const cc_stop_t stop = cc_stop_flag();
#pragma omp parallel num_threads(wp.nt) if (wp.nt > 1)
    {
        IG_T *band = slabs + (int64_t)omp_get_thread_num() * wp.per_thread;
        IG_T *acc = band + band_sz;
        const IG_T *gyr[IG_MRW_MAX];
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < wp.items; ++it) {
            if (CC_STOPPED(stop)) continue;
            const int64_t gi = it / wp.nchunks, kb0 = (it % wp.nchunks) * wp.chunkb;
            const int64_t nkbi = cc_min64(wp.chunkb, wp.nkb - kb0);
            memset(acc, 0, (size_t)wp.acc_elems * sizeof(IG_T));
            for (int64_t n = 0; n < g->batch; ++n)
                for (int64_t od = 0; od < Do; ++od)
                    for (int64_t th = 0; th < p->nh; ++th)
                        for (int64_t tw = 0; tw < p->nw; ++tw) {
                            const int64_t oh0 = th * p->R, Rr = cc_min64(p->R, Ho - oh0);
                            const int64_t ow0 = tw * p->Wt, Wtt = cc_min64(p->Wt, Wo - ow0);
                            IG_FN(ig_band_)(g, p, kern, x + (n * g->c_in + gi * p->cig) * g->in[0] *
                                                          g->in[1] * g->in[2],
                                            od, oh0, ow0, Rr, Wtt, band);
                            const IG_T *gyb = gy + ((n * g->c_out + gi * cog) * Do + od) * Ho * Wo +
                                              oh0 * Wo + ow0;
                            for (int64_t jb = 0; jb < nkbi; ++jb)
                                for (int64_t ib = 0; ib < nib; ++ib) {
                                    for (int i = 0; i < mrw; ++i) {
                                        const int64_t co = ib * mrw + i;
                                        gyr[i] = gyb + (co < cog ? co : 0) * plane;
                                    }
                                    kern->ukrw(Rr, Wtt, gyr, Wo, band, p->Wph,
                                               koff + (kb0 + jb) * nrw,
                                               acc + (ib * wp.chunkb + jb) * mrw * nrw * lanes);
                                }
                        }
            /* the lanes of each accumulator, in order */
            for (int64_t co = 0; co < cog; ++co)
                for (int64_t jb = 0; jb < nkbi; ++jb)
                    for (int j = 0; j < nrw; ++j) {
                        const int64_t k = (kb0 + jb) * nrw + j;
                        if (k >= K) break;
                        const IG_T *a = acc + (((co / mrw) * wp.chunkb + jb) * mrw * nrw +
                                               (co % mrw) * nrw + j) * lanes;
                        IG_T s = 0;
                        for (int l = 0; l < lanes; ++l) s += a[l];
                        gw[(gi * cog + co) * K + k] = s;
                    }
        }
    }
    return CC_OK;
}

#undef IG_FN
#undef IG_CAT
#undef IG_CAT2
