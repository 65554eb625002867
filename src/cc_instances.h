/* Instantiates the GEMM-based driver template named by CC_IMPL (a quoted
 * file name) for float32 and float64 with the matching OpenBLAS GEMM.
 * Included once by gemm_conv.c, shift_conv.c and nhwc_conv.c (src/igemm
 * has its own: ig_instances.h, with its micro-kernel tables).  CC_GEMM is
 * the GEMM that runs a one-column or one-row product as a GEMV
 * (gemm_small.h). */
#include "gemm_small.h"

#define CC_T float
#define CC_SFX f32
#define CC_GEMM cc_sgemm_any
#include CC_IMPL
#undef CC_T
#undef CC_SFX
#undef CC_GEMM

#define CC_T double
#define CC_SFX f64
#define CC_GEMM cc_dgemm_any
#include CC_IMPL
#undef CC_T
#undef CC_SFX
#undef CC_GEMM
