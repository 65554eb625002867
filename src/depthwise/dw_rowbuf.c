/* Padded, phase-split row buffers of the depthwise drivers (see
 * dw_internal.h). */
#include "dw_internal.h"

#define DW_T float
#define DW_S f32
#include "dw_rowbuf.inc"
#undef DW_T
#undef DW_S

#define DW_T double
#define DW_S f64
#include "dw_rowbuf.inc"
