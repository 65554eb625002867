/*
 * Depthwise 3x3 convolution by Winograd F(2x2, 3x3), float32, NCHW,
 * inference only (backend WINOGRAD_DEPTHWISE_3X3).
 *
 * Geometry: the cc_geom of the plain convolution (src/cconv.h), 2-D padded
 * to three dims (in[0] = out[0] = k[0] = 1): groups == c_in == c_out (channel
 * multiplier 1), kernel 3x3, stride 1, dilation 1, padding before
 * pad[d] in {0, 1, 2} and the padding after, pa = out[d] + 2 - in[d] - pad[d],
 * in {0, 1, 2} (the backend uses 0 and 1; 'same' is 1 and 1).
 *
 *   y[n,c,oh,ow] = bias[c] + sum_{kh,kw<3} w[c,kh,kw] x[n,c,oh-ph+kh,ow-pw+kw]
 *
 * Per channel the filter is transformed once, U = G g G^T (4x4); the output
 * is cut into 2x2 tiles (tiles that run past the bottom or right edge are
 * computed on zeros and clipped), each read from a 4x4 input window at
 * stride 2: V = B^T d B, M = U .* V, Y = A^T M A + bias.  The horizontal
 * half of B^T d B is computed once per input row (it is shared by the two
 * tile rows that read the row), the vertical half per tile row; products
 * and the output transform are fused (multiply-adds), the bias folded into
 * M[1][1].  SIMD kernels run V tiles side by side along the row (AVX2 8,
 * AVX-512 16, NEON 4), reading phase-split (even/odd column) row buffers.
 * OpenMP over (image, channel) pairs, and over blocks of tile rows when
 * those pairs are fewer than the threads.
 *
 * Non-finite values: the transforms subtract inputs from one another, so
 * an infinity gives NaN where the direct sum gives an infinity, and a NaN
 * reaches the whole 2x2 tile.  The kernels sum each input row's
 * transform (H1 = d1 + d2 of every tile, the SIMD ones, with the row's end
 * columns; H0 + H3, the scalar one) and test the filter; *nonfinite
 * (when not NULL) is set to 1 when a weight or an input value read is NaN
 * or infinite (or that sum overflowed), else 0: the output is then
 * Winograd's, and the caller recomputes it with a direct kernel.
 *
 * All arrays C-contiguous; sizes int64_t; bias may be NULL.  Returns CC_OK,
 * CC_ERR_NOMEM (per-thread row buffers, a few KiB) or CC_ERR_ARG (a
 * geometry outside the above).
 *
 * Instruction set: the one core/isa.h chooses (CPU features at import,
 * CCONV_SIMD=scalar|avx2|avx512|neon, or cc_isa_set() in tests).
 */
#ifndef CC_WINOGRAD_H
#define CC_WINOGRAD_H

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

int cc_wdw_fwd_f32(const cc_geom *g, const float *x, const float *w,
                   const float *bias, float *y, int nthreads, int *nonfinite);

/* 1 when g is a geometry cc_wdw_fwd_f32 runs, else 0. */
int cc_wdw_geom_ok(const cc_geom *g);

/* The filter transform of one channel: u (4x4, row-major, rows = the
 * vertical index) = G g G^T for g (3x3, row-major). */
void cc_wdw_filter_f32(const float *g, float *u);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
