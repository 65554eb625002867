/* Depthwise channels-last row kernel, f64, neon (AArch64 baseline). */
#define DW_F64
#define DW_ISA neon
#include "simd/vec_neon.h"
#include "dwcl.inc"
