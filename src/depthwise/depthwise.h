/*
 * Depthwise direct convolution kernels (groups == c_in, channel multiplier
 * m = c_out / c_in >= 1), NCHW(D), float32 and float64.
 *
 * Geometry: the cc_geom of the *plain* convolution (see src/cconv.h), padded
 * to three spatial dimensions with leading 1s.  Weight layout (c_out, 1, k...)
 * where output channel co = ci*m + j reads input channel ci = co / m.
 *
 *   fwd  : y[n,co,o] = bias[co] + sum_t w[co,t] x[n,co/m,o*s - p + t*d]
 *   adj  : x[n,ci,i] = bias[ci] + sum_{j,t,o: o*s - p + t*d = i} w[ci*m+j,t] y[n,ci*m+j,o]
 *          (grad_input of the plain conv; forward of a transposed depthwise
 *          conv whose plain twin is depthwise).  bias may be NULL.
 *   wgrad: gw[co,t] = sum_{n,o} gy[n,co,o] x[n,co/m,o*s - p + t*d]
 *          Partial sums over a fixed partition of the rows (independent of
 *          nthreads) reduced in a fixed order, in double: the result is
 *          bit-identical call to call and for any thread count (for a given
 *          instruction set).
 *
 * All arrays C-contiguous; sizes int64_t.  Return CC_OK, CC_ERR_NOMEM or
 * CC_ERR_ARG (not depthwise, negative sizes, inconsistent output size).
 * Scratch memory (row buffers, a few KiB per thread; partial sums of wgrad)
 * is allocated inside and freed before returning.
 *
 * Instruction set: the one core/isa.h chooses (CPU features at import,
 * CCONV_SIMD=scalar|avx2|avx512|neon, or cc_isa_set() in tests).
 */
#ifndef CC_DEPTHWISE_H
#define CC_DEPTHWISE_H

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

/* The forward by path (CC_DW_PATH_*, below), which the caller chose. */
int cc_dw_fwd_f32(const cc_geom *g, int path, const float *x, const float *w,
                  const float *bias, float *y, int nthreads);
int cc_dw_fwd_f64(const cc_geom *g, int path, const double *x, const double *w,
                  const double *bias, double *y, int nthreads);
int cc_dw_adj_f32(const cc_geom *g, const float *y, const float *w,
                  const float *bias, float *x, int nthreads);
int cc_dw_adj_f64(const cc_geom *g, const double *y, const double *w,
                  const double *bias, double *x, int nthreads);
int cc_dw_wgrad_f32(const cc_geom *g, const float *x, const float *gy,
                    float *gw, int nthreads);
int cc_dw_wgrad_f64(const cc_geom *g, const double *x, const double *gy,
                    double *gw, int nthreads);

/* The forward of a depthwise geometry with multiplier 1 (c_out == c_in)
 * on channels-last memory: x is (N, ID, IH, IW, C) and y (N, OD, OH, OW, C),
 * C-contiguous; the weight (C, 1, KD, KH, KW) and bias as for cc_dw_fwd. */
int cc_dw_fwd_nhwc_f32(const cc_geom *g, const float *x, const float *w,
                       const float *bias, float *y, int nthreads);
int cc_dw_fwd_nhwc_f64(const cc_geom *g, const double *x, const double *w,
                       const double *bias, double *y, int nthreads);

/* 1 when cc_dw_fwd_nhwc_<dtype> (elsize 4 or 8 bytes) runs g: multiplier
 * 1 and per-thread buffers (a few padded input rows) within 64 MiB. */
int cc_dw_nhwc_ok(const cc_geom *g, int64_t elsize);

/* 1 when g is a depthwise geometry these kernels run, else 0. */
int cc_dw_geom_ok(const cc_geom *g);

/* The forward's paths: the plane kernels (3x3/5x5/7x7, stride 1/2,
 * dilation 1, or 3x3 stride 1 dilation 2/4, across the planes, NCHW rows),
 * the generic row kernel (every
 * depthwise geometry), or channels-last blocks (multiplier 1, small planes:
 * the input transposed to channels-last blocks, vectors along the channels,
 * transposed back).  cc_dw_fwd_applies: 1 when the path can run g with
 * elements of elsize (4 or 8) bytes; cc_dw_fwd_wanted: 1 when it applies and
 * the defaults prefer it (the caller tries channels-last, plane, rows in
 * that order). */
#define CC_DW_PATH_PLANE 0
#define CC_DW_PATH_ROWS 1
#define CC_DW_PATH_CL 2
int cc_dw_fwd_applies(int path, const cc_geom *g, int64_t elsize);
int cc_dw_fwd_wanted(int path, const cc_geom *g, int64_t elsize);
/* 1 when the forward's work items (image, channel, block of output rows;
 * the row path's blocks) are at least as many as the threads its split is
 * planned for: a 1-D layer gets one item per image and channel, and a few
 * long signals would leave threads idle.  Depends on the problem and the
 * CPU, not on the caller's thread count. */
int cc_dw_fwd_parallel(const cc_geom *g);
/* 1 when the forward's plane path runs g's planes (elements of elsize
 * bytes) by super-rows (dw_internal.h: dw_flat_wins; core/cpu.h:
 * cc_cpu_dw_flat), else 0. */
int cc_dw_fwd_flat(const cc_geom *g, int64_t elsize);
/* 1 when the forward's plane path reads g's 3x3 stride-1 planes where they
 * lie (dw2d.inc: plane_direct; core/cpu.h: cc_cpu_dw_direct) on the kernel
 * set it runs, else 0 (paddings wider than two vectors still take the
 * ring). */
int cc_dw_fwd_direct(const cc_geom *g, int64_t elsize);
/* 1 when the adjoint (grad_input; the transposed convolution's forward)
 * runs g's planes by the plane form of the stride-2 kernel (dw_internal.h:
 * dw_adj_planes; core/cpu.h: cc_cpu_dw_a2p), else 0. */
int cc_dw_adj_planes(const cc_geom *g);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
