/*
 * Tile kernels of the layout transpose (transpose.c), one per instruction
 * set and element size.
 *
 * Contract of a tile kernel: for 0 <= r < nr and 0 <= c < nc,
 * dst[c * ld + r] = src[r * ls + c], elements of its size copied bit for bit
 * (no floating-point operation touches them, so NaN payloads and signed
 * zeros survive), ls and ld in elements; src and dst do not overlap.  nr
 * and nc may be any sizes (the driver passes tiles of 256-byte rows, the
 * channels-last depthwise forward whole channel blocks of rows and planes);
 * the SIMD kernels transpose whole square blocks in registers, the ragged
 * edges as overlapping whole blocks or partial blocks.
 */
#ifndef CC_TR_INTERNAL_H
#define CC_TR_INTERNAL_H

#include <stdint.h>

#include "core/isa.h"

typedef void (*cc_tr_tile_fn)(const void *src, int64_t ls, void *dst, int64_t ld,
                              int64_t nr, int64_t nc);

/* The kernel of one instruction set for 32-bit (f32) or 64-bit (f64)
 * elements: cc_tr_kern_<f32|f64>_<isa>, made by tr_kernels.c. */
typedef struct cc_tr_kern {
    cc_tr_tile_fn tile;
} cc_tr_kern;
CC_ISA_DECLARE(cc_tr_kern, cc_tr_kern_f32)
CC_ISA_DECLARE(cc_tr_kern, cc_tr_kern_f64)

/* The tile kernel for elements of elsize bytes (2, 4, 8 or 16): the
 * instruction set in use's for 4 and 8, plain C for 2 and 16 (float16,
 * complex128, which no SIMD kernel handles); NULL for other sizes. */
cc_tr_tile_fn cc_tr_tile_for(int64_t elsize);

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
 * ld) on elements of type T.  Where a side is at least B, its ragged last
 * block is a whole block that overlaps the one before it (the elements
 * they share are written twice, with the same bits; src and dst never
 * overlap): one block's moves where the partial block below cost its own
 * block plus two stack tiles' (about a third of a 32 x 28 transpose, a
 * seventh of a 32 x 56 one).  Where a side is shorter than B, the ragged
 * blocks go through CC_TR_PART (the vector layer's partial loads and
 * stores around the same BLOCK on two stack tiles), those of whole rows of
 * blocks with their row count a constant (the im2col of 4-tap patches:
 * with it a variable, the weight gradient of ConvNeXt's 4x4 patches took
 * 1.1 of the time).  Moves only: bits pass unchanged. */
#define CC_TR_BLOCKED(T, B, BLOCK, src, ls, dst, ld, nr, nc)                  \
    do {                                                                      \
        const T *s_ = (const T *)(src);                                       \
        T *d_ = (T *)(dst);                                                   \
        const int64_t nr_ = (nr), nc_ = (nc);                                 \
        if (nr_ >= (B) && nc_ >= (B)) {                                       \
            for (int64_t r_ = 0; r_ < nr_; r_ += (B)) {                       \
                const int64_t ro_ = r_ + (B) <= nr_ ? r_ : nr_ - (B);         \
                for (int64_t c_ = 0; c_ < nc_; c_ += (B)) {                   \
                    const int64_t co_ = c_ + (B) <= nc_ ? c_ : nc_ - (B);     \
                    BLOCK(s_ + ro_ * (ls) + co_, (ls), d_ + co_ * (ld) + ro_, \
                          (ld));                                              \
                }                                                             \
            }                                                                 \
            break;                                                            \
        }                                                                     \
        const int64_t rb_ = nr_ - nr_ % (B), cb_ = nc_ - nc_ % (B);            \
        for (int64_t r_ = 0; r_ < rb_; r_ += (B)) {                           \
            for (int64_t c_ = 0; c_ < cb_; c_ += (B))                         \
                BLOCK(s_ + r_ * (ls) + c_, (ls), d_ + c_ * (ld) + r_, (ld));  \
            if (cb_ < nc_)                                                    \
                CC_TR_PART(T, B, BLOCK, s_ + r_ * (ls) + cb_, (ls),           \
                           d_ + cb_ * (ld) + r_, (ld), (B), nc_ - cb_);       \
        }                                                                     \
        if (rb_ < nr_)                                                        \
            for (int64_t c_ = 0; c_ < nc_; c_ += (B))                         \
                CC_TR_PART(T, B, BLOCK, s_ + rb_ * (ls) + c_, (ls),           \
                           d_ + c_ * (ld) + rb_, (ld), nr_ - rb_,             \
                           nc_ - c_ < (B) ? nc_ - c_ : (B));                  \
    } while (0)

/* One block of pr <= B rows by pc <= B columns (one of them < B): its
 * rows in a zeroed B x B stack tile (VLOADP for pc < B), BLOCK into a
 * second tile, its first pc rows out (VSTOREP of pr lanes for pr < B).
 * Replaced an element loop that took 20% of a 32 x 56 transpose. */
#define CC_TR_PART(T, B, BLOCK, s, ls, d, ld, pr, pc)                         \
    do {                                                                      \
        T a_[(B) * (B)], b_[(B) * (B)];                                       \
        const int64_t pr_ = (pr), pc_ = (pc);                                 \
        for (int64_t i_ = 0; i_ < (B); i_++)                                  \
            VSTOREU(a_ + i_ * (B), i_ >= pr_ ? VZERO()                        \
                                   : pc_ < (B) ? VLOADP((s) + i_ * (ls), pc_) \
                                               : VLOADU((s) + i_ * (ls)));    \
        BLOCK(a_, (B), b_, (B));                                              \
        for (int64_t j_ = 0; j_ < pc_; j_++) {                                \
            if (pr_ < (B))                                                    \
                VSTOREP((d) + j_ * (ld), VLOADU(b_ + j_ * (B)), pr_);         \
            else                                                              \
                VSTOREU((d) + j_ * (ld), VLOADU(b_ + j_ * (B)));              \
        }                                                                     \
    } while (0)

#endif
