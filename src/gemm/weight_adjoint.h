/* The weight of a stride-1 adjoint (grad_input) run as a forward
 * convolution (src/gemm/weight_adjoint.c). */
#ifndef CC_WEIGHT_ADJOINT_H
#define CC_WEIGHT_ADJOINT_H
#include "cconv.h"
#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */
/* src is (groups, cog, cig, kk) as PyTorch stores a weight (kk = the
 * kernel's taps, row-major), dst (groups, cig, cog, kk) with the taps
 * reversed:
 * dst[g][ci][co][kk-1-t] = src[g][co][ci][t].  Elements of 4 or 8 bytes,
 * copied bit for bit; CC_ERR_ARG for other sizes or negative counts.
 * *nonfinite (when not NULL): 1 when an element, as a float32/float64, is
 * NaN or infinite, else 0; not looked at when kk == 1 (0): the adjoint's
 * forward of a 1-tap kernel reads no padding, so nothing multiplies a zero. */
int cc_weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk, int64_t elsize,
                      const void *src, void *dst, int nthreads, int *nonfinite);
#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
