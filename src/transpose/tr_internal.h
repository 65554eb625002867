/*
 * Tile kernels of the layout transpose (src/transpose.c), one set per
 * instruction set, and the table the dispatcher picks from.
 *
 * Contract of a tile kernel cc_tr_tile_<bits>_<isa>: for 0 <= r < nr and
 * 0 <= c < nc, dst[c * ld + r] = src[r * ls + c], elements of <bits> bits
 * copied bit for bit (no floating-point operation touches them, so NaN
 * payloads and signed zeros survive), ls and ld in elements.  nr and nc may
 * be any sizes (the driver passes tiles of 256-byte rows, the channels-last
 * depthwise forward whole channel blocks of rows and planes); the SIMD
 * kernels transpose whole square blocks in registers and the ragged edges
 * element by element.
 */
#ifndef CC_TR_INTERNAL_H
#define CC_TR_INTERNAL_H

#include <stdint.h>

#define CC_TR_HIDDEN __attribute__((visibility("hidden")))

typedef void (*cc_tr_tile_fn)(const void *src, int64_t ls, void *dst, int64_t ld,
                              int64_t nr, int64_t nc);

/* the kernels of one instruction set, by element size */
typedef struct cc_tr_isa {
    cc_tr_tile_fn b16, b32, b64, b128;
} cc_tr_isa;

#define CC_TR_DECL(ISA)                                                       \
    CC_TR_HIDDEN void cc_tr_tile_b32_##ISA(const void *, int64_t, void *,     \
                                           int64_t, int64_t, int64_t);       \
    CC_TR_HIDDEN void cc_tr_tile_b64_##ISA(const void *, int64_t, void *,     \
                                           int64_t, int64_t, int64_t);

CC_TR_DECL(scalar)
CC_TR_DECL(avx2)
CC_TR_DECL(avx512)
CC_TR_DECL(neon)
CC_TR_HIDDEN void cc_tr_tile_b16_scalar(const void *, int64_t, void *, int64_t, int64_t,
                                        int64_t);
CC_TR_HIDDEN void cc_tr_tile_b128_scalar(const void *, int64_t, void *, int64_t, int64_t,
                                         int64_t);

/* The kernels of the instruction set in use (simd_isa.c's choice; the
 * scalar ones where this build has none for it). */
CC_TR_HIDDEN const cc_tr_isa *cc_tr_current(void);

/* The element-by-element edge every kernel shares: rows [r0, nr) of
 * columns [0, nc) and columns [c0, nc) of rows [0, r0). */
#define CC_TR_EDGES(T, s, ls, d, ld, nr, nc, r0, c0)                          \
    do {                                                                      \
        for (int64_t c_ = (c0); c_ < (nc); c_++)                              \
            for (int64_t r_ = 0; r_ < (r0); r_++)                             \
                (d)[c_ * (ld) + r_] = (s)[r_ * (ls) + c_];                    \
        for (int64_t c_ = 0; c_ < (nc); c_++)                                 \
            for (int64_t r_ = (r0); r_ < (nr); r_++)                          \
                (d)[c_ * (ld) + r_] = (s)[r_ * (ls) + c_];                    \
    } while (0)

/* The body of a SIMD tile kernel: whole B x B blocks by BLOCK(s, ls, d,
 * ld) on elements of type T, the rest by CC_TR_EDGES on U (an unsigned
 * type of T's size), so that bits pass unchanged. */
#define CC_TR_BLOCKED(T, U, B, BLOCK, src, ls, dst, ld, nr, nc)               \
    do {                                                                      \
        const T *s_ = (const T *)(src);                                       \
        T *d_ = (T *)(dst);                                                   \
        const int64_t rb_ = (nr) - (nr) % (B), cb_ = (nc) - (nc) % (B);       \
        for (int64_t r_ = 0; r_ < rb_; r_ += (B))                             \
            for (int64_t c_ = 0; c_ < cb_; c_ += (B))                         \
                BLOCK(s_ + r_ * (ls) + c_, (ls), d_ + c_ * (ld) + r_, (ld));  \
        const U *su_ = (const U *)(src);                                      \
        U *du_ = (U *)(dst);                                                  \
        CC_TR_EDGES(U, su_, ls, du_, ld, nr, nc, rb_, cb_);                   \
    } while (0)

#endif
