/* Depthwise forward: the OpenMP driver around the row kernels. */
#include "dw_internal.h"

#define DW_T float
#define DW_S f32
#define DW_VM DW_VMAX_F32
#include "dw_fwd.inc"
#undef DW_T
#undef DW_S
#undef DW_VM

#define DW_T double
#define DW_S f64
#define DW_VM DW_VMAX_F64
#include "dw_fwd.inc"
