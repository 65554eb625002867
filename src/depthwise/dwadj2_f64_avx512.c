/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f64, avx512 (-mavx512f -mfma). */
#define DW_ISA avx512
#define DW_F64
#include "simd/vec_avx512.h"
#include "dwadj2.inc"
