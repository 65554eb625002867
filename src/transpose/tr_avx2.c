/*
 * Layout-transpose tile kernels, AVX2 (built with -mavx2 in its own static
 * library): 8x8 blocks of 32-bit elements (unpack, shuffle, then a 128-bit
 * lane swap: 24 shuffles per 64 elements) and 4x4 blocks of 64-bit ones
 * (unpack, lane swap).  Integer-free float shuffles: bits pass unchanged.
 */
#include <immintrin.h>

#include "tr_internal.h"

static inline __attribute__((always_inline)) void
tr_8x8_b32_avx2(const float *s, int64_t ls, float *d, int64_t ld)
{
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(s + i * ls);
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4i + j], lane L: column 4L + j of rows 4i .. 4i + 3 */
    for (int i = 0; i < 2; i++) {
        u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(d + j * ld, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
        _mm256_storeu_ps(d + (4 + j) * ld, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
    }
}

static inline __attribute__((always_inline)) void
tr_4x4_b64_avx2(const double *s, int64_t ls, double *d, int64_t ld)
{
    const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ls);
    const __m256d r2 = _mm256_loadu_pd(s + 2 * ls), r3 = _mm256_loadu_pd(s + 3 * ls);
    /* t0 lane L: column 2L of rows 0, 1; t1: column 2L + 1 */
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(d + ld, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(t1, t3, 0x31));
}

void cc_tr_tile_b32_avx2(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                         int64_t nc)
{
    CC_TR_BLOCKED(float, uint32_t, 8, tr_8x8_b32_avx2, src, ls, dst, ld, nr, nc);
}

void cc_tr_tile_b64_avx2(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                         int64_t nc)
{
    CC_TR_BLOCKED(double, uint64_t, 4, tr_4x4_b64_avx2, src, ls, dst, ld, nr, nc);
}
