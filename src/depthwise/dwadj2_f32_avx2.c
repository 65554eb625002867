/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f32, avx2 (-mavx2 -mfma). */
#define DW_ISA avx2
#include "simd/vec_avx2.h"
#include "dwadj2.inc"
