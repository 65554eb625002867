/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f64, scalar reference (baseline flags). */
#define DW_F64
#include "simd/vec_scalar.h"
#include "dwadj2_scalar.inc"
