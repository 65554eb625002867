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
 * Instruction set: chosen once by cc_dw_init() (called at import) from the
 * CPU features, or forced with the environment variable
 * CCONV_SIMD=scalar|avx2|avx512|neon, or with cc_dw_set_isa() (for tests;
 * do not call it while kernels run in other threads).
 */
#ifndef CC_DEPTHWISE_H
#define CC_DEPTHWISE_H

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif

int cc_dw_fwd_f32(const cc_geom *g, const float *x, const float *w,
                  const float *bias, float *y, int nthreads);
int cc_dw_fwd_f64(const cc_geom *g, const double *x, const double *w,
                  const double *bias, double *y, int nthreads);
int cc_dw_adj_f32(const cc_geom *g, const float *y, const float *w,
                  const float *bias, float *x, int nthreads);
int cc_dw_adj_f64(const cc_geom *g, const double *y, const double *w,
                  const double *bias, double *x, int nthreads);
int cc_dw_wgrad_f32(const cc_geom *g, const float *x, const float *gy,
                    float *gw, int nthreads);
int cc_dw_wgrad_f64(const cc_geom *g, const double *x, const double *gy,
                    double *gw, int nthreads);

/* 1 when g is a depthwise geometry these kernels run, else 0. */
int cc_dw_geom_ok(const cc_geom *g);

/* Reads CCONV_SIMD once (later calls do nothing) and sets the dispatch
 * table.  Returns CC_OK, or CC_ERR_ARG when CCONV_SIMD names an instruction
 * set that is unknown or that this CPU/build cannot run (the best available
 * one is used then). */
int cc_dw_init(void);
/* Force an instruction set: "scalar", "avx2", "avx512", "neon", or "auto"
 * (or NULL) for the best available.  CC_ERR_ARG (and no change) when it is
 * unknown or not available. */
int cc_dw_set_isa(const char *name);
/* Name of the instruction set in use. */
const char *cc_dw_isa(void);
/* 1 when the named instruction set can run here (built and supported by the
 * CPU), else 0. */
int cc_dw_isa_available(const char *name);

#ifdef __cplusplus
}
#endif
#endif
