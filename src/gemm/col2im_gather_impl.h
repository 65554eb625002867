/*
 * col2im in gather form, body instantiated once per element type by
 * col2im_gather.c with CC_T (the type) and CC_SFX (the name suffix).
 *
 * The scatter form (im2col_impl.h) adds every column row into x in turn:
 * a pass of read-modify-writes over the image per tap, at a stride where
 * the convolution has one (9 passes of 2-element strides for a 3x3
 * stride-2 layer), after a pass that set x to the bias.  Here each row of
 * x is formed once: the column-row segments that reach it are summed into
 * a small buffer that holds the row split by its stride phase (column iw
 * at phase iw % S2, place iw / S2), where every tap's segment is a
 * contiguous run; the buffer is then interleaved into x.  Rows are
 * (ci, i0, i1) of x; the taps (t0, t1) that reach a row come from lists
 * made once per call (no division per row).
 *
 * The column block holds every output position, row (ci, t0, t1, t2) at
 * col + row * ldc, as cc_im2col_ makes them; x = bias + the sum, every
 * element written (no pass setting x to the bias first).
 *
 * Measured against the scatter form, one thread, float32, AMD EPYC (AVX2),
 * the two alternated in one process, grad_input of stride-2 layers:
 * 8x256x56x56 3x3 32 groups 0.77-0.80 (12.2 vs 15.8 ms), 2x256x56x56
 * 0.81-0.89, 4x64x40x40 4 groups 0.86-0.91, 2x64x8x40x40 3x3x3 16 groups
 * 0.75; conv_transpose 4x32x40x40 k4 s2 0.98, stride 1 0.99, 1-D
 * 0.86-1.04.  Slower where the scatter form's padded plane applies
 * (output rows of <= 16): 4x512x28x28 64 groups 1.13, DCGAN's 8x256x8x8
 * k4 s2 conv_transpose 1.09; and on column blocks of part of the output
 * (adding into x set to the bias first: ResNet-50's stride-2 3x3 and stem,
 * UNet's conv_transpose) 0.99-1.13.  So it runs for whole outputs with
 * rows longer than 16 (gemm_conv_impl.h).
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)

/* non-negative remainder */
static inline int64_t CC_CAT(cc_gmod_, CC_SFX)(int64_t a, int64_t m) {
    const int64_t r = a % m;
    return r < 0 ? r + m : r;
}

/* Scratch of cc_col2im_gather_, in int64 words, made by
 * cc_col2im_gather_plan_ once for any number of calls on one geometry: the
 * two list lengths (2); per tap of the innermost dimension its valid
 * columns and place (3 K2); per row index of each outer dimension the list
 * of (tap, output index) pairs that reach it (I + 1 heads, K * O entries
 * of 2 words, I cursors to fill them); then the phase buffer of one row.  -1 where that would pass CC_GATHER_MAX_BYTES (the caller then
 * scatters). */
#ifndef CC_GATHER_MAX_BYTES
#define CC_GATHER_MAX_BYTES ((int64_t)16 << 20)
#endif
static inline int64_t CC_CAT(cc_gather_words_, CC_SFX)(const cc_geom *g, int64_t *nbuf) {
    const int64_t I2 = g->in[2], S2 = g->stride[2];
    const int64_t nph = S2 < I2 ? S2 : I2;
    *nbuf = nph * cc_ceil_div(I2, S2);
    double w = 2.0 + 3.0 * (double)g->k[2] + (double)*nbuf * (double)sizeof(CC_T) / 8.0 + 1.0;
    for (int d = 0; d < 2; ++d)
        w += 2.0 * (double)g->in[d] + 1.0 + 2.0 * (double)g->k[d] * (double)g->out[d];
    return w * 8.0 > (double)CC_GATHER_MAX_BYTES ? -1 : (int64_t)w;
}

int64_t CC_CAT(cc_col2im_gather_scratch_, CC_SFX)(const cc_geom *g) {
    int64_t nbuf;
    const int64_t w = CC_CAT(cc_gather_words_, CC_SFX)(g, &nbuf);
    return w < 0 ? -1 : w * 8;
}

/* The (tap, output index) pairs reaching each input index i of one
 * dimension (i = o * s - p + t * d), grouped by i: pairs of head[i] ..
 * head[i + 1], tap in et, output index in eo.  Returns the words used. */
static int64_t CC_CAT(cc_gather_lists_, CC_SFX)(int64_t I, int64_t O, int64_t K, int64_t s,
                                               int64_t p, int64_t dl, int64_t *head) {
    int64_t *et = head + I + 1;
    for (int64_t i = 0; i <= I; ++i) head[i] = 0;
    int64_t n = 0;
    for (int64_t t = 0; t < K; ++t)
        for (int64_t o = 0; o < O; ++o) {
            const int64_t i = o * s - p + t * dl;
            if (i >= 0 && i < I) { ++head[i + 1]; ++n; }
        }
    for (int64_t i = 0; i < I; ++i) head[i + 1] += head[i];
    int64_t *eo = et + n, *fill = eo + n; /* fill: I cursors, past the lists */
    for (int64_t i = 0; i < I; ++i) fill[i] = head[i];
    for (int64_t t = 0; t < K; ++t)
        for (int64_t o = 0; o < O; ++o) {
            const int64_t i = o * s - p + t * dl;
            if (i >= 0 && i < I) {
                et[fill[i]] = t;
                eo[fill[i]++] = o;
            }
        }
    return I + 1 + 2 * n;
}

/* The per-geometry tables of the scratch (see cc_gather_words_). */
void CC_CAT(cc_col2im_gather_plan_, CC_SFX)(const cc_geom *g, void *scratch) {
    const int64_t O2 = g->out[2], I2 = g->in[2], K2 = g->k[2];
    const int64_t S2 = g->stride[2], P2 = g->pad[2], D2 = g->dil[2];
    const int64_t Wp = cc_ceil_div(I2, S2);
    int64_t *hdr = (int64_t *)scratch;
    /* per tap t2: its valid output columns [lo, hi) (input columns
     * 0 <= iw = ow * S2 + e < I2) and the place of output column ow in the
     * phase buffer, st + ow (phase b = e mod S2, place (e - b) / S2 + ow) */
    int64_t *lo2 = hdr + 2, *hi2 = lo2 + K2, *st2 = hi2 + K2;
    for (int64_t t2 = 0; t2 < K2; ++t2) {
        const int64_t e = t2 * D2 - P2;
        const int64_t b = CC_CAT(cc_gmod_, CC_SFX)(e, S2);
        const int64_t lo = e < 0 ? cc_min64(O2, (-e + S2 - 1) / S2) : 0;
        const int64_t hi = I2 - e <= 0 ? 0 : cc_min64(O2, (I2 - e + S2 - 1) / S2);
        lo2[t2] = lo < hi ? lo : hi;
        hi2[t2] = hi;
        st2[t2] = b * Wp + (e - b) / S2;
    }
    int64_t *h0 = st2 + K2;
    hdr[0] = CC_CAT(cc_gather_lists_, CC_SFX)(g->in[0], g->out[0], g->k[0], g->stride[0],
                                             g->pad[0], g->dil[0], h0);
    hdr[1] = CC_CAT(cc_gather_lists_, CC_SFX)(g->in[1], g->out[1], g->k[1], g->stride[1],
                                             g->pad[1], g->dil[1], h0 + hdr[0]);
}

void CC_CAT(cc_col2im_gather_, CC_SFX)(const cc_geom *g, int64_t cin, const CC_T *col,
                                       int64_t ldc, const CC_T *bias, void *scratch, CC_T *x) {
    const int64_t O1 = g->out[1], O2 = g->out[2];
    const int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
    const int64_t K1 = g->k[1], K2 = g->k[2];
    const int64_t S2 = g->stride[2];
    const int64_t plane = I0 * I1 * I2, kk = g->k[0] * K1 * K2;
    const int64_t nph = S2 < I2 ? S2 : I2, Wp = cc_ceil_div(I2, S2);
    const int64_t nbuf = nph * Wp;
    const int64_t *hdr = (const int64_t *)scratch;
    const int64_t *lo2 = hdr + 2, *hi2 = lo2 + K2, *st2 = hi2 + K2;
    const int64_t *h0 = st2 + K2, n0w = hdr[0];
    const int64_t *h1 = h0 + n0w, n1w = hdr[1];
    const int64_t n0 = (n0w - I0 - 1) / 2, n1 = (n1w - I1 - 1) / 2;
    const int64_t *et0 = h0 + I0 + 1, *eo0 = et0 + n0, *et1 = h1 + I1 + 1, *eo1 = et1 + n1;
    CC_T *restrict tmp = (CC_T *)(void *)((int64_t *)scratch + (h1 + n1w + I1 - hdr));
    for (int64_t ci = 0; ci < cin; ++ci) {
        const CC_T bv = bias ? bias[ci] : (CC_T)0;
        const CC_T *colc = col + ci * kk * ldc;
        CC_T *xc = x + ci * plane;
        for (int64_t i0 = 0; i0 < I0; ++i0)
            for (int64_t i1 = 0; i1 < I1; ++i1) {
                CC_T *restrict xr = xc + (i0 * I1 + i1) * I2;
                int any = 0;
                for (int64_t a0 = h0[i0]; a0 < h0[i0 + 1]; ++a0)
                    for (int64_t a1 = h1[i1]; a1 < h1[i1 + 1]; ++a1) {
                        const int64_t rb = (eo0[a0] * O1 + eo1[a1]) * O2; /* the output row */
                        if (!any) {
                            for (int64_t j = 0; j < nbuf; ++j) tmp[j] = (CC_T)0;
                            any = 1;
                        }
                        const CC_T *rows = colc + (et0[a0] * K1 + et1[a1]) * K2 * ldc + rb;
                        for (int64_t t2 = 0; t2 < K2; ++t2) {
                            const int64_t lo = lo2[t2], hi = hi2[t2];
                            if (lo >= hi) continue;
                            const CC_T *restrict s = rows + t2 * ldc + lo;
                            CC_T *restrict d = tmp + st2[t2] + lo;
                            for (int64_t o = 0; o < hi - lo; ++o) d[o] += s[o];
                        }
                    }
                if (!any) {
                    for (int64_t j = 0; j < I2; ++j) xr[j] = bv;
                    continue;
                }
                /* interleave the phases into the row */
                if (S2 == 1) {
                    for (int64_t j = 0; j < I2; ++j) xr[j] = bv + tmp[j];
                } else if (S2 == 2) {
                    const CC_T *restrict ev = tmp, *restrict od = tmp + Wp;
                    const int64_t h = I2 / 2;
                    for (int64_t j = 0; j < h; ++j) {
                        xr[2 * j] = bv + ev[j];
                        xr[2 * j + 1] = bv + od[j];
                    }
                    if (I2 & 1) xr[I2 - 1] = bv + ev[h];
                } else {
                    for (int64_t b = 0; b < nph; ++b) {
                        const CC_T *ph = tmp + b * Wp;
                        for (int64_t j = 0, iw = b; iw < I2; ++j, iw += S2) xr[iw] = bv + ph[j];
                    }
                }
            }
    }
}

#undef CC_CAT
#undef CC_CAT2
