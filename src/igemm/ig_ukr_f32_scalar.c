/* Implicit-GEMM micro-kernel, f32, scalar reference (baseline flags). */
#include <stddef.h>

#include "igemm.h"
#define IG_T float
#define IG_NAME cc_ig_ukr_f32_scalar
#define IG_NAMEI cc_ig_ukri_f32_scalar
#define IG_NAMEN cc_ig_ukrn_f32_scalar
#define IG_NAMEIN cc_ig_ukrin_f32_scalar
#define IG_PACKR cc_ig_packr_f32_scalar
#define IG_NAMEW cc_ig_ukrw_f32_scalar
#define IG_WSPLIT cc_ig_wsplit_f32_scalar
#define IG_WTIN cc_ig_wtin_f32_scalar
#define IG_WTOUT cc_ig_wtout_f32_scalar
#define IG_ROWS cc_ig_rows_f32_scalar
#include "ig_ukr_scalar.inc"
