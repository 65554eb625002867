/* Depthwise weight-gradient kernel, f32, scalar reference (baseline flags). */
#include "dw_scalar.h"
#include "dwwg_scalar.inc"
