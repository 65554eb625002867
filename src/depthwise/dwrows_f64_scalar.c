/* Depthwise generic row kernel and stride-2 (de)interleave, f64, scalar reference (baseline flags). */
#define DW_F64
#include "simd/vec_scalar.h"
#include "dwrows_scalar.inc"
