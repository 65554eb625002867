/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f64, scalar reference (baseline flags). */
#define DW_F64
#include "simd/vec_scalar.h"
#include "dw2d_scalar.inc"
