/* Depthwise channels-last row kernel, f32, scalar reference (baseline flags). */
#include "simd/vec_scalar.h"
#include "dwcl_scalar.inc"
