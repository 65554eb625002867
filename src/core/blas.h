/* The prefixed ILP64 CBLAS names of scipy-openblas64, in one place. */
#ifndef CC_BLAS_H
#define CC_BLAS_H
#include <cblas.h>

typedef blasint cc_blasint; /* 64-bit in scipy-openblas64 */

#define CC_SGEMM scipy_cblas_sgemm64_
#define CC_DGEMM scipy_cblas_dgemm64_
#define CC_SGEMV scipy_cblas_sgemv64_
#define CC_DGEMV scipy_cblas_dgemv64_
#define CC_BLAS_GET_THREADS scipy_openblas_get_num_threads64_
#define CC_BLAS_SET_THREADS scipy_openblas_set_num_threads64_
#define CC_BLAS_CONFIG scipy_openblas_get_config64_
#define CC_BLAS_CORENAME scipy_openblas_get_corename64_

/* cconv splits its own work over OpenMP threads (core/parallel.h) and runs
 * every GEMM of its OpenBLAS (not NumPy's) on the calling thread: set once,
 * and again only where something (threadpoolctl) changed it.  OpenBLAS's
 * own threads would cut a GEMM into blocks that depend on their count, and
 * the last bits of the result with them. */
static inline void cc_blas_single(void) {
    if (CC_BLAS_GET_THREADS() != 1) CC_BLAS_SET_THREADS(1);
}

#endif
