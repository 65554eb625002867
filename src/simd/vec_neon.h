/* NEON (AArch64) vector layer (see vec_common.h).  NEON is part of the
 * AArch64 base instruction set: no flags, no runtime check. */
#include <arm_neon.h>
#include "vec_common.h"

/* no masked stores: partial vectors go through the stack */
#define VTAIL_OVERLAP 1

/* The intrinsics of the element type: VN(vaddq) is vaddq_f32 or vaddq_f64. */
#ifdef CC_F64
#define VT float64x2_t
#define VT2 float64x2x2_t
#define V 2
#define VN(op) op##_f64
#else
#define VT float32x4_t
#define VT2 float32x4x2_t
#define V 4
#define VN(op) op##_f32
#endif
#define VSET1 VN(vdupq_n)
#define VZERO() VN(vdupq_n)((CC_T)0)
#define VLOADU VN(vld1q)
#define VSTOREU VN(vst1q)
#define VFMA(a, b, c) VN(vfmaq)((c), (a), (b))
#define VADD VN(vaddq)
#define VHSUM VN(vaddvq)
#define VSUB VN(vsubq)
#define VMUL VN(vmulq)
#define VFNMA(a, b, c) VN(vfmsq)((c), (a), (b))
CC_INLINE void vec_split2r_neon(VT a, VT b, VT *e, VT *o)
{
    *e = VN(vuzp1q)(a, b);
    *o = VN(vuzp2q)(a, b);
}
CC_INLINE void vec_join2_neon(CC_T *p, VT e, VT o)
{
    VT2 v;
    v.val[0] = e;
    v.val[1] = o;
    VN(vst2q)(p, v);
}
/* the vector at p + k, k < V: rotate the aligned vectors at p, p + V */
CC_INLINE VT vec_tap_neon(const CC_T *p, int k)
{
    switch (k) {
    case 0: return VLOADU(p);
#if V > 2
    case 1: return VN(vextq)(VLOADU(p), VLOADU(p + V), 1);
    case 2: return VN(vextq)(VLOADU(p), VLOADU(p + V), 2);
    default: return VN(vextq)(VLOADU(p), VLOADU(p + V), 3);
#else
    default: return VN(vextq)(VLOADU(p), VLOADU(p + V), 1);
#endif
    }
}

#ifdef CC_F64
/* a 2x2 block transposed, on integer vectors: the bits pass unchanged */
CC_INLINE void vec_transpose_neon(const double *s, int64_t ls, double *d, int64_t ld)
{
    const uint64x2_t a = vld1q_u64((const uint64_t *)s), b = vld1q_u64((const uint64_t *)(s + ls));
    vst1q_u64((uint64_t *)d, vtrn1q_u64(a, b));
    vst1q_u64((uint64_t *)(d + ld), vtrn2q_u64(a, b));
}
#else
/* a 4x4 block transposed (trn1/trn2 on 32-bit, then on 64-bit lanes), on
 * integer vectors: the bits pass unchanged */
CC_INLINE void vec_transpose_neon(const float *sf, int64_t ls, float *df, int64_t ld)
{
    const uint32_t *s = (const uint32_t *)sf;
    uint32_t *d = (uint32_t *)df;
    const uint32x4_t r0 = vld1q_u32(s), r1 = vld1q_u32(s + ls);
    const uint32x4_t r2 = vld1q_u32(s + 2 * ls), r3 = vld1q_u32(s + 3 * ls);
    /* a0 = {r0[0], r1[0], r0[2], r1[2]}, a1 = {r0[1], r1[1], r0[3], r1[3]} */
    const uint64x2_t a0 = vreinterpretq_u64_u32(vtrn1q_u32(r0, r1));
    const uint64x2_t a1 = vreinterpretq_u64_u32(vtrn2q_u32(r0, r1));
    const uint64x2_t a2 = vreinterpretq_u64_u32(vtrn1q_u32(r2, r3));
    const uint64x2_t a3 = vreinterpretq_u64_u32(vtrn2q_u32(r2, r3));
    vst1q_u32(d, vreinterpretq_u32_u64(vtrn1q_u64(a0, a2)));
    vst1q_u32(d + ld, vreinterpretq_u32_u64(vtrn1q_u64(a1, a3)));
    vst1q_u32(d + 2 * ld, vreinterpretq_u32_u64(vtrn2q_u64(a0, a2)));
    vst1q_u32(d + 3 * ld, vreinterpretq_u32_u64(vtrn2q_u64(a1, a3)));
}

/* float32 only: the depthwise Winograd's splits, in natural lane order
 * (vuzp1q/vuzp2q, and vst2q for the join). */
CC_INLINE void vec_joinpn_neon(float *p, float32x4_t e, float32x4_t o, int64_t n)
{
    float t[8];
    vec_join2_neon(t, e, o);
    for (int64_t i = 0; i < n; i++)
        p[i] = t[i];
}
#define VSPLITP(a, b, e, o) vec_split2r_neon((a), (b), (e), (o))
#define VJOINP(p, e, o) vec_join2_neon((p), (e), (o))
#define VJOINPN(p, e, o, n) vec_joinpn_neon((p), (e), (o), (n))
#endif

/* The lanes i with 0 <= base + i < n, as a bit set (NEON has no masked
 * loads), and a load of them through the stack (the Winograd input
 * transforms, wino_tr.inc; the depthwise Winograd's lane windows). */
CC_INLINE unsigned vec_lanes_neon(int64_t base, int64_t n)
{
    unsigned m = 0;
    for (int64_t i = 0; i < V; i++)
        m |= (base + i >= 0 && base + i < n) ? 1u << i : 0u;
    return m;
}
CC_INLINE VT vec_loadmk_neon(const CC_T *x, int64_t base, unsigned m)
{
    CC_T t[V];
    for (int64_t i = 0; i < V; i++)
        t[i] = (m >> i) & 1 ? x[base + i] : (CC_T)0;
    return VLOADU(t);
}
#define VMASKT unsigned
#define VMASK(base, n) vec_lanes_neon((base), (n))
#define VLOADMK(x, base, m) vec_loadmk_neon((x), (base), (m))
CC_INLINE VT vec_loadp_neon(const CC_T *p, int64_t c)
{
    CC_T tmp[V] = {0};
    for (int64_t i = 0; i < c; i++)
        tmp[i] = p[i];
    return VLOADU(tmp);
}
CC_INLINE VT vec_keephi_neon(VT v, int64_t c)
{
    CC_T tmp[V];
    VSTOREU(tmp, v);
    for (int64_t i = 0; i < V - c; i++)
        tmp[i] = (CC_T)0;
    return VLOADU(tmp);
}
CC_INLINE void vec_storep_neon(CC_T *p, VT v, int64_t c)
{
    CC_T tmp[V];
    VSTOREU(tmp, v);
    for (int64_t i = 0; i < c; i++)
        p[i] = tmp[i];
}
#define VLOADP(p, c) vec_loadp_neon((p), (c))
/* v with its first V - c lanes zeroed (0 < c <= V) */
#define VKEEPHI(v, c) vec_keephi_neon((v), (c))
#define VSTOREP(p, v, c) vec_storep_neon((p), (v), (c))
/* Horizontal taps by register rotation (ext) of the aligned vectors, as
 * XNNPACK's NEON dwconv2d-chw kernels do; the compiler merges the repeated
 * loads of p and p + V. */
#define VTAP(p, k) vec_tap_neon((p) + ((k) / V) * V, (k) % V)
#define VSPLIT2R(a, b, e, o) vec_split2r_neon((a), (b), (e), (o))
#define VSPLIT2L(p, e, o) VSPLIT2R(VLOADU(p), VLOADU((p) + V), (e), (o))
#define VJOIN2(p, e, o) vec_join2_neon((p), (e), (o))
#define VTRANSPOSE(s, ls, d, ld) vec_transpose_neon((s), (ls), (d), (ld))
