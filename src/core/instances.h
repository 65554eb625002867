/* Instantiates the GEMM-based driver template named by CC_IMPL (a quoted
 * file name) for float32 and float64 with the matching OpenBLAS GEMM.
 * Included once by gemm_conv.c, shift_conv.c and nhwc_conv.c (src/igemm
 * has its own: ig_instances.h, with its micro-kernel tables). */
#define CC_T float
#define CC_SFX f32
#define CC_GEMM CC_SGEMM
#include CC_IMPL
#undef CC_T
#undef CC_SFX
#undef CC_GEMM

#define CC_T double
#define CC_SFX f64
#define CC_GEMM CC_DGEMM
#include CC_IMPL
#undef CC_T
#undef CC_SFX
#undef CC_GEMM
