/* The denormal-operand flag of the calling thread (core/fpflags.h). */
#include "core/fpflags.h"

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
