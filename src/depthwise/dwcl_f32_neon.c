/* Depthwise channels-last row kernel, f32, neon (AArch64 baseline). */
#define DW_ISA neon
#include "simd/vec_neon.h"
#include "dwcl.inc"
