/* Internal: the shifted-GEMM forward and weight gradient (method CC_M_SHIFT
 * of gemm_conv.c), for geometries where cc_shift_applies(g). */
#ifndef CC_SHIFT_CONV_H
#define CC_SHIFT_CONV_H
#include "cconv.h"
int64_t cc_conv_fwd_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_fwd_shift_f32(const cc_geom *g, const float *x, const float *w,
                          const float *bias, float *y, void *ws, int64_t ws_bytes,
                          int nthreads);
int cc_conv_fwd_shift_f64(const cc_geom *g, const double *x, const double *w,
                          const double *bias, double *y, void *ws, int64_t ws_bytes,
                          int nthreads);
/* The weight gradient (method CC_M_SHIFT of gemm_conv.c's wgrad);
 * CC_NONFINITE, gw unwritten, when x holds a NaN or an infinity. */
int64_t cc_conv_wgrad_shift_workspace(const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_wgrad_shift_f32(const cc_geom *g, const float *x, const float *gy, float *gw,
                            void *ws, int64_t ws_bytes, int nthreads);
int cc_conv_wgrad_shift_f64(const cc_geom *g, const double *x, const double *gy, double *gw,
                            void *ws, int64_t ws_bytes, int nthreads);
#endif
