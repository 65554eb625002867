/*
 * What every vector layer (vec_<isa>.h, chosen by vec.h) shares, and the
 * contract they all keep.  Every layer defines
 *   CC_T, CC_SFX        the element type (double with CC_F64, else float)
 *                       and its suffix, f32 or f64
 *   CC_ISA_NAME(name)   name_<sfx>_<isa>: the names of a per-ISA instance
 *                       (its kernel table, its kernels)
 * and every one but the scalar layer (whose kernels are plain loops,
 * written for clarity: they define what the vector kernels must compute)
 *   VT, V               vector type, lanes
 *   VZERO() VSET1 VLOADU VSTOREU VADD VSUB VMUL
 *   VFMA(a,b,c) = a*b + c, VFNMA(a,b,c) = c - a*b
 *   VLOADP(p,c) VSTOREP(p,v,c)   first c lanes (0 < c < V), the rest zero
 *   VHSUM(v)            the sum of v's lanes (a CC_T; the order of the
 *                       additions is the layer's)
 *   VKEEPHI(v,c)        v with its first V - c lanes zeroed (0 < c <= V)
 *   VTAP(p,k)           the vector at p + k (k a compile-time constant):
 *                       an unaligned load, or a rotation of aligned ones
 *   VSPLIT2R(a,b,&e,&o) deinterleave the 2V elements of a, b
 *   VSPLIT2L(p,&e,&o)   deinterleave the 2V elements at p (loads them)
 *   VJOIN2(p,e,o)       interleave e and o into 2V elements at p
 *   VTRANSPOSE(s,ls,d,ld)  d[c*ld + r] = s[r*ls + c] for r, c < V (ls, ld
 *                       in elements), bits copied unchanged
 *   VTAIL_OVERLAP       1: a row's last partial vector is computed again as
 *                       the full vector ending at n (when not accumulating),
 *                       where masked or emulated partial stores are slow
 *   VMASKT, VMASK(base,n)   the lanes i with 0 <= base + i < n
 *   VSTOREC(p,v,m)      the lanes of the bit mask m (uint32_t, bit i lane
 *                       i) in lane order at p[0 .. popcount(m) - 1], nothing
 *                       else written (vec.h has a version through memory)
 *   VLOADMK(x,base,m)   lane i = x[base + i] for the lanes of m, else 0
 *                       (x + base may lie outside x: the other lanes are
 *                       not read)
 * and, for float32 only (the depthwise Winograd's kernels),
 *   VSPLITP(a,b,&e,&o)  the even and odd elements of the 2V at a, b, in the
 *                       lane order the set finds cheapest (a fixed
 *                       permutation P of 0..V-1)
 *   VJOINP(p,e,o)       the inverse: p[2t] = e[lane of t in P], p[2t+1] =
 *                       o[...], t < V
 *   VJOINPN(p,e,o,n)    the same, only the first n (0 < n < 2V) elements
 * Everything is static inline, so nothing built with an instruction set's
 * flags can be picked by the linker for baseline code.
 */
#ifndef CC_VEC_COMMON_H
#define CC_VEC_COMMON_H
#include <stdint.h>

#include "core/compiler.h"

#ifdef CC_F64
#define CC_T double
#define CC_SFX f64
#else
#define CC_T float
#define CC_SFX f32
#endif

/* VPIN(v): keep vector v in a register: GCC otherwise folds a load that
 * several multiply-adds share into each of them as a memory operand, one
 * load per use (x86 vector sets; elsewhere nothing) */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(CC_SIMDE_AVX512) && \
    !defined(CC_ISA_IS_SCALAR)
#define VPIN(v) __asm__("" : "+v"(v))
#else
#define VPIN(v) ((void)0)
#endif

#define CC_ISA_NAME(name) CC_CAT(CC_CAT(name, _), CC_CAT(CC_CAT(CC_SFX, _), CC_ISA))
#endif
