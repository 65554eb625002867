/* Blocked batched transpose (src/transpose/transpose.c): the layout copies between
 * channels first and channels last.  For each of `batch` matrices,
 * dst[b][c][r] = src[b][r][c] with src rows x cols and dst cols x rows, both
 * C-contiguous, elements of elsize bytes (2, 4, 8 or 16).  NHWC -> NCHW is
 * rows = H*W, cols = C; NCHW -> NHWC is rows = C, cols = H*W.  Returns 0, or
 * CC_ERR_ARG for an element size it does not handle. */
#ifndef CC_TRANSPOSE_H
#define CC_TRANSPOSE_H
#include "cconv.h"
#include "core/parallel.h"
/* bytes per thread of a layout copy, at least (the transpose and the
 * weight adjoint, src/gemm/weight_adjoint.c): core/parallel.h's copy grain */
#define CC_TR_PAR_BYTES CC_GRAIN_COPY
#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */
int cc_transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
                 const void *src, void *dst, int nthreads);
#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
