/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f32, avx2 (-mavx2 -mfma). */
#define DW_ISA avx2
#include "simd/vec_avx2.h"
#include "dw2d.inc"
