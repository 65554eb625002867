/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f64, neon (AArch64 baseline). */
#define DW_ISA neon
#define DW_F64
#include "simd/vec_neon.h"
#include "dwadj2.inc"
