/* The weight of the adjoint taken as a forward convolution; see
 * weight_adjoint.h. */
#include <stdint.h>

#include "transpose/transpose.h"
#include "weight_adjoint.h"

/* Per group, the (cog, cig) matrix of taps transposed and every tap block
 * reversed; NumPy's copy of the reversed 6-D view ran at 2.7-6 GB/s (an
 * inner loop of 3 elements for a 3x3 kernel).  Work items are (group, 16
 * output channels). */
#define CC_WA_TILE 16
/* Tiles of CC_WA_TILE output x CC_WA_TILE input channels, the output
 * channels' tiles outermost within a group: the source's rows are read as
 * CC_WA_TILE streams, each destination row gets a tile's run of blocks.
 * Per source run (a tile row: CC_WA_TILE blocks, consecutive) the NaN /
 * infinity test runs as one loop the compiler vectorises, then each block
 * is copied reversed; the test fused into the per-element copy had kept
 * both scalar (512x512x3x3: 3.7 ms, 2.6 GB/s). */
/* nb blocks of kk taps, consecutive at a, each reversed into the block
 * ending at b (the next ld further on); 3x3 and 3x3x3 kernels get a
 * constant kk (a loop of 9 with a run-time bound ran at one element per
 * ns) */
#define CC_WA_REV(kk, a, b, nb, ld)                                                 \
    for (int64_t i_ = 0; i_ < (nb); ++i_)                                           \
        for (int64_t t_ = 0; t_ < (kk); ++t_) (b)[i_ * (ld) - t_] = (a)[i_ * (kk) + t_]
#define CC_DEF_WADJ(NAME, T, M)                                                     \
    static int NAME(int64_t groups, int64_t cog, int64_t cig, int64_t kk,           \
                    const T *src, T *dst, int nthreads, int par) {                  \
        const int64_t ot = (cog + CC_WA_TILE - 1) / CC_WA_TILE, items = groups * ot; \
        int bad = 0;                                                                \
        _Pragma("omp parallel for schedule(static) num_threads(nthreads) if(par) reduction(| : bad)") \
        for (int64_t it = 0; it < items; ++it) {                                    \
            const int64_t g = it / ot, o0 = (it % ot) * CC_WA_TILE;                 \
            const int64_t o1 = o0 + CC_WA_TILE < cog ? o0 + CC_WA_TILE : cog;       \
            const T *s = src + g * cog * cig * kk;                                  \
            T *d = dst + g * cig * cog * kk;                                        \
            for (int64_t c0 = 0; c0 < cig; c0 += CC_WA_TILE) {                      \
                const int64_t c1 = c0 + CC_WA_TILE < cig ? c0 + CC_WA_TILE : cig;   \
                for (int64_t co = o0; co < o1; ++co) {                              \
                    const T *a = s + (co * cig + c0) * kk;                          \
                    const int64_t n = (c1 - c0) * kk;                               \
                    T m = 0;                                                        \
                    for (int64_t e = 0; e < n; ++e)                                 \
                        m |= (T)(((a[e] & (T)(M)) == (T)(M)) ? 1 : 0);              \
                    bad |= m != 0;                                                  \
                    T *b = d + (c0 * cog + co) * kk + kk - 1;                       \
                    if (kk == 9)                                                    \
                        CC_WA_REV(9, a, b, c1 - c0, cog * kk);                      \
                    else if (kk == 27)                                              \
                        CC_WA_REV(27, a, b, c1 - c0, cog * kk);                     \
                    else                                                            \
                        CC_WA_REV(kk, a, b, c1 - c0, cog * kk);                     \
                }                                                                   \
            }                                                                       \
        }                                                                           \
        return bad;                                                                 \
    }

CC_DEF_WADJ(cc_wadj_4, uint32_t, 0x7F800000u)
CC_DEF_WADJ(cc_wadj_8, uint64_t, 0x7FF0000000000000ull)

int cc_weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk, int64_t elsize,
                      const void *src, void *dst, int nthreads, int *nonfinite) {
    if (nonfinite) *nonfinite = 0;
    if (groups < 0 || cog < 0 || cig < 0 || kk < 0) return CC_ERR_ARG;
    if (elsize != 4 && elsize != 8) return CC_ERR_ARG;
    if (groups == 0 || cog == 0 || cig == 0 || kk == 0) return CC_OK;
    if (!src || !dst) return CC_ERR_ARG;
    if (kk == 1) /* no taps to reverse: the plain transpose */
        return cc_transpose(groups, cog, cig, elsize, src, dst, nthreads);
    const int64_t ot = (cog + CC_WA_TILE - 1) / CC_WA_TILE;
    nthreads = cc_threads_for((double)groups * (double)cog * (double)cig * (double)kk * (double)elsize,
                              CC_TR_PAR_BYTES, groups * ot, nthreads);
    const int par = nthreads > 1;
    int bad;
    if (elsize == 4)
        bad = cc_wadj_4(groups, cog, cig, kk, (const uint32_t *)src, (uint32_t *)dst, nthreads, par);
    else
        bad = cc_wadj_8(groups, cog, cig, kk, (const uint64_t *)src, (uint64_t *)dst, nthreads, par);
    if (nonfinite) *nonfinite = bad;
    return CC_OK;
}
