/* Blocked batched transpose (src/transpose.c): the layout copies between
 * channels first and channels last.  For each of `batch` matrices,
 * dst[b][c][r] = src[b][r][c] with src rows x cols and dst cols x rows, both
 * C-contiguous, elements of elsize bytes (2, 4, 8 or 16).  NHWC -> NCHW is
 * rows = H*W, cols = C; NCHW -> NHWC is rows = C, cols = H*W.  Returns 0, or
 * CC_ERR_ARG for an element size it does not handle. */
#ifndef CC_TRANSPOSE_H
#define CC_TRANSPOSE_H
#include "cconv.h"
#ifdef __cplusplus
extern "C" {
#endif
int cc_transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
                 const void *src, void *dst, int nthreads);
/* The weight of a stride-1 adjoint run as a forward convolution: src is
 * (groups, cog, cig, kk) as PyTorch stores a weight (kk = the kernel's
 * taps, row-major), dst (groups, cig, cog, kk) with the taps reversed:
 * dst[g][ci][co][kk-1-t] = src[g][co][ci][t].  Elements of 4 or 8 bytes,
 * copied bit for bit; CC_ERR_ARG for other sizes or negative counts. */
int cc_weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk, int64_t elsize,
                      const void *src, void *dst, int nthreads);
#ifdef __cplusplus
}
#endif
#endif
