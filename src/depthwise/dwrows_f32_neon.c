/* Depthwise generic row kernel (any taps; 3-D, long 1-D) and stride-2 (de)interleave, f32, neon (AArch64 baseline). */
#define DW_ISA neon
#include "simd/vec_neon.h"
#include "dwrows.inc"
