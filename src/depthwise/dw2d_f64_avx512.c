/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f64, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#define DW_F64
#include "simd/vec_avx512.h"
#include "dw2d.inc"
