/* AVX2 + FMA vector layer (see vec_common.h).  Only for files built with
 * -mavx2 -mfma. */
#include <immintrin.h>
#include "vec_common.h"

/* vmaskmovps stores are slow on AMD cores */
#define VTAIL_OVERLAP 1

#ifdef CC_F64
#define VT __m256d
#define V 4
#define VSET1 _mm256_set1_pd
#define VZERO _mm256_setzero_pd
#define VLOADU _mm256_loadu_pd
#define VSTOREU _mm256_storeu_pd
#define VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define VADD _mm256_add_pd
CC_INLINE double vec_hsum_avx2(__m256d v)
{
    const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}
#define VHSUM(v) vec_hsum_avx2(v)
#define VSUB _mm256_sub_pd
#define VMUL _mm256_mul_pd
#define VFNMA(a, b, c) _mm256_fnmadd_pd(a, b, c)
CC_INLINE __m256i vec_mask_avx2(int64_t c)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(c), _mm256_setr_epi64x(0, 1, 2, 3));
}
#define VLOADP(p, c) _mm256_maskload_pd((p), vec_mask_avx2(c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm256_and_pd((v), _mm256_castsi256_pd(_mm256_cmpgt_epi64( \
    _mm256_add_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(c)), _mm256_set1_epi64x(3))))
/* The first c lanes of v stored at p (0 < c < V) in 128- and 64-bit
 * pieces: vmaskmovpd/ps stores are microcoded on AMD Zen 1-3, and were
 * 70% of igemm's row copy out of its wide block in a one-thread
 * resnext_14 profile on an AMD EPYC. */
CC_INLINE void vec_storep_avx2(double *p, __m256d v, int64_t c)
{
    __m128d h = _mm256_castpd256_pd128(v);
    if (c & 2) {
        _mm_storeu_pd(p, h);
        p += 2;
        h = _mm256_extractf128_pd(v, 1);
    }
    if (c & 1)
        _mm_store_sd(p, h);
}
#define VSTOREP(p, v, c) vec_storep_avx2((p), (v), (c))
/* the lanes i with 0 <= base + i < n, and a load of them (Winograd's
 * input transform, wino_tr.inc) */
CC_INLINE __m256i vec_lanes_avx2(int64_t base, int64_t n)
{
    const __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
    const int64_t lo = base < 0 ? (base < -4 ? 4 : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > 4 ? 4 : n - base);
    return _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x(lo), idx),
                               _mm256_cmpgt_epi64(_mm256_set1_epi64x(hi), idx));
}
CC_INLINE __m256d vec_loadmk_avx2(const double *x, int64_t base, __m256i m)
{
    /* the masked-off lanes are not accessed (and do not fault) */
    const double *p = (const double *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(double)));
    return _mm256_maskload_pd(p, m);
}
#define VMASKT __m256i
#define VMASK(base, n) vec_lanes_avx2((base), (n))
#define VLOADMK(x, base, m) vec_loadmk_avx2((x), (base), (m))
CC_INLINE void vec_split2r_avx2(__m256d a, __m256d b, __m256d *e, __m256d *o)
{
    *e = _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8);
    *o = _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8);
}
/* the even and odd elements of p[0, 2V) from 128-bit halves, [x0 x1 | x4 x5]
 * and [x2 x3 | x6 x7], so that in-lane unpacks finish the split: no lane-
 * crossing permute (vpermpd is the split's bottleneck on AMD Zen) */
CC_INLINE void vec_split2l_avx2(const double *p, __m256d *e, __m256d *o)
{
    const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p)),
                                           _mm_loadu_pd(p + 4), 1);
    const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 2)),
                                           _mm_loadu_pd(p + 6), 1);
    *e = _mm256_unpacklo_pd(a, b);
    *o = _mm256_unpackhi_pd(a, b);
}
CC_INLINE void vec_join2_avx2(double *p, __m256d e, __m256d o)
{
    __m256d lo = _mm256_unpacklo_pd(e, o), hi = _mm256_unpackhi_pd(e, o);
    _mm256_storeu_pd(p, _mm256_permute2f128_pd(lo, hi, 0x20));
    _mm256_storeu_pd(p + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
}
/* a 4x4 block transposed: unpack, then a 128-bit lane swap; float
 * shuffles only, so the bits pass unchanged */
CC_INLINE void vec_transpose_avx2(const double *s, int64_t ls, double *d, int64_t ld)
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
#else
#define VT __m256
#define V 8
#define VSET1 _mm256_set1_ps
#define VZERO _mm256_setzero_ps
#define VLOADU _mm256_loadu_ps
#define VSTOREU _mm256_storeu_ps
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD _mm256_add_ps
CC_INLINE float vec_hsum_avx2(__m256 v)
{
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}
#define VHSUM(v) vec_hsum_avx2(v)
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VFNMA(a, b, c) _mm256_fnmadd_ps(a, b, c)
CC_INLINE __m256i vec_mask_avx2(int64_t c)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)c),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define VLOADP(p, c) _mm256_maskload_ps((p), vec_mask_avx2(c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm256_and_ps((v), _mm256_castsi256_ps(_mm256_cmpgt_epi32(      \
    _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)(c))), \
    _mm256_set1_epi32(7))))
/* The first c lanes of v stored at p (0 < c < V) in 128-, 64- and
 * 32-bit pieces (see the double version). */
CC_INLINE void vec_storep_avx2(float *p, __m256 v, int64_t c)
{
    __m128 h = _mm256_castps256_ps128(v);
    if (c & 4) {
        _mm_storeu_ps(p, h);
        p += 4;
        h = _mm256_extractf128_ps(v, 1);
    }
    if (c & 2) {
        _mm_storel_pi((__m64 *)p, h);
        p += 2;
        h = _mm_movehl_ps(h, h);
    }
    if (c & 1)
        _mm_store_ss(p, h);
}
#define VSTOREP(p, v, c) vec_storep_avx2((p), (v), (c))
CC_INLINE void vec_split2r_avx2(__m256 a, __m256 b, __m256 *e, __m256 *o)
{
    *e = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
    *o = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
}
/* the even and odd elements of p[0, 2V) from the halves [x0..x3 | x8..x11]
 * and [x4..x7 | x12..x15]: two in-lane shuffles finish the split (see the
 * double version) */
CC_INLINE void vec_split2l_avx2(const float *p, __m256 *e, __m256 *o)
{
    const __m256 a = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)),
                                          _mm_loadu_ps(p + 8), 1);
    const __m256 b = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 4)),
                                          _mm_loadu_ps(p + 12), 1);
    *e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
CC_INLINE void vec_join2_avx2(float *p, __m256 e, __m256 o)
{
    __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
/* an 8x8 block transposed: unpack, shuffle, then a 128-bit lane swap (24
 * shuffles per 64 elements); float shuffles only, so the bits pass
 * unchanged */
CC_INLINE void vec_transpose_avx2(const float *s, int64_t ls, float *d, int64_t ld)
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

/* float32: the lane windows (as for float64 above) and the depthwise
 * Winograd's permuted splits.
 * lanes lo <= i < hi set */
CC_INLINE __m256i vec_window_avx2(int64_t lo, int64_t hi)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)lo), idx),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), idx));
}
CC_INLINE __m256i vec_lanes_avx2(int64_t base, int64_t n)
{
    const int64_t lo = base < 0 ? (base < -8 ? 8 : -base) : 0;
    const int64_t hi = n - base < 0 ? 0 : (n - base > 8 ? 8 : n - base);
    return vec_window_avx2(lo, hi);
}
CC_INLINE __m256 vec_loadmk_avx2(const float *x, int64_t base, __m256i m)
{
    /* the masked-off lanes are not accessed (and do not fault) */
    const float *p = (const float *)((uintptr_t)x + (uintptr_t)(base * (int64_t)sizeof(float)));
    return _mm256_maskload_ps(p, m);
}
/* one in-lane shufps per vector (tile order 0 1 4 5 2 3 6 7), whose inverse
 * is one unpcklps/unpckhps per output vector: no lane crossing */
CC_INLINE void vec_splitp_avx2(__m256 a, __m256 b, __m256 *e, __m256 *o)
{
    *e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
CC_INLINE void vec_joinp_avx2(float *p, __m256 e, __m256 o)
{
    _mm256_storeu_ps(p, _mm256_unpacklo_ps(e, o));
    _mm256_storeu_ps(p + 8, _mm256_unpackhi_ps(e, o));
}
CC_INLINE void vec_joinpn_avx2(float *p, __m256 e, __m256 o, int64_t n)
{
    const __m256 a = _mm256_unpacklo_ps(e, o), b = _mm256_unpackhi_ps(e, o);
    if (n >= 8) {
        _mm256_storeu_ps(p, a);
        vec_storep_avx2(p + 8, b, n - 8);
    } else {
        vec_storep_avx2(p, a, n);
    }
}
#define VMASKT __m256i
#define VMASK(base, n) vec_lanes_avx2((base), (n))
#define VLOADMK(x, base, m) vec_loadmk_avx2((x), (base), (m))
#define VSPLITP(a, b, e, o) vec_splitp_avx2((a), (b), (e), (o))
#define VJOINP(p, e, o) vec_joinp_avx2((p), (e), (o))
#define VJOINPN(p, e, o, n) vec_joinpn_avx2((p), (e), (o), (n))
#endif
/* Overlapping unaligned loads beat cross-lane rotations on AVX2 (a full
 * 256-bit alignr needs two shuffles on the one shuffle port). */
#define VTAP(p, k) VLOADU((p) + (k))
#define VSPLIT2R(a, b, e, o) vec_split2r_avx2((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) vec_split2l_avx2((p), (e), (o))
#define VJOIN2(p, e, o) vec_join2_avx2((p), (e), (o))
#define VTRANSPOSE(s, ls, d, ld) vec_transpose_avx2((s), (ls), (d), (ld))
