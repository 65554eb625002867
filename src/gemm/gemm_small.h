/* Row-major GEMM whose product of one column or one row runs as a GEMV:
 * cc_sgemm_any / cc_dgemm_any take cblas_?gemm's arguments (RowMajor only)
 * and are the CC_GEMM of the GEMM driver templates (below).
 *
 * OpenBLAS's GEMM packs both operands whatever their shape: for the one
 * column of a 1x1 convolution of a 1x1 map (squeeze-and-excitation layers,
 * classifier heads) it packed the whole weight to multiply it by a vector,
 * 2.7-3.9x the time of the GEMV on the same operands (1024x256 and
 * 1280x960 float32, one thread, AMD EPYC: 47 -> 17 us, 226 -> 59 us).
 * The choice depends on the shape only, so a call computes the same bits
 * for every thread count. */
#ifndef CC_GEMM_SMALL_H
#define CC_GEMM_SMALL_H

#include "core/blas.h"
#include "core/compiler.h"
#include "gemm/uk_gemm.h"

#define CC_DEF_GEMM_ANY(NAME, T, GEMM, GEMV, UK)                                              \
    static inline void NAME(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,        \
                            cc_blasint M, cc_blasint N, cc_blasint K, T alpha, const T *A,     \
                            cc_blasint lda, const T *B, cc_blasint ldb, T beta, T *C,          \
                            cc_blasint ldc) {                                                  \
        if (order == CblasRowMajor && K > 0 && N == 1 && M > 1) {                              \
            /* C[:, 0] = alpha op(A) op(B)[:, 0] + beta C[:, 0] */                             \
            const cc_blasint incb = tb == CblasNoTrans ? ldb : 1;                              \
            if (ta == CblasNoTrans)                                                            \
                GEMV(CblasRowMajor, CblasNoTrans, M, K, alpha, A, lda, B, incb, beta, C, ldc); \
            else                                                                               \
                GEMV(CblasRowMajor, CblasTrans, K, M, alpha, A, lda, B, incb, beta, C, ldc);   \
            return;                                                                            \
        }                                                                                      \
        if (order == CblasRowMajor && K > 0 && M == 1 && N > 1) {                              \
            /* C[0, :] = alpha op(A)[0, :] op(B) + beta C[0, :]: op(B)^T times a vector */     \
            const cc_blasint inca = ta == CblasNoTrans ? 1 : lda;                              \
            if (tb == CblasNoTrans)                                                            \
                GEMV(CblasRowMajor, CblasTrans, K, N, alpha, B, ldb, A, inca, beta, C, 1);     \
            else                                                                               \
                GEMV(CblasRowMajor, CblasNoTrans, N, K, alpha, B, ldb, A, inca, beta, C, 1);   \
            return;                                                                            \
        }                                                                                      \
        if (order == CblasRowMajor && alpha == (T)1 &&                                         \
            UK(ta != CblasNoTrans, tb != CblasNoTrans, M, N, K, A, lda, B, ldb, beta, C, ldc))  \
            return;                                                                            \
        GEMM(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                     \
    }

CC_DEF_GEMM_ANY(cc_sgemm_any, float, CC_SGEMM, CC_SGEMV, cc_uk_gemm_f32)
CC_DEF_GEMM_ANY(cc_dgemm_any, double, CC_DGEMM, CC_DGEMV, cc_uk_gemm_f64)

#undef CC_DEF_GEMM_ANY

/* the GEMM of a driver template's element type (core/instances.h: CC_SFX) */
#define CC_GEMM_f32 cc_sgemm_any
#define CC_GEMM_f64 cc_dgemm_any
#define CC_GEMM CC_CAT(CC_GEMM_, CC_SFX)
#endif
