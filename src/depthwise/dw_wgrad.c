/* Depthwise grad_weight: the OpenMP driver around the wg kernels. */
#include "dw_internal.h"

#define CC_TEMPLATE "depthwise/dw_wgrad.inc"
#include "core/instances.h"
