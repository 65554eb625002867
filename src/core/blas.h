/* The prefixed ILP64 CBLAS names of scipy-openblas64, in one place. */
#ifndef CC_BLAS_H
#define CC_BLAS_H
#include <cblas.h>

#include "core/compiler.h"

typedef blasint cc_blasint; /* 64-bit in scipy-openblas64 */

#define CC_SGEMM scipy_cblas_sgemm64_
#define CC_DGEMM scipy_cblas_dgemm64_
/* the GEMM of a template's element type (core/instances.h: CC_SFX) */
#define CC_GEMM_f32 CC_SGEMM
#define CC_GEMM_f64 CC_DGEMM
#define CC_GEMM CC_CAT(CC_GEMM_, CC_SFX)
#define CC_BLAS_GET_THREADS scipy_openblas_get_num_threads64_
#define CC_BLAS_SET_THREADS scipy_openblas_set_num_threads64_
#define CC_BLAS_CONFIG scipy_openblas_get_config64_
#define CC_BLAS_CORENAME scipy_openblas_get_corename64_

#endif
