/* Depthwise generic row kernel and stride-2 (de)interleave, f32, scalar reference (baseline flags). */
#include "simd/vec_scalar.h"
#include "dwrows_scalar.inc"
