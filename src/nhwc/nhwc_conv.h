/*
 * Channels-last (NHWC / NLC / NDHWC) forward convolution: im2col + GEMM with
 * the pixels as GEMM rows (src/nhwc/nhwc_conv.c).
 *
 *   x : (batch, in[0], in[1], in[2], c_in)   channels last, C-contiguous
 *   w : (c_out, c_in / groups, k[0], k[1], k[2])   as PyTorch stores it
 *   y : y_cl != 0: (batch, out[0], out[1], out[2], c_out)   channels last
 *       y_cl == 0: (batch, c_out, out[0], out[1], out[2])   channels first
 *
 * Per group, out(pixels, cog) = col(pixels, kk * cig) @ W'(kk * cig, cog),
 * where a row of col holds, tap by tap, the cig input channels under that
 * tap (contiguous runs of x: a memcpy each) and W' is the weight reordered
 * tap-major.  A 1x1 stride-1 unpadded convolution reads x itself: no col.
 * Geometry, return codes and scratch conventions are those of cconv.h.
 */
#ifndef CC_NHWC_CONV_H
#define CC_NHWC_CONV_H
#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

int64_t cc_nhwc_fwd_workspace(const cc_geom *g, int nthreads, int64_t elsize);
int cc_nhwc_fwd_f32(const cc_geom *g, const float *x, const float *w,
                    const float *bias, float *y, int y_cl, void *ws,
                    int64_t ws_bytes, int nthreads);
int cc_nhwc_fwd_f64(const cc_geom *g, const double *x, const double *w,
                    const double *bias, double *y, int y_cl, void *ws,
                    int64_t ws_bytes, int nthreads);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
