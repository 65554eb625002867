/*
 * Shared part of the per-ISA vector layers (dw_vec_<isa>.h).  A kernel file
 * defines DW_ISA (avx2, avx512, neon) and DW_F64 (or not), includes its
 * vector layer and then the kernel templates (dw2d.inc, dwrows.inc,
 * dwwg.inc).  The layer defines
 *   T, VT, V            element type, vector type, lanes
 *   DW_SFX              f32 or f64
 *   VSET1 VLOADU VSTOREU VFMA(a,b,c)=a*b+c VADD VSUB(a,b)=a-b
 *   VLOADP(p,c) VSTOREP(p,v,c)   first c lanes (0 < c < V), the rest zero
 *   VKEEPHI(v,c)        v with its first V - c lanes zeroed (0 < c <= V)
 *   VTAP(p,k)           the vector at p + k (k a compile-time constant):
 *                       an unaligned load, or a rotation of aligned ones
 *   VSPLIT2R(a,b,&e,&o) deinterleave the 2V elements of a, b
 *   VSPLIT2L(p,&e,&o)   deinterleave the 2V elements at p (loads them)
 *   VJOIN2(p,e,o)       interleave e and o into 2V elements at p
 *   DW_RK_R             output rows per step of the rk kernels
 *   DW_TAIL_OVERLAP     1: a row's last partial vector is computed again as
 *                       the full vector ending at n (when not accumulating),
 *                       where masked or emulated partial stores are slow
 * Everything here is static inline, so nothing built with this ISA's flags
 * can be picked by the linker for baseline code.
 */
#ifndef CC_DW_VEC_COMMON_H
#define CC_DW_VEC_COMMON_H
#include "depthwise/dw_internal.h"

#define DW_CAT4_(a, b, c, d) a##b##_##c##_##d
#define DW_CAT4(a, b, c, d) DW_CAT4_(a, b, c, d)
#define DW_FN(name) DW_CAT4(cc_dw_, name, DW_SFX, DW_ISA)
#define DW_CAT2_(a, b) a##b
#define DW_CAT2(a, b) DW_CAT2_(a, b)
#define DW_PLANE_T DW_CAT2(dw_plane_, DW_SFX)

#ifdef DW_F64
#define DW_VMAX DW_VMAX_F64
#else
#define DW_VMAX DW_VMAX_F32
#endif
#endif
