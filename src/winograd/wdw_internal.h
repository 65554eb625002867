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
 * Micro-kernel contract (one per instruction set, wdw3x3_f32_<isa>.c):
 *
 *   plane  output rows [2 ty0, min(2 ty1, OH)) of one (image, channel) plane:
 *          for each tile row, hrow of the input rows of its window that the
 *          ring of four slots does not hold yet (slot r % 4), then the row
 *          kernel on the window (zrow for rows outside the input).
 *
 *   hrow (inside)  h[k*hs + j] = H_k of tile column j, k < 4, j < ntw, for
 *          the input row x of iw (>= 1) elements seen with pw zeros before it
 *          and zeros after it; ntw is a multiple of the ISA's v.
 *   row (inside)   y0[c] (and y1[c] when row 2ty+1 < OH), c < OW, from the
 *          window's four hrow rows; reads h[i][k*hs + j] for
 *          j < round_up(ceil(OW / 2), v) only, writes only c < OW.
 *
 * Scratch (per thread): ring = 4 slots of 4*hs floats; zrow = 4*hs zeros
 * (shared, read-only).  The SIMD kernels may keep the tiles of a vector in
 * a permuted lane order inside the H arrays (wdw3x3_f32.inc).
 */
#ifndef CC_WDW_INTERNAL_H
#define CC_WDW_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "winograd.h"

/* Widest vector (floats) of any instruction set. */
#define WDW_VMAX 16

#if defined(__GNUC__) || defined(__clang__)
#define WDW_INLINE static inline __attribute__((always_inline))
#define WDW_HIDDEN __attribute__((visibility("hidden")))
#else
#define WDW_INLINE static inline
#define WDW_HIDDEN
#endif

/* One work item: a block of tile rows of one (image, channel) plane. */
typedef struct wdw_plane {
    const float *x; /* the input plane, IH x IW */
    float *y;       /* the output plane, OH x OW */
    int64_t IH, IW, OH, OW, ph, pw;
    int64_t ty0, ty1; /* tile rows */
    int64_t ntw, hs;  /* tile columns hrow computes; stride of the H_k */
    const float *u;   /* U = G g G^T, 16 floats, u[4i + k] */
    float bias;
    float *ring;
    const float *zrow;
} wdw_plane;

typedef void (*wdw_plane_fn)(const wdw_plane *p);

typedef struct wdw_isa {
    const char *name;
    const int *v; /* tiles per vector: ntw and hs are multiples of it */
    wdw_plane_fn plane;
} wdw_isa;

#define WDW_DECLARE_ISA(ISA)                                                  \
    WDW_HIDDEN void cc_wdw_plane_f32_##ISA(const wdw_plane *);                \
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

/* The plane loop every instruction set shares: HROW(x row, slot) and
 * ROW(hp, y0, y1) are the ISA's inlined kernels (see the contract above). */
#define WDW_PLANE_LOOP(p, HROW, ROW)                                          \
    do {                                                                      \
        int64_t tag_[4] = {-1, -1, -1, -1};                                   \
        const int64_t hrf_ = 4 * (p)->hs;                                     \
        for (int64_t ty_ = (p)->ty0; ty_ < (p)->ty1; ty_++) {                 \
            const float *hp_[4];                                              \
            for (int i_ = 0; i_ < 4; i_++) {                                  \
                const int64_t r_ = 2 * ty_ - (p)->ph + i_;                    \
                if (r_ < 0 || r_ >= (p)->IH) {                                \
                    hp_[i_] = (p)->zrow;                                      \
                    continue;                                                 \
                }                                                             \
                float *slot_ = (p)->ring + (r_ & 3) * hrf_;                   \
                if (tag_[r_ & 3] != r_) {                                     \
                    HROW((p)->x + r_ * (p)->IW, slot_);                       \
                    tag_[r_ & 3] = r_;                                        \
                }                                                             \
                hp_[i_] = slot_;                                              \
            }                                                                 \
            float *y0_ = (p)->y + 2 * ty_ * (p)->OW;                          \
            float *y1_ = 2 * ty_ + 1 < (p)->OH ? y0_ + (p)->OW : NULL;        \
            ROW(hp_, y0_, y1_);                                               \
        }                                                                     \
    } while (0)

#endif
