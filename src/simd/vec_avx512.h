/* AVX-512F vector layer (see vec_common.h).  Only for files built with
 * -mavx512f -mfma.  CC_SIMDE_AVX512 (test builds only: meson option
 * simde_avx512) builds the same code on top of SIMDe's portable AVX-512
 * emulation, so that the AVX-512 kernels can be checked on CPUs without
 * AVX-512. */
#ifdef CC_SIMDE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
/* SIMDe has no native alias for the 128-bit lane shuffles */
#define VEC_SHUF_F32X4 simde_mm512_shuffle_f32x4
#define VEC_SHUF_F64X2 simde_mm512_shuffle_f64x2
#else
#include <immintrin.h>
#define VEC_SHUF_F32X4 _mm512_shuffle_f32x4
#define VEC_SHUF_F64X2 _mm512_shuffle_f64x2
#endif
#include "vec_common.h"

/* masked stores are native and cheap */
#define VTAIL_OVERLAP 0

#ifdef CC_F64
#define VT __m512d
#define V 8
#define VSET1 _mm512_set1_pd
#define VZERO _mm512_setzero_pd
#define VLOADU _mm512_loadu_pd
#define VSTOREU _mm512_storeu_pd
#define VFMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define VADD _mm512_add_pd
CC_INLINE double vec_hsum_avx512(__m512d v)
{
    const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}
#define VHSUM(v) vec_hsum_avx512(v)
#define VSUB _mm512_sub_pd
#define VMUL _mm512_mul_pd
#define VFNMA(a, b, c) _mm512_fnmadd_pd(a, b, c)
#define VEC_KMASK(c) ((__mmask8)((1u << (c)) - 1u))
#define VLOADP(p, c) _mm512_maskz_loadu_pd(VEC_KMASK(c), (p))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm512_maskz_mov_pd((__mmask8)~VEC_KMASK(8 - (c)), (v))
#define VSTOREP(p, v, c) _mm512_mask_storeu_pd((p), VEC_KMASK(c), (v))
CC_INLINE void vec_split2r_avx512(__m512d a, __m512d b, __m512d *e, __m512d *o)
{
    *e = _mm512_permutex2var_pd(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
    *o = _mm512_permutex2var_pd(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
}
CC_INLINE void vec_join2_avx512(double *p, __m512d e, __m512d o)
{
    _mm512_storeu_pd(p, _mm512_permutex2var_pd(
        e, _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), o));
    _mm512_storeu_pd(p + 8, _mm512_permutex2var_pd(
        e, _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15), o));
}
/* an 8x8 block transposed: unpack, two 128-bit lane shuffles; float
 * shuffles only, so the bits pass unchanged */
CC_INLINE void vec_transpose_avx512(const double *s, int64_t ls, double *d, int64_t ld)
{
    __m512d r[8], t[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm512_loadu_pd(s + i * ls);
    /* t[2i + j], 128-bit lane L: column 2L + j of rows 2i, 2i + 1 */
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    for (int j = 0; j < 2; j++) {
        const __m512d v0 = VEC_SHUF_F64X2(t[j], t[2 + j], 0x88);
        const __m512d v1 = VEC_SHUF_F64X2(t[j], t[2 + j], 0xDD);
        const __m512d w0 = VEC_SHUF_F64X2(t[4 + j], t[6 + j], 0x88);
        const __m512d w1 = VEC_SHUF_F64X2(t[4 + j], t[6 + j], 0xDD);
        _mm512_storeu_pd(d + j * ld, VEC_SHUF_F64X2(v0, w0, 0x88));
        _mm512_storeu_pd(d + (2 + j) * ld, VEC_SHUF_F64X2(v1, w1, 0x88));
        _mm512_storeu_pd(d + (4 + j) * ld, VEC_SHUF_F64X2(v0, w0, 0xDD));
        _mm512_storeu_pd(d + (6 + j) * ld, VEC_SHUF_F64X2(v1, w1, 0xDD));
    }
}
#else
#define VT __m512
#define V 16
#define VSET1 _mm512_set1_ps
#define VZERO _mm512_setzero_ps
#define VLOADU _mm512_loadu_ps
#define VSTOREU _mm512_storeu_ps
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD _mm512_add_ps
CC_INLINE float vec_hsum_avx512(__m512 v)
{
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), hi);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}
#define VHSUM(v) vec_hsum_avx512(v)
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VFNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define VEC_KMASK(c) ((__mmask16)((1u << (c)) - 1u))
#define VLOADP(p, c) _mm512_maskz_loadu_ps(VEC_KMASK(c), (p))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm512_maskz_mov_ps((__mmask16)~VEC_KMASK(16 - (c)), (v))
#define VSTOREP(p, v, c) _mm512_mask_storeu_ps((p), VEC_KMASK(c), (v))
CC_INLINE void vec_split2r_avx512(__m512 a, __m512 b, __m512 *e, __m512 *o)
{
    *e = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
    *o = _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
}
CC_INLINE void vec_join2_avx512(float *p, __m512 e, __m512 o)
{
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), o));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(
        e, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), o));
}
/* a 16x16 block transposed: unpack, shuffle, two 128-bit lane shuffles
 * (64 shuffles per 256 elements); float shuffles only, so the bits pass
 * unchanged */
CC_INLINE void vec_transpose_avx512(const float *s, int64_t ls, float *d, int64_t ld)
{
    __m512 r[16], t[16], u[16];
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_loadu_ps(s + i * ls);
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4i + j], 128-bit lane L: column 4L + j of rows 4i .. 4i + 3 */
    for (int i = 0; i < 4; i++) {
        u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {
        /* lanes {u[j].0, u[j].2, u[4+j].0, u[4+j].2} and the odd ones */
        const __m512 v0 = VEC_SHUF_F32X4(u[j], u[4 + j], 0x88);
        const __m512 v1 = VEC_SHUF_F32X4(u[j], u[4 + j], 0xDD);
        const __m512 w0 = VEC_SHUF_F32X4(u[8 + j], u[12 + j], 0x88);
        const __m512 w1 = VEC_SHUF_F32X4(u[8 + j], u[12 + j], 0xDD);
        _mm512_storeu_ps(d + j * ld, VEC_SHUF_F32X4(v0, w0, 0x88));
        _mm512_storeu_ps(d + (4 + j) * ld, VEC_SHUF_F32X4(v1, w1, 0x88));
        _mm512_storeu_ps(d + (8 + j) * ld, VEC_SHUF_F32X4(v0, w0, 0xDD));
        _mm512_storeu_ps(d + (12 + j) * ld, VEC_SHUF_F32X4(v1, w1, 0xDD));
    }
}
#endif
#ifdef CC_SIMDE_AVX512
/* SIMDe 0.7 has no masked loads/stores: go through a buffer, still through
 * the masks. */
#undef VLOADP
#undef VSTOREP
CC_INLINE VT vec_loadp_simde(const CC_T *p, int64_t c)
{
    CC_T tmp[V];
    for (int64_t i = 0; i < V; i++)
        tmp[i] = i < c ? p[i] : (CC_T)1e30;
#ifdef CC_F64
    return _mm512_maskz_mov_pd(VEC_KMASK(c), VLOADU(tmp));
#else
    return _mm512_maskz_mov_ps(VEC_KMASK(c), VLOADU(tmp));
#endif
}
CC_INLINE void vec_storep_simde(CC_T *p, VT v, int64_t c)
{
    CC_T tmp[V];
    for (int64_t i = 0; i < V; i++)
        tmp[i] = i < c ? p[i] : (CC_T)0;
#ifdef CC_F64
    VSTOREU(tmp, _mm512_mask_mov_pd(VLOADU(tmp), VEC_KMASK(c), v));
#else
    VSTOREU(tmp, _mm512_mask_mov_ps(VLOADU(tmp), VEC_KMASK(c), v));
#endif
    for (int64_t i = 0; i < c; i++)
        p[i] = tmp[i];
}
#define VLOADP(p, c) vec_loadp_simde((p), (c))
#define VSTOREP(p, v, c) vec_storep_simde((p), (v), (c))
#endif
/* The lanes of m stored in lane order, contiguously from p (vec.h):
 * compressed in a register, then a masked store of the first popcount(m)
 * elements (the compressing store to memory is slow on AMD Zen 4) */
#ifndef CC_SIMDE_AVX512
#ifdef CC_F64
#define VSTOREC(p, v, m)                                                                          \
    _mm512_mask_storeu_pd((p), VEC_KMASK(__builtin_popcount(m)), _mm512_maskz_compress_pd((__mmask8)(m), (v)))
#else
#define VSTOREC(p, v, m)                                                                          \
    _mm512_mask_storeu_ps((p), VEC_KMASK(__builtin_popcount(m)), _mm512_maskz_compress_ps((__mmask16)(m), (v)))
#endif
#endif
/* The lanes i with 0 <= base + i < n, and a load of them (the Winograd
 * input transforms, wino_tr.inc; the depthwise Winograd's lane windows) */
#ifdef CC_F64
#define VMASKT __mmask8
#define VEC_MASKZ_LOADU _mm512_maskz_loadu_pd
#else
#define VMASKT __mmask16
#define VEC_MASKZ_LOADU _mm512_maskz_loadu_ps
#endif
CC_INLINE VMASKT vec_lanes_avx512(int64_t base, int64_t n)
{
    const int64_t lo = base < 0 ? (base < -V ? V : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > V ? V : n - base);
    return hi <= lo ? (VMASKT)0 : (VMASKT)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
CC_INLINE VT vec_loadmk_avx512(const CC_T *x, int64_t base, VMASKT m)
{
#ifdef CC_SIMDE_AVX512 /* SIMDe has no masked load */
    CC_T t[V];
    for (int64_t i = 0; i < V; i++)
        t[i] = (m >> i) & 1 ? x[base + i] : (CC_T)0;
    return VLOADU(t);
#else
    /* the masked-off lanes are not accessed (and do not fault) */
    const CC_T *p = (const CC_T *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(CC_T)));
    return VEC_MASKZ_LOADU(m, p);
#endif
}
#define VMASK(base, n) vec_lanes_avx512((base), (n))
#define VLOADMK(x, base, m) vec_loadmk_avx512((x), (base), (m))
/* Two short runs' window columns in one vector (wino_tr.inc's wtinr2):
 * VPICK2(a, b, VPICKC(VPICK2I(na), c)) has in lane i element 2 i + c of a
 * for i < na and element 2 (i - na) + c of b from lane na on (the
 * elements of a and b below V; lanes past the runs' tiles hold elements of
 * a or b).  One two-source permute per column. */
#define VPICKT __m512i
#ifdef CC_F64
CC_INLINE __m512i vec_pick2i_avx512(int64_t na)
{
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    return _mm512_mask_add_epi64(even, (__mmask8)~VEC_KMASK(na), even, _mm512_set1_epi64(V - 2 * na));
}
#define VPICKC(i, c) _mm512_add_epi64((i), _mm512_set1_epi64(c))
#define VPICK2(a, b, i) _mm512_permutex2var_pd((a), (i), (b))
#else
CC_INLINE __m512i vec_pick2i_avx512(int64_t na)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_mask_add_epi32(even, (__mmask16)~VEC_KMASK(na), even,
                                 _mm512_set1_epi32((int)(V - 2 * na)));
}
#define VPICKC(i, c) _mm512_add_epi32((i), _mm512_set1_epi32(c))
#define VPICK2(a, b, i) _mm512_permutex2var_ps((a), (i), (b))
#endif
#define VPICK2I(na) vec_pick2i_avx512(na)
/* The other way (wino_tr.inc's wtout2): VJOINAT(e, o, base) has element
 * base + i of e in lane 2 i and of o in lane 2 i + 1 (i < V / 2,
 * base + i < V): one run's stretch of an interleaved output row, built in
 * registers (through a stack buffer, the loads of the second run's part
 * straddled the buffer's two stores and waited for them). */
#ifdef CC_F64
CC_INLINE __m512d vec_joinat_avx512(__m512d e, __m512d o, int64_t base)
{
    const __m512i at = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    return _mm512_permutex2var_pd(e, _mm512_add_epi64(at, _mm512_set1_epi64(base)), o);
}
#else
CC_INLINE __m512 vec_joinat_avx512(__m512 e, __m512 o, int64_t base)
{
    const __m512i at = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    return _mm512_permutex2var_ps(e, _mm512_add_epi32(at, _mm512_set1_epi32((int)base)), o);
}
#endif
#define VJOINAT(e, o, base) vec_joinat_avx512((e), (o), (base))
#ifndef CC_F64
/* float32 only: the depthwise Winograd's permuted splits */
/* one in-lane shufps per vector, its inverse one unpcklps/unpckhps per
 * output vector */
CC_INLINE void vec_splitp_avx512(__m512 a, __m512 b, __m512 *e, __m512 *o)
{
    *e = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
CC_INLINE void vec_joinp_avx512(float *p, __m512 e, __m512 o)
{
    _mm512_storeu_ps(p, _mm512_unpacklo_ps(e, o));
    _mm512_storeu_ps(p + 16, _mm512_unpackhi_ps(e, o));
}
CC_INLINE void vec_joinpn_avx512(float *p, __m512 e, __m512 o, int64_t n)
{
    const __m512 a = _mm512_unpacklo_ps(e, o), b = _mm512_unpackhi_ps(e, o);
    if (n >= 16) {
        _mm512_storeu_ps(p, a);
        VSTOREP(p + 16, b, n - 16);
    } else {
        VSTOREP(p, a, n);
    }
}
#define VSPLITP(a, b, e, o) vec_splitp_avx512((a), (b), (e), (o))
#define VJOINP(p, e, o) vec_joinp_avx512((p), (e), (o))
#define VJOINPN(p, e, o, n) vec_joinpn_avx512((p), (e), (o), (n))
#endif
/* A 512-bit vector is a whole cache line, so every misaligned load splits a
 * line; still cheaper than valignd, which competes with the FMAs for port 5
 * on Intel cores. */
#define VTAP(p, k) VLOADU((p) + (k))
#define VSPLIT2R(a, b, e, o) vec_split2r_avx512((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) VSPLIT2R(VLOADU(p), VLOADU((p) + V), (e), (o))
#define VJOIN2(p, e, o) vec_join2_avx512((p), (e), (o))
#define VTRANSPOSE(s, ls, d, ld) vec_transpose_avx512((s), (ls), (d), (ld))
