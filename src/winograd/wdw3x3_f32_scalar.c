/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, scalar: the reference
 * the SIMD versions are checked against (contract in wdw_internal.h).
 * Plain C, one tile at a time, no intrinsics, and the transforms exactly as
 * the formula has them (B^T d B, U .* V, A^T M A), where the SIMD kernels
 * fold the vertical halves into the filter.
 */
#include "wdw_internal.h"

/* *bad accumulates H0 + H3 (d0, d2 and d1, d3: every input value); the
 * SIMD kernels sum H1 and the row ends instead (wdw3x3_f32.inc) */
static void wdw_hrow_scalar(const float *x, int64_t iw, int64_t pl, int64_t ntw, float *h,
                            int64_t hs, float *bad)
{
    for (int64_t j = 0; j < ntw; j++) {
        const int64_t c0 = 2 * j - pl;
        float d[4];
        for (int b = 0; b < 4; b++)
            d[b] = (c0 + b >= 0 && c0 + b < iw) ? x[c0 + b] : 0.0f;
        h[j] = d[0] - d[2];
        h[hs + j] = d[1] + d[2];
        h[2 * hs + j] = d[2] - d[1];
        h[3 * hs + j] = d[1] - d[3];
        *bad += h[j] + h[3 * hs + j];
    }
}

static void wdw_row_scalar(int64_t ow, const float *const *h, int64_t hs, const float *u,
                           float bias, float *y0, float *y1)
{
    const int64_t tw = (ow + 1) / 2;
    for (int64_t j = 0; j < tw; j++) {
        float p0[4], p1[4];
        for (int k = 0; k < 4; k++) {
            const float a0 = h[0][k * hs + j], a1 = h[1][k * hs + j],
                        a2 = h[2][k * hs + j], a3 = h[3][k * hs + j];
            const float m0 = u[k] * (a0 - a2);
            float m1 = u[4 + k] * (a1 + a2);
            const float m2 = u[8 + k] * (a2 - a1);
            const float m3 = u[12 + k] * (a1 - a3);
            if (k == 1)
                m1 += bias;
            p0[k] = m0 + m1 + m2;
            p1[k] = m1 - m2 - m3;
        }
        const int64_t c = 2 * j;
        const int two = c + 1 < ow;
        y0[c] = p0[0] + p0[1] + p0[2];
        if (two)
            y0[c + 1] = p0[1] - p0[2] - p0[3];
        if (y1) {
            y1[c] = p1[0] + p1[1] + p1[2];
            if (two)
                y1[c + 1] = p1[1] - p1[2] - p1[3];
        }
    }
}

/* rr (1 or 2) output rows: one tile row; the second output row (and the
 * window's fourth row, which only it reads) is dropped when rr == 1. */
static void wdw_tilerow_scalar(const wdw_plane *p, const float *u, const float **hp, int rr,
                               float *const *yr)
{
    const float *h[4] = {hp[0], hp[1], hp[2], rr == 2 ? hp[3] : p->zrow};
    wdw_row_scalar(p->OW, h, p->hs, u, p->bias, yr[0], rr == 2 ? yr[1] : NULL);
}

int cc_wdw_plane_f32_scalar(const wdw_plane *p)
{
    float u[16];
    cc_wdw_filter_f32(p->g, u);
    float bad = 0.0f;
#define HROW(xr, slot) wdw_hrow_scalar((xr), p->IW, p->pw, p->ntw, (slot), p->hs, &bad)
#define ROW(hp, rr, yr) wdw_tilerow_scalar(p, u, (hp), (rr), (yr))
    WDW_PLANE_LOOP(p, 2, HROW, ROW);
#undef HROW
#undef ROW
    return cc_wdw_nonfinite(p->g, 9) | WDW_BAD(bad);
}

const int cc_wdw_v_f32_scalar = 1;
