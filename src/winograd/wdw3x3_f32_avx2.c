/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, AVX2 + FMA (built with
 * -mavx2 -mfma in its own static library): 8 tiles per vector.  The even/odd
 * split is one in-lane shufps per vector (tile order 0 1 4 5 2 3 6 7), whose
 * inverse is one unpcklps/unpckhps per output vector: no lane crossing.
 */
#include <immintrin.h>
#include <stdint.h>

#define WDW_ISA avx2
#define WDW_R 4
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

#define WDW_AI static inline __attribute__((always_inline))

/* lanes lo <= i < hi set */
WDW_AI __m256i wdw_mask_avx2(int64_t lo, int64_t hi)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), idx),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), idx));
}

WDW_AI __m256i wdw_lanes_avx2(int64_t base, int64_t n)
{
    const int64_t lo = base < 0 ? (base < -8 ? 8 : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > 8 ? 8 : n - base);
    return wdw_mask_avx2(lo, hi);
}

WDW_AI __m256 wdw_loadmk_avx2(const float *x, int64_t base, __m256i m)
{
    /* the masked-off lanes are not accessed (and do not fault) */
    const float *p = (const float *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(float)));
    return _mm256_maskload_ps(p, m);
}

WDW_AI void wdw_split_avx2(__m256 a, __m256 b, __m256 *e, __m256 *o)
{
    *e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}

WDW_AI void wdw_join_avx2(float *p, __m256 e, __m256 o)
{
    _mm256_storeu_ps(p, _mm256_unpacklo_ps(e, o));
    _mm256_storeu_ps(p + 8, _mm256_unpackhi_ps(e, o));
}

/* n (0 <= n <= 8) floats of v at p, by halves, pairs and singles:
 * vmaskmovps stores are microcoded and slow on AMD's cores */
WDW_AI void wdw_storen_avx2(float *p, __m256 v, int64_t n)
{
    if (n == 8) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 q = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, q);
        q = _mm256_extractf128_ps(v, 1);
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, q);
        q = _mm_movehl_ps(q, q);
        p += 2;
        n -= 2;
    }
    if (n)
        _mm_store_ss(p, q);
}

WDW_AI void wdw_joinn_avx2(float *p, __m256 e, __m256 o, int64_t n)
{
    const __m256 a = _mm256_unpacklo_ps(e, o), b = _mm256_unpackhi_ps(e, o);
    if (n >= 8) {
        _mm256_storeu_ps(p, a);
        wdw_storen_avx2(p + 8, b, n - 8);
    } else {
        wdw_storen_avx2(p, a, n);
    }
}

#define VMASKT __m256i
#define VMASK(base, n) wdw_lanes_avx2((base), (n))
#define VLOADMK(x, base, m) wdw_loadmk_avx2((x), (base), (m))
#define VSPLIT(a, b, e, o) wdw_split_avx2((a), (b), (e), (o))
#define VJOIN(p, e, o) wdw_join_avx2((p), (e), (o))
#define VJOINN(p, e, o, n) wdw_joinn_avx2((p), (e), (o), (n))

#include "wdw3x3.inc"
