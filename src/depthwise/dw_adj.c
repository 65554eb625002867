/* Depthwise grad_input (adjoint): the OpenMP driver around the row kernels. */
#include "dw_internal.h"
#include "core/claim.h"

#define CC_TEMPLATE "depthwise/dw_adj.inc"
#include "core/instances.h"
