/* Blocked batched transpose; see transpose.h.  Each work item is a square
 * tile of 256-byte rows (64 elements of 4 bytes, 32 of 8 or 16, 128 of 2),
 * which keeps the strided reads and the strided writes of a tile within a
 * few cache lines each and the whole tile within L1; inside a tile the
 * instruction set's kernel transposes register blocks (src/transpose/).
 * NumPy's strided copy runs 3.5x to 5x slower than a plain copy for these
 * layouts, the scalar tile 2-3x, the AVX2 tile within 1.5x of it. */
#include <stdint.h>

#include "transpose.h"
#include "transpose/tr_internal.h"

/* below this many bytes one thread does it: waking a second costs more */
#define CC_TR_PAR_BYTES ((int64_t)256 * 1024)

int cc_transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
                 const void *src, void *dst, int nthreads) {
    if (batch < 0 || rows < 0 || cols < 0) return CC_ERR_ARG;
    const cc_tr_isa *k = cc_tr_current();
    cc_tr_tile_fn tile;
    switch (elsize) {
    case 2: tile = k->b16; break;
    case 4: tile = k->b32; break;
    case 8: tile = k->b64; break;
    case 16: tile = k->b128; break;
    default: return CC_ERR_ARG;
    }
    if (batch == 0 || rows == 0 || cols == 0) return CC_OK;
    if (!src || !dst) return CC_ERR_ARG;
    if (nthreads < 1) nthreads = 1;
    const int64_t tb = 256 / elsize;
    const int64_t rb = (rows + tb - 1) / tb, cbk = (cols + tb - 1) / tb;
    const int64_t items = batch * rb * cbk;
    const int par = nthreads > 1 && items > 1 && batch * rows * cols * elsize >= CC_TR_PAR_BYTES;
    const char *s0 = (const char *)src;
    char *d0 = (char *)dst;
#pragma omp parallel for schedule(static) num_threads(nthreads) if (par)
    for (int64_t it = 0; it < items; ++it) {
        const int64_t cj = it % cbk, ri = (it / cbk) % rb, b = it / cbk / rb;
        const int64_t r0 = ri * tb, c0 = cj * tb;
        const int64_t nr = rows - r0 < tb ? rows - r0 : tb;
        const int64_t nc = cols - c0 < tb ? cols - c0 : tb;
        const int64_t base = b * rows * cols;
        tile(s0 + (base + r0 * cols + c0) * elsize, cols,
             d0 + (base + c0 * rows + r0) * elsize, rows, nr, nc);
    }
    return CC_OK;
}

/* The weight of the adjoint taken as a forward convolution (see
 * transpose.h): per group, the (cog, cig) matrix of taps transposed and
 * every tap block reversed.  Work items are (group, 16 input channels);
 * each reads 16 x cog contiguous tap blocks and writes 16 contiguous rows
 * of cog blocks, so both sides stream; NumPy's copy of the reversed 6-D
 * view ran at 2.7-6 GB/s (an inner loop of 3 elements for a 3x3 kernel). */
#define CC_WA_TILE 16
/* one tap block reversed; 3x3 and 3x3x3 kernels get a loop of constant
 * length (a loop of 9 with a run-time bound ran at one element per ns) */
#define CC_WA_COPY(kk, a, b)                                                        \
    do {                                                                            \
        if ((kk) == 9) {                                                            \
            for (int t_ = 0; t_ < 9; ++t_) (b)[-t_] = (a)[t_];                      \
        } else if ((kk) == 27) {                                                    \
            for (int t_ = 0; t_ < 27; ++t_) (b)[-t_] = (a)[t_];                     \
        } else {                                                                    \
            for (int64_t t_ = 0; t_ < (kk); ++t_) (b)[-t_] = (a)[t_];               \
        }                                                                           \
    } while (0)
#define CC_DEF_WADJ(NAME, T)                                                        \
    static void NAME(int64_t groups, int64_t cog, int64_t cig, int64_t kk,          \
                     const T *src, T *dst, int nthreads, int par) {                 \
        const int64_t ct = (cig + CC_WA_TILE - 1) / CC_WA_TILE, items = groups * ct; \
        _Pragma("omp parallel for schedule(static) num_threads(nthreads) if(par)")  \
        for (int64_t it = 0; it < items; ++it) {                                    \
            const int64_t g = it / ct, c0 = (it % ct) * CC_WA_TILE;                 \
            const int64_t c1 = c0 + CC_WA_TILE < cig ? c0 + CC_WA_TILE : cig;       \
            const T *s = src + g * cog * cig * kk;                                  \
            T *d = dst + g * cig * cog * kk;                                        \
            for (int64_t co = 0; co < cog; ++co)                                    \
                for (int64_t ci = c0; ci < c1; ++ci) {                              \
                    const T *a = s + (co * cig + ci) * kk;                          \
                    T *b = d + (ci * cog + co) * kk + kk - 1;                       \
                    CC_WA_COPY(kk, a, b);                                           \
                }                                                                   \
        }                                                                           \
    }

CC_DEF_WADJ(cc_wadj_4, uint32_t)
CC_DEF_WADJ(cc_wadj_8, uint64_t)

int cc_weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk, int64_t elsize,
                      const void *src, void *dst, int nthreads) {
    if (groups < 0 || cog < 0 || cig < 0 || kk < 0) return CC_ERR_ARG;
    if (elsize != 4 && elsize != 8) return CC_ERR_ARG;
    if (groups == 0 || cog == 0 || cig == 0 || kk == 0) return CC_OK;
    if (!src || !dst) return CC_ERR_ARG;
    if (kk == 1) /* no taps to reverse: the plain transpose */
        return cc_transpose(groups, cog, cig, elsize, src, dst, nthreads);
    if (nthreads < 1) nthreads = 1;
    const int par = nthreads > 1 && groups * cog * cig * kk * elsize >= CC_TR_PAR_BYTES;
    if (elsize == 4)
        cc_wadj_4(groups, cog, cig, kk, (const uint32_t *)src, (uint32_t *)dst, nthreads, par);
    else
        cc_wadj_8(groups, cog, cig, kk, (const uint64_t *)src, (uint64_t *)dst, nthreads, par);
    return CC_OK;
}
