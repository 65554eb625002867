/*
 * im2col / col2im body, instantiated once per element type by im2col.c with
 * CC_T (the type) and CC_SFX (the name suffix) defined.
 *
 * Rows of col are (ci, t0, t1, t2); columns are the flattened output
 * positions p0 .. p0+np-1.  Along the innermost spatial dimension the valid
 * range of outputs for a tap is computed once, so the inner loops carry no
 * bounds checks: zeros before, a copy (memcpy at stride 1), zeros after.
 */
#define CC_CAT2(a, b) a##b
#define CC_CAT(a, b) CC_CAT2(a, b)

/* First output index o with o*s - pad + off >= 0, clamped to [0, n]. */
static inline int64_t CC_CAT(cc_first_valid_, CC_SFX)(int64_t s, int64_t pad,
                                                      int64_t off, int64_t n) {
    int64_t num = pad - off; /* need o*s >= num */
    int64_t o = num <= 0 ? 0 : s == 1 ? num : (num + s - 1) / s;
    return o > n ? n : o;
}

/* One past the last output index o with o*s - pad + off < len, clamped. */
static inline int64_t CC_CAT(cc_end_valid_, CC_SFX)(int64_t s, int64_t pad,
                                                    int64_t off, int64_t len,
                                                    int64_t n) {
    int64_t num = len + pad - off; /* need o*s < num */
    int64_t o = num <= 0 ? 0 : s == 1 ? num : (num + s - 1) / s;
    return o > n ? n : o;
}

/* Short runs (the lines of small 2-D/3-D planes: 4x4x4 volumes have lines
 * of 4) are zeroed and copied by inline loops; a memset or memcpy call per
 * run cost more than the copying, and made im2col several times the GEMM. */
#ifndef CC_SHORT_RUN
#define CC_SHORT_RUN 32
#endif

static inline void CC_CAT(cc_zero_, CC_SFX)(CC_T *d, int64_t n) {
    if (n > CC_SHORT_RUN) {
        memset(d, 0, (size_t)n * sizeof(CC_T));
        return;
    }
    for (int64_t j = 0; j < n; ++j) d[j] = 0;
}

static inline void CC_CAT(cc_copy_, CC_SFX)(CC_T *d, const CC_T *s, int64_t n) {
    if (n > CC_SHORT_RUN) {
        memcpy(d, s, (size_t)n * sizeof(CC_T));
        return;
    }
    for (int64_t j = 0; j < n; ++j) d[j] = s[j];
}

/* Row r + 1's tap (t0, t1, t2) and input channel from row r's: rows are
 * (ci, t0, t1, t2) in row-major order. */
static inline void CC_CAT(cc_next_row_, CC_SFX)(const cc_geom *g, int64_t *t0, int64_t *t1,
                                                int64_t *t2, int64_t *ci) {
    if (++*t2 < g->k[2]) return;
    *t2 = 0;
    if (++*t1 < g->k[1]) return;
    *t1 = 0;
    if (++*t0 < g->k[0]) return;
    *t0 = 0;
    ++*ci;
}

/* Small planes with short output lines, whole images: each channel's
 * plane is first copied into a zeroed buffer holding every padded
 * coordinate the taps read, so that a row is three plain strided loops
 * with no bounds check.  Line by line, the checks and zero runs cost more
 * than the copying (8 images of 7x7, 128 channels, 5x5 taps: 76800 lines
 * of 3, im2col twice the GEMM).  0 where it does not apply. */
/* (CC_PAD_PLANE_MAX and CC_PAD_LINE_MAX: gemm_plan.h) */

/* Whether the padded-plane form applies to columns [p0, p0 + np): whole
 * images, output lines of at most CC_PAD_LINE_MAX, a padded extent E of
 * at most CC_PAD_PLANE_MAX elements; then E (the padded coordinates the
 * taps reach, per dim) and n (the input's part inside it, per dim). */
static inline int CC_CAT(cc_pad_plane_dims_, CC_SFX)(const cc_geom *g, int64_t p0, int64_t np,
                                                    int64_t E[3], int64_t n[3]) {
    if (p0 != 0 || np != g->out[0] * g->out[1] * g->out[2] || g->out[2] > CC_PAD_LINE_MAX)
        return 0;
    for (int d = 0; d < 3; ++d) {
        if (g->pad[d] < 0) return 0;
        E[d] = (g->out[d] - 1) * g->stride[d] + (g->k[d] - 1) * g->dil[d] + 1;
        if (E[d] > CC_PAD_PLANE_MAX) return 0;
        n[d] = cc_min64(g->in[d], E[d] - g->pad[d]);
    }
    return E[0] * E[1] * E[2] <= CC_PAD_PLANE_MAX;
}

/* short copies stay inline loops: GCC's loop distribution made library
 * calls of them (memcpy of 7 elements through the PLT was half the time) */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static int CC_CAT(cc_im2col_small_, CC_SFX)(const cc_geom *g, int64_t cin, const CC_T *x,
                                            int64_t p0, int64_t np, CC_T *col, int64_t ldc) {
    int64_t E[3], n[3];
    if (!CC_CAT(cc_pad_plane_dims_, CC_SFX)(g, p0, np, E, n)) return 0;
    const int64_t O0 = g->out[0], O1 = g->out[1], O2 = g->out[2];
    const int64_t n0 = n[0], n1 = n[1], n2 = n[2];
    CC_T buf[CC_PAD_PLANE_MAX];
    const int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
    const int64_t K0 = g->k[0], K1 = g->k[1], K2 = g->k[2];
    const int64_t S0 = g->stride[0], S1 = g->stride[1], S2 = g->stride[2];
    const int64_t D0 = g->dil[0], D1 = g->dil[1], D2 = g->dil[2];
    const int64_t E12 = E[1] * E[2];
    /* the input's part inside the extent, [0, n0) x [0, n1) x [0, n2),
     * lands at (pad0 + i0, pad1 + i1, pad2 + i2) */
    int64_t r = 0;
    for (int64_t ci = 0; ci < cin; ++ci) {
        const CC_T *xc = x + ci * I0 * I1 * I2;
        for (int64_t e = 0; e < E[0] * E12; ++e) buf[e] = 0;
        for (int64_t i0 = 0; i0 < n0; ++i0)
            for (int64_t i1 = 0; i1 < n1; ++i1) {
                CC_T *b = buf + ((g->pad[0] + i0) * E[1] + g->pad[1] + i1) * E[2] + g->pad[2];
                const CC_T *a = xc + (i0 * I1 + i1) * I2;
                for (int64_t i2 = 0; i2 < n2; ++i2) b[i2] = a[i2];
            }
        for (int64_t t0 = 0; t0 < K0; ++t0)
            for (int64_t t1 = 0; t1 < K1; ++t1)
                for (int64_t t2 = 0; t2 < K2; ++t2, ++r) {
                    CC_T *d = col + r * ldc;
                    const CC_T *b0 = buf + t0 * D0 * E12 + t1 * D1 * E[2] + t2 * D2;
                    if (S2 == 1) { /* lines of a length fixed at compile time */
                        switch (O2) {
#define CC_IM2COL_LINES(L)                                                                  \
    case L:                                                                                 \
        for (int64_t o0 = 0; o0 < O0; ++o0)                                                 \
            for (int64_t o1 = 0; o1 < O1; ++o1, d += (L)) {                                 \
                const CC_T *b = b0 + o0 * S0 * E12 + o1 * S1 * E[2];                        \
                for (int o2 = 0; o2 < (L); ++o2) d[o2] = b[o2];                             \
            }                                                                               \
        continue;
                            CC_IM2COL_LINES(1) CC_IM2COL_LINES(2) CC_IM2COL_LINES(3)
                            CC_IM2COL_LINES(4) CC_IM2COL_LINES(5) CC_IM2COL_LINES(6)
                            CC_IM2COL_LINES(7) CC_IM2COL_LINES(8) CC_IM2COL_LINES(9)
                            CC_IM2COL_LINES(10) CC_IM2COL_LINES(11) CC_IM2COL_LINES(12)
                            CC_IM2COL_LINES(13) CC_IM2COL_LINES(14) CC_IM2COL_LINES(15)
                            CC_IM2COL_LINES(16)
#undef CC_IM2COL_LINES
                        default:
                            break;
                        }
                    }
                    for (int64_t o0 = 0; o0 < O0; ++o0)
                        for (int64_t o1 = 0; o1 < O1; ++o1, d += O2) {
                            const CC_T *b = b0 + o0 * S0 * E12 + o1 * S1 * E[2];
                            for (int64_t o2 = 0; o2 < O2; ++o2) d[o2] = b[o2 * S2];
                        }
                }
    }
    return 1;
}

void CC_CAT(cc_im2col_, CC_SFX)(const cc_geom *g, int64_t cin, const CC_T *x,
                                int64_t p0, int64_t np, CC_T *col,
                                int64_t ldc) {
    const int64_t O1 = g->out[1], O2 = g->out[2];
    const int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
    const int64_t K0 = g->k[0], K1 = g->k[1], K2 = g->k[2];
    const int64_t S2 = g->stride[2], P2 = g->pad[2], D2 = g->dil[2];
    const int64_t plane = I0 * I1 * I2;
    const int64_t rows = cin * K0 * K1 * K2;
    if (cc_is_1x1(g)) { /* a row is a run of its channel: one copy each
                         * (line by line, 4x4x4 planes cost 3x the GEMM) */
        for (int64_t r = 0; r < rows; ++r)
            memcpy(col + r * ldc, x + r * plane + p0, (size_t)np * sizeof(CC_T));
        return;
    }
    if (CC_CAT(cc_im2col_small_, CC_SFX)(g, cin, x, p0, np, col, ldc)) return;
    /* the output line of p0; rows are walked by counters, with no
     * division per row (small planes have many short rows: 8 images of
     * 7x7, 128 channels, 5x5 taps are 25600 rows of 3 lines of 3, and five
     * divisions per row made im2col 3x the GEMM) */
    const int64_t q2 = p0 % O2, q1 = (p0 / O2) % O1, q0 = p0 / O2 / O1;
    int64_t t2 = 0, t1 = 0, t0 = 0, ci = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const CC_T *xc = x + ci * plane;
        CC_T *dst = col + r * ldc;
        const int64_t off2 = t2 * D2;
        const int64_t lo2 = CC_CAT(cc_first_valid_, CC_SFX)(S2, P2, off2, O2);
        const int64_t hi2 = CC_CAT(cc_end_valid_, CC_SFX)(S2, P2, off2, I2, O2);
        int64_t p = p0, end = p0 + np;
        /* the output line of p, advanced line by line (no divisions per line) */
        int64_t o2 = q2, o1 = q1, o0 = q0;
        for (; p < end; o2 = 0, (++o1 == O1 ? (o1 = 0, ++o0) : 0)) {
            int64_t n2 = O2 - o2;
            if (n2 > end - p) n2 = end - p;
            int64_t i0 = o0 * g->stride[0] - g->pad[0] + t0 * g->dil[0];
            int64_t i1 = o1 * g->stride[1] - g->pad[1] + t1 * g->dil[1];
            CC_T *d = dst + (p - p0);
            if (i0 < 0 || i0 >= I0 || i1 < 0 || i1 >= I1 || lo2 >= hi2) {
                CC_CAT(cc_zero_, CC_SFX)(d, n2);
            } else {
                const CC_T *src = xc + (i0 * I1 + i1) * I2 - P2 + off2;
                int64_t a = o2, b = o2 + n2;
                int64_t va = a > lo2 ? a : lo2, vb = b < hi2 ? b : hi2;
                if (va >= vb) {
                    CC_CAT(cc_zero_, CC_SFX)(d, n2);
                } else {
                    if (va > a) CC_CAT(cc_zero_, CC_SFX)(d, va - a);
                    if (S2 == 1) {
                        CC_CAT(cc_copy_, CC_SFX)(d + (va - a), src + va, vb - va);
                    } else if (S2 == 2) {
                        /* a constant stride vectorises (even lanes of pairs
                         * of loads); the general loop below does not */
                        CC_T *dd = d + (va - a);
                        const CC_T *ss = src + 2 * va;
                        const int64_t m = vb - va;
                        for (int64_t j = 0; j < m; ++j) dd[j] = ss[2 * j];
                    } else {
                        CC_T *dd = d + (va - a);
                        const CC_T *ss = src + va * S2;
                        for (int64_t o = va; o < vb; ++o, ss += S2) *dd++ = *ss;
                    }
                    if (b > vb) CC_CAT(cc_zero_, CC_SFX)(d + (vb - a), b - vb);
                }
            }
            p += n2;
        }
        CC_CAT(cc_next_row_, CC_SFX)(g, &t0, &t1, &t2, &ci);
    }
}

/* col2im's twin of cc_im2col_small_: the rows of a channel are added
 * into a zeroed padded plane with no bounds check, whose part inside the
 * input is then added to x.  Line by line, 14-element lines of a stride-2
 * transposed layer (8x64x14x14 -> 33x33, 7x7, 2 groups) made col2im a
 * third of the call.  0 where it does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static int CC_CAT(cc_col2im_small_, CC_SFX)(const cc_geom *g, int64_t cin, const CC_T *col,
                                            int64_t p0, int64_t np, int64_t ldc, CC_T *x) {
    int64_t E[3], n[3];
    if (!CC_CAT(cc_pad_plane_dims_, CC_SFX)(g, p0, np, E, n)) return 0;
    const int64_t O0 = g->out[0], O1 = g->out[1], O2 = g->out[2];
    const int64_t n0 = n[0], n1 = n[1], n2 = n[2];
    CC_T buf[CC_PAD_PLANE_MAX];
    const int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
    const int64_t K0 = g->k[0], K1 = g->k[1], K2 = g->k[2];
    const int64_t S0 = g->stride[0], S1 = g->stride[1], S2 = g->stride[2];
    const int64_t D0 = g->dil[0], D1 = g->dil[1], D2 = g->dil[2];
    const int64_t E12 = E[1] * E[2];
    /* stride 2, dilation 1: taps t2 and t2 + 1 fill the even and odd
     * places of the same pairs, added together (interleaved, contiguous) */
    const int pair = S2 == 2 && D2 == 1;
    const CC_T *s = col;
    for (int64_t ci = 0; ci < cin; ++ci) {
        for (int64_t e = 0; e < E[0] * E12; ++e) buf[e] = 0;
        for (int64_t t0 = 0; t0 < K0; ++t0)
            for (int64_t t1 = 0; t1 < K1; ++t1)
                for (int64_t t2 = 0; t2 < K2;) {
                    const int two = pair && t2 + 1 < K2;
                    const CC_T *a = s, *a2 = s + ldc;
                    for (int64_t o0 = 0; o0 < O0; ++o0)
                        for (int64_t o1 = 0; o1 < O1; ++o1, a += O2, a2 += O2) {
                            CC_T *b = buf + (o0 * S0 + t0 * D0) * E12 +
                                      (o1 * S1 + t1 * D1) * E[2] + t2 * D2;
                            if (two) {
                                for (int64_t o2 = 0; o2 < O2; ++o2) {
                                    b[2 * o2] += a[o2];
                                    b[2 * o2 + 1] += a2[o2];
                                }
                            } else if (S2 == 1) {
                                for (int64_t o2 = 0; o2 < O2; ++o2) b[o2] += a[o2];
                            } else {
                                for (int64_t o2 = 0; o2 < O2; ++o2) b[o2 * S2] += a[o2];
                            }
                        }
                    t2 += two ? 2 : 1;
                    s += two ? 2 * ldc : ldc;
                }
        CC_T *xc = x + ci * I0 * I1 * I2;
        for (int64_t i0 = 0; i0 < n0; ++i0)
            for (int64_t i1 = 0; i1 < n1; ++i1) {
                const CC_T *b =
                    buf + ((g->pad[0] + i0) * E[1] + g->pad[1] + i1) * E[2] + g->pad[2];
                CC_T *d = xc + (i0 * I1 + i1) * I2;
                for (int64_t i2 = 0; i2 < n2; ++i2) d[i2] += b[i2];
            }
    }
    return 1;
}

void CC_CAT(cc_col2im_, CC_SFX)(const cc_geom *g, int64_t cin,
                                const CC_T *col, int64_t p0, int64_t np,
                                int64_t ldc, CC_T *x) {
    if (CC_CAT(cc_col2im_small_, CC_SFX)(g, cin, col, p0, np, ldc, x)) return;
    const int64_t O1 = g->out[1], O2 = g->out[2];
    const int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
    const int64_t K0 = g->k[0], K1 = g->k[1], K2 = g->k[2];
    const int64_t S2 = g->stride[2], P2 = g->pad[2], D2 = g->dil[2];
    const int64_t plane = I0 * I1 * I2;
    const int64_t rows = cin * K0 * K1 * K2;
    /* stride 2, dilation 1: taps t2 and t2 + 1 write the even and odd
     * places of the same pairs of x, so an even tap and the next one are
     * added together, interleaved, into contiguous x (a stride-2 scatter
     * does not vectorise) */
    const int pair = S2 == 2 && D2 == 1 && K2 >= 2;
    const int64_t q2 = p0 % O2, q1 = (p0 / O2) % O1, q0 = p0 / O2 / O1;
    int64_t t2 = 0, t1 = 0, t0 = 0, ci = 0; /* row r's tap and channel */
    for (int64_t r = 0; r < rows;) {
        CC_T *xc = x + ci * plane;
        const int two = pair && t2 % 2 == 0 && t2 + 1 < K2;
        const CC_T *srcrow = col + r * ldc, *srcrow2 = srcrow + ldc;
        const int64_t off2 = t2 * D2;
        const int64_t lo2 = CC_CAT(cc_first_valid_, CC_SFX)(S2, P2, off2, O2);
        const int64_t hi2 = CC_CAT(cc_end_valid_, CC_SFX)(S2, P2, off2, I2, O2);
        /* the second tap's valid range (two only) */
        const int64_t lo2b = two ? CC_CAT(cc_first_valid_, CC_SFX)(S2, P2, off2 + 1, O2) : 0;
        const int64_t hi2b = two ? CC_CAT(cc_end_valid_, CC_SFX)(S2, P2, off2 + 1, I2, O2) : 0;
        int64_t p = p0, end = p0 + np;
        /* the output line of p, advanced line by line (no divisions per line) */
        int64_t o2 = q2, o1 = q1, o0 = q0;
        for (; p < end; o2 = 0, (++o1 == O1 ? (o1 = 0, ++o0) : 0)) {
            int64_t n2 = O2 - o2;
            if (n2 > end - p) n2 = end - p;
            int64_t i0 = o0 * g->stride[0] - g->pad[0] + t0 * g->dil[0];
            int64_t i1 = o1 * g->stride[1] - g->pad[1] + t1 * g->dil[1];
            if (!(i0 < 0 || i0 >= I0 || i1 < 0 || i1 >= I1)) {
                CC_T *dstl = xc + (i0 * I1 + i1) * I2 - P2 + off2;
                const CC_T *s = srcrow + (p - p0) - o2;
                int64_t a = o2, b = o2 + n2;
                int64_t va = a > lo2 ? a : lo2, vb = b < hi2 ? b : hi2;
                if (two) {
                    const CC_T *sb = srcrow2 + (p - p0) - o2;
                    int64_t wa = a > lo2b ? a : lo2b, wb = b < hi2b ? b : hi2b;
                    /* both taps valid on [ca, cb): pairs; the rest alone */
                    int64_t ca = va > wa ? va : wa, cb = vb < wb ? vb : wb;
                    if (cb < ca) ca = cb = va;
                    for (int64_t o = va; o < (ca < vb ? ca : vb); ++o) dstl[2 * o] += s[o];
                    for (int64_t o = wa; o < (ca < wb ? ca : wb); ++o) dstl[2 * o + 1] += sb[o];
                    for (int64_t o = ca; o < cb; ++o) {
                        dstl[2 * o] += s[o];
                        dstl[2 * o + 1] += sb[o];
                    }
                    for (int64_t o = (cb > va ? cb : va); o < vb; ++o) dstl[2 * o] += s[o];
                    for (int64_t o = (cb > wa ? cb : wa); o < wb; ++o) dstl[2 * o + 1] += sb[o];
                } else if (S2 == 1) {
                    for (int64_t o = va; o < vb; ++o) dstl[o] += s[o];
                } else if (S2 == 2) {
                    for (int64_t o = va; o < vb; ++o) dstl[2 * o] += s[o];
                } else {
                    for (int64_t o = va; o < vb; ++o) dstl[o * S2] += s[o];
                }
            }
            p += n2;
        }
        for (int step = two ? 2 : 1; step > 0; --step, ++r)
            CC_CAT(cc_next_row_, CC_SFX)(g, &t0, &t1, &t2, &ci);
    }
}

#undef CC_CAT
#undef CC_CAT2
