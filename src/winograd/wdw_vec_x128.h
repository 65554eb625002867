/* 128-bit (VEX-encoded SSE + FMA) vector layer of the Winograd template
 * (wdw3x3_f32.inc): 4 tiles per vector, for planes whose rows have at most
 * 4 tiles (OW <= 8), where 8-lane vectors would compute half of zeros.  The
 * split (shufps) gives the natural tile order; unpcklps/unpckhps invert it.
 * For files built with -mavx2 -mfma (or more). */
#include <immintrin.h>
#include <stdint.h>

#ifndef WDW_AI
#define WDW_AI static inline __attribute__((always_inline))
#endif

#define VT __m128
#define V 4
#define VZERO() _mm_setzero_ps()
#define VSET1 _mm_set1_ps
#define VLOAD _mm_loadu_ps
#define VSTORE _mm_storeu_ps
#define VADD _mm_add_ps
#define VSUB _mm_sub_ps
#define VMUL _mm_mul_ps
#define VFMA(a, b, c) _mm_fmadd_ps(a, b, c)
#define VFNMA(a, b, c) _mm_fnmadd_ps(a, b, c)

WDW_AI __m128i wdw_lanes_x128(int64_t base, int64_t n)
{
    const int64_t lo = base < 0 ? (base < -4 ? 4 : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > 4 ? 4 : n - base);
    const __m128i idx = _mm_setr_epi32(0, 1, 2, 3);
    return _mm_andnot_si128(_mm_cmpgt_epi32(_mm_set1_epi32((int)lo), idx),
                            _mm_cmpgt_epi32(_mm_set1_epi32((int)hi), idx));
}

WDW_AI __m128 wdw_loadmk_x128(const float *x, int64_t base, __m128i m)
{
    /* the masked-off lanes are not accessed (and do not fault) */
    const float *p = (const float *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(float)));
    return _mm_maskload_ps(p, m);
}

WDW_AI void wdw_split_x128(__m128 a, __m128 b, __m128 *e, __m128 *o)
{
    *e = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}

WDW_AI void wdw_join_x128(float *p, __m128 e, __m128 o)
{
    _mm_storeu_ps(p, _mm_unpacklo_ps(e, o));
    _mm_storeu_ps(p + 4, _mm_unpackhi_ps(e, o));
}

/* n (0 <= n <= 4) floats of q at p (no vmaskmovps: slow on AMD) */
WDW_AI void wdw_storen_x128(float *p, __m128 q, int64_t n)
{
    if (n == 4) {
        _mm_storeu_ps(p, q);
        return;
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

WDW_AI void wdw_joinn_x128(float *p, __m128 e, __m128 o, int64_t n)
{
    const __m128 a = _mm_unpacklo_ps(e, o), b = _mm_unpackhi_ps(e, o);
    if (n >= 4) {
        _mm_storeu_ps(p, a);
        wdw_storen_x128(p + 4, b, n - 4);
    } else {
        wdw_storen_x128(p, a, n);
    }
}

#define VMASKT __m128i
#define VMASK(base, n) wdw_lanes_x128((base), (n))
#define VLOADMK(x, base, m) wdw_loadmk_x128((x), (base), (m))
#define VSPLIT(a, b, e, o) wdw_split_x128((a), (b), (e), (o))
#define VJOIN(p, e, o) wdw_join_x128((p), (e), (o))
#define VJOINN(p, e, o, n) wdw_joinn_x128((p), (e), (o), (n))
