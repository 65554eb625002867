/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, NEON (AArch64
 * baseline: no flags, no runtime check): 4 tiles per vector; the even/odd
 * split and the interleaved store are vld2q / vst2q.
 */
#include <arm_neon.h>

#define WDW_ISA neon
#define VT float32x4_t
#define V 4
#define VZERO() vdupq_n_f32(0.0f)
#define VSET1 vdupq_n_f32
#define VLOAD vld1q_f32
#define VSTORE vst1q_f32
#define VADD vaddq_f32
#define VSUB vsubq_f32
#define VMUL vmulq_f32
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b))
#define VFNMA(a, b, c) vfmsq_f32((c), (a), (b))

static inline __attribute__((always_inline)) void wdw_split2_neon(const float *p,
                                                                  float32x4_t *e,
                                                                  float32x4_t *o)
{
    const float32x4x2_t v = vld2q_f32(p);
    *e = v.val[0];
    *o = v.val[1];
}

static inline __attribute__((always_inline)) void wdw_join2_neon(float *p, float32x4_t e,
                                                                 float32x4_t o)
{
    float32x4x2_t v;
    v.val[0] = e;
    v.val[1] = o;
    vst2q_f32(p, v);
}

/* the first n (0 < n < 8) floats of the interleave */
static inline __attribute__((always_inline)) void wdw_join2n_neon(float *p, float32x4_t e,
                                                                   float32x4_t o, int64_t n)
{
    float t[8];
    wdw_join2_neon(t, e, o);
    for (int64_t i = 0; i < n; i++)
        p[i] = t[i];
}

#define VSPLIT2(p, e, o) wdw_split2_neon((p), (e), (o))
#define VJOIN2(p, e, o) wdw_join2_neon((p), (e), (o))
#define VJOIN2N(p, e, o, n) wdw_join2n_neon((p), (e), (o), (n))

#include "wdw3x3_f32.inc"
