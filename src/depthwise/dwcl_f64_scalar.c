/* Depthwise channels-last row kernel, f64, scalar reference (baseline flags). */
#define DW_F64
#include "dw_scalar.h"
#include "dwcl_scalar.inc"
