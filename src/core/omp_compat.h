/* OpenMP when the build has it; otherwise the one runtime call the kernels
 * make (their parallel pragmas are then ignored and one thread runs). */
#ifndef CC_OMP_COMPAT_H
#define CC_OMP_COMPAT_H
#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif
#endif
