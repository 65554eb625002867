/* NEON (AArch64) vector layer (see dw_vec_common.h).  NEON is part of the
 * AArch64 base instruction set: no flags, no runtime check. */
#include <arm_neon.h>
#include "vec_common.h"

#define DW_RK_R 4
/* no masked stores: partial vectors go through the stack */
#define DW_TAIL_OVERLAP 1

#ifdef DW_F64
#define T double
#define DW_SFX f64
#define VT float64x2_t
#define V 2
#define VSET1 vdupq_n_f64
#define VZERO() vdupq_n_f64(0.0)
#define VLOADU vld1q_f64
#define VSTOREU vst1q_f64
#define VFMA(a, b, c) vfmaq_f64((c), (a), (b))
#define VADD vaddq_f64
#define VSUB vsubq_f64
DW_INLINE void dw_split2r_neon(float64x2_t a, float64x2_t b, float64x2_t *e, float64x2_t *o)
{
    *e = vuzp1q_f64(a, b);
    *o = vuzp2q_f64(a, b);
}
DW_INLINE void dw_join2_neon(double *p, float64x2_t e, float64x2_t o)
{
    float64x2x2_t v;
    v.val[0] = e;
    v.val[1] = o;
    vst2q_f64(p, v);
}
/* the vector at p + k, k < V: rotate the aligned vectors at p, p + V */
DW_INLINE float64x2_t dw_tap_neon(const double *p, int k)
{
    switch (k) {
    case 0: return vld1q_f64(p);
    default: return vextq_f64(vld1q_f64(p), vld1q_f64(p + 2), 1);
    }
}
#else
#define T float
#define DW_SFX f32
#define VT float32x4_t
#define V 4
#define VSET1 vdupq_n_f32
#define VZERO() vdupq_n_f32(0.0f)
#define VLOADU vld1q_f32
#define VSTOREU vst1q_f32
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b))
#define VADD vaddq_f32
#define VSUB vsubq_f32
DW_INLINE void dw_split2r_neon(float32x4_t a, float32x4_t b, float32x4_t *e, float32x4_t *o)
{
    *e = vuzp1q_f32(a, b);
    *o = vuzp2q_f32(a, b);
}
DW_INLINE void dw_join2_neon(float *p, float32x4_t e, float32x4_t o)
{
    float32x4x2_t v;
    v.val[0] = e;
    v.val[1] = o;
    vst2q_f32(p, v);
}
DW_INLINE float32x4_t dw_tap_neon(const float *p, int k)
{
    switch (k) {
    case 0: return vld1q_f32(p);
    case 1: return vextq_f32(vld1q_f32(p), vld1q_f32(p + 4), 1);
    case 2: return vextq_f32(vld1q_f32(p), vld1q_f32(p + 4), 2);
    default: return vextq_f32(vld1q_f32(p), vld1q_f32(p + 4), 3);
    }
}
#endif
DW_INLINE VT dw_loadp_neon(const T *p, int64_t c)
{
    T tmp[V] = {0};
    for (int64_t i = 0; i < c; i++)
        tmp[i] = p[i];
    return VLOADU(tmp);
}
DW_INLINE VT dw_keephi_neon(VT v, int64_t c)
{
    T tmp[V];
    VSTOREU(tmp, v);
    for (int64_t i = 0; i < V - c; i++)
        tmp[i] = (T)0;
    return VLOADU(tmp);
}
DW_INLINE void dw_storep_neon(T *p, VT v, int64_t c)
{
    T tmp[V];
    VSTOREU(tmp, v);
    for (int64_t i = 0; i < c; i++)
        p[i] = tmp[i];
}
#define VLOADP(p, c) dw_loadp_neon((p), (c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) dw_keephi_neon((v), (c))
#define VSTOREP(p, v, c) dw_storep_neon((p), (v), (c))
/* Horizontal taps by register rotation (ext) of the aligned vectors, as
 * XNNPACK's NEON dwconv2d-chw kernels do; the compiler merges the repeated
 * loads of p and p + V. */
#define VTAP(p, k) dw_tap_neon((p) + ((k) / V) * V, (k) % V)
#define VSPLIT2R(a, b, e, o) dw_split2r_neon((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) VSPLIT2R(VLOADU(p), VLOADU((p) + V), (e), (o))
#define VJOIN2(p, e, o) dw_join2_neon((p), (e), (o))
