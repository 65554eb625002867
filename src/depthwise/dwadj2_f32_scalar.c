/* Depthwise stride-2 adjoint row kernel (grad_input, 3/5 taps), f32, scalar reference (baseline flags). */
#include "simd/vec_scalar.h"
#include "dwadj2_scalar.inc"
