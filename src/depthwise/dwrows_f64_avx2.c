/* Depthwise generic row kernel (any taps; 3-D, long 1-D) and stride-2 (de)interleave, f64, avx2 (-mavx2 -mfma). */
#define DW_ISA avx2
#define DW_F64
#include "simd/vec_avx2.h"
#include "dwrows.inc"
