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
 * each, MR rows per panel, k-major, zero rows past cog. */
static void IW_FN(iw_filter_)(const cc_geom *g, const iw_plan *p, const IG_T *w, IG_T *ap) {
    const int64_t cig = p->cig, cog = p->cog, mr = p->mr, mpad = p->mpan * mr;
    const int64_t rows = g->groups * mpad;
#pragma omp parallel for schedule(static) num_threads(p->nt) if (p->nt > 1)
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t gi = r / mpad, co = r % mpad, ip = co / mr, i = co % mr;
        for (int64_t ci = 0; ci < cig; ++ci) {
            IG_T u[16];
            if (co < cog) {
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
                    u[q * 4 + 0] = b0;
                    u[q * 4 + 1] = (IG_T)0.5 * (b0 + b1 + b2);
                    u[q * 4 + 2] = (IG_T)0.5 * (b0 - b1 + b2);
                    u[q * 4 + 3] = b2;
                }
            } else {
                for (int q = 0; q < 16; ++q) u[q] = 0;
            }
            for (int xi = 0; xi < 16; ++xi)
                ap[(((gi * 16 + xi) * p->mpan + ip) * cig + ci) * mr + i] = u[xi];
        }
    }
}

/* The transformed input of one panel of NR tiles of image n, group gi:
 * vb[(xi * cig + ci) * NR + j]; tiles past the image are zero columns.
 * The panel is cut into runs of tiles of one tile row; for each run the
 * four input rows of its windows are split into even and odd columns
 * (zeros outside the image), so that window column c of tile q is
 * element q + c / 2 of phase c % 2 and the transform is unit-stride loops
 * over the run's tiles (vectorised by the compiler).  es: 8 split rows of
 * tw + 2 elements. */
static void IW_FN(iw_input_)(const cc_geom *g, const iw_plan *p, const IG_T *x, int64_t n,
                             int64_t gi, int64_t t0, IG_T *vb, IG_T *es) {
    const int64_t H = g->in[1], W = g->in[2], nr = p->nr, cig = p->cig;
    const int64_t pt = g->pad[1], pl = g->pad[2], tw = p->tw, sl = tw + 2;
    const int64_t vs = cig * nr; /* between xi */
    const int64_t tend = cc_min64(t0 + nr, p->ntiles);
    for (int64_t ci = 0; ci < cig; ++ci) {
        const IG_T *xc = x + ((n * g->c_in + gi * cig + ci) * H) * W;
        IG_T *v = vb + ci * nr;
        for (int64_t t = t0; t < tend;) {
            const int64_t th = t / tw, qa = t % tw, qb = cc_min64(tw, qa + (tend - t));
            const int64_t j0 = t - t0, nq = qb - qa;
            /* rows 2 th - pt + r, columns 2 q - pl + c for q in [qa, qb], c < 2 */
            for (int r = 0; r < 4; ++r) {
                const int64_t ih = 2 * th - pt + r;
                IG_T *e = es + (2 * r) * sl, *o = e + sl;
                if (ih < 0 || ih >= H) {
                    for (int64_t q = 0; q <= nq; ++q) e[q] = o[q] = 0;
                    continue;
                }
                const IG_T *row = xc + ih * W;
                for (int64_t q = 0; q <= nq; ++q) {
                    const int64_t c = 2 * (qa + q) - pl;
                    e[q] = c >= 0 && c < W ? row[c] : (IG_T)0;
                    o[q] = c + 1 >= 0 && c + 1 < W ? row[c + 1] : (IG_T)0;
                }
            }
            const IG_T *restrict e0 = es, *restrict o0 = es + sl;
            const IG_T *restrict e1 = es + 2 * sl, *restrict o1 = es + 3 * sl;
            const IG_T *restrict e2 = es + 4 * sl, *restrict o2 = es + 5 * sl;
            const IG_T *restrict e3 = es + 6 * sl, *restrict o3 = es + 7 * sl;
            IG_T *restrict vj = v + j0;
            /* B^T d down the columns (d_rc = row r, column c), then along the rows */
#pragma GCC ivdep
            for (int64_t q = 0; q < nq; ++q) {
                IG_T a[4][4];
                const IG_T d0[4] = {e0[q], o0[q], e0[q + 1], o0[q + 1]};
                const IG_T d1[4] = {e1[q], o1[q], e1[q + 1], o1[q + 1]};
                const IG_T d2[4] = {e2[q], o2[q], e2[q + 1], o2[q + 1]};
                const IG_T d3[4] = {e3[q], o3[q], e3[q + 1], o3[q + 1]};
                for (int c = 0; c < 4; ++c) {
                    a[0][c] = d0[c] - d2[c];
                    a[1][c] = d1[c] + d2[c];
                    a[2][c] = d2[c] - d1[c];
                    a[3][c] = d1[c] - d3[c];
                }
                for (int r = 0; r < 4; ++r) {
                    vj[(r * 4 + 0) * vs + q] = a[r][0] - a[r][2];
                    vj[(r * 4 + 1) * vs + q] = a[r][1] + a[r][2];
                    vj[(r * 4 + 2) * vs + q] = a[r][2] - a[r][1];
                    vj[(r * 4 + 3) * vs + q] = a[r][1] - a[r][3];
                }
            }
            t += nq;
        }
        for (int64_t j = tend - t0; j < nr; ++j)
            for (int xi = 0; xi < 16; ++xi) v[xi * vs + j] = 0;
    }
}

/* Y = A^T M A (+ bias) of the panel's tiles into y, clipped at the image's
 * bottom and right edges: A^T = [1 1 1 0; 0 1 -1 -1].  Per run of tiles of
 * one tile row, unit-stride loops over the tiles write the two output rows
 * interleaved into es (2 rows of 2 (tw + 1) elements), which are then
 * copied to y. */
static void IW_FN(iw_output_)(const cc_geom *g, const iw_plan *p, const IG_T *mb, const IG_T *bias,
                              int64_t n, int64_t gi, int64_t t0, IG_T *y, IG_T *es) {
    const int64_t OH = g->out[1], OW = g->out[2], nr = p->nr, cog = p->cog, tw = p->tw;
    const int64_t ms = p->mpan * p->mr * nr; /* between xi */
    const int64_t tend = cc_min64(t0 + nr, p->ntiles), sl = 2 * (tw + 1);
    for (int64_t co = 0; co < cog; ++co) {
        const IG_T bv = bias ? bias[gi * cog + co] : (IG_T)0;
        IG_T *yc = y + (n * g->c_out + gi * cog + co) * OH * OW;
        for (int64_t t = t0; t < tend;) {
            const int64_t th = t / tw, qa = t % tw, qb = cc_min64(tw, qa + (tend - t));
            const int64_t nq = qb - qa;
            const IG_T *restrict m = mb + co * nr + (t - t0);
            IG_T *restrict r0 = es, *restrict r1 = es + sl;
#pragma GCC ivdep
            for (int64_t q = 0; q < nq; ++q) {
                IG_T s0[4], s1[4]; /* A^T M: rows 0 and 1 */
                for (int c = 0; c < 4; ++c) {
                    const IG_T m0 = m[c * ms + q], m1 = m[(4 + c) * ms + q];
                    const IG_T m2 = m[(8 + c) * ms + q], m3 = m[(12 + c) * ms + q];
                    s0[c] = m0 + m1 + m2;
                    s1[c] = m1 - m2 - m3;
                }
                r0[2 * q] = s0[0] + s0[1] + s0[2] + bv;
                r0[2 * q + 1] = s0[1] - s0[2] - s0[3] + bv;
                r1[2 * q] = s1[0] + s1[1] + s1[2] + bv;
                r1[2 * q + 1] = s1[1] - s1[2] - s1[3] + bv;
            }
            const int64_t oh = 2 * th, ow = 2 * qa, nw = cc_min64(2 * nq, OW - ow);
            IG_T *d = yc + oh * OW + ow;
            for (int64_t c = 0; c < nw; ++c) d[c] = r0[c];
            if (oh + 1 < OH)
                for (int64_t c = 0; c < nw; ++c) d[OW + c] = r1[c];
            t += nq;
        }
    }
}

int IW_FN(cc_conv_fwd_wino_)(const cc_geom *g, const IG_T *x, const IG_T *w, const IG_T *bias,
                              IG_T *y, void *ws, int64_t ws_bytes, int nthreads) {
    if (!cc_wino_applies(g)) return CC_ERR_ARG;
    if (g->batch == 0 || g->c_out == 0) return CC_OK;
    const IG_KERN_T *kern = IG_KERN();
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
            const int64_t pb = it % p.npanels, r = it / p.npanels;
            const int64_t gi = r % g->groups, n = r / g->groups;
            const int64_t t0 = pb * nr;
            IW_FN(iw_input_)(g, &p, x, n, gi, t0, vb, es);
            for (int xi = 0; xi < 16; ++xi) {
                const IG_T *apx = ap + (gi * 16 + xi) * mpad * p.cig;
                for (int64_t ip = 0; ip < p.mpan; ++ip)
                    kern->ukr(p.cig, apx + ip * p.mr * p.cig, vb + xi * p.cig * nr,
                              mb + (xi * mpad + ip * p.mr) * nr, nr, 1, NULL);
            }
            IW_FN(iw_output_)(g, &p, mb, bias, n, gi, t0, y, es);
        }
    }
    return CC_OK;
}

#undef IW_FN
#undef IW_CAT
#undef IW_CAT2
