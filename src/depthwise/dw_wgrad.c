/* Depthwise grad_weight: the OpenMP driver around the wg kernels. */
#include "dw_internal.h"

#define DW_IMPL "dw_wgrad.inc"
#include "dw_instances.h"
