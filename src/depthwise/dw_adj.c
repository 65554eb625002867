/* Depthwise grad_input (adjoint): the OpenMP driver around the row kernels. */
#include "dw_internal.h"

#define DW_IMPL "dw_adj.inc"
#include "dw_instances.h"
