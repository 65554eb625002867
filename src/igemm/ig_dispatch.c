/* The implicit-GEMM micro-kernel of the current instruction set.  The choice
 * itself is the depthwise dispatcher's (cc_dw_isa(): CPU features at import,
 * CCONV_SIMD, cc_dw_set_isa in tests); this file only maps its name to the
 * kernel table, so nothing here is mutable. */
#include <string.h>

#include "depthwise/depthwise.h"
#include "igemm.h"

static const ig_kern_f32 ig32_scalar = {IG_MR_SCALAR, IG_NR_SCALAR, cc_ig_ukr_f32_scalar, cc_ig_ukri_f32_scalar, cc_ig_pack2_f32_scalar, IG_MRW_SCALAR, IG_NRW_SCALAR, 1, cc_ig_ukrw_f32_scalar};
static const ig_kern_f64 ig64_scalar = {IG_MR_SCALAR, IG_NR_SCALAR, cc_ig_ukr_f64_scalar, cc_ig_ukri_f64_scalar, cc_ig_pack2_f64_scalar, IG_MRW_SCALAR, IG_NRW_SCALAR, 1, cc_ig_ukrw_f64_scalar};
#if defined(CC_HAVE_X86_SIMD)
static const ig_kern_f32 ig32_avx2 = {IG_MR_AVX2, IG_NV_AVX2 * 8, cc_ig_ukr_f32_avx2, cc_ig_ukri_f32_avx2, cc_ig_pack2_f32_avx2, IG_MRW_AVX2, IG_NRW_AVX2, 8, cc_ig_ukrw_f32_avx2};
static const ig_kern_f64 ig64_avx2 = {IG_MR_AVX2, IG_NV_AVX2 * 4, cc_ig_ukr_f64_avx2, cc_ig_ukri_f64_avx2, cc_ig_pack2_f64_avx2, IG_MRW_AVX2, IG_NRW_AVX2, 4, cc_ig_ukrw_f64_avx2};
static const ig_kern_f32 ig32_avx512 = {IG_MR_AVX512, IG_NV_AVX512 * 16, cc_ig_ukr_f32_avx512, cc_ig_ukri_f32_avx512, cc_ig_pack2_f32_avx512, IG_MRW_AVX512, IG_NRW_AVX512, 16, cc_ig_ukrw_f32_avx512};
static const ig_kern_f64 ig64_avx512 = {IG_MR_AVX512, IG_NV_AVX512 * 8, cc_ig_ukr_f64_avx512, cc_ig_ukri_f64_avx512, cc_ig_pack2_f64_avx512, IG_MRW_AVX512, IG_NRW_AVX512, 8, cc_ig_ukrw_f64_avx512};
#endif
#if defined(__aarch64__)
static const ig_kern_f32 ig32_neon = {IG_MR_NEON, IG_NV_NEON * 4, cc_ig_ukr_f32_neon, cc_ig_ukri_f32_neon, cc_ig_pack2_f32_neon, IG_MRW_NEON, IG_NRW_NEON, 4, cc_ig_ukrw_f32_neon};
static const ig_kern_f64 ig64_neon = {IG_MR_NEON, IG_NV_NEON * 2, cc_ig_ukr_f64_neon, cc_ig_ukri_f64_neon, cc_ig_pack2_f64_neon, IG_MRW_NEON, IG_NRW_NEON, 2, cc_ig_ukrw_f64_neon};
#endif

const ig_kern_f32 *cc_ig_kern_f32(void)
{
    const char *isa = cc_dw_isa();
    (void)isa;
#if defined(CC_HAVE_X86_SIMD)
    if (strcmp(isa, "avx512") == 0) return &ig32_avx512;
    if (strcmp(isa, "avx2") == 0) return &ig32_avx2;
#endif
#if defined(__aarch64__)
    if (strcmp(isa, "neon") == 0) return &ig32_neon;
#endif
    return &ig32_scalar;
}

const ig_kern_f64 *cc_ig_kern_f64(void)
{
    const char *isa = cc_dw_isa();
    (void)isa;
#if defined(CC_HAVE_X86_SIMD)
    if (strcmp(isa, "avx512") == 0) return &ig64_avx512;
    if (strcmp(isa, "avx2") == 0) return &ig64_avx2;
#endif
#if defined(__aarch64__)
    if (strcmp(isa, "neon") == 0) return &ig64_neon;
#endif
    return &ig64_scalar;
}
