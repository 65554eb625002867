/* The denormal-operand flag of the calling thread and of the kernels'
 * OpenMP threads (core/fpflags.h). */
#include "core/fpflags.h"

#include "core/omp_compat.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#include <xmmintrin.h>

int cc_fp_denormal_seen(int clear) {
    const unsigned int csr = _mm_getcsr();
    /* bits 0-5 are the sticky exception flags, bit 1 the denormal one */
    if (clear) _mm_setcsr(csr & ~0x3Fu);
    return (int)((csr >> 1) & 1u);
}
#else
int cc_fp_denormal_seen(int clear) {
    (void)clear;
    return -1;
}
#endif

int cc_fp_denormal_seen_team(int nthreads, int clear) {
    if (cc_fp_denormal_seen(0) < 0) return -1;
    int any = 0;
#pragma omp parallel num_threads(nthreads > 0 ? nthreads : 1) reduction(|| : any)
    {
        if (cc_fp_denormal_seen(clear) == 1) any = 1;
    }
    return any;
}
