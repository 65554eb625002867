/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, NEON (AArch64
 * baseline: no flags, no runtime check): 4 tiles per vector in natural
 * order; the even/odd split is vuzp1q/vuzp2q, the interleaved store vst2q.
 */
#include <arm_neon.h>
#include <stdint.h>

#define WDW_ISA neon
#define WDW_R 4
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

#define WDW_AI static inline __attribute__((always_inline))

/* NEON has no masked loads: the lanes inside the row, as a bit set */
WDW_AI unsigned wdw_lanes_neon(int64_t base, int64_t n)
{
    unsigned m = 0;
    for (int64_t i = 0; i < 4; i++)
        m |= (base + i >= 0 && base + i < n) ? 1u << i : 0u;
    return m;
}

WDW_AI float32x4_t wdw_loadmk_neon(const float *x, int64_t base, unsigned m)
{
    float t[4];
    for (int64_t i = 0; i < 4; i++)
        t[i] = (m >> i) & 1 ? x[base + i] : 0.0f;
    return vld1q_f32(t);
}

WDW_AI void wdw_split_neon(float32x4_t a, float32x4_t b, float32x4_t *e, float32x4_t *o)
{
    *e = vuzp1q_f32(a, b);
    *o = vuzp2q_f32(a, b);
}

WDW_AI void wdw_join_neon(float *p, float32x4_t e, float32x4_t o)
{
    float32x4x2_t v;
    v.val[0] = e;
    v.val[1] = o;
    vst2q_f32(p, v);
}

WDW_AI void wdw_joinn_neon(float *p, float32x4_t e, float32x4_t o, int64_t n)
{
    float t[8];
    wdw_join_neon(t, e, o);
    for (int64_t i = 0; i < n; i++)
        p[i] = t[i];
}

#define VMASKT unsigned
#define VMASK(base, n) wdw_lanes_neon((base), (n))
#define VLOADMK(x, base, m) wdw_loadmk_neon((x), (base), (m))
#define VSPLIT(a, b, e, o) wdw_split_neon((a), (b), (e), (o))
#define VJOIN(p, e, o) wdw_join_neon((p), (e), (o))
#define VJOINN(p, e, o, n) wdw_joinn_neon((p), (e), (o), (n))

#include "wdw3x3.inc"
