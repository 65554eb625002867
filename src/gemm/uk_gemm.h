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

/* float64 stays on OpenBLAS (on these kernels a 1x1 layer took 1.10-1.17
 * of its time, AMD Zen 4): the same signature, never taking the product. */
static inline int cc_uk_gemm_f64(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                                 const double *A, int64_t lda, const double *B, int64_t ldb,
                                 double beta, double *C, int64_t ldc) {
    (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B,
        (void)ldb, (void)beta, (void)C, (void)ldc;
    return 0;
}

/* 1 when float32 products may run on these kernels in this process: the
 * choice of core/cpu.h (cc_cpu_uk_gemm) with 16-lane float32 kernels
 * (AVX-512), the only ones measured faster than OpenBLAS. */
int cc_uk_gemm_runs(void);
#pragma GCC visibility pop

#endif
