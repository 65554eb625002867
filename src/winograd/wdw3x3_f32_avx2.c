/*
 * Depthwise 3x3 Winograd F(2x2,3x3) kernel, float32, AVX2 + FMA (built with
 * -mavx2 -mfma in its own static library): 8 tiles per vector
 * (wdw_vec_avx2.h), and 4 (wdw_vec_x128.h) for planes of at most 4 tiles
 * per row.
 */
#include "wdw_vec_x128.h"
#define WDW_ISA avx2h
#define WDW_R 4
#include "wdw3x3_f32.inc"
#include "wdw_vec_undef.h"

#include "wdw_vec_avx2.h"
#define WDW_ISA avx2
#define WDW_R 4
#define WDW_HALF avx2h
#include "wdw3x3_f32.inc"
