/* Depthwise weight-gradient kernel, f64, neon (AArch64 baseline). */
#define DW_ISA neon
#define DW_F64
#include "simd/vec_neon.h"
#include "dwwg.inc"
