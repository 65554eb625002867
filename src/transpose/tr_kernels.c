/*
 * The layout transpose's tile kernel of one instruction set, for 32-bit
 * elements (float32 build) or 64-bit ones (CC_F64), and its table entry.
 * meson compiles this file once per instruction set and element type of
 * the build, with that set's flags (src/meson.build: kernel_families).
 * The vector kernels transpose whole V x V register blocks (the vector
 * layer's VTRANSPOSE: AVX2 8x8 of 32-bit elements, AVX-512 16x16, NEON
 * 4x4; half those sides for 64-bit), the ragged edges as partial blocks
 * through stack tiles; the scalar kernel, an element loop, is the
 * reference the others are tested against.
 */
#include "simd/vec.h"
#include "tr_internal.h"

#ifdef CC_F64
#define TR_BITS uint64_t
#else
#define TR_BITS uint32_t
#endif

static void CC_ISA_NAME(cc_tr_tile)(const void *src, int64_t ls, void *dst, int64_t ld,
                                    int64_t nr, int64_t nc)
{
#if defined(CC_ISA_IS_SCALAR)
    const TR_BITS *s = (const TR_BITS *)src;
    TR_BITS *d = (TR_BITS *)dst;
    CC_TR_EDGES(TR_BITS, s, ls, d, ld, nr, nc, 0, 0);
#else
    CC_TR_BLOCKED(CC_T, V, VTRANSPOSE, src, ls, dst, ld, nr, nc);
#endif
}

const cc_tr_kern CC_ISA_NAME(cc_tr_kern) = {CC_ISA_NAME(cc_tr_tile)};
