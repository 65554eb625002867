/* Instantiates the depthwise driver template named by DW_IMPL (a quoted
 * file name) for float32 and float64.  Included once by dw_fwd.c,
 * dw_adj.c, dw_wgrad.c and dw_cl.c. */
#define DW_T float
#define DW_S f32
#define DW_VM DW_VMAX_F32
#include DW_IMPL
#undef DW_T
#undef DW_S
#undef DW_VM

#define DW_T double
#define DW_S f64
#define DW_VM DW_VMAX_F64
#include DW_IMPL
#undef DW_T
#undef DW_S
#undef DW_VM
