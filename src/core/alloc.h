/*
 * Work buffers of the kernels: 64-byte aligned blocks from the system
 * allocator (free() releases them), NULL when the size is negative or too
 * large or the allocator fails; every caller checks and falls back or
 * reports CC_ERR_NOMEM.
 */
#ifndef CC_CORE_ALLOC_H
#define CC_CORE_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* At least `bytes` bytes (rounded up to 64; 64 for 0), aligned to 64. */
static inline void *cc_alloc64(int64_t bytes)
{
    if (bytes < 0 || (uint64_t)bytes > (uint64_t)PTRDIFF_MAX - 128)
        return NULL;
    size_t sz = ((size_t)bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, sz ? sz : 64);
}

/* The same, zeroed (the whole rounded-up block). */
static inline void *cc_zalloc64(int64_t bytes)
{
    void *p = cc_alloc64(bytes);
    if (p)
        memset(p, 0, bytes > 0 ? ((size_t)bytes + 63) & ~(size_t)63 : 64);
    return p;
}

#endif
