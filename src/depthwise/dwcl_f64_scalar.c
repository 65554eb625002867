/* Depthwise channels-last row kernel, f64, scalar reference (baseline flags). */
#define DW_F64
#include "simd/vec_scalar.h"
#include "dwcl_scalar.inc"
