/* Depthwise channels-last row kernel, f64, avx2 (-mavx2 -mfma). */
#define DW_F64
#define DW_ISA avx2
#include "simd/vec_avx2.h"
#include "dwcl.inc"
