/*
 * cconv C API: what the Cython wrappers call.  No Python headers here.
 *
 * Every convolution is described by the geometry of the *plain* (forward,
 * non-transposed) convolution it is or is the adjoint of:
 *
 *   x : (batch, c_in,  in[0],  in[1],  in[2])    the "image" side
 *   w : (c_out, c_in / groups, k[0], k[1], k[2])
 *   y : (batch, c_out, out[0], out[1], out[2])   the "column" side
 *
 *   y[n, co, o] = sum_{ci in group, t} w[co, ci, t] * x[n, ci, o*stride - pad + t*dil]
 *
 * Spatial dimensions that a 1-D or 2-D problem does not have are leading
 * dimensions of size 1 (in = out = k = stride = dil = 1, pad = 0).  pad is the
 * padding *before* each dimension; the padding after is implied by out, so
 * asymmetric ('same') padding needs nothing more.  A transposed convolution
 * with weight (C_in_t, C_out_t / groups, k) is the adjoint of the plain one
 * with c_out = C_in_t and c_in = C_out_t, whose weight has the same memory.
 *
 * All arrays are C-contiguous.  Sizes and indices are int64_t.  Functions
 * return 0 on success, CC_ERR_NOMEM when scratch memory could not be had and
 * CC_ERR_ARG for a geometry they cannot run.  Scratch memory is passed in by
 * the caller (ws, ws_bytes; ask *_workspace for the size), so the kernels keep
 * no state between calls (outbuf.h, the allocator of result arrays, keeps
 * freed blocks).
 */
#ifndef CCONV_H
#define CCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

#define CC_OK 0
#define CC_ERR_NOMEM (-1)
#define CC_ERR_ARG (-2)
/* a Winograd forward saw a NaN or an infinity in its data and stopped: the
 * caller runs another method (the transforms would change the NaN pattern) */
#define CC_NONFINITE (-3)

typedef struct cc_geom {
    int64_t batch;
    int64_t groups;
    int64_t c_in;
    int64_t c_out;
    int64_t in[3];
    int64_t out[3];
    int64_t k[3];
    int64_t stride[3];
    int64_t pad[3];
    int64_t dil[3];
} cc_geom;

/* Upper bound of the scratch memory (bytes) the GEMM kernels use for all
 * threads together; tiles are sized to fit under it. */
#define CC_WORKSPACE_CAP ((int64_t)32 * 1024 * 1024)

/* ---- im2col / col2im (src/gemm/im2col.c) -------------------------------------
 * col has rows (ci, t0, t1, t2) for ci in [0, cin) and columns p in
 * [p0, p0 + np) of the flattened output; row stride ldc.  x is one image of
 * cin channels.  col2im adds into x. */
void cc_im2col_f32(const cc_geom *g, int64_t cin, const float *x, int64_t p0,
                   int64_t np, float *col, int64_t ldc);
void cc_im2col_f64(const cc_geom *g, int64_t cin, const double *x, int64_t p0,
                   int64_t np, double *col, int64_t ldc);
void cc_col2im_f32(const cc_geom *g, int64_t cin, const float *col, int64_t p0,
                   int64_t np, int64_t ldc, float *x);
void cc_col2im_f64(const cc_geom *g, int64_t cin, const double *col, int64_t p0,
                   int64_t np, int64_t ldc, double *x);
/* col2im in gather form (src/gemm/col2im_gather.c) for the whole output (col
 * holds every output position, row stride ldc): x = bias[ci] + the sum
 * cc_col2im_ would add (bias may be NULL: 0), each row of x formed once.
 * scratch: cc_col2im_gather_scratch_<dtype>(g) bytes, 8-byte aligned (-1
 * where that would pass 16 MiB: then use cc_col2im_), its tables made once
 * by cc_col2im_gather_plan_<dtype>(g, scratch) for any number of calls. */
int64_t cc_col2im_gather_scratch_f32(const cc_geom *g);
int64_t cc_col2im_gather_scratch_f64(const cc_geom *g);
void cc_col2im_gather_plan_f32(const cc_geom *g, void *scratch);
void cc_col2im_gather_plan_f64(const cc_geom *g, void *scratch);
void cc_col2im_gather_f32(const cc_geom *g, int64_t cin, const float *col, int64_t ldc,
                          const float *bias, void *scratch, float *x);
void cc_col2im_gather_f64(const cc_geom *g, int64_t cin, const double *col, int64_t ldc,
                          const double *bias, void *scratch, double *x);

/* ---- GEMM convolutions (src/gemm/gemm_conv.c) --------------------------------
 * fwd : y = conv(x, w) (+ bias[c_out])                  plain forward
 * adj : x = conv_adjoint(y, w) (+ bias[c_in])           transposed forward,
 *                                                      grad_input of plain
 * wgrad: gw = d<y_grad, conv(x, w)>/dw                  grad_weight of plain;
 *        of a transposed conv: wgrad(x := its grad_output, gy := its input)
 *
 * Each runs the method m its caller names; C never chooses one.  Which
 * methods can run g: cc_conv_<op>_applies; which of those the defaults
 * want: cc_conv_fwd_wanted (the caller walks its ordered list of methods
 * and takes the first that applies and is wanted, or the one it is told).
 * A method that does not apply is CC_ERR_ARG.
 * nthreads: OpenMP threads to use (>= 1).  ws may be NULL when the size
 * asked for (*_workspace: bytes, -1 where m does not apply) is 0. */
#define CC_M_IM2COL 0   /* im2col tiles + GEMM; adjoint: GEMM + col2im */
#define CC_M_GEMM_1X1 1 /* 1x1, stride 1, unpadded: GEMMs read x in place */
#define CC_M_SHIFT 2    /* fwd, stride 1: one GEMM per tap over a padded band;
                           wgrad, any stride: per-tap products over the band
                           transposed (src/gemm/shift_conv.inc) */
#define CC_M_IGEMM 3    /* fwd: implicit GEMM (src/igemm); wgrad: grouped, few
                           channels per group, the band read in place */
#define CC_M_WINO 4     /* fwd: Winograd F(2x2, 3x3) (src/winograd/wino_conv.c);
                           returns CC_NONFINITE at a NaN or an infinity */
int cc_conv_fwd_applies(int m, const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_fwd_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_adj_applies(int m, const cc_geom *g);
int cc_conv_wgrad_applies(int m, const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_wgrad_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize);
int64_t cc_conv_fwd_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize);
int64_t cc_conv_adj_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize);
int64_t cc_conv_wgrad_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize);
/* How the forward's GEMM plan of method m (CC_M_IM2COL or CC_M_GEMM_1X1)
 * cuts g into work items: split[0] images per block, split[1] column tiles
 * per block, split[2] chunks of output channels.  Returns 0, or CC_ERR_ARG
 * where m does not apply. */
int cc_conv_fwd_split(const cc_geom *g, int m, int64_t elsize, int64_t split[3]);

int cc_conv_fwd_f32(const cc_geom *g, int m, const float *x, const float *w,
                    const float *bias, float *y, void *ws, int64_t ws_bytes,
                    int nthreads);
int cc_conv_fwd_f64(const cc_geom *g, int m, const double *x, const double *w,
                    const double *bias, double *y, void *ws, int64_t ws_bytes,
                    int nthreads);
int cc_conv_adj_f32(const cc_geom *g, int m, const float *y, const float *w,
                    const float *bias, float *x, void *ws, int64_t ws_bytes,
                    int nthreads);
int cc_conv_adj_f64(const cc_geom *g, int m, const double *y, const double *w,
                    const double *bias, double *x, void *ws, int64_t ws_bytes,
                    int nthreads);
int cc_conv_wgrad_f32(const cc_geom *g, int m, const float *x, const float *gy,
                      float *gw, void *ws, int64_t ws_bytes, int nthreads);
int cc_conv_wgrad_f64(const cc_geom *g, int m, const double *x, const double *gy,
                      double *gw, void *ws, int64_t ws_bytes, int nthreads);

/* ---- reductions (src/gemm/bias_grad.c) ---------------------------------------
 * gb[c] = sum_{n, p} gy[n, c, p] for gy of shape (batch, channels, spatial);
 * accumulated in double (float32) or with pairwise blocks (float64). */
/* Implicit-GEMM forward (src/igemm): no im2col matrix, the gather happens
 * while packing B from a padded band of input rows.  Workspace in bytes,
 * -1 when the geometry is invalid or the need exceeds CC_WORKSPACE_CAP. */
int64_t cc_conv_fwd_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize);
/* 1 when the implicit-GEMM forward of g runs its direct mode writing the
 * output in place (igemm/ig_plan.h: inplace), else 0 (also when it cannot
 * run). */
int cc_conv_fwd_igemm_inplace(const cc_geom *g, int64_t elsize);
int cc_conv_fwd_igemm_f32(const cc_geom *g, const float *x, const float *w,
                          const float *bias, float *y, void *ws, int64_t ws_bytes,
                          int nthreads);
int cc_conv_fwd_igemm_f64(const cc_geom *g, const double *x, const double *w,
                          const double *bias, double *y, void *ws, int64_t ws_bytes,
                          int nthreads);

/* Winograd F(2x2, 3x3) forward (src/winograd/wino_conv.c) of a 2-D 3x3 stride-1
 * convolution (dilation 1, any padding and groups): workspace in bytes, -1
 * for another geometry or a need above CC_WORKSPACE_CAP; the calls return
 * CC_ERR_ARG for another geometry. */
int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize);
/* The images at a time whose input the 2-D Winograd of g (dilation above
 * 2) copies phase by phase at nthreads (winograd/wino_conv.h: the rows then
 * read in place by the vector transforms); 0 where not even one image's
 * copy fits in the workspace cap (the rows are then split per run). */
int64_t cc_conv_fwd_wino_phased(const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_fwd_wino_f32(const cc_geom *g, const float *x, const float *w,
                         const float *bias, float *y, void *ws, int64_t ws_bytes,
                         int nthreads);
int cc_conv_fwd_wino_f64(const cc_geom *g, const double *x, const double *w,
                         const double *bias, double *y, void *ws, int64_t ws_bytes,
                         int nthreads);
/* The same, stopping with CC_NONFINITE (y partly written) at a NaN or an
 * infinity in w or in the input values the tiles read. */
int cc_conv_fwd_wino_checked_f32(const cc_geom *g, const float *x, const float *w,
                                 const float *bias, float *y, void *ws, int64_t ws_bytes,
                                 int nthreads);
int cc_conv_fwd_wino_checked_f64(const cc_geom *g, const double *x, const double *w,
                                 const double *bias, double *y, void *ws, int64_t ws_bytes,
                                 int nthreads);

/* Weight gradient reading the band in place (src/igemm) for grouped
 * convolutions with few output channels per group and output rows of at
 * least one vector: 1 when it suits g;
 * workspace in bytes as above. */
int cc_conv_wgrad_igemm_suits(const cc_geom *g, int64_t elsize);
int64_t cc_conv_wgrad_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize);
int cc_conv_wgrad_igemm_f32(const cc_geom *g, const float *x, const float *gy, float *gw,
                            void *ws, int64_t ws_bytes, int nthreads);
int cc_conv_wgrad_igemm_f64(const cc_geom *g, const double *x, const double *gy, double *gw,
                            void *ws, int64_t ws_bytes, int nthreads);

void cc_bias_grad_f32(int64_t batch, int64_t channels, int64_t spatial,
                      const float *gy, float *gb, int nthreads);
void cc_bias_grad_f64(int64_t batch, int64_t channels, int64_t spatial,
                      const double *gy, double *gb, int nthreads);

/* ---- info (src/core/info.c) -------------------------------------------------- */
const char *cc_blas_config(void);
const char *cc_blas_corename(void);
int cc_openmp_max_threads(void);
void cc_openmp_set_threads(int n);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
