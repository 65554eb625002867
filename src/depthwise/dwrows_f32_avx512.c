/* Depthwise generic row kernel (any taps; 3-D, long 1-D) and stride-2 (de)interleave, f32, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#include "simd/vec_avx512.h"
#include "dwrows.inc"
