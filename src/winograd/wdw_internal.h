/*
 * Depthwise 3x3 Winograd F(2x2,3x3): what the driver (wdw_fwd.c), the
 * dispatcher (wdw_dispatch.c) and the per-ISA micro-kernels
 * (wdw3x3_f32_<isa>.c) share.
 *
 * Tiles.  Output tile (ty, tx) is rows 2ty, 2ty+1 and columns 2tx, 2tx+1; it
 * reads the 4x4 window of the zero-padded input at rows 2ty + i - ph and
 * columns 2tx + b - pw (i, b < 4).  With d_b the window's row a, the
 * horizontal half of the input transform B^T d B is
 *
 *   H0 = d0 - d2,  H1 = d1 + d2,  H2 = d2 - d1,  H3 = d1 - d3,
 *
 * and it depends only on the input row and tx, so it is computed once per
 * input row (hrow) and read by the two tile rows that contain the row.  The
 * row kernel finishes the transform vertically (the same four formulas over
 * the window's rows), multiplies by U and applies A^T . A:
 *
 *   P0k = M0k + M1k + M2k,  P1k = M1k - M2k - M3k        (per column k)
 *   Y[r][0] = Pr0 + Pr1 + Pr2,  Y[r][1] = Pr1 - Pr2 - Pr3,
 *
 * with M[1][1] += bias (which adds the bias to all four outputs).
 *
 * Micro-kernel contracts:
 *
 *   hrow  h[k*hs + j] = H_k of tile column j, k < 4, j < ntw, for the input
 *         row x of iw (>= 1) elements seen with pl zeros before it and zeros
 *         after it.  ntw is a multiple of the ISA's v (<= WDW_VMAX).  buf: scratch of
 *         WDW_HROW_BUF(ntw) floats.
 *   row   one tile row: y0[c] (and y1[c] when y1 is not NULL), c < ow, from
 *         the hrow rows h[0..3] of the window (stride hs between the H_k).
 *         Reads h[i][k*hs + j] for j < round_up(ceil(ow / 2), v) only;
 *         writes y0, y1 for c < ow only.  u: the 16 filter values
 *         (U[i][k] at u[4i + k], i vertical).
 */
#ifndef CC_WDW_INTERNAL_H
#define CC_WDW_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "winograd.h"

/* Widest vector (floats) of any instruction set. */
#define WDW_VMAX 16
/* Scratch floats hrow needs for ntw tile columns. */
#define WDW_HROW_BUF(ntw) (2 * ((ntw) + WDW_VMAX))

#if defined(__GNUC__) || defined(__clang__)
#define WDW_INLINE static inline __attribute__((always_inline))
#define WDW_HIDDEN __attribute__((visibility("hidden")))
#else
#define WDW_INLINE static inline
#define WDW_HIDDEN
#endif

typedef void (*wdw_hrow_fn)(const float *x, int64_t iw, int64_t pl, int64_t ntw,
                            float *buf, float *h, int64_t hs);
typedef void (*wdw_row_fn)(int64_t ow, const float *const *h, int64_t hs,
                           const float *u, float bias, float *y0, float *y1);

typedef struct wdw_isa {
    const char *name;
    const int *v; /* tiles per vector: ntw and hs are multiples of it */
    wdw_hrow_fn hrow;
    wdw_row_fn row;
} wdw_isa;

#define WDW_DECLARE_ISA(ISA)                                                  \
    WDW_HIDDEN void cc_wdw_hrow_f32_##ISA(const float *, int64_t, int64_t,    \
                                          int64_t, float *, float *, int64_t); \
    WDW_HIDDEN void cc_wdw_row_f32_##ISA(int64_t, const float *const *,       \
                                         int64_t, const float *, float,       \
                                         float *, float *);            \
    WDW_HIDDEN extern const int cc_wdw_v_f32_##ISA;

WDW_DECLARE_ISA(scalar)
#if defined(CC_HAVE_X86_SIMD)
WDW_DECLARE_ISA(avx2)
WDW_DECLARE_ISA(avx512)
#endif
#if defined(__aarch64__)
WDW_DECLARE_ISA(neon)
#endif

/* The instruction set in use (initialises on first use). */
WDW_HIDDEN const wdw_isa *cc_wdw_current(void);

/* The zero-padded input row seen by hrow: xs(c) = x[c - pl] inside the row,
 * 0 outside; n values from column c0 into t. */
WDW_INLINE void wdw_padded(const float *x, int64_t iw, int64_t pl, int64_t c0,
                           int64_t n, float *t)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = c0 + i - pl;
        t[i] = (c >= 0 && c < iw) ? x[c] : 0.0f;
    }
}

#endif
