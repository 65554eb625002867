/*
 * A small cache of large freed blocks for the arrays cconv returns.
 *
 * Each call returns a fresh result array.  In a chain of convolutions the
 * freed results of one round do not come back from malloc as the same
 * pages: glibc hands blocks of 128 KiB and more to mmap, or trims the top
 * of its heap when they are freed, so every result lands on new pages, and
 * the first touch of a 4 KiB page costs about 1 us on the VMs measured.  A
 * MobileNetV2 block (1x1 expand, depthwise 3x3, 1x1 project, one 56x56
 * image, 2 threads) took 1.77 ms with 940 page faults per round and 0.74 ms
 * with none (glibc's thresholds raised); the depthwise alone 0.63 ms
 * against 0.15.
 *
 * Blocks of CC_OUTBUF_MIN_BYTES to CC_OUTBUF_MAX_BYTES freed through
 * cc_outbuf_free are kept (CC_OUTBUF_SLOTS blocks, CC_OUTBUF_CAP_BYTES in
 * all, the oldest released first) and handed out again by cc_outbuf_alloc
 * for a request of at most their size and at least 3/4 of it.  The bounds
 * keep what a program holds beyond its live arrays to 128 MiB: larger
 * results are not kept (their faults cost little beside their compute: a
 * 64 MiB result's 16384 faults, ~16 ms, against the seconds of a
 * convolution that makes it), and a 1x64x1024x1024 result is never held.
 * Fresh blocks of 4 MiB and more are offered to transparent huge pages
 * (outbuf.c): a 1x8x4000x4000 float32 result (512 MiB) took 217,672 page
 * faults and 463 ms to compute into with 4 KiB pages, 159 ms into a
 * touched buffer (AMD EPYC, 2 threads).  This is the one piece of
 * mutable state of the C core besides the dispatch tables; a mutex guards
 * it, and cc_outbuf_release gives it all back (cconv.empty_cache()).
 * Python's NumPy memory handler for cconv's results sits on top (the
 * wrappers, _kernels.pyx).
 */
#ifndef CC_OUTBUF_H
#define CC_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

#define CC_OUTBUF_MIN_BYTES ((size_t)128 << 10)
#define CC_OUTBUF_MAX_BYTES ((size_t)64 << 20)
#define CC_OUTBUF_CAP_BYTES ((size_t)128 << 20)
#define CC_OUTBUF_SLOTS 32

/* A block of at least n bytes (64-byte aligned), zeroed when zero != 0;
 * NULL when memory is short. */
void *cc_outbuf_alloc(size_t n, int zero);
/* Give back a block of cc_outbuf_alloc (NULL: nothing). */
void cc_outbuf_free(void *p);
/* Resize a block (C realloc semantics: NULL p allocates; the contents are
 * kept up to the smaller size; NULL on failure with p untouched). */
void *cc_outbuf_realloc(void *p, size_t n);
/* Release every cached block to the system. */
void cc_outbuf_release(void);
/* Bytes held in the cache now, and blocks. */
void cc_outbuf_stats(int64_t *bytes, int64_t *blocks);

#pragma GCC visibility pop
#endif
