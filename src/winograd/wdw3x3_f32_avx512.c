/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, AVX-512F (built with
 * -mavx512f -mfma in its own static library; run only where the CPU reports
 * avx512f): 16 tiles per vector.  The even/odd split is one in-lane shufps
 * per vector, its inverse one unpcklps/unpckhps per output vector.
 * CC_SIMDE_AVX512 (tests/c only) builds the same code on SIMDe's portable
 * AVX-512, so that it can be checked on CPUs without AVX-512.
 */
#ifdef CC_SIMDE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif
#include <stdint.h>

#define WDW_ISA avx512
#define WDW_R 6
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

#define WDW_AI static inline __attribute__((always_inline))

WDW_AI __mmask16 wdw_lanes_avx512(int64_t base, int64_t n)
{
    const int64_t lo = base < 0 ? (base < -16 ? 16 : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > 16 ? 16 : n - base);
    return hi <= lo ? (__mmask16)0 : (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

WDW_AI __m512 wdw_loadmk_avx512(const float *x, int64_t base, __mmask16 m)
{
#ifdef CC_SIMDE_AVX512 /* SIMDe has no masked load */
    float t[16];
    for (int64_t i = 0; i < 16; i++)
        t[i] = (m >> i) & 1 ? x[base + i] : 0.0f;
    return _mm512_loadu_ps(t);
#else
    /* the masked-off lanes are not accessed (and do not fault) */
    const float *p = (const float *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(float)));
    return _mm512_maskz_loadu_ps(m, p);
#endif
}

WDW_AI void wdw_split_avx512(__m512 a, __m512 b, __m512 *e, __m512 *o)
{
    *e = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}

WDW_AI void wdw_join_avx512(float *p, __m512 e, __m512 o)
{
    _mm512_storeu_ps(p, _mm512_unpacklo_ps(e, o));
    _mm512_storeu_ps(p + 16, _mm512_unpackhi_ps(e, o));
}

WDW_AI void wdw_joinn_avx512(float *p, __m512 e, __m512 o, int64_t n)
{
    const __m512 a = _mm512_unpacklo_ps(e, o), b = _mm512_unpackhi_ps(e, o);
#ifdef CC_SIMDE_AVX512 /* SIMDe has no masked store */
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

#define VMASKT __mmask16
#define VMASK(base, n) wdw_lanes_avx512((base), (n))
#define VLOADMK(x, base, m) wdw_loadmk_avx512((x), (base), (m))
#define VSPLIT(a, b, e, o) wdw_split_avx512((a), (b), (e), (o))
#define VJOIN(p, e, o) wdw_join_avx512((p), (e), (o))
#define VJOINN(p, e, o, n) wdw_joinn_avx512((p), (e), (o), (n))

#include "wdw3x3.inc"
