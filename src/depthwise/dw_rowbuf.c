/* Padded, phase-split row buffers of the depthwise drivers (see
 * dw_internal.h). */
#include "dw_internal.h"

#define CC_TEMPLATE "depthwise/dw_rowbuf.inc"
#include "core/instances.h"
