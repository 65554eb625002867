/*
 * Implicit-GEMM forward body, included by ig_conv.c with IG_T (element),
 * IG_SFX (f32/f64) and IG_KERN (the micro-kernel table getter) defined.
 * See igemm.h for the method and ig_plan.h for the work split.
 */
#define IG_CAT2(a, b) a##b
#define IG_CAT(a, b) IG_CAT2(a, b)
#define IG_FN(name) IG_CAT(name, IG_SFX)

#include "ig_band_impl.h"

/* Prefetch of the next item's input rows and output rows, spread over the
 * micro-kernel calls of this one.  A band reads, per input channel, a few
 * KiB of consecutive rows (ResNeXt: 16 rows of 28); such short streams are
 * over before the hardware prefetcher has learnt them, and the band copy
 * waited on memory while the FMA units idled (resnext_28: the copy in and
 * out took as long as the micro-kernel).  Whole-row 2-D tiles only. */
typedef struct IG_FN(ig_pf_) {
    const char *span[2];        /* first byte of channel 0's span: in, out */
    int64_t cs[2];              /* channel strides, bytes */
    int64_t bytes[2];           /* span lengths, whole 64-byte lines */
    int64_t nch[2];             /* channels */
    int part;                   /* part being prefetched (2: done) */
    int64_t ch;                 /* its channel */
    const char *cur, *end;      /* next line and the end of the channel's span */
} IG_FN(ig_pf_);

/* Not with the 16-lane float32 kernels (lanes >= 16): measured on a Xeon
 * (Sapphire Rapids class, 2 MiB L2), 2 threads, builds alternated 12 times,
 * the prefetches stalled on full fill buffers and made the ResNeXt layers
 * slower (without / with: resnext_28_s2 0.85, resnext_28 0.91, resnext_14
 * 0.88, resnext_32x4d 1.02).  They were measured 6-18% faster on an AMD
 * EPYC with AVX2 (683d7ec). */
static void IG_FN(ig_pf_init_)(const cc_geom *g, const ig_plan *p, int lanes, const IG_T *x,
                               IG_T *y, int64_t it, IG_FN(ig_pf_) *pf) {
    memset(pf, 0, sizeof *pf);
    pf->part = 2; /* nothing to do */
    if (sizeof(IG_T) == 4 && lanes >= 16) return;
    if (it >= p->items || p->nw != 1 || g->k[0] != 1 || g->in[0] != 1) return;
    const int64_t es = (int64_t)sizeof(IG_T), H = g->in[1], W = g->in[2];
    const int64_t Ho = g->out[1], Wo = g->out[2];
    int64_t r = it / p->nchunks / p->nw;
    const int64_t th = r % p->nh; r /= p->nh;
    const int64_t gi = r % g->groups, n = r / g->groups;
    const int64_t oh0 = th * p->R, Rr = cc_min64(p->R, Ho - oh0);
    const int64_t ih0 = oh0 * g->stride[1] - g->pad[1];
    const int64_t lo = cc_max64(0, ih0), hi = cc_min64(H, ih0 + p->rows_in);
    if (hi <= lo || Rr <= 0) return;
    pf->span[0] = (const char *)(x + ((n * g->c_in + gi * p->cig) * H + lo) * W);
    pf->cs[0] = H * W * es;
    pf->bytes[0] = ((hi - lo) * W * es + 63) / 64 * 64;
    pf->nch[0] = p->cig;
    pf->span[1] = (const char *)(y + ((n * g->c_out + gi * p->cog) * Ho + oh0) * Wo);
    pf->cs[1] = Ho * Wo * es;
    pf->bytes[1] = (Rr * Wo * es + 63) / 64 * 64;
    pf->nch[1] = p->cog;
    pf->part = pf->nch[0] > 0 && pf->nch[1] > 0 ? 0 : 2;
    pf->cur = pf->span[0];
    pf->end = pf->cur + pf->bytes[0];
}

static inline int64_t IG_FN(ig_pf_total_)(const IG_FN(ig_pf_) *pf) {
    return pf->part == 2 ? 0 : (pf->nch[0] * pf->bytes[0] + pf->nch[1] * pf->bytes[1]) / 64;
}

/* Issue the next `count` prefetches (read intent for the output too: the
 * lines may still be another thread's).  A line is a pointer step; the
 * channel and part advance at a span's end (an address formed from the
 * channel and line per prefetch, with its multiply, was 7% of a one-thread
 * resnext_28 profile). */
static inline void IG_FN(ig_pf_step_)(IG_FN(ig_pf_) *pf, int64_t count) {
    while (count > 0 && pf->part < 2) {
        const char *c = pf->cur;
        const int64_t n = cc_min64(count, (pf->end - c) / 64);
        for (int64_t i = 0; i < n; ++i, c += 64) {
#if defined(__GNUC__)
            __builtin_prefetch(c, 0, 2);
#endif
        }
        count -= n;
        pf->cur = c;
        if (c == pf->end) {
            if (++pf->ch == pf->nch[pf->part]) {
                pf->ch = 0;
                if (++pf->part == 2) break;
            }
            pf->cur = pf->span[pf->part] + pf->ch * pf->cs[pf->part];
            pf->end = pf->cur + pf->bytes[pf->part];
        }
    }
}

static void IG_FN(ig_item_)(const cc_geom *g, const ig_plan *p, const IG_T *x, const IG_T *ap,
                            const int64_t *koff, const IG_T *bias, IG_T *y, IG_T *band,
                            IG_T *bp, IG_T *tile, int64_t *poff, int64_t it,
                            const IG_KERN_T *kern) {
    const int mr = p->mr, nr = p->nr;
    const int64_t Do = g->out[0], Ho = g->out[1], Wo = g->out[2];
    const int64_t plane = Do * Ho * Wo;
    int64_t r = it;
    const int64_t ch = r % p->nchunks; r /= p->nchunks;
    const int64_t tw = r % p->nw; r /= p->nw;
    const int64_t th = r % p->nh; r /= p->nh;
    const int64_t od = r % Do; r /= Do;
    const int64_t gi = r % g->groups;
    const int64_t n = r / g->groups;
    const int64_t oh0 = th * p->R, Rr = cc_min64(p->R, Ho - oh0);
    const int64_t ow0 = tw * p->Wt, Wtt = cc_min64(p->Wt, Wo - ow0);
    const int64_t npos = Rr * Wtt;
    const int64_t pan0 = ch * p->chunk, npan = cc_min64(p->chunk, p->mpan - pan0);
    if (npan <= 0 || npos <= 0) return;

    IG_FN(ig_band_)(g, p, kern, x + (n * g->c_in + gi * p->cig) * g->in[0] * g->in[1] * g->in[2], od,
                    oh0, ow0, Rr, Wtt, band);
    /* a tile's positions are consecutive outputs: whole rows, or part of one */
    IG_T *ybase = y + ((n * g->c_out + gi * p->cog) * Do + od) * Ho * Wo + oh0 * Wo + ow0;
    if (p->direct) {
        /* wide positions q = r * Wph + c over the band, kept where c < Wtt;
         * the micro-kernel writes whole panels of a wide C block (bp), whose
         * output columns are then copied to y with the bias */
        const int64_t Wb = p->Wph, nqw = (Rr - 1) * Wb + Wtt;
        const int64_t ldw = ig_round_up(nqw, nr);
        IG_T *cw = bp;
        IG_FN(ig_pf_) pf;
        IG_FN(ig_pf_init_)(g, p, kern->lanes, x, y, it + p->nt, &pf);
        const int64_t ncalls = cc_ceil_div(p->K, p->kc) * cc_ceil_div(nqw, nr) * npan;
        const int64_t per = cc_ceil_div(IG_FN(ig_pf_total_)(&pf), ncalls);
        for (int64_t pc = 0; pc < p->K; pc += p->kc) {
            const int64_t kcc = cc_min64(p->kc, p->K - pc);
            for (int64_t q0 = 0; q0 < nqw; q0 += nr) {
                /* the last micro-tile: as many vectors as its columns need */
                const int nv = (int)cc_ceil_div(cc_min64(nr, nqw - q0), kern->lanes);
                for (int64_t ip = 0; ip < npan; ++ip) {
                    IG_FN(ig_pf_step_)(&pf, per);
                    const IG_T *apan = ap + ((gi * p->mpan + pan0 + ip) * p->K + pc) * mr;
                    IG_T *c = cw + ip * mr * ldw + q0;
                    if (nv * kern->lanes < nr)
                        kern->ukrin(nv, kcc, apan, band + q0, koff + pc, c, ldw, pc == 0, NULL);
                    else
                        kern->ukri(kcc, apan, band + q0, koff + pc, c, ldw, pc == 0, NULL);
                }
            }
        }
        const int64_t co0 = pan0 * mr, nco = cc_min64(npan * mr, p->cog - co0);
        for (int64_t i = 0; i < nco; ++i) {
            const IG_T bv = bias ? bias[gi * p->cog + co0 + i] : (IG_T)0;
            kern->rows(Rr, Wtt, cw + i * ldw, Wb, ybase + (co0 + i) * plane, Wo, 1, bv);
        }
        return;
    }
    for (int64_t q = 0; q < npos; ++q)
        poff[q] = (q / Wtt) * p->Wph + (q % Wtt);

    const int64_t nqp = cc_ceil_div(npos, nr);
    for (int64_t pc = 0; pc < p->K; pc += p->kc) {
        const int64_t kcc = cc_min64(p->kc, p->K - pc);
        const int first = pc == 0;
        /* B block: kcc x npos, NR positions per micro-panel, packed by the
         * panel's runs of consecutive band positions (a panel wraps output
         * rows narrower than NR: 28-wide rows give NR = 48 three runs).
         * The packing's reads past a run stay inside this thread's slab
         * (the B block follows the band), its writes past the block inside
         * the tile that follows it. */
        for (int64_t jp = 0; jp < nqp; ++jp) {
            const int64_t q0 = jp * nr, nq = cc_min64(nr, npos - q0);
            const int64_t *pq = poff + q0;
            int64_t roff[IG_NR_MAX];
            int rst[IG_NR_MAX + 1];
            int nruns = 0;
            for (int64_t j = 0; j < nq; ++j)
                if (j == 0 || pq[j] != pq[j - 1] + 1) {
                    rst[nruns] = (int)j;
                    roff[nruns++] = pq[j] - j;
                }
            rst[nruns] = (int)nq;
            kern->packr(kcc, band, koff + pc, nruns, roff, rst, (int)nq, bp + jp * kcc * nr);
        }
        for (int64_t jp = 0; jp < nqp; ++jp) {
            const int64_t q0 = jp * nr, nq = cc_min64(nr, npos - q0);
            const IG_T *bpan = bp + jp * kcc * nr;
            /* a partial micro-panel runs as many vectors as its columns
             * need (a 14x14 image's 196 positions: 4 x 48 + 16 columns,
             * not 5 x 48), straight into the output when they fill them */
            const int nv = (int)cc_ceil_div(nq, kern->lanes);
            const int narrow = nv * kern->lanes < nr;
            for (int64_t ip = 0; ip < npan; ++ip) {
                const int64_t co = (pan0 + ip) * mr, nm = cc_min64(mr, p->cog - co);
                const IG_T *apan = ap + ((gi * p->mpan + pan0 + ip) * p->K + pc) * mr;
                IG_T *c = ybase + co * plane + q0;
                const IG_T *brow = bias ? bias + gi * p->cog + co : NULL;
                if (nm == mr && nq == nr) {
                    kern->ukr(kcc, apan, bpan, c, plane, first, brow);
                } else if (nm == mr && narrow && nv * kern->lanes == nq) {
                    kern->ukrn(nv, kcc, apan, bpan, c, plane, first, brow);
                } else {
                    if (narrow)
                        kern->ukrn(nv, kcc, apan, bpan, tile, nr, 1, NULL);
                    else
                        kern->ukr(kcc, apan, bpan, tile, nr, 1, NULL);
                    for (int64_t i = 0; i < nm; ++i)
                        for (int64_t j = 0; j < nq; ++j) {
                            const IG_T prev = first ? (brow ? brow[i] : (IG_T)0) : c[i * plane + j];
                            c[i * plane + j] = prev + tile[i * nr + j];
                        }
                }
            }
        }
    }
}

int IG_FN(cc_conv_fwd_igemm_)(const cc_geom *g, const IG_T *x, const IG_T *w, const IG_T *bias,
                               IG_T *y, void *ws, int64_t ws_bytes, int nthreads) {
    if (!cc_geom_valid(g)) return CC_ERR_ARG;
    if (g->batch == 0 || g->c_out == 0 || g->out[0] * g->out[1] * g->out[2] == 0) return CC_OK;
    if (g->c_in == 0) { /* nothing to sum: the bias alone */
        const int64_t plane = g->out[0] * g->out[1] * g->out[2];
        for (int64_t i = 0; i < g->batch * g->c_out; ++i)
            for (int64_t q = 0; q < plane; ++q) y[i * plane + q] = bias ? bias[i % g->c_out] : (IG_T)0;
        return CC_OK;
    }
    const int es = (int)sizeof(IG_T);
    const IG_KERN_T *kern = IG_KERN(); /* looked up once per call */
    if (kern->nr > IG_NR_MAX) return CC_ERR_ARG;
    ig_plan p;
    ig_plan_make(g, nthreads, es, kern->mr, kern->nr, kern->lanes, &p);
    if (!p.ok) return CC_ERR_ARG;
    if (ig_plan_bytes(&p, es) > ws_bytes || ws == NULL) return CC_ERR_NOMEM;
    /* carve the workspace (64-byte aligned pieces) */
    uintptr_t at = ((uintptr_t)ws + 63) & ~(uintptr_t)63;
    IG_T *ap = (IG_T *)at;
    at += (uintptr_t)ig_round_up(p.ap_elems * es, 64);
    int64_t *koff = (int64_t *)at;
    at += (uintptr_t)ig_round_up(p.K * 8, 64);
    IG_T *slabs = (IG_T *)at;
    at += (uintptr_t)(p.nt * p.per_thread * es);
    int64_t *poffs = (int64_t *)at;
    const int64_t al = 64 / es;
    const int64_t band_sz = ig_round_up(p.band_elems, al), bp_sz = ig_round_up(p.bp_elems, al);
    const int64_t poff_sz = ig_round_up(p.npos * 8, 64) / 8;
    const int64_t nr_pad = p.nr; /* direct mode: the band is read up to NR past its end */

    ig_plan_koff(g, &p, koff);
    const int64_t npanels = g->groups * p.mpan;
    const int mr = p.mr;
    const cc_stop_t stop = cc_stop_flag();
#pragma omp parallel num_threads(p.nt) if (p.nt > 1)
    {
        /* the weight, packed once: MR rows per panel, k-major, zero rows past cog */
#pragma omp for schedule(static)
        for (int64_t pi = 0; pi < npanels; ++pi) {
            const int64_t gi = pi / p.mpan, ip = pi % p.mpan;
            IG_T *dst = ap + pi * p.K * mr;
            /* k-major: MR row streams read, one sequential write (a pass per
             * row wrote the panel MR times at a stride of MR: 5.5% of a
             * wav2vec forward's one-thread profile on AVX-512, MR = 8) */
            const int64_t nm = cc_min64(mr, p.cog - ip * mr);
            const IG_T *src = w + (gi * p.cog + ip * mr) * p.K;
            if (nm == mr && mr == 8) {
                for (int64_t k = 0; k < p.K; ++k, dst += 8)
                    for (int i = 0; i < 8; ++i) dst[i] = src[i * p.K + k];
            } else if (nm == mr && mr == 4) {
                for (int64_t k = 0; k < p.K; ++k, dst += 4)
                    for (int i = 0; i < 4; ++i) dst[i] = src[i * p.K + k];
            } else {
                for (int64_t k = 0; k < p.K; ++k, dst += mr)
                    for (int i = 0; i < mr; ++i) dst[i] = i < nm ? src[i * p.K + k] : (IG_T)0;
            }
        }
        const int tid = omp_get_thread_num();
        IG_T *band = slabs + (int64_t)tid * p.per_thread;
        IG_T *bp = band + band_sz;
        IG_T *tile = bp + bp_sz;
        int64_t *poff = poffs + (int64_t)tid * poff_sz;
        if (p.direct) /* the micro-kernel reads up to NR elements past the band */
            memset(band + p.band_elems, 0, (size_t)(band_sz - p.band_elems + nr_pad) * sizeof(IG_T));
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < p.items; ++it)
            if (!CC_STOPPED(stop))
                IG_FN(ig_item_)(g, &p, x, ap, koff, bias, y, band, bp, tile, poff, it, kern);
    }
    return CC_OK;
}

#undef IG_FN
#undef IG_CAT
#undef IG_CAT2
