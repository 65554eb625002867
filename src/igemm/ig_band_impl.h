/*
 * The zero-padded input band of an implicit-GEMM tile (ig_plan.h), shared by
 * the forward (ig_conv_impl.h) and the weight gradient (ig_wgrad_impl.h).
 * Included with IG_T, IG_KERN_T and IG_FN(name) defined; everything here is
 * static.  With column stride 1 a channel's rows go through the instruction
 * set's row copy (kern->rows), one call per row phase; the column-strided
 * layouts below copy row by row.
 */
/* Short rows (a row of 56-112 bytes) are zeroed by an inline loop: a
 * memset call per row costs about as much as the zeroing itself there. */
#define IG_SHORT_ROW 64
/* Column strides from this one split a row into its phases by a tiled
 * transpose (IG_TJ places x IG_TP phases a tile); below it, one strided
 * gather per phase (its lines are shared by the phases then). */
#define IG_PHASE_BLOCKED_MIN 8
#define IG_TJ 8
#define IG_TP 64

static inline void IG_FN(ig_zero_)(IG_T *d, int64_t n) {
    if (n > IG_SHORT_ROW) {
        memset(d, 0, (size_t)n * sizeof(IG_T));
        return;
    }
    for (int64_t j = 0; j < n; ++j) d[j] = 0;
}

/* The zero-padded input band of a tile (ig_plan.h). */
static void IG_FN(ig_band_)(const cc_geom *g, const ig_plan *p, const IG_KERN_T *kern,
                            const IG_T *xg, int64_t od, int64_t oh0, int64_t ow0, int64_t Rr,
                            int64_t Wtt, IG_T *band) {
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2];
    const int64_t sh = g->stride[1], sw = g->stride[2];
    const int64_t rin = (Rr - 1) * sh + (g->k[1] - 1) * g->dil[1] + 1;
    const int64_t win = (Wtt - 1) * sw + (g->k[2] - 1) * g->dil[2] + 1;
    const int64_t ih0 = oh0 * sh - g->pad[1], iw0 = ow0 * sw - g->pad[2];
    const int64_t ca = iw0 < 0 ? cc_min64(-iw0, win) : 0; /* first copied column */
    const int64_t cb = cc_max64(ca, cc_min64(win, W - iw0)); /* one past the last */
    const int64_t blk = p->rows_ph * p->Wph; /* one phase block */
    /* stride 2: the even (e) and odd (o) phase of a row hold [0, nj) with
     * input data in [j0, j1), the same for every row; [jlo, jhi) has both */
    const int64_t nje = (win + 1) / 2, njo = win / 2;
    const int64_t je0 = cc_min64(nje, (ca + 1) / 2), jo0 = cc_min64(njo, ca / 2);
    const int64_t je1 = cc_max64(je0, cc_min64(nje, (cb + 1) / 2));
    const int64_t jo1 = cc_max64(jo0, cc_min64(njo, cb / 2));
    const int64_t jlo = cc_max64(je0, jo0), jhi = cc_max64(jlo, cc_min64(je1, jo1));
    /* stride > 2: the phases' bounds without a division per row and phase
     * (three 64-bit divisions each were 35% of a 3-D stride-(2, 4, 4)
     * layer's one-thread profile) */
    const int64_t wq = win / sw, wr = win % sw, aq = ca / sw, ar = ca % sw;
    const int64_t bq = cb / sw, br = cb % sw;
    for (int64_t ci = 0; ci < p->cig; ++ci)
        for (int64_t td = 0; td < g->k[0]; ++td) {
            const int64_t id = od * g->stride[0] - g->pad[0] + td * g->dil[0];
            IG_T *tdb = band + ci * p->CS + td * sh * sw * blk;
            if (sw == 1) {
                /* band rows rr = ph + sh q of row phase ph are rows q of its
                 * block, Wph apart, and input rows ih0 + rr, sh W apart: the
                 * rows inside the image in one call of the instruction set's
                 * row copy (ResNeXt's 14-wide rows: one masked vector each on
                 * AVX-512, four overlapping 16-byte pieces before), their
                 * padding columns and the rows outside zeroed.  Where rows
                 * overlap (Wph < win), a row's right padding is the next
                 * one's left padding, so the order of the writes is free. */
                const int in_d = !(id < 0 || id >= D) && ca < cb;
                const int64_t r_lo = in_d ? cc_min64(rin, cc_max64(0, -ih0)) : rin;
                const int64_t r_hi = in_d ? cc_max64(r_lo, cc_min64(rin, H - ih0)) : rin;
                for (int64_t ph = 0; ph < sh && ph < rin; ++ph) {
                    IG_T *pb = tdb + ph * blk;
                    const int64_t nq = cc_ceil_div(rin - ph, sh);
                    const int64_t q_lo = cc_min64(nq, cc_ceil_div(cc_max64(r_lo - ph, 0), sh));
                    const int64_t q_hi = cc_max64(q_lo, cc_min64(nq, cc_ceil_div(cc_max64(r_hi - ph, 0), sh)));
                    for (int64_t q = 0; q < q_lo; ++q) IG_FN(ig_zero_)(pb + q * p->Wph, win);
                    for (int64_t q = q_hi; q < nq; ++q) IG_FN(ig_zero_)(pb + q * p->Wph, win);
                    if (q_hi == q_lo) continue;
                    kern->rows(q_hi - q_lo, cb - ca,
                               xg + ((ci * D + id) * H + ih0 + ph + sh * q_lo) * W + iw0 + ca, sh * W,
                               pb + q_lo * p->Wph + ca, p->Wph, 0, (IG_T)0);
                    for (int64_t q = q_lo; q < q_hi; ++q) {
                        IG_T *d = pb + q * p->Wph;
                        for (int64_t j = 0; j < ca; ++j) d[j] = 0;
                        for (int64_t j = cb; j < win; ++j) d[j] = 0;
                    }
                }
                continue;
            }
            /* band row rr goes to phase rr % sh, row rr / sh (kept as
             * counters: a 64-bit division per row showed in profiles) */
            int64_t rph = 0, rq = 0;
            for (int64_t rr = 0; rr < rin; ++rr, rph = rph + 1 == sh ? 0 : rph + 1,
                         rq += rph == 0) {
                IG_T *dst = tdb + rph * sw * blk + rq * p->Wph;
                const int64_t ih = ih0 + rr;
                const int valid = !(id < 0 || id >= D || ih < 0 || ih >= H || ca >= cb);
                const IG_T *src = valid ? xg + ((ci * D + id) * H + ih) * W + iw0 : NULL;
                if (sw == 2) {
                    IG_T *de = dst, *dq = dst + blk;
                    if (!valid) {
                        IG_FN(ig_zero_)(de, nje);
                        IG_FN(ig_zero_)(dq, njo);
                        continue;
                    }
                    /* one pass over the row, both phases: band column c
                     * goes to phase c & 1, place c >> 1 */
                    for (int64_t j = 0; j < je0; ++j) de[j] = 0;
                    for (int64_t j = 0; j < jo0; ++j) dq[j] = 0;
                    for (int64_t j = je0; j < jlo; ++j) de[j] = src[2 * j];
                    for (int64_t j = jo0; j < jlo; ++j) dq[j] = src[2 * j + 1];
                    for (int64_t j = jlo; j < jhi; ++j) {
                        de[j] = src[2 * j];
                        dq[j] = src[2 * j + 1];
                    }
                    for (int64_t j = jhi; j < je1; ++j) de[j] = src[2 * j];
                    for (int64_t j = jhi; j < jo1; ++j) dq[j] = src[2 * j + 1];
                    for (int64_t j = je1; j < nje; ++j) de[j] = 0;
                    for (int64_t j = jo1; j < njo; ++j) dq[j] = 0;
                } else if (sw >= IG_PHASE_BLOCKED_MIN && valid) {
                    /* The row seen as a (rows of sw columns) matrix is
                     * transposed into the phase blocks: column c = j * sw +
                     * pw goes to phase pw, place j.  In tiles of IG_TJ x
                     * IG_TP, whose reads and writes stay in L1: one gather
                     * per phase read the row at a stride of sw elements,
                     * every load a line of its own (a 1-channel k1024
                     * stride-256 conv1d: 24% of its one-thread profile). */
                    const int64_t njmax = cc_ceil_div(win, sw);
                    for (int64_t jb = 0; jb < njmax; jb += IG_TJ) {
                        const int64_t je = cc_min64(njmax, jb + IG_TJ);
                        for (int64_t pb = 0; pb < sw; pb += IG_TP) {
                            const int64_t pe = cc_min64(sw, pb + IG_TP);
                            for (int64_t j = jb; j < je; ++j) {
                                const int64_t c0 = j * sw;
                                /* this row's columns in [ca, cb), and < win */
                                const int64_t lo = cc_max64(pb, ca - c0);
                                const int64_t hi = cc_min64(pe, cc_min64(cb, win) - c0);
                                const int64_t end = cc_min64(pe, win - c0);
                                IG_T *d = dst + j;
                                int64_t pw = pb;
                                for (; pw < lo && pw < end; ++pw) d[pw * blk] = 0;
                                for (; pw < hi; ++pw) d[pw * blk] = src[c0 + pw];
                                for (; pw < end; ++pw) d[pw * blk] = 0;
                            }
                        }
                    }
                } else {
                    /* phase pw holds columns pw, pw + sw, ...: [j0, j1) from the input */
                    for (int64_t pw = 0; pw < sw; ++pw) {
                        IG_T *d = dst + pw * blk;
                        /* ceil((v - pw) / sw) = v / sw + (pw < v % sw) */
                        const int64_t nj = wq + (pw < wr);
                        const int64_t j0 = valid ? cc_min64(nj, aq + (pw < ar)) : nj;
                        const int64_t j1 = valid ? cc_max64(j0, cc_min64(nj, bq + (pw < br))) : nj;
                        for (int64_t j = 0; j < j0; ++j) d[j] = 0;
                        const IG_T *s0 = valid ? src + pw : NULL;
                        for (int64_t j = j0; j < j1; ++j) d[j] = s0[j * sw];
                        for (int64_t j = j1; j < nj; ++j) d[j] = 0;
                    }
                }
            }
        }
}
