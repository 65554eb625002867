/*
 * Layout-transpose tile kernels, NEON (AArch64 baseline: no flags, no
 * runtime check): 4x4 blocks of 32-bit elements (trn1/trn2 on 32-bit, then
 * on 64-bit lanes) and 2x2 blocks of 64-bit ones, on integer vectors, so
 * the bits pass unchanged.
 */
#include <arm_neon.h>

#include "tr_internal.h"

static inline __attribute__((always_inline)) void
tr_4x4_b32_neon(const uint32_t *s, int64_t ls, uint32_t *d, int64_t ld)
{
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

static inline __attribute__((always_inline)) void
tr_2x2_b64_neon(const uint64_t *s, int64_t ls, uint64_t *d, int64_t ld)
{
    const uint64x2_t a = vld1q_u64(s), b = vld1q_u64(s + ls);
    vst1q_u64(d, vtrn1q_u64(a, b));
    vst1q_u64(d + ld, vtrn2q_u64(a, b));
}

void cc_tr_tile_b32_neon(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                         int64_t nc)
{
    CC_TR_BLOCKED(uint32_t, uint32_t, 4, tr_4x4_b32_neon, src, ls, dst, ld, nr, nc);
}

void cc_tr_tile_b64_neon(const void *src, int64_t ls, void *dst, int64_t ld, int64_t nr,
                         int64_t nc)
{
    CC_TR_BLOCKED(uint64_t, uint64_t, 2, tr_2x2_b64_neon, src, ls, dst, ld, nr, nc);
}
