/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, AVX2 + FMA
 * (built with -mavx2 -mfma in its own static library): 8 tiles per vector.
 */
#include <immintrin.h>

#define WDW_ISA avx2
#define VT __m256
#define V 8
#define VZERO() _mm256_setzero_ps()
#define VSET1 _mm256_set1_ps
#define VLOAD _mm256_loadu_ps
#define VSTORE _mm256_storeu_ps
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VFNMA(a, b, c) _mm256_fnmadd_ps(a, b, c)

static inline __attribute__((always_inline)) void wdw_split2_avx2(const float *p, __m256 *e,
                                                                  __m256 *o)
{
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    *e = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
    *o = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
}

static inline __attribute__((always_inline)) void wdw_join2_avx2(float *p, __m256 e, __m256 o)
{
    const __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

static inline __attribute__((always_inline)) __m256i wdw_mask_avx2(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* the first n (0 < n < 16) floats of the interleave */
static inline __attribute__((always_inline)) void wdw_join2n_avx2(float *p, __m256 e, __m256 o,
                                                                   int64_t n)
{
    const __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
    const __m256 a = _mm256_permute2f128_ps(lo, hi, 0x20), b = _mm256_permute2f128_ps(lo, hi, 0x31);
    if (n >= 8) {
        _mm256_storeu_ps(p, a);
        _mm256_maskstore_ps(p + 8, wdw_mask_avx2(n - 8), b);
    } else {
        _mm256_maskstore_ps(p, wdw_mask_avx2(n), a);
    }
}

#define VSPLIT2(p, e, o) wdw_split2_avx2((p), (e), (o))
#define VJOIN2(p, e, o) wdw_join2_avx2((p), (e), (o))
#define VJOIN2N(p, e, o, n) wdw_join2n_avx2((p), (e), (o), (n))

#include "wdw3x3_f32.inc"
