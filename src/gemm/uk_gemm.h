/* Row-major GEMM on the implicit GEMM's micro-kernels (uk_gemm.c):
 * C = op(A) op(B) + beta C, alpha 1, beta 0 or 1, op(A) M x K, op(B) K x N.
 * Returns 1 when it computed C, 0 when it leaves the product to OpenBLAS
 * (a shape or kernel set it is not wanted for, or no memory for its
 * packed blocks).  The choice depends on the shape and the kernel set only,
 * so a call gives the same bits for every thread count. */
#ifndef CC_UK_GEMM_H
#define CC_UK_GEMM_H

#include <stdint.h>

#pragma GCC visibility push(default)

int cc_uk_gemm_f32(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

int cc_uk_gemm_f64(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const double *A,
                   int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* The same (A and B not transposed, beta 0) with C's columns in segments
 * of seg: column j of C lies at C + (j / seg) * sst + j % seg, rows ldc
 * apart (a GEMM over several images' columns side by side, each image's
 * result written where it goes), plus bias[i] on each row i (M values;
 * NULL: none), added as the first K block is stored.  Returns 0, C
 * untouched, where cc_uk_gemm_<f32|f64> would return 0. */
int cc_uk_gemm_seg_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float *C, int64_t ldc, int64_t seg,
                       int64_t sst, const float *bias);
int cc_uk_gemm_seg_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                       const double *B, int64_t ldb, double *C, int64_t ldc, int64_t seg,
                       int64_t sst, const double *bias);

/* B's micro-panels made where the GEMM packs them, from a K x N matrix that
 * is never formed (the im2col of non-overlapping patches:
 * gemm/patch_pack.h): pack(s, k0, kc, c0, nq, dst, ld) writes rows [k0, k0
 * + kc) and columns [c0, c0 + nq) of B as dst[(k - k0) * ld + (j - c0)];
 * the columns of dst from nq to ld are the GEMM's to fill. */
typedef struct cc_bsrc cc_bsrc;
struct cc_bsrc {
    void (*pack)(const cc_bsrc *s, int64_t k0, int64_t kc, int64_t c0, int64_t nq, void *dst,
                 int64_t ld);
};

/* cc_uk_gemm_seg_<f32|f64> with B given by its packer bs.  Returns 0
 * as well where the product would read B in place (an A of at most 12
 * panels of the kernel set's rows, one block): its caller then forms B
 * and calls cc_uk_gemm_seg_<f32|f64>. */
int cc_uk_gemm_src_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const cc_bsrc *bs, float *C, int64_t ldc, int64_t seg, int64_t sst,
                       const float *bias);
int cc_uk_gemm_src_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
                       const cc_bsrc *bs, double *C, int64_t ldc, int64_t seg, int64_t sst,
                       const double *bias);

/* The same (B not transposed, beta 0) with C's elements where a map puts
 * them: element (i, j) of the product at C + roff[i] + coff[j] (M and N
 * offsets), plus bias[i] (M values; NULL: none).  For maps that put every
 * element in a place of its own (a transposed convolution whose taps do not
 * overlap: stride = kernel, no padding).  Returns 0, C untouched, where
 * cc_uk_gemm_<f32|f64> would return 0. */
int cc_uk_gemm_map_f32(int trans_a, int64_t M, int64_t N, int64_t K, const float *A,
                       int64_t lda, const float *B, int64_t ldb, float *C,
                       const int64_t *roff, const int64_t *coff, const float *bias);
int cc_uk_gemm_map_f64(int trans_a, int64_t M, int64_t N, int64_t K, const double *A,
                       int64_t lda, const double *B, int64_t ldb, double *C,
                       const int64_t *roff, const int64_t *coff, const double *bias);

/* Whether cc_uk_gemm_<f32|f64> would take a product of this shape in this
 * process (the rule alone: nothing is computed). */
int cc_uk_gemm_takes_f32(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K);
int cc_uk_gemm_takes_f64(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K);

/* 1 when float32 products may run on these kernels in this process: the
 * choice of core/cpu.h (cc_cpu_uk_gemm) with 16-lane float32 kernels
 * (AVX-512), the only ones measured faster than OpenBLAS. */
int cc_uk_gemm_runs(void);

/* The same for float64 products that pack B (uk_gemm.c): the choice
 * cc_cpu_uk_gemm_f64 with the 8-lane float64 kernels (AVX-512). */
int cc_uk_gemm_f64_runs(void);
#pragma GCC visibility pop

#endif
