/* The implicit-GEMM micro-kernels of the current instruction set.  The
 * choice itself is simd_isa.c's (CPU features at import, CCONV_SIMD,
 * cc_isa_set in tests); this file only maps it to the kernel table, so
 * nothing here is mutable. */
#include "igemm.h"
#include "core/isa.h"

static const ig_kern_f32 ig32_scalar = {IG_MR_SCALAR, IG_NR_SCALAR, cc_ig_ukr_f32_scalar, cc_ig_ukri_f32_scalar, cc_ig_packr_f32_scalar, IG_MRW_SCALAR, IG_NRW_SCALAR, 1, cc_ig_ukrw_f32_scalar, cc_ig_wtin_f32_scalar, cc_ig_wtout_f32_scalar, cc_ig_rows_f32_scalar, cc_ig_ukrn_f32_scalar, cc_ig_ukrin_f32_scalar, cc_ig_wsplit_f32_scalar};
static const ig_kern_f64 ig64_scalar = {IG_MR_SCALAR, IG_NR_SCALAR, cc_ig_ukr_f64_scalar, cc_ig_ukri_f64_scalar, cc_ig_packr_f64_scalar, IG_MRW_SCALAR, IG_NRW_SCALAR, 1, cc_ig_ukrw_f64_scalar, cc_ig_wtin_f64_scalar, cc_ig_wtout_f64_scalar, cc_ig_rows_f64_scalar, cc_ig_ukrn_f64_scalar, cc_ig_ukrin_f64_scalar, cc_ig_wsplit_f64_scalar};
#if defined(CC_HAVE_X86_SIMD)
static const ig_kern_f32 ig32_avx2 = {IG_MR_AVX2, IG_NV_AVX2 * 8, cc_ig_ukr_f32_avx2, cc_ig_ukri_f32_avx2, cc_ig_packr_f32_avx2, IG_MRW_AVX2, IG_NRW_AVX2, 8, cc_ig_ukrw_f32_avx2, cc_ig_wtin_f32_avx2, cc_ig_wtout_f32_avx2, cc_ig_rows_f32_avx2, cc_ig_ukrn_f32_avx2, cc_ig_ukrin_f32_avx2, cc_ig_wsplit_f32_avx2};
static const ig_kern_f64 ig64_avx2 = {IG_MR_AVX2, IG_NV_AVX2 * 4, cc_ig_ukr_f64_avx2, cc_ig_ukri_f64_avx2, cc_ig_packr_f64_avx2, IG_MRW_AVX2, IG_NRW_AVX2, 4, cc_ig_ukrw_f64_avx2, cc_ig_wtin_f64_avx2, cc_ig_wtout_f64_avx2, cc_ig_rows_f64_avx2, cc_ig_ukrn_f64_avx2, cc_ig_ukrin_f64_avx2, cc_ig_wsplit_f64_avx2};
static const ig_kern_f32 ig32_avx512 = {IG_MR_AVX512, IG_NV_AVX512 * 16, cc_ig_ukr_f32_avx512, cc_ig_ukri_f32_avx512, cc_ig_packr_f32_avx512, IG_MRW_AVX512, IG_NRW_AVX512, 16, cc_ig_ukrw_f32_avx512, cc_ig_wtin_f32_avx512, cc_ig_wtout_f32_avx512, cc_ig_rows_f32_avx512, cc_ig_ukrn_f32_avx512, cc_ig_ukrin_f32_avx512, cc_ig_wsplit_f32_avx512};
static const ig_kern_f64 ig64_avx512 = {IG_MR_AVX512, IG_NV_AVX512 * 8, cc_ig_ukr_f64_avx512, cc_ig_ukri_f64_avx512, cc_ig_packr_f64_avx512, IG_MRW_AVX512, IG_NRW_AVX512, 8, cc_ig_ukrw_f64_avx512, cc_ig_wtin_f64_avx512, cc_ig_wtout_f64_avx512, cc_ig_rows_f64_avx512, cc_ig_ukrn_f64_avx512, cc_ig_ukrin_f64_avx512, cc_ig_wsplit_f64_avx512};
#endif
#if defined(__aarch64__)
static const ig_kern_f32 ig32_neon = {IG_MR_NEON, IG_NV_NEON * 4, cc_ig_ukr_f32_neon, cc_ig_ukri_f32_neon, cc_ig_packr_f32_neon, IG_MRW_NEON, IG_NRW_NEON, 4, cc_ig_ukrw_f32_neon, cc_ig_wtin_f32_neon, cc_ig_wtout_f32_neon, cc_ig_rows_f32_neon, cc_ig_ukrn_f32_neon, cc_ig_ukrin_f32_neon, cc_ig_wsplit_f32_neon};
static const ig_kern_f64 ig64_neon = {IG_MR_NEON, IG_NV_NEON * 2, cc_ig_ukr_f64_neon, cc_ig_ukri_f64_neon, cc_ig_packr_f64_neon, IG_MRW_NEON, IG_NRW_NEON, 2, cc_ig_ukrw_f64_neon, cc_ig_wtin_f64_neon, cc_ig_wtout_f64_neon, cc_ig_rows_f64_neon, cc_ig_ukrn_f64_neon, cc_ig_ukrin_f64_neon, cc_ig_wsplit_f64_neon};
#endif

/* Indexed by cc_isa; NULL where this build has no such kernels. */
static const ig_kern_f32 *const ig32_by_isa[CC_ISA_COUNT] = {
    [CC_ISA_SCALAR] = &ig32_scalar,
#if defined(CC_HAVE_X86_SIMD)
    [CC_ISA_AVX2] = &ig32_avx2,
    [CC_ISA_AVX512] = &ig32_avx512,
#endif
#if defined(__aarch64__)
    [CC_ISA_NEON] = &ig32_neon,
#endif
};
static const ig_kern_f64 *const ig64_by_isa[CC_ISA_COUNT] = {
    [CC_ISA_SCALAR] = &ig64_scalar,
#if defined(CC_HAVE_X86_SIMD)
    [CC_ISA_AVX2] = &ig64_avx2,
    [CC_ISA_AVX512] = &ig64_avx512,
#endif
#if defined(__aarch64__)
    [CC_ISA_NEON] = &ig64_neon,
#endif
};

const ig_kern_f32 *cc_ig_kern_f32(void)
{
    const ig_kern_f32 *k = ig32_by_isa[cc_isa_current()];
    return k ? k : &ig32_scalar;
}

const ig_kern_f64 *cc_ig_kern_f64(void)
{
    const ig_kern_f64 *k = ig64_by_isa[cc_isa_current()];
    return k ? k : &ig64_scalar;
}
