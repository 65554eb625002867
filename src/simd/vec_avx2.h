/* AVX2 + FMA vector layer (see dw_vec_common.h).  Only for files built with
 * -mavx2 -mfma. */
#include <immintrin.h>
#include "vec_common.h"

#define DW_RK_R 4
/* vmaskmovps stores are slow on AMD cores */
#define DW_TAIL_OVERLAP 1

#ifdef DW_F64
#define T double
#define DW_SFX f64
#define VT __m256d
#define V 4
#define VSET1 _mm256_set1_pd
#define VZERO _mm256_setzero_pd
#define VLOADU _mm256_loadu_pd
#define VSTOREU _mm256_storeu_pd
#define VFMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define VADD _mm256_add_pd
#define VSUB _mm256_sub_pd
DW_INLINE __m256i dw_mask_avx2(int64_t c)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(c), _mm256_setr_epi64x(0, 1, 2, 3));
}
#define VLOADP(p, c) _mm256_maskload_pd((p), dw_mask_avx2(c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm256_and_pd((v), _mm256_castsi256_pd(_mm256_cmpgt_epi64( \
    _mm256_add_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(c)), _mm256_set1_epi64x(3))))
/* The first c lanes of v stored at p (0 < c < V) in 128- and 64-bit
 * pieces: vmaskmovpd/ps stores are microcoded on AMD Zen 1-3, and were
 * 70% of igemm's row copy out of its wide block in a one-thread
 * resnext_14 profile on an AMD EPYC. */
DW_INLINE void dw_storep_avx2(double *p, __m256d v, int64_t c)
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
#define VSTOREP(p, v, c) dw_storep_avx2((p), (v), (c))
DW_INLINE void dw_split2r_avx2(__m256d a, __m256d b, __m256d *e, __m256d *o)
{
    *e = _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8);
    *o = _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8);
}
/* the even and odd elements of p[0, 2V) from 128-bit halves, [x0 x1 | x4 x5]
 * and [x2 x3 | x6 x7], so that in-lane unpacks finish the split: no lane-
 * crossing permute (vpermpd is the split's bottleneck on AMD Zen) */
DW_INLINE void dw_split2l_avx2(const double *p, __m256d *e, __m256d *o)
{
    const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p)),
                                           _mm_loadu_pd(p + 4), 1);
    const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 2)),
                                           _mm_loadu_pd(p + 6), 1);
    *e = _mm256_unpacklo_pd(a, b);
    *o = _mm256_unpackhi_pd(a, b);
}
DW_INLINE void dw_join2_avx2(double *p, __m256d e, __m256d o)
{
    __m256d lo = _mm256_unpacklo_pd(e, o), hi = _mm256_unpackhi_pd(e, o);
    _mm256_storeu_pd(p, _mm256_permute2f128_pd(lo, hi, 0x20));
    _mm256_storeu_pd(p + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
}
#else
#define T float
#define DW_SFX f32
#define VT __m256
#define V 8
#define VSET1 _mm256_set1_ps
#define VZERO _mm256_setzero_ps
#define VLOADU _mm256_loadu_ps
#define VSTOREU _mm256_storeu_ps
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
DW_INLINE __m256i dw_mask_avx2(int64_t c)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)c),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#define VLOADP(p, c) _mm256_maskload_ps((p), dw_mask_avx2(c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) _mm256_and_ps((v), _mm256_castsi256_ps(_mm256_cmpgt_epi32(      \
    _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)(c))), \
    _mm256_set1_epi32(7))))
/* The first c lanes of v stored at p (0 < c < V) in 128-, 64- and
 * 32-bit pieces (see the double version). */
DW_INLINE void dw_storep_avx2(float *p, __m256 v, int64_t c)
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
#define VSTOREP(p, v, c) dw_storep_avx2((p), (v), (c))
DW_INLINE void dw_split2r_avx2(__m256 a, __m256 b, __m256 *e, __m256 *o)
{
    *e = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
    *o = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
}
/* the even and odd elements of p[0, 2V) from the halves [x0..x3 | x8..x11]
 * and [x4..x7 | x12..x15]: two in-lane shuffles finish the split (see the
 * double version) */
DW_INLINE void dw_split2l_avx2(const float *p, __m256 *e, __m256 *o)
{
    const __m256 a = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)),
                                          _mm_loadu_ps(p + 8), 1);
    const __m256 b = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + 4)),
                                          _mm_loadu_ps(p + 12), 1);
    *e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
DW_INLINE void dw_join2_avx2(float *p, __m256 e, __m256 o)
{
    __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}
#endif
/* Overlapping unaligned loads beat cross-lane rotations on AVX2 (a full
 * 256-bit alignr needs two shuffles on the one shuffle port). */
#define VTAP(p, k) VLOADU((p) + (k))
#define VSPLIT2R(a, b, e, o) dw_split2r_avx2((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) dw_split2l_avx2((p), (e), (o))
#define VJOIN2(p, e, o) dw_join2_avx2((p), (e), (o))
