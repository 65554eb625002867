/* Implicit-GEMM micro-kernel, f32, neon (AArch64 baseline). */
#define DW_ISA neon
#include "simd/vec_neon.h"
#include "igemm.h"
#define IG_MR IG_MR_NEON
#define IG_NV IG_NV_NEON
#define IG_NAME cc_ig_ukr_f32_neon
#define IG_NAMEI cc_ig_ukri_f32_neon
#define IG_NAMEN cc_ig_ukrn_f32_neon
#define IG_NAMEIN cc_ig_ukrin_f32_neon
#define IG_PACKR cc_ig_packr_f32_neon
#define IG_MRW IG_MRW_NEON
#define IG_NRW IG_NRW_NEON
#define IG_NAMEW cc_ig_ukrw_f32_neon
#define IG_WSPLIT cc_ig_wsplit_f32_neon
#define IG_WTIN cc_ig_wtin_f32_neon
#define IG_WTOUT cc_ig_wtout_f32_neon
#define IG_ROWS cc_ig_rows_f32_neon
#include "ig_ukr.inc"
