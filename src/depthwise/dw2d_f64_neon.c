/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f64, neon (AArch64 baseline). */
#define DW_ISA neon
#define DW_F64
#include "simd/vec_neon.h"
#include "dw2d.inc"
