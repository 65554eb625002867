/* What every file of the C core may use: always-inline helpers, token
 * pasting (names built from an element type's suffix or an instruction
 * set's name, see core/instances.h and simd/vec_common.h), and the loads
 * and stores of values chosen once. */
#ifndef CC_COMPILER_H
#define CC_COMPILER_H

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

#endif
