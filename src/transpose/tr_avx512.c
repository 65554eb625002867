/*
 * Layout-transpose tile kernels, AVX-512F (built with -mavx512f in its own
 * static library; run only where the CPU reports avx512f): 16x16 blocks of
 * 32-bit elements (unpack, shuffle, two 128-bit lane shuffles: 64 shuffles
 * per 256 elements) and 8x8 blocks of 64-bit ones (unpack, two lane
 * shuffles).  CC_SIMDE_AVX512 (tests/c and the SIMDe test build) compiles
 * the same code on SIMDe's portable AVX-512.
 */
#ifdef CC_SIMDE_AVX512
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
/* SIMDe has no native alias for the 128-bit lane shuffles */
#define TR_SHUF_F32X4 simde_mm512_shuffle_f32x4
#define TR_SHUF_F64X2 simde_mm512_shuffle_f64x2
#else
#include <immintrin.h>
#define TR_SHUF_F32X4 _mm512_shuffle_f32x4
#define TR_SHUF_F64X2 _mm512_shuffle_f64x2
#endif

#include "tr_internal.h"

static inline __attribute__((always_inline)) void
tr_16x16_b32_avx512(const float *s, int64_t ls, float *d, int64_t ld)
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
        const __m512 v0 = TR_SHUF_F32X4(u[j], u[4 + j], 0x88);
        const __m512 v1 = TR_SHUF_F32X4(u[j], u[4 + j], 0xDD);
        const __m512 w0 = TR_SHUF_F32X4(u[8 + j], u[12 + j], 0x88);
        const __m512 w1 = TR_SHUF_F32X4(u[8 + j], u[12 + j], 0xDD);
        _mm512_storeu_ps(d + j * ld, TR_SHUF_F32X4(v0, w0, 0x88));
        _mm512_storeu_ps(d + (4 + j) * ld, TR_SHUF_F32X4(v1, w1, 0x88));
        _mm512_storeu_ps(d + (8 + j) * ld, TR_SHUF_F32X4(v0, w0, 0xDD));
        _mm512_storeu_ps(d + (12 + j) * ld, TR_SHUF_F32X4(v1, w1, 0xDD));
    }
}

static inline __attribute__((always_inline)) void
tr_8x8_b64_avx512(const double *s, int64_t ls, double *d, int64_t ld)
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
        const __m512d v0 = TR_SHUF_F64X2(t[j], t[2 + j], 0x88);
        const __m512d v1 = TR_SHUF_F64X2(t[j], t[2 + j], 0xDD);
        const __m512d w0 = TR_SHUF_F64X2(t[4 + j], t[6 + j], 0x88);
        const __m512d w1 = TR_SHUF_F64X2(t[4 + j], t[6 + j], 0xDD);
        _mm512_storeu_pd(d + j * ld, TR_SHUF_F64X2(v0, w0, 0x88));
        _mm512_storeu_pd(d + (2 + j) * ld, TR_SHUF_F64X2(v1, w1, 0x88));
        _mm512_storeu_pd(d + (4 + j) * ld, TR_SHUF_F64X2(v0, w0, 0xDD));
        _mm512_storeu_pd(d + (6 + j) * ld, TR_SHUF_F64X2(v1, w1, 0xDD));
    }
}

void cc_tr_tile_b32_avx512(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                           int64_t nc)
{
    CC_TR_BLOCKED(float, uint32_t, 16, tr_16x16_b32_avx512, src, ls, dst, ld, nr, nc);
}

void cc_tr_tile_b64_avx512(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                           int64_t nc)
{
    CC_TR_BLOCKED(double, uint64_t, 8, tr_8x8_b64_avx512, src, ls, dst, ld, nr, nc);
}
