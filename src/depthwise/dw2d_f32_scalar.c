/* Depthwise specialised 2-D 3x3/5x5/7x7 stride-1/2 row kernels, f32, scalar reference (baseline flags). */
#include "simd/vec_scalar.h"
#include "dw2d_scalar.inc"
