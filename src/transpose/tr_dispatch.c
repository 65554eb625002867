/*
 * Layout transpose: the tile kernel for each element size, of the
 * instruction set in use where there are per-ISA ones (core/isa.h).
 */
#include "tr_internal.h"

CC_ISA_DISPATCH(cc_tr_kern, cc_tr_kern_f32)
CC_ISA_DISPATCH(cc_tr_kern, cc_tr_kern_f64)

typedef struct { uint64_t lo, hi; } cc_tr_u128;

#define CC_TR_PLAIN(BITS, T)                                                  \
    static void cc_tr_tile_b##BITS(const void *src, int64_t ls, void *dst,    \
                                   int64_t ld, int64_t nr, int64_t nc)        \
    {                                                                         \
        const T *s = (const T *)src;                                          \
        T *d = (T *)dst;                                                      \
        CC_TR_EDGES(T, s, ls, d, ld, nr, nc, 0, 0);                           \
    }

CC_TR_PLAIN(16, uint16_t)
CC_TR_PLAIN(128, cc_tr_u128)

cc_tr_tile_fn cc_tr_tile_for(int64_t elsize)
{
    switch (elsize) {
    case 2:
        return cc_tr_tile_b16;
    case 4:
        return cc_tr_kern_f32()->tile;
    case 8:
        return cc_tr_kern_f64()->tile;
    case 16:
        return cc_tr_tile_b128;
    default:
        return NULL;
    }
}
