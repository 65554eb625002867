/*
 * Layout-transpose tile kernels, plain C: the reference every SIMD kernel
 * is tested against, and the only kernels for 16- and 128-bit elements
 * (float16, complex128), which no SIMD kernel handles.
 */
#include <string.h>

#include "tr_internal.h"

typedef struct { uint64_t lo, hi; } cc_tr_u128;

#define CC_TR_SCALAR(BITS, T)                                                 \
    void cc_tr_tile_b##BITS##_scalar(const void *src, int64_t ls, void *dst,  \
                                     int64_t ld, int64_t nr, int64_t nc)      \
    {                                                                         \
        const T *s = (const T *)src;                                          \
        T *d = (T *)dst;                                                      \
        CC_TR_EDGES(T, s, ls, d, ld, nr, nc, 0, 0);                           \
    }

CC_TR_SCALAR(16, uint16_t)
CC_TR_SCALAR(32, uint32_t)
CC_TR_SCALAR(64, uint64_t)
CC_TR_SCALAR(128, cc_tr_u128)
