/* Implicit-GEMM micro-kernel, f64, avx512 (-mavx512f -mfma). */
#define DW_F64
#define DW_ISA avx512
#include "simd/vec_avx512.h"
#include "igemm.h"
#define IG_MR IG_MR_AVX512
#define IG_NV IG_NV_AVX512
#define IG_NAME cc_ig_ukr_f64_avx512
#define IG_NAMEI cc_ig_ukri_f64_avx512
#define IG_NAMEN cc_ig_ukrn_f64_avx512
#define IG_NAMEIN cc_ig_ukrin_f64_avx512
#define IG_PACKR cc_ig_packr_f64_avx512
#define IG_MRW IG_MRW_AVX512
#define IG_NRW IG_NRW_AVX512
#define IG_NAMEW cc_ig_ukrw_f64_avx512
#define IG_WSPLIT cc_ig_wsplit_f64_avx512
#define IG_WTIN cc_ig_wtin_f64_avx512
#define IG_WTOUT cc_ig_wtout_f64_avx512
#define IG_ROWS cc_ig_rows_f64_avx512
#include "ig_ukr.inc"
