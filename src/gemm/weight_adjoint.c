/* The weight of the adjoint taken as a forward convolution; see
 * weight_adjoint.h. */
#include <stdint.h>

#include "transpose/transpose.h"
#include "weight_adjoint.h"

/* Per group, the (cog, cig) matrix of taps transposed and every tap block
 * reversed.  Work items are (group, 16 input channels);
 * each reads 16 x cog contiguous tap blocks and writes 16 contiguous rows
 * of cog blocks, so both sides stream; NumPy's copy of the reversed 6-D
 * view ran at 2.7-6 GB/s (an inner loop of 3 elements for a 3x3 kernel). */
#define CC_WA_TILE 16
/* one tap block reversed, OR-ing into bad whether an element's exponent
 * bits are all ones (NaN or infinity as a float of that size); 3x3 and
 * 3x3x3 kernels get a loop of constant length (a loop of 9 with a run-time
 * bound ran at one element per ns) */
#define CC_WA_COPY(kk, a, b, M, bad)                                               \
    do {                                                                            \
        if ((kk) == 9) {                                                            \
            for (int t_ = 0; t_ < 9; ++t_) {                                        \
                (b)[-t_] = (a)[t_];                                                 \
                bad |= ((a)[t_] & (M)) == (M);                                      \
            }                                                                       \
        } else if ((kk) == 27) {                                                    \
            for (int t_ = 0; t_ < 27; ++t_) {                                       \
                (b)[-t_] = (a)[t_];                                                 \
                bad |= ((a)[t_] & (M)) == (M);                                      \
            }                                                                       \
        } else {                                                                    \
            for (int64_t t_ = 0; t_ < (kk); ++t_) {                                 \
                (b)[-t_] = (a)[t_];                                                 \
                bad |= ((a)[t_] & (M)) == (M);                                      \
            }                                                                       \
        }                                                                           \
    } while (0)
#define CC_DEF_WADJ(NAME, T, M)                                                     \
    static int NAME(int64_t groups, int64_t cog, int64_t cig, int64_t kk,           \
                    const T *src, T *dst, int nthreads, int par) {                  \
        const int64_t ct = (cig + CC_WA_TILE - 1) / CC_WA_TILE, items = groups * ct; \
        int bad = 0;                                                                \
        _Pragma("omp parallel for schedule(static) num_threads(nthreads) if(par) reduction(| : bad)") \
        for (int64_t it = 0; it < items; ++it) {                                    \
            const int64_t g = it / ct, c0 = (it % ct) * CC_WA_TILE;                 \
            const int64_t c1 = c0 + CC_WA_TILE < cig ? c0 + CC_WA_TILE : cig;       \
            const T *s = src + g * cog * cig * kk;                                  \
            T *d = dst + g * cig * cog * kk;                                        \
            for (int64_t co = 0; co < cog; ++co)                                    \
                for (int64_t ci = c0; ci < c1; ++ci) {                              \
                    const T *a = s + (co * cig + ci) * kk;                          \
                    T *b = d + (ci * cog + co) * kk + kk - 1;                       \
                    CC_WA_COPY(kk, a, b, (T)(M), bad);                              \
                }                                                                   \
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
    const int64_t ct = (cig + CC_WA_TILE - 1) / CC_WA_TILE;
    nthreads = cc_threads_for((double)groups * (double)cog * (double)cig * (double)kk * (double)elsize,
                              CC_TR_PAR_BYTES, groups * ct, nthreads);
    const int par = nthreads > 1;
    int bad;
    if (elsize == 4)
        bad = cc_wadj_4(groups, cog, cig, kk, (const uint32_t *)src, (uint32_t *)dst, nthreads, par);
    else
        bad = cc_wadj_8(groups, cog, cig, kk, (const uint64_t *)src, (uint64_t *)dst, nthreads, par);
    if (nonfinite) *nonfinite = bad;
    return CC_OK;
}
