/*
 * Layout transpose: the tile kernels of each instruction set (the choice
 * among them is simd_isa.c's).  16- and 128-bit elements have scalar
 * kernels only.
 */
#include "tr_internal.h"

#include "core/isa.h"

#define CC_TR_TABLE(ISA)                                                      \
    static const cc_tr_isa cc_tr_isa_##ISA = {                                \
        cc_tr_tile_b16_scalar, cc_tr_tile_b32_##ISA, cc_tr_tile_b64_##ISA,    \
        cc_tr_tile_b128_scalar};

CC_TR_TABLE(scalar)
#if defined(CC_HAVE_X86_SIMD)
CC_TR_TABLE(avx2)
CC_TR_TABLE(avx512)
#endif
#if defined(__aarch64__)
CC_TR_TABLE(neon)
#endif

/* Indexed by cc_isa; NULL where this build has no such kernels. */
static const cc_tr_isa *const cc_tr_by_isa[CC_ISA_COUNT] = {
    [CC_ISA_SCALAR] = &cc_tr_isa_scalar,
#if defined(CC_HAVE_X86_SIMD)
    [CC_ISA_AVX2] = &cc_tr_isa_avx2,
    [CC_ISA_AVX512] = &cc_tr_isa_avx512,
#endif
#if defined(__aarch64__)
    [CC_ISA_NEON] = &cc_tr_isa_neon,
#endif
};

const cc_tr_isa *cc_tr_current(void)
{
    const cc_tr_isa *t = cc_tr_by_isa[cc_isa_current()];
    return t ? t : &cc_tr_isa_scalar;
}
