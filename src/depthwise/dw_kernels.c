/*
 * The depthwise kernels of one instruction set and element type, and their
 * table, cc_dw_kern_<f32|f64>_<isa> (contracts in dw_internal.h).  meson
 * compiles this file once per instruction set and element type of the
 * build, with that set's flags (src/meson.build: kernel_families).  The
 * vector kernels are written on the vector layer (simd/vec_common.h); every
 * one has a scalar twin (*_scalar.inc), plain loops that define what it
 * must compute.
 */
#include <string.h>

#include "simd/vec.h"
#include "dw_internal.h"

#define DW_FN(name) CC_ISA_NAME(CC_CAT(cc_dw_, name))
#define DW_PLANE_T CC_CAT(dw_plane_, CC_SFX)
#define DW_KERN_T CC_CAT(dw_kern_, CC_SFX)
#define DW_A2P_T CC_CAT(dw_a2p_, CC_SFX)
#define DW_VMAX DW_VM

/* output rows per step of the plane kernels (at most DW_RMAX) */
#if defined(CC_ISA_IS_AVX512)
#define DW_RK_R 6
#else
#define DW_RK_R 4
#endif
/* 3x3 planes: each output vector as two partial sums (the taps of even and
 * of odd kernel rows), added at the end, where the instance has 32 vector
 * registers to hold them (CC_DW_REGS32: the 256-bit kernels of AVX-512
 * CPUs, src/meson.build).  One sum is a chain of 9 dependent multiply-adds
 * per output vector, R chains a step, and the step waited on their latency;
 * on 16 registers the second set of sums spills.  AMD EPYC Zen 4, the
 * kernels alone, 7 alternations, time with two sums (and 32 registers) over
 * one sum on 16 registers: 3x3 stride 1 144x56x56 0.92, 96x112x112 0.93,
 * 192x28x28 0.94, 384x14x14 0.96, 576x7x7 0.97, 1152x56x56 0.93; stride 2
 * 144x56x56 0.95, 96x112x112 0.91, 192x28x28 0.92, 384x14x14 0.99, 1152x56x56
 * 0.97.  The 512-bit kernels keep one sum (unmeasured where they are the
 * default, on Intel's AVX-512). */
#if defined(CC_DW_REGS32)
#define DW_TWO3 1
#else
#define DW_TWO3 0
#endif

/* The 3x3 plane kernels of stride 1 may read x's rows where they lie
 * (dw2d.inc: plane_direct, cc_cpu_dw_direct): on the 256-bit x86 kernel
 * sets (AVX2, and AVX2 built with AVX-512VL), whose masked loads touch no
 * memory in the lanes they leave out.  Not the 512-bit ones: there the
 * rows' unaligned 64-byte loads (each split over two cache lines) cost
 * what the copy saved (AMD EPYC Zen 4, 3x3 planes with CCONV_DW_256=0,
 * time over the ring's: 1x96x112x112 1.12, 1x144x56x56 0.94, 1x192x28x28
 * 0.83, float64 1.06), nor 5x5 and 7x7 (on 512-bit vectors there, 1.02 and
 * 1.34: their 25 and 49 weights and the edge vectors' masks spill). */
#if defined(CC_ISA_IS_AVX2)
#define DW_DIRECT 1
#else
#define DW_DIRECT 0
#endif

#if defined(CC_ISA_IS_SCALAR)
#include "dw2d_scalar.inc"
#include "dwrows_scalar.inc"
#include "dwwg_scalar.inc"
#include "dwadj2_scalar.inc"
#include "dwcl_scalar.inc"
#else
#include "dw2d.inc"
#include "dwrows.inc"
#include "dwwg.inc"
#include "dwadj2.inc"
#include "dwcl.inc"
#endif

#if defined(CC_ISA_IS_SCALAR)
#define DW_LANES 1
#else
#define DW_LANES V
#endif

const DW_KERN_T CC_ISA_NAME(cc_dw_kern) = {
    DW_RK_R,
    DW_CL_PBMAX,
    DW_LANES,
    DW_DIRECT,
    DW_FN(rows),
    {{DW_FN(k3s1), DW_FN(k3s2)}, {DW_FN(k5s1), DW_FN(k5s2)}, {DW_FN(k7s1), DW_FN(k7s2)}},
    {DW_FN(k3d2), DW_FN(k3d4)},
    DW_FN(wg),
    {DW_FN(a2k2), DW_FN(a2k3), DW_FN(a2k4), DW_FN(a2k5)},
    {DW_FN(a2p2), DW_FN(a2p3), DW_FN(a2p4), DW_FN(a2p5)},
    DW_FN(cl),
    DW_FN(split2),
    DW_FN(join2)};
