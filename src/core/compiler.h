/* What every file of the C core may use: always-inline helpers, token
 * pasting (names built from an element type's suffix or an instruction
 * set's name, see core/instances.h and simd/vec_common.h), and the loads
 * and stores of values chosen once, a work counter's atomic add. */
#ifndef CC_COMPILER_H
#define CC_COMPILER_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define CC_INLINE static inline __attribute__((always_inline))
#else
#define CC_INLINE static inline
#endif

#define CC_CAT_(a, b) a##b
#define CC_CAT(a, b) CC_CAT_(a, b)

/* A value chosen once (at import or first use) and read by every kernel
 * call from any thread: stored with release, loaded with acquire. */
#if defined(__GNUC__) || defined(__clang__)
#define CC_ONCE_LOAD(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define CC_ONCE_STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#else
#define CC_ONCE_LOAD(p) (p)
#define CC_ONCE_STORE(p, v) ((p) = (v))
#endif

/* *p += v, atomically among the threads of a team; the old value (a work
 * counter: the order of the claims is all it needs) */
static inline int64_t cc_fetch_add64(int64_t *p, int64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#else
    int64_t old;
#pragma omp atomic capture
    { old = *p; *p += v; }
    return old;
#endif
}

#endif
