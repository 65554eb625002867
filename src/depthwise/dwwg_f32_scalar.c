/* Depthwise weight-gradient kernel, f32, scalar reference (baseline flags). */
#include "simd/vec_scalar.h"
#include "dwwg_scalar.inc"
