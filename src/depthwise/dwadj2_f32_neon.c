/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f32, neon (AArch64 baseline). */
#define DW_ISA neon
#include "simd/vec_neon.h"
#include "dwadj2.inc"
