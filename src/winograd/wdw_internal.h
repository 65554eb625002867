/*
 * Depthwise 3x3 Winograd F(2x2,3x3): what the driver (wdw_fwd.c), the
 * dispatcher (wdw_dispatch.c) and the per-ISA kernels (wdw_kernels.c on
 * wdw3x3.inc, or wdw3x3_scalar.inc) share.
 *
 * Tiles.  Output tile (o, tx) is rows o, o+1 and columns 2tx, 2tx+1; it reads
 * the 4x4 window of the zero-padded input at rows o + i - ph and columns
 * 2tx + b - pw (i, b < 4).  Y = A^T [U .* (B^T d B)] A + bias with
 * U = G g G^T.  With d_b the window's row i, the horizontal half of B^T d B,
 *
 *   H0 = d0 - d2,  H1 = d1 + d2,  H2 = d2 - d1,  H3 = d1 - d3,
 *
 * depends only on the input row and tx, so it is computed once per input row
 * (hrow) into a ring of row slots and read by every tile that contains the
 * row.
 *
 * The scalar kernel then does what the formula says: the vertical half of
 * B^T d B (the same four formulas down the window), M = U .* V, and
 * A^T M A (P0k = M0k + M1k + M2k, P1k = M1k - M2k - M3k per column k,
 * Y[r][0] = Pr0 + Pr1 + Pr2, Y[r][1] = Pr1 - Pr2 - Pr3), the bias added to
 * M[1][1].
 *
 * The SIMD kernels fold the vertical halves of B^T and A^T into U, which is
 * exact algebra: P0k = W0k H_k(row 0) + W1k H_k(row 1) + W2k H_k(row 2) and
 * P1k = the same one row lower, with W = g G^T (3x4; U = G W), so
 * U0 = W0, U1 - U2 = W1, U1 + U2 - U0 = W2.  That turns 16 vertical adds and
 * 20 multiplies per tile into 24 multiply-adds, lets output rows be computed
 * in blocks of any size R sharing the H rows they read (R + 2 of them), and
 * leaves the horizontal F(2,3) (H and Y[r][0..1]) as the whole transform.
 *
 * Kernel contract (one per instruction set):
 *
 *   plane  output rows [oh0, oh1) of one (image, channel) plane, R at a
 *          time (R: the ISA's rows per step); for each block, hrow of the
 *          input rows it reads that the ring does not hold yet (slot r % 8),
 *          then the row kernel on them (zrow for rows outside the input);
 *          returns 1 when the filter or an input row it read holds a NaN
 *          or an infinity (wdw_plane_fn).
 *   hrow   h[k*hs + j] = H_k of tile column j, k < 4, j < ntw, for the input
 *          row x of iw (>= 1) elements seen with pw zeros before it and
 *          zeros after it; ntw is a multiple of the ISA's v.
 *   rows   y[r][c], r < rr <= R, c < OW, from the H rows h[0 .. rr + 1];
 *          reads h[i][k*hs + j] for j < round_up(ceil(OW / 2), v) only,
 *          writes only c < OW.
 *
 * Scratch (per thread): ring = WDW_RING slots of 4*hs floats, scratch =
 * WDW_SCRATCH bytes; zrow = 4*hs zeros (shared, read-only).  The SIMD kernels may keep the tiles of a
 * vector in a permuted lane order inside the H arrays (wdw3x3.inc).
 */
#ifndef CC_WDW_INTERNAL_H
#define CC_WDW_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/isa.h"
#include "wdw.h"

/* Widest vector (floats) of any instruction set. */
#define WDW_VMAX 16
/* Most output rows per step of any kernel, and the ring of H rows (a power
 * of two >= WDW_RMAX + 2). */
#define WDW_RMAX 6
#define WDW_RING 8


/* One work item: a block of tile rows of one (image, channel) plane. */
typedef struct wdw_plane {
    const float *x; /* the input plane, IH x IW */
    float *y;       /* the output plane, OH x OW */
    int64_t IH, IW, OH, OW, ph, pw;
    int64_t oh0, oh1; /* output rows */
    int64_t ntw, hs;  /* tile columns hrow computes; stride of the H_k */
    const float *g;   /* the 3x3 filter; each kernel transforms it */
    float bias;
    float *ring;
    const float *zrow;
    /* per thread, WDW_SCRATCH bytes aligned to 64, for what a kernel derives
     * from the geometry alone; *ready is 0 on a thread's first item of a
     * call, and the kernel sets it */
    void *scratch;
    int *ready;
} wdw_plane;

#define WDW_SCRATCH 2048

/* Returns 1 when a weight or an input value the plane's tiles read is NaN
 * or infinite (or the inputs' running sum overflowed), else 0: Winograd's
 * transforms subtract inputs, so there the caller recomputes the plane's
 * convolution directly for PyTorch's NaN/inf pattern. */
typedef int (*wdw_plane_fn)(const wdw_plane *p);

/* NaN or an infinity: x - x is 0 exactly for every finite x, NaN otherwise. */
#define WDW_BAD(v) (!((v) - (v) == 0))

/* 1 when one of the n floats at v is NaN or infinite. */
static inline int cc_wdw_nonfinite(const float *v, int64_t n)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad |= WDW_BAD(v[i]);
    return bad;
}

/* The kernel of one instruction set, cc_wdw_kern_f32_<isa>, made by
 * wdw_kernels.c; cc_wdw_kern_f32(): the one of the instruction set in use
 * (core/isa.h). */
typedef struct wdw_kern {
    int v; /* tiles per vector: ntw and hs are multiples of it */
    wdw_plane_fn plane;
} wdw_kern;
CC_ISA_DECLARE(wdw_kern, cc_wdw_kern_f32)
const wdw_kern *cc_wdw_kern_f32(void);

/* The plane loop every instruction set shares: R output rows per step;
 * HROW(x row, slot) and ROW(hp, rr, yr) are the ISA's inlined kernels (see
 * the contract above). */
#define WDW_PLANE_LOOP(p, R, HROW, ROW)                                       \
    do {                                                                      \
        int64_t tag_[WDW_RING];                                               \
        for (int i_ = 0; i_ < WDW_RING; i_++)                                 \
            tag_[i_] = -1;                                                    \
        const int64_t hrf_ = 4 * (p)->hs;                                     \
        for (int64_t o_ = (p)->oh0; o_ < (p)->oh1; o_ += (R)) {               \
            const int rr_ = (int)((p)->oh1 - o_ < (R) ? (p)->oh1 - o_ : (R)); \
            const float *hp_[WDW_RMAX + 2];                                   \
            float *yr_[WDW_RMAX];                                             \
            for (int i_ = 0; i_ < rr_ + 2; i_++) {                            \
                const int64_t r_ = o_ - (p)->ph + i_;                         \
                if (r_ < 0 || r_ >= (p)->IH) {                                \
                    hp_[i_] = (p)->zrow;                                      \
                    continue;                                                 \
                }                                                             \
                const int64_t s_ = r_ & (WDW_RING - 1);                       \
                float *slot_ = (p)->ring + s_ * hrf_;                         \
                if (tag_[s_] != r_) {                                         \
                    HROW((p)->x + r_ * (p)->IW, slot_);                       \
                    tag_[s_] = r_;                                            \
                }                                                             \
                hp_[i_] = slot_;                                              \
            }                                                                 \
            for (int i_ = 0; i_ < rr_; i_++)                                  \
                yr_[i_] = (p)->y + (o_ + i_) * (p)->OW;                       \
            ROW(hp_, rr_, yr_);                                               \
        }                                                                     \
    } while (0)

#endif
