/* Depthwise channels-last row kernel, f32, avx2 (-mavx2 -mfma). */
#define DW_ISA avx2
#include "simd/vec_avx2.h"
#include "dwcl.inc"
