/* AVX-512F vector layer (see dw_vec_common.h).  Only for files built with
 * -mavx512f -mfma.  CC_SIMDE_AVX512 (tests only, tests/c) builds the same
 * code on top of SIMDe's portable AVX-512 emulation, so that the AVX-512
 * kernels can be checked on CPUs without AVX-512. */
#ifdef CC_SIMDE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#else
#include <immintrin.h>
#endif
#include "vec_common.h"

#define DW_RK_R 6
/* masked stores are native and cheap */
#define DW_TAIL_OVERLAP 0

#ifdef DW_F64
#define T double
#define DW_SFX f64
#define VT __m512d
#define V 8
#define VSET1 _mm512_set1_pd
#define VZERO _mm512_setzero_pd
#define VLOADU _mm512_loadu_pd
#define VSTOREU _mm512_storeu_pd
#define VFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define VADD _mm512_add_pd
#define VSUB _mm512_sub_pd
#define DW_KMASK(c) ((__mmask8)((1u << (c)) - 1u))
#define VLOADP(p, c) _mm512_maskz_loadu_pd(DW_KMASK(c), (p))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm512_maskz_mov_pd((__mmask8)~DW_KMASK(8 - (c)), (v))
#define VSTOREP(p, v, c) _mm512_mask_storeu_pd((p), DW_KMASK(c), (v))
DW_INLINE void dw_split2r_avx512(__m512d a, __m512d b, __m512d *e, __m512d *o)
{
    *e = _mm512_permutex2var_pd(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
    *o = _mm512_permutex2var_pd(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
}
DW_INLINE void dw_join2_avx512(double *p, __m512d e, __m512d o)
{
    _mm512_storeu_pd(p, _mm512_permutex2var_pd(
        e, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), o));
    _mm512_storeu_pd(p + 8, _mm512_permutex2var_pd(
        e, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), o));
}
#else
#define T float
#define DW_SFX f32
#define VT __m512
#define V 16
#define VSET1 _mm512_set1_ps
#define VZERO _mm512_setzero_ps
#define VLOADU _mm512_loadu_ps
#define VSTOREU _mm512_storeu_ps
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define DW_KMASK(c) ((__mmask16)((1u << (c)) - 1u))
#define VLOADP(p, c) _mm512_maskz_loadu_ps(DW_KMASK(c), (p))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm512_maskz_mov_ps((__mmask16)~DW_KMASK(16 - (c)), (v))
#define VSTOREP(p, v, c) _mm512_mask_storeu_ps((p), DW_KMASK(c), (v))
DW_INLINE void dw_split2r_avx512(__m512 a, __m512 b, __m512 *e, __m512 *o)
{
    *e = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    *o = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
}
DW_INLINE void dw_join2_avx512(float *p, __m512 e, __m512 o)
{
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), o));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), o));
}
#endif
#ifdef CC_SIMDE_AVX512
/* SIMDe 0.7 has no masked loads/stores: go through a buffer, still through
 * the masks. */
#undef VLOADP
#undef VSTOREP
DW_INLINE VT dw_loadp_simde(const T *p, int64_t c)
{
    T tmp[V];
    for (int64_t i = 0; i < V; i++)
        tmp[i] = i < c ? p[i] : (T)1e30;
#ifdef DW_F64
    return _mm512_maskz_mov_pd(DW_KMASK(c), VLOADU(tmp));
#else
    return _mm512_maskz_mov_ps(DW_KMASK(c), VLOADU(tmp));
#endif
}
DW_INLINE void dw_storep_simde(T *p, VT v, int64_t c)
{
    T tmp[V];
    for (int64_t i = 0; i < V; i++)
        tmp[i] = i < c ? p[i] : (T)0;
#ifdef DW_F64
    VSTOREU(tmp, _mm512_mask_mov_pd(VLOADU(tmp), DW_KMASK(c), v));
#else
    VSTOREU(tmp, _mm512_mask_mov_ps(VLOADU(tmp), DW_KMASK(c), v));
#endif
    for (int64_t i = 0; i < c; i++)
        p[i] = tmp[i];
}
#define VLOADP(p, c) dw_loadp_simde((p), (c))
#define VSTOREP(p, v, c) dw_storep_simde((p), (v), (c))
#endif
/* A 512-bit vector is a whole cache line, so every misaligned load splits a
 * line; still cheaper than valignd, which competes with the FMAs for port 5
 * on Intel cores. */
#define VTAP(p, k) VLOADU((p) + (k))
#define VSPLIT2R(a, b, e, o) dw_split2r_avx512((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) VSPLIT2R(VLOADU(p), VLOADU((p) + V), (e), (o))
#define VJOIN2(p, e, o) dw_join2_avx512((p), (e), (o))
