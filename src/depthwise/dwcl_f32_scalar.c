/* Depthwise channels-last row kernel, f32, scalar reference (baseline flags). */
#include "dw_scalar.h"
#include "dwcl_scalar.inc"
