/*
 * Winograd F(2x2, 3x3) forward body, included by ig_wino.c with IG_T
 * (element), IG_SFX (f32/f64), IG_KERN (the micro-kernel table getter) and
 * IG_KERN_T defined.  See ig_wino.h for the method and the layouts.
 */
#define IW_CAT2(a, b) a##b
#define IW_CAT(a, b) IW_CAT2(a, b)
#define IW_FN(name) IW_CAT(name, IG_SFX)

/* U = G g G^T of every (output channel, input channel) pair, stored as the
 * micro-kernel's A panels: one (group, xi) matrix of cog rows x KD * cig columns
 * each, MR rows per panel, k-major, zero rows past cog.  Work items are the
 * panels; per input channel the MR rows' 16 values are made first, so the
 * stores are 16 sequential streams of MR values (a row at a time wrote 16
 * streams at a stride of MR). */
/* NaN or an infinity: x - x is 0 exactly for every finite x, NaN
 * otherwise (the kernels' wsplit tests the same way). */
#define IW_BAD(v) (!((v) - (v) == 0))

/* 1 when one of the n values at v is NaN or infinite: an OR of
 * comparisons, which the compiler vectorises (a test per weight inside the
 * transform below had it branch on every value). */
static int IW_FN(iw_nonfinite_)(const IG_T *v, int64_t n) {
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) bad |= IW_BAD(v[i]);
    return bad;
}

/* Returns 1 when a weight is NaN or infinite (the transform is done anyway). */
static int IW_FN(iw_filter_)(const cc_geom *g, const iw_plan *p, const IG_T *w, IG_T *ap) {
    const int64_t cig = p->cig, cog = p->cog, mr = p->mr, mpan = p->mpan, kd = p->kd;
    const int64_t ck = p->ck, panels = g->groups * mpan;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(p->nt) if (p->nt > 1) reduction(| : bad)
    for (int64_t pi = 0; pi < panels; ++pi) {
        const int64_t gi = pi / mpan, ip = pi % mpan;
        const int64_t rows = cc_min64(mr, cog - ip * mr); /* real rows of the panel */
        const IG_T *wp = w + (gi * cog + ip * mr) * ck * 9;
        bad |= IW_FN(iw_nonfinite_)(wp, rows * ck * 9);
        /* GEMM depth index kc = depth tap * cig + input channel */
        for (int64_t kc = 0; kc < ck; ++kc) {
            const int64_t ci = kc % cig, t = kc / cig;
            IG_T u[16][IG_MR_MAX];
            for (int64_t i = 0; i < mr; ++i) {
                if (i >= rows) {
                    for (int q = 0; q < 16; ++q) u[q][i] = 0;
                    continue;
                }
                const IG_T *k = wp + ((i * cig + ci) * kd + t) * 9;
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
                IG_T *d = ap + (((gi * 16 + xi) * mpan + ip) * ck + kc) * mr;
                for (int64_t i = 0; i < mr; ++i) d[i] = u[xi][i];
            }
        }
    }
    return bad;
}

/* The transformed input plane j of a panel's chunks (input depth chunk *
 * odl * sd - pd + j per run, zeros outside the input) of its runs
 * (iw_panel_runs) for group gi: vb[xi * vs + ci * NR + tile]; tiles past
 * the batch are zero columns.
 * For each run the four input rows of its windows are split into even and
 * odd window columns (zeros outside the image), so that window column c of
 * tile q is element q + c / 2 of phase c % 2, and the instruction set's
 * kernel (ig_wtr.inc) transforms the run.  es: 8 split rows of tw + 2
 * elements. */
static int IW_FN(iw_input_)(const cc_geom *g, const iw_plan *p, const IG_KERN_T *kern,
                            const IG_T *x, int64_t gi, const iw_run *runs, int nruns,
                            int64_t j, IG_T *vb, int64_t vs, IG_T *es) {
    int bad = 0; /* an input value read is NaN or infinite */
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
    const int64_t nr = p->nr, cig = p->cig;
    const int64_t pt = g->pad[1], dh = p->dh, dw = p->dw, sl = p->tw + 2;
    const int64_t used = runs[nruns - 1].j0 + runs[nruns - 1].nq;
    for (int64_t ci = 0; ci < cig; ++ci) {
        IG_T *v = vb + ci * nr;
        for (int k = 0; k < nruns; ++k) {
            const iw_run *u = runs + k;
            const int64_t nq = u->nq, c0 = u->c0, qlo = u->qlo, qhi = u->qhi;
            const int64_t n = u->n / p->nchunks, ch = u->n % p->nchunks;
            const int64_t id = ch * p->odl * g->stride[0] - g->pad[0] + j;
            const int din = id >= 0 && id < D; /* else the plane's rows are zeros */
            const IG_T *xc = x + (((n * g->c_in + gi * cig + ci) * D + (din ? id : 0)) * H) * W;
            for (int r = 0; r < 4; ++r) {
                const int64_t ih = u->a - pt + dh * (2 * u->th + r);
                IG_T *e = es + (2 * r) * sl, *o = e + sl;
                if (!din || ih < 0 || ih >= H) {
                    for (int64_t q = 0; q <= nq; ++q) e[q] = o[q] = 0;
                    continue;
                }
                const IG_T *row = xc + ih * W;
                for (int64_t q = 0; q <= nq; ++q) {
                    if (q == qlo) {
                        const IG_T *s0 = row + c0;
                        if (dw <= 2 && qhi > qlo) {
                            bad |= kern->wsplit(qhi - qlo, s0 + 2 * dw * qlo, (int)dw, e + qlo,
                                                o + qlo);
                            q = qhi;
                        }
                        for (; q < qhi; ++q) {
                            const IG_T ev = s0[2 * dw * q], ov = s0[2 * dw * q + dw];
                            e[q] = ev;
                            o[q] = ov;
                            bad |= IW_BAD(ev) | IW_BAD(ov);
                        }
                        if (q > nq) break;
                    }
                    const int64_t c = c0 + 2 * dw * q;
                    e[q] = c >= 0 && c < W ? row[c] : (IG_T)0;
                    o[q] = c + dw >= 0 && c + dw < W ? row[c + dw] : (IG_T)0;
                    bad |= IW_BAD(e[q]) | IW_BAD(o[q]);
                }
            }
            kern->wtin(nq, es, sl, v + u->j0, vs);
        }
        /* the columns past the tiles that the last micro-tile reads */
        const int64_t upto = cc_min64(nr, ig_round_up(used, kern->lanes));
        for (int xi = 0; xi < 16 && used < upto; ++xi)
            memset(v + xi * vs + used, 0, (size_t)(upto - used) * sizeof(IG_T));
    }
    return bad;
}

/* Y = A^T M A (+ bias) of a panel's runs into y, clipped at the image's
 * bottom and right edges: A^T = [1 1 1 0; 0 1 -1 -1].  Per run the
 * instruction set's kernel (ig_wtr.inc) writes the two output rows into y
 * (dilation 1, not clipped), or into es (2 rows of 2 (tw + 1) elements)
 * whose part inside the image is then copied (every dw-th column with
 * dilation). */
static void IW_FN(iw_output_)(const cc_geom *g, const iw_plan *p, const IG_KERN_T *kern,
                              const IG_T *mb, const IG_T *bias, int64_t gi, const iw_run *runs,
                              int nruns, int64_t l, IG_T *y, IG_T *es) {
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2], nr = p->nr, cog = p->cog;
    const int64_t dh = p->dh, dw = p->dw, sl = 2 * (p->tw + 1);
    const int64_t ms = p->mpan * p->mr * nr; /* between xi */
    for (int64_t co = 0; co < cog; ++co) {
        const IG_T bv = bias ? bias[gi * cog + co] : (IG_T)0;
        for (int k = 0; k < nruns; ++k) {
            const iw_run *u = runs + k;
            const int64_t nq = u->nq;
            /* the run's chunk's l-th output depth (none past OD) */
            const int64_t n = u->n / p->nchunks, od = u->n % p->nchunks * p->odl + l;
            if (od >= OD) continue;
            IG_T *yc = y + ((n * g->c_out + gi * cog + co) * OD + od) * OH * OW;
            const int64_t oh = u->a + dh * 2 * u->th, ow = u->b + dw * 2 * u->qa;
            /* outputs of the run inside the image: columns ow + dw c, c < nw */
            const int64_t nw = cc_min64(2 * nq, cc_ceil_div(OW - ow, dw));
            const int row1 = oh + dh < OH;
            IG_T *d = yc + oh * OW + ow;
            const IG_T *m = mb + co * nr + u->j0;
            if (dw == 1 && nw == 2 * nq && row1) { /* straight into y */
                kern->wtout(nq, m, ms, bv, d, d + dh * OW);
            } else {
                IG_T *r0 = es, *r1 = es + sl;
                kern->wtout(nq, m, ms, bv, r0, r1);
                if (dw == 1) {
                    memcpy(d, r0, (size_t)nw * sizeof(IG_T));
                    if (row1) memcpy(d + dh * OW, r1, (size_t)nw * sizeof(IG_T));
                } else {
                    for (int64_t c = 0; c < nw; ++c) d[c * dw] = r0[c];
                    if (row1)
                        for (int64_t c = 0; c < nw; ++c) d[dh * OW + c * dw] = r1[c];
                }
            }
        }
    }
}

/* check: return CC_NONFINITE as soon as a NaN or an infinity is seen in w
 * or in the input values the tiles read (y is then partly written). */
static int IW_FN(iw_fwd_)(const cc_geom *g, const IG_T *x, const IG_T *w, const IG_T *bias,
                          IG_T *y, void *ws, int64_t ws_bytes, int nthreads, int check) {
    if (!cc_wino_applies(g)) return CC_ERR_ARG;
    if (g->batch == 0 || g->c_out == 0) return CC_OK;
    const IG_KERN_T *kern = IG_KERN();
    /* the filter transform's rows and a panel's runs are on the stack */
    if (kern->mr > IG_MR_MAX || kern->nr > IW_NR_MAX) return CC_ERR_ARG;
    iw_plan p;
    iw_plan_make(g, nthreads, kern->mr, kern->nr, (int64_t)sizeof(IG_T), &p);
    const int64_t es = (int64_t)sizeof(IG_T);
    if (iw_plan_bytes(&p, es) > ws_bytes || ws == NULL) return CC_ERR_NOMEM;
    uintptr_t at = ((uintptr_t)ws + 63) & ~(uintptr_t)63;
    IG_T *ap = (IG_T *)at;
    at += (uintptr_t)ig_round_up(p.ap_elems * es, 64);
    IG_T *slabs = (IG_T *)at;
    if (IW_FN(iw_filter_)(g, &p, w, ap) && check) return CC_NONFINITE;
    const int64_t mpad = p.mpan * p.mr, nr = p.nr, cig = p.cig;
    const int64_t sd = g->stride[0], dd = g->dil[0];
    int seen = 0; /* a non-finite input value (check) */
#pragma omp parallel num_threads(p.nt) if (p.nt > 1)
    {
        const int tid = omp_get_thread_num();
        IG_T *vb = slabs + (int64_t)tid * p.per_thread;
        IG_T *mb = vb + p.vb_elems;
        IG_T *es = mb + p.mb_elems;
        IG_T *gb = es + p.es_elems;
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < p.items; ++it) {
            int stop;
#pragma omp atomic read
            stop = seen;
            if (stop) continue;
            const int64_t pb = it % p.npanels, gi = it / p.npanels;
            const int64_t odl = p.odl, np = p.np, vs = np * cig * nr; /* V: between xi */
            iw_run runs[IW_NR_MAX];
            const int nruns = iw_panel_runs(g, &p, pb * nr, runs);
            int bad = 0;
            for (int64_t j = 0; j < np; ++j)
                if (iw_plane_read(j, odl, sd, dd, p.kd))
                    bad |= IW_FN(iw_input_)(g, &p, kern, x, gi, runs, nruns, j, vb + j * cig * nr,
                                            vs, es);
            if (bad && check) {
#pragma omp atomic write
                seen = 1;
                continue;
            }
            /* the batch's last panel: as many vectors as its tiles need */
            const int nv = (int)cc_ceil_div(cc_min64(nr, p.ttotal - pb * nr), kern->lanes);
            for (int64_t l = 0; l < odl; ++l) {
                for (int xi = 0; xi < 16; ++xi) {
                    /* the depth's B: rows kd * cig + ci from its planes l * sd + kd * dd */
                    const IG_T *bpan = vb + xi * vs + l * sd * cig * nr;
                    if (dd > 1) {
                        for (int64_t t = 0; t < p.kd; ++t)
                            memcpy(gb + t * cig * nr, bpan + t * dd * cig * nr,
                                   (size_t)(cig * nr) * sizeof(IG_T));
                        bpan = gb;
                    }
                    const IG_T *apx = ap + (gi * 16 + xi) * mpad * p.ck;
                    for (int64_t ip = 0; ip < p.mpan; ++ip) {
                        const IG_T *apan = apx + ip * p.mr * p.ck;
                        IG_T *m = mb + (xi * mpad + ip * p.mr) * nr;
                        if (nv * kern->lanes < nr)
                            kern->ukrn(nv, p.ck, apan, bpan, m, nr, 1, NULL);
                        else
                            kern->ukr(p.ck, apan, bpan, m, nr, 1, NULL);
                    }
                }
                IW_FN(iw_output_)(g, &p, kern, mb, bias, gi, runs, nruns, l, y, es);
            }
        }
    }
    return seen ? CC_NONFINITE : CC_OK;
}

int IW_FN(cc_conv_fwd_wino_)(const cc_geom *g, const IG_T *x, const IG_T *w, const IG_T *bias,
                              IG_T *y, void *ws, int64_t ws_bytes, int nthreads) {
    return IW_FN(iw_fwd_)(g, x, w, bias, y, ws, ws_bytes, nthreads, 0);
}

int IW_FN(cc_conv_fwd_wino_checked_)(const cc_geom *g, const IG_T *x, const IG_T *w,
                                      const IG_T *bias, IG_T *y, void *ws, int64_t ws_bytes,
                                      int nthreads) {
    return IW_FN(iw_fwd_)(g, x, w, bias, y, ws, ws_bytes, nthreads, 1);
}

#undef IW_BAD
#undef IW_FN
#undef IW_CAT
#undef IW_CAT2
