/* The prefixed ILP64 CBLAS names of scipy-openblas64, in one place. */
#ifndef CC_BLAS_H
#define CC_BLAS_H
#include <cblas.h>

typedef blasint cc_blasint; /* 64-bit in scipy-openblas64 */

#define CC_SGEMM scipy_cblas_sgemm64_
#define CC_DGEMM scipy_cblas_dgemm64_
#define CC_BLAS_GET_THREADS scipy_openblas_get_num_threads64_
#define CC_BLAS_SET_THREADS scipy_openblas_set_num_threads64_
#define CC_BLAS_CONFIG scipy_openblas_get_config64_
#define CC_BLAS_CORENAME scipy_openblas_get_corename64_

#endif
