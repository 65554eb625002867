/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, AVX-512F (built
 * with -mavx512f -mfma in its own static library; run only where the CPU
 * reports avx512f): 16 tiles per vector.  WDW_SIMDE_AVX512 (tests/c only)
 * builds the same code on SIMDe's portable AVX-512, so that it can be
 * checked on CPUs without AVX-512.
 */
#ifdef WDW_SIMDE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif

#define WDW_ISA avx512
#define VT __m512
#define V 16
#define VZERO() _mm512_setzero_ps()
#define VSET1 _mm512_set1_ps
#define VLOAD _mm512_loadu_ps
#define VSTORE _mm512_storeu_ps
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VFNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)

static inline __attribute__((always_inline)) void wdw_split2_avx512(const float *p, __m512 *e,
                                                                    __m512 *o)
{
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
    *e = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    *o = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
}

static inline __attribute__((always_inline)) void wdw_join2_avx512(float *p, __m512 e, __m512 o)
{
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), o));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), o));
}

/* the first n (0 < n < 32) floats of the interleave */
static inline __attribute__((always_inline)) void wdw_join2n_avx512(float *p, __m512 e, __m512 o,
                                                                     int64_t n)
{
    const __m512 a = _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), o);
    const __m512 b = _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), o);
#ifdef WDW_SIMDE_AVX512 /* SIMDe has no masked store */
    float t[32];
    _mm512_storeu_ps(t, a);
    _mm512_storeu_ps(t + 16, b);
    for (int64_t i = 0; i < n; i++)
        p[i] = t[i];
#else
    if (n >= 16) {
        _mm512_storeu_ps(p, a);
        _mm512_mask_storeu_ps(p + 16, (__mmask16)((1u << (n - 16)) - 1u), b);
    } else {
        _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), a);
    }
#endif
}

#define VSPLIT2(p, e, o) wdw_split2_avx512((p), (e), (o))
#define VJOIN2(p, e, o) wdw_join2_avx512((p), (e), (o))
#define VJOIN2N(p, e, o, n) wdw_join2n_avx512((p), (e), (o), (n))

#include "wdw3x3_f32.inc"
