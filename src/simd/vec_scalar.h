/*
 * Scalar "vector layer": names and element type for the scalar reference
 * kernels (dw*_scalar.inc), which are plain loops written for clarity: they
 * define what the SIMD kernels must compute.
 */
#include "vec_common.h"
#define DW_ISA scalar
#ifdef DW_F64
#define T double
#define DW_SFX f64
#else
#define T float
#define DW_SFX f32
#endif
