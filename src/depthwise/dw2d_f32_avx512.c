/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f32, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#include "simd/vec_avx512.h"
#include "dw2d.inc"
