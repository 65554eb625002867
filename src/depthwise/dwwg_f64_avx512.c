/* Depthwise weight-gradient kernel, f64, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#define DW_F64
#include "simd/vec_avx512.h"
#include "dwwg.inc"
