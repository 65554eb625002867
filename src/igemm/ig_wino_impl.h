/*
 * Winograd F(2x2, 3x3) forward body, included by ig_wino.c with IG_T
 * (element), IG_SFX (f32/f64), IG_KERN (the micro-kernel table getter) and
 * IG_KERN_T defined.  See ig_wino.h for the method and the layouts.
 */
#define IW_CAT2(a, b) a##b
#define IW_CAT(a, b) IW_CAT2(a, b)
#define IW_FN(name) IW_CAT(name, IG_SFX)

/* U = G g G^T of every (output channel, input channel) pair, stored as the
 * micro-kernel's A panels: one (group, xi) matrix of cog rows x cig columns
 * each, MR rows per panel, k-major, zero rows past cog.  Work items are the
 * panels; per input channel the MR rows' 16 values are made first, so the
 * stores are 16 sequential streams of MR values (a row at a time wrote 16
 * streams at a stride of MR). */
static void IW_FN(iw_filter_)(const cc_geom *g, const iw_plan *p, const IG_T *w, IG_T *ap) {
    const int64_t cig = p->cig, cog = p->cog, mr = p->mr, mpan = p->mpan;
    const int64_t panels = g->groups * mpan;
#pragma omp parallel for schedule(static) num_threads(p->nt) if (p->nt > 1)
    for (int64_t pi = 0; pi < panels; ++pi) {
        const int64_t gi = pi / mpan, ip = pi % mpan;
        for (int64_t ci = 0; ci < cig; ++ci) {
            IG_T u[16][IG_MR_MAX];
            for (int64_t i = 0; i < mr; ++i) {
                const int64_t co = ip * mr + i;
                if (co >= cog) {
                    for (int q = 0; q < 16; ++q) u[q][i] = 0;
                    continue;
                }
                const IG_T *k = w + ((gi * cog + co) * cig + ci) * 9;
                IG_T t[4][3]; /* G g: rows 0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 */
                for (int c = 0; c < 3; ++c) {
                    const IG_T a0 = k[c], a1 = k[3 + c], a2 = k[6 + c];
                    t[0][c] = a0;
                    t[1][c] = (IG_T)0.5 * (a0 + a1 + a2);
                    t[2][c] = (IG_T)0.5 * (a0 - a1 + a2);
                    t[3][c] = a2;
                }
                for (int q = 0; q < 4; ++q) { /* (G g) G^T: the same on the columns */
                    const IG_T b0 = t[q][0], b1 = t[q][1], b2 = t[q][2];
                    u[q * 4 + 0][i] = b0;
                    u[q * 4 + 1][i] = (IG_T)0.5 * (b0 + b1 + b2);
                    u[q * 4 + 2][i] = (IG_T)0.5 * (b0 - b1 + b2);
                    u[q * 4 + 3][i] = b2;
                }
            }
            for (int xi = 0; xi < 16; ++xi) {
                IG_T *d = ap + (((gi * 16 + xi) * mpan + ip) * cig + ci) * mr;
                for (int64_t i = 0; i < mr; ++i) d[i] = u[xi][i];
            }
        }
    }
}

/* floor(a / b), b > 0 */
static inline int64_t IW_FN(iw_fdiv_)(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The transformed input of the panel of NR tiles from batch tile t0, group
 * gi: vb[(xi * cig + ci) * NR + j]; tiles past the batch are zero columns.
 * The panel is cut into runs of tiles of one tile row of one phase of one
 * image; for
 * each run the four input rows of its windows are split into even and odd
 * window columns (zeros outside the image), so that window column c of
 * tile q is element q + c / 2 of phase c % 2, and the instruction set's
 * kernel (ig_wtr.inc) transforms the run.  es: 8 split rows of tw + 2
 * elements. */
static void IW_FN(iw_input_)(const cc_geom *g, const iw_plan *p, const IG_KERN_T *kern,
                             const IG_T *x, int64_t gi, int64_t t0, IG_T *vb, IG_T *es) {
    const int64_t H = g->in[1], W = g->in[2], nr = p->nr, cig = p->cig;
    const int64_t pt = g->pad[1], pl = g->pad[2], dh = p->dh, dw = p->dw, sl = p->tw + 2;
    const int64_t vs = cig * nr; /* between xi */
    const int64_t tend = cc_min64(t0 + nr, p->ttotal);
    for (int64_t ci = 0; ci < cig; ++ci) {
        IG_T *v = vb + ci * nr;
        for (int64_t t = t0; t < tend;) {
            int64_t a, b, th, qa, twb;
            const int64_t n = t / p->ntiles;
            const IG_T *xc = x + ((n * g->c_in + gi * cig + ci) * H) * W;
            iw_locate(g, p, t - n * p->ntiles, &a, &b, &th, &qa, &twb);
            const int64_t j0 = t - t0, nq = cc_min64(twb, qa + (tend - t)) - qa;
            /* window column c of tile q: input column c0 + dw (2 q + c) */
            const int64_t c0 = b - pl + 2 * dw * qa;
            /* q in [qlo, qhi): both window columns of phase 0 and 1 inside */
            const int64_t qlo = cc_min64(nq + 1, cc_max64(0, -IW_FN(iw_fdiv_)(c0, 2 * dw)));
            const int64_t qhi = cc_max64(qlo, cc_min64(nq + 1, IW_FN(iw_fdiv_)(W - 1 - dw - c0, 2 * dw) + 1));
            for (int r = 0; r < 4; ++r) {
                const int64_t ih = a - pt + dh * (2 * th + r);
                IG_T *e = es + (2 * r) * sl, *o = e + sl;
                if (ih < 0 || ih >= H) {
                    for (int64_t q = 0; q <= nq; ++q) e[q] = o[q] = 0;
                    continue;
                }
                const IG_T *row = xc + ih * W;
                for (int64_t q = 0; q <= nq; ++q) {
                    if (q == qlo) {
                        const IG_T *s0 = row + c0;
                        for (; q < qhi; ++q) {
                            e[q] = s0[2 * dw * q];
                            o[q] = s0[2 * dw * q + dw];
                        }
                        if (q > nq) break;
                    }
                    const int64_t c = c0 + 2 * dw * q;
                    e[q] = c >= 0 && c < W ? row[c] : (IG_T)0;
                    o[q] = c + dw >= 0 && c + dw < W ? row[c + dw] : (IG_T)0;
                }
            }
            kern->wtin(nq, es, sl, v + j0, vs);
            t += nq;
        }
        for (int64_t j = tend - t0; j < nr; ++j)
            for (int xi = 0; xi < 16; ++xi) v[xi * vs + j] = 0;
    }
}

/* Y = A^T M A (+ bias) of the panel's tiles into y, clipped at the image's
 * bottom and right edges: A^T = [1 1 1 0; 0 1 -1 -1].  Per run of tiles of
 * one tile row of one phase, the instruction set's kernel (ig_wtr.inc)
 * writes the two output rows into y (dilation 1, not clipped), or into es
 * (2 rows of 2 (tw + 1) elements) whose part inside the image is then
 * copied (every dw-th column with dilation). */
static void IW_FN(iw_output_)(const cc_geom *g, const iw_plan *p, const IG_KERN_T *kern,
                              const IG_T *mb, const IG_T *bias, int64_t gi, int64_t t0, IG_T *y,
                              IG_T *es) {
    const int64_t OH = g->out[1], OW = g->out[2], nr = p->nr, cog = p->cog;
    const int64_t dh = p->dh, dw = p->dw;
    const int64_t ms = p->mpan * p->mr * nr; /* between xi */
    const int64_t tend = cc_min64(t0 + nr, p->ttotal), sl = 2 * (p->tw + 1);
    for (int64_t co = 0; co < cog; ++co) {
        const IG_T bv = bias ? bias[gi * cog + co] : (IG_T)0;
        for (int64_t t = t0; t < tend;) {
            int64_t a, b, th, qa, twb;
            const int64_t n = t / p->ntiles;
            IG_T *yc = y + (n * g->c_out + gi * cog + co) * OH * OW;
            iw_locate(g, p, t - n * p->ntiles, &a, &b, &th, &qa, &twb);
            const int64_t nq = cc_min64(twb, qa + (tend - t)) - qa;
            const int64_t oh = a + dh * 2 * th, ow = b + dw * 2 * qa;
            /* outputs of the run inside the image: columns ow + dw c, c < nw */
            const int64_t nw = cc_min64(2 * nq, cc_ceil_div(OW - ow, dw));
            const int row1 = oh + dh < OH;
            IG_T *d = yc + oh * OW + ow;
            if (dw == 1 && nw == 2 * nq && row1) { /* straight into y */
                kern->wtout(nq, mb + co * nr + (t - t0), ms, bv, d, d + dh * OW);
            } else {
                IG_T *r0 = es, *r1 = es + sl;
                kern->wtout(nq, mb + co * nr + (t - t0), ms, bv, r0, r1);
                if (dw == 1) {
                    memcpy(d, r0, (size_t)nw * sizeof(IG_T));
                    if (row1) memcpy(d + dh * OW, r1, (size_t)nw * sizeof(IG_T));
                } else {
                    for (int64_t c = 0; c < nw; ++c) d[c * dw] = r0[c];
                    if (row1)
                        for (int64_t c = 0; c < nw; ++c) d[dh * OW + c * dw] = r1[c];
                }
            }
            t += nq;
        }
    }
}

int IW_FN(cc_conv_fwd_wino_)(const cc_geom *g, const IG_T *x, const IG_T *w, const IG_T *bias,
                              IG_T *y, void *ws, int64_t ws_bytes, int nthreads) {
    if (!cc_wino_applies(g)) return CC_ERR_ARG;
    if (g->batch == 0 || g->c_out == 0) return CC_OK;
    const IG_KERN_T *kern = IG_KERN();
    if (kern->mr > IG_MR_MAX) return CC_ERR_ARG; /* the filter transform's row buffer */
    iw_plan p;
    iw_plan_make(g, nthreads, kern->mr, kern->nr, &p);
    const int64_t es = (int64_t)sizeof(IG_T);
    if (iw_plan_bytes(&p, es) > ws_bytes || ws == NULL) return CC_ERR_NOMEM;
    uintptr_t at = ((uintptr_t)ws + 63) & ~(uintptr_t)63;
    IG_T *ap = (IG_T *)at;
    at += (uintptr_t)ig_round_up(p.ap_elems * es, 64);
    IG_T *slabs = (IG_T *)at;
    IW_FN(iw_filter_)(g, &p, w, ap);
    const int64_t mpad = p.mpan * p.mr, nr = p.nr;
#pragma omp parallel num_threads(p.nt) if (p.nt > 1)
    {
        const int tid = omp_get_thread_num();
        IG_T *vb = slabs + (int64_t)tid * p.per_thread;
        IG_T *mb = vb + p.vb_elems;
        IG_T *es = mb + p.mb_elems;
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < p.items; ++it) {
            const int64_t pb = it % p.npanels, gi = it / p.npanels;
            const int64_t t0 = pb * nr;
            IW_FN(iw_input_)(g, &p, kern, x, gi, t0, vb, es);
            for (int xi = 0; xi < 16; ++xi) {
                const IG_T *apx = ap + (gi * 16 + xi) * mpad * p.cig;
                for (int64_t ip = 0; ip < p.mpan; ++ip)
                    kern->ukr(p.cig, apx + ip * p.mr * p.cig, vb + xi * p.cig * nr,
                              mb + (xi * mpad + ip * p.mr) * nr, nr, 1, NULL);
            }
            IW_FN(iw_output_)(g, &p, kern, mb, bias, gi, t0, y, es);
        }
    }
    return CC_OK;
}

#undef IW_FN
#undef IW_CAT
#undef IW_CAT2
