/* Row-major GEMM on the implicit GEMM's micro-kernels (uk_gemm.c):
 * C = op(A) op(B) + beta C, alpha 1, beta 0 or 1, op(A) M x K, op(B) K x N.
 * Returns 1 when it computed C, 0 when it leaves the product to OpenBLAS
 * (a shape or kernel set it is not wanted for, or no memory for its
 * packed blocks).  The choice depends on the shape and the kernel set only,
 * so a call gives the same bits for every thread count. */
#ifndef CC_UK_GEMM_H
#define CC_UK_GEMM_H

#include <stdint.h>

int cc_uk_gemm_f32(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
int cc_uk_gemm_f64(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const double *A,
                   int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                   int64_t ldc);

#endif
