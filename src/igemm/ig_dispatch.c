/* The implicit-GEMM kernels of the current instruction set.  The choice
 * itself is core/isa.c's (CPU features at import, CCONV_SIMD, cc_isa_set in
 * tests); this file only maps it to the kernel tables, so nothing here is
 * mutable. */
#include "igemm.h"

CC_ISA_DISPATCH(ig_kern_f32, cc_ig_kern_f32)
CC_ISA_DISPATCH(ig_kern_f64, cc_ig_kern_f64)
