/* The im2col of non-overlapping patches (gemm_plan.h: cc_is_patch) packed
 * straight into the own GEMM's B micro-panels (uk_gemm.h: cc_bsrc), with
 * no column matrix between them.  Column c of B is output position p0 + c
 * of the images from x on (P positions an image, image after image); row k
 * is tap (ci, t0, t1, t2) of the cin channels, k = ((ci * K0 + t0) * K1 +
 * t1) * K2 + t2, as cc_im2col_<f32|f64> orders them. */
#ifndef CC_PATCH_PACK_H
#define CC_PATCH_PACK_H

#include <stdint.h>

#include "cconv.h"
#include "gemm/uk_gemm.h"
#include "transpose/tr_internal.h"

typedef struct cc_patch_src {
    cc_bsrc base;       /* first member: the GEMM's view */
    const cc_geom *g;
    const void *x;      /* the first image's first channel of the group */
    int64_t img;        /* elements from one image of x to the next */
    int64_t p0;         /* the first column's output position */
    cc_tr_tile_fn tile; /* the transpose kernel for the rows of a line */
} cc_patch_src;

/* Whether patches of g of elsize-byte elements are packed this way: every
 * kernel dimension its stride, no padding, and at least
 * CC_PATCH_PACK_MIN_TAPS taps along the innermost dimension, where the
 * transpose kernel moves a line's taps at once (narrower patches stay on
 * im2col, whose 2-tap loop the compiler vectorises), where
 * cc_cpu_patch_pack says (core/cpu.h: CCONV_PATCH_PACK).  The GEMM
 * declines the packer where it would read B in place (uk_gemm.h). */
int cc_patch_pack_applies(const cc_geom *g, int64_t elsize);

/* s for the images of x (img elements apart; x at the group's first
 * channel), columns from output position p0. */
void cc_patch_src_f32(cc_patch_src *s, const cc_geom *g, const float *x, int64_t img,
                      int64_t p0);
void cc_patch_src_f64(cc_patch_src *s, const cc_geom *g, const double *x, int64_t img,
                      int64_t p0);

#endif
