/* Depthwise weight-gradient kernel, f32, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#include "simd/vec_avx512.h"
#include "dwwg.inc"
