/* What show_config reports about the C core. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "blas.h"
#include "cconv.h"

const char *cc_blas_config(void) { return CC_BLAS_CONFIG(); }
const char *cc_blas_corename(void) { return CC_BLAS_CORENAME(); }

int cc_openmp_max_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void cc_openmp_set_threads(int n) {
#ifdef _OPENMP
    if (n > 0) omp_set_num_threads(n);
#else
    (void)n;
#endif
}
