/* Depthwise channels-last row kernel, f64, avx512 (-mavx512f -mfma). */
#define DW_F64
#define DW_ISA avx512
#include "simd/vec_avx512.h"
#include "dwcl.inc"
